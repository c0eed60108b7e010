#include "net/base64.h"

#include <gtest/gtest.h>

#include <string>

namespace suanli::net {
namespace {

TEST(Base64Test, EncodesTheRfcVectors) {
  EXPECT_EQ(Base64Encode(""), "");
  EXPECT_EQ(Base64Encode("f"), "Zg==");
  EXPECT_EQ(Base64Encode("fo"), "Zm8=");
  EXPECT_EQ(Base64Encode("foo"), "Zm9v");
  EXPECT_EQ(Base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, RoundTripsEveryByteAndLength) {
  std::string bytes;
  for (int i = 0; i < 600; ++i) {
    bytes.push_back(static_cast<char>(i * 7 % 256));
    const core::Result<std::string> decoded = Base64Decode(Base64Encode(bytes));
    ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
    ASSERT_EQ(*decoded, bytes) << "length " << bytes.size();
  }
}

TEST(Base64Test, RefusesWhatIsNotCanonicalBase64) {
  for (const char* text : {"Zg=", "Zm9", "Z===", "Zm=v", "Zm9v\n", " Zm9v", "Zm9*", "=Zm9"}) {
    EXPECT_FALSE(Base64Decode(text).ok()) << text;
  }
  EXPECT_EQ(Base64Decode("Zm8=").value(), "fo");
  EXPECT_EQ(Base64Decode("").value(), "");
}

}  // namespace
}  // namespace suanli::net
