#include "net/http.h"

#include <gtest/gtest.h>

#include <string>

#include "net/http_client.h"

namespace suanli::net {
namespace {

TEST(PercentDecodeTest, TurnsEscapesIntoBytesAndPlusIntoSpaceOnlyForQueries) {
  EXPECT_EQ(PercentDecode("%2Fv1%2fpods", false), "/v1/pods");
  EXPECT_EQ(PercentDecode("a+b%20c", false), "a+b c");
  EXPECT_EQ(PercentDecode("a+b%20c", true), "a b c");
  EXPECT_EQ(PercentDecode("%2B", true), "+");
  EXPECT_EQ(PercentDecode("%E4%B8%AD", false), "\xE4\xB8\xAD");
  EXPECT_EQ(PercentDecode("", true), "");
}

TEST(PercentDecodeTest, KeepsMalformedEscapesAsTheyAre) {
  EXPECT_EQ(PercentDecode("100%", false), "100%");
  EXPECT_EQ(PercentDecode("%4", false), "%4");
  EXPECT_EQ(PercentDecode("%zz%41", false), "%zzA");
  EXPECT_EQ(PercentDecode("%%41", false), "%A");
}

TEST(PercentEncodeTest, KeepsUnreservedCharactersAndEscapesTheRest) {
  EXPECT_EQ(PercentEncode("AZaz09-_.~"), "AZaz09-_.~");
  EXPECT_EQ(PercentEncode("a b/c?d=e&f+g%"), "a%20b%2Fc%3Fd%3De%26f%2Bg%25");
  EXPECT_EQ(PercentEncode("\xE4\xB8\xAD"), "%E4%B8%AD");
}

TEST(PercentEncodeTest, DecodingTheEncodingGivesBackEveryByte) {
  std::string all;
  for (int byte = 0; byte < 256; ++byte) all.push_back(static_cast<char>(byte));
  EXPECT_EQ(PercentDecode(PercentEncode(all), true), all);
  EXPECT_EQ(PercentDecode(PercentEncode(all), false), all);
}

TEST(HttpRequestTest, HeaderAndQueryValueReturnTheFirstMatchOrNothing) {
  HttpRequest request;
  request.headers = {{"content-type", "application/json"}, {"x-a", "1"}, {"x-a", "2"}};
  request.query = {{"state", "running"}, {"state", "stopped"}, {"empty", ""}};
  EXPECT_EQ(request.Header("x-a"), "1");
  EXPECT_EQ(request.Header("content-type"), "application/json");
  EXPECT_EQ(request.Header("x-missing"), std::nullopt);
  EXPECT_EQ(request.QueryValue("state"), "running");
  EXPECT_EQ(request.QueryValue("empty"), "");
  EXPECT_EQ(request.QueryValue("State"), std::nullopt);
}

TEST(WithoutQueryParameterTest, DropsEveryOccurrenceAndKeepsTheRestInOrder) {
  EXPECT_EQ(WithoutQueryParameter("/a/b?x=1&link=s&y=2", "link"), "/a/b?x=1&y=2");
  EXPECT_EQ(WithoutQueryParameter("/a/b?link=s", "link"), "/a/b");
  EXPECT_EQ(WithoutQueryParameter("/a?l%69nk=s&link&x=%26", "link"), "/a?x=%26");
  EXPECT_EQ(WithoutQueryParameter("/a?linked=1&&x", "link"), "/a?linked=1&x");
  EXPECT_EQ(WithoutQueryParameter("/a/b", "link"), "/a/b");
}

TEST(CookieTest, FindsAndRemovesOneCookie) {
  const std::string header = "_xsrf=2|ab; suanli_link=s3cret;theme=dark ";
  EXPECT_EQ(CookieValue(header, "suanli_link"), "s3cret");
  EXPECT_EQ(CookieValue(header, "theme"), "dark");
  EXPECT_EQ(CookieValue(header, "suanli"), std::nullopt);
  EXPECT_EQ(WithoutCookie(header, "suanli_link"), "_xsrf=2|ab; theme=dark");
  EXPECT_EQ(WithoutCookie("suanli_link=s", "suanli_link"), "");
  EXPECT_EQ(CookieValue("", "x"), std::nullopt);
}

TEST(ErrorResponseTest, IsTheApiErrorShapeWithEscapedText) {
  HttpResponse response = ErrorResponse(404, "NOT_FOUND", "no pod named \"p-1\"");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.content_type, "application/json");
  EXPECT_EQ(response.body, R"({"error":{"code":"NOT_FOUND","message":"no pod named \"p-1\""}})");
}

}  // namespace
}  // namespace suanli::net
