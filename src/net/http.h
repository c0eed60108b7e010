// HTTP messages as the rest of suanli sees them: plain structs, no Beast types.
//
// Beast is slow to compile (~15 s per translation unit here), so only http_server.cc and
// http_client.cc include it; everything else talks in these types.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace suanli::net {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  std::string target;  // as sent: "/v1/pods?state=running"
  std::string path;    // the target without its query, percent-decoded: "/v1/pods"
  std::vector<std::pair<std::string, std::string>> query;  // decoded, in order
  Headers headers;                                         // names in lower case
  std::string body;
  std::string remote_address;  // "127.0.0.1"

  // The first value, or nullopt. `name` in lower case for headers.
  std::optional<std::string> Header(std::string_view name) const;
  std::optional<std::string> QueryValue(std::string_view name) const;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  Headers headers;  // extra ones, e.g. Content-Disposition
};

// `target` ("/a/b?x=1&link=s&y=2") without the query parameter `name` (every occurrence, matched
// after decoding); without its '?' when nothing is left ("/a/b?x=1&y=2").
std::string WithoutQueryParameter(std::string_view target, std::string_view name);

// The cookie `name` in a Cookie header's value ("a=1; suanli_link=s"), or nullopt.
std::optional<std::string> CookieValue(std::string_view cookie_header, std::string_view name);
// The Cookie header's value without the cookie `name` (possibly "").
std::string WithoutCookie(std::string_view cookie_header, std::string_view name);

// The API's error shape, {"error": {"code": ..., "message": ...}}, for errors the HTTP layer
// itself answers (413, 400 for unparseable HTTP, 404 for ... nothing else).
HttpResponse ErrorResponse(int status, std::string_view code, std::string_view message);

}  // namespace suanli::net
