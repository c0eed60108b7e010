#include "net/proxy_headers.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace suanli::net {
namespace {

TEST(EndToEndHeadersTest, DropsTheHopByHopHeadersOfRfc9110AndLowersTheNamesOfTheRest) {
  const Headers headers = {
      {"Connection", "keep-alive"}, {"Keep-Alive", "timeout=5"},      {"Proxy-Authorization", "x"},
      {"Proxy-Authenticate", "x"},  {"Proxy-Connection", "close"},    {"TE", "trailers"},
      {"Trailer", "Expires"},       {"Transfer-Encoding", "chunked"}, {"Upgrade", "websocket"},
      {"Accept", "text/html"},      {"X-Custom", "Mixed Case"}};
  const Headers expected = {{"accept", "text/html"}, {"x-custom", "Mixed Case"}};
  EXPECT_EQ(EndToEndHeaders(headers, {}), expected);
}

TEST(EndToEndHeadersTest, DropsTheHeadersTheConnectionHeaderNames) {
  const Headers headers = {{"connection", " X-Hop ,\tx-other-hop,, close"},
                           {"X-Hop", "1"},
                           {"x-other-hop", "2"},
                           {"close", "3"},
                           {"X-Kept", "4"}};
  const Headers expected = {{"x-kept", "4"}};
  EXPECT_EQ(EndToEndHeaders(headers, {}), expected);
}

TEST(EndToEndHeadersTest, DropsTheNamesAskedForInAnyCaseAndKeepsOrderAndRepeats) {
  const Headers headers = {{"Authorization", "Bearer secret"},
                           {"Set-Cookie", "a=1"},
                           {"Host", "example.com"},
                           {"set-cookie", "b=2"}};
  const Headers expected = {{"set-cookie", "a=1"}, {"set-cookie", "b=2"}};
  EXPECT_EQ(EndToEndHeaders(headers, {"authorization", "host"}), expected);
}

TEST(IsHeaderNameTest, AcceptsTokensOfReasonableLengthOnly) {
  EXPECT_TRUE(IsHeaderName("Content-Type"));
  EXPECT_TRUE(IsHeaderName("x!#$%&'*+-.^_`|~9"));
  EXPECT_FALSE(IsHeaderName(""));
  EXPECT_FALSE(IsHeaderName("Bad Name"));
  EXPECT_FALSE(IsHeaderName("bad:name"));
  EXPECT_FALSE(IsHeaderName("bad\nname"));
  EXPECT_TRUE(IsHeaderName(std::string(256, 'a')));
  EXPECT_FALSE(IsHeaderName(std::string(257, 'a')));
}

TEST(IsHeaderValueTest, RefusesLineBreaksNulAndHugeValues) {
  EXPECT_TRUE(IsHeaderValue("text/html; charset=utf-8"));
  EXPECT_TRUE(IsHeaderValue(""));
  EXPECT_FALSE(IsHeaderValue("a\r\nSet-Cookie: x=1"));
  EXPECT_FALSE(IsHeaderValue("a\nb"));
  EXPECT_FALSE(IsHeaderValue(std::string("a\0b", 3)));
  EXPECT_TRUE(IsHeaderValue(std::string(8192, 'a')));
  EXPECT_FALSE(IsHeaderValue(std::string(8193, 'a')));
}

TEST(ConfinedSetCookieTest, KeepsAPathInsideThePrefixAndMovesAnyOtherIntoIt) {
  const std::string_view prefix = "/v1/pods/pod_b/proxy/";
  EXPECT_EQ(ConfinedSetCookie("sid=1; Path=/v1/pods/pod_b/proxy/8888/; HttpOnly", prefix, {}),
            "sid=1; Path=/v1/pods/pod_b/proxy/8888/; HttpOnly");
  EXPECT_EQ(ConfinedSetCookie("sid=1; path=/v1/pods/pod_b/proxy", prefix, {}),
            "sid=1; path=/v1/pods/pod_b/proxy");
  // Another pod's pages, the console's, a look-alike prefix, or none: this pod's prefix.
  EXPECT_EQ(ConfinedSetCookie("sid=1; Path=/v1/pods/pod_a/proxy/8888/; HttpOnly", prefix, {}),
            "sid=1; HttpOnly; Path=/v1/pods/pod_b/proxy/");
  EXPECT_EQ(ConfinedSetCookie("sid=1; Path=/", prefix, {}), "sid=1; Path=/v1/pods/pod_b/proxy/");
  EXPECT_EQ(ConfinedSetCookie("sid=1; Path=/v1/pods/pod_b/proxyX/", prefix, {}),
            "sid=1; Path=/v1/pods/pod_b/proxy/");
  EXPECT_EQ(ConfinedSetCookie(" sid = 1 ", prefix, {}), "sid = 1; Path=/v1/pods/pod_b/proxy/");
  // The last Path is the one browsers use: an outside one after an inside one moves it.
  EXPECT_EQ(ConfinedSetCookie("sid=1; Path=/v1/pods/pod_b/proxy/1/; Path=/", prefix, {}),
            "sid=1; Path=/v1/pods/pod_b/proxy/1/");
}

TEST(ConfinedSetCookieTest, DropsTheDomainAndWhatCannotBeConfined) {
  const std::string_view prefix = "/v1/pods/pod_b/proxy/";
  EXPECT_EQ(ConfinedSetCookie("sid=1; Domain=example.com; Secure; SameSite=Lax", prefix, {}),
            "sid=1; Secure; SameSite=Lax; Path=/v1/pods/pod_b/proxy/");
  EXPECT_EQ(ConfinedSetCookie("__Host-sid=1; Path=/; Secure", prefix, {}), std::nullopt);
  EXPECT_EQ(ConfinedSetCookie("__HOST-sid=1; Secure", prefix, {}), std::nullopt);
  EXPECT_EQ(ConfinedSetCookie("suanli_link=x; Path=/v1/pods/pod_b/proxy/", prefix, {"suanli_link"}),
            std::nullopt);
  EXPECT_EQ(ConfinedSetCookie("no-value", prefix, {}), std::nullopt);
  EXPECT_EQ(ConfinedSetCookie("=1; Path=/", prefix, {}), std::nullopt);
  EXPECT_EQ(ConfinedSetCookie("__Secure-sid=1; Secure", prefix, {}),
            "__Secure-sid=1; Secure; Path=/v1/pods/pod_b/proxy/");
}

TEST(LowerAsciiTest, LowersOnlyAsciiLetters) {
  EXPECT_EQ(LowerAscii("Content-TYPE 9\xC3\x84"), "content-type 9\xC3\x84");
}

}  // namespace
}  // namespace suanli::net
