// A request as the HTTP server reads one from a socket (net::ReadHttpRequest: the server's own
// parser set-up and conversion), cut in two where the first byte says, then what the routes and
// the proxy do with it: headers, query values, the link parameter and cookies taken out. Whatever
// the bytes: a request, "not yet whole", or an error; never a crash, and the request the handler
// gets keeps the server's promises (header names in lower case, a body within the limit).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "net/http.h"
#include "net/http_server.h"

namespace {

constexpr size_t kMaxBody = 4096;  // small, so that the limit is met often

void Require(bool holds) {
  if (!holds) std::abort();  // a broken promise is a crash libFuzzer keeps
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace net = suanli::net;
  if (size == 0) return 0;
  const size_t split = data[0];
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  suanli::core::Result<std::optional<net::HttpRequest>> read =
      net::ReadHttpRequest(bytes, kMaxBody, split);
  if (!read.ok() || !read->has_value()) return 0;
  const net::HttpRequest& request = **read;
  Require(request.body.size() <= kMaxBody);
  for (const auto& [name, value] : request.headers) {
    for (char c : name) Require(!(c >= 'A' && c <= 'Z'));
  }
  (void)request.Header("authorization");
  (void)request.QueryValue("page_token");
  const std::string without = net::WithoutQueryParameter(request.target, "suanli_link");
  Require(without.size() <= request.target.size());
  if (std::optional<std::string> cookie = request.Header("cookie")) {
    (void)net::CookieValue(*cookie, "suanli_link");
    // The proxy's promise: the link cookie never reaches the pod (the rest may be re-joined).
    Require(!net::CookieValue(net::WithoutCookie(*cookie, "suanli_link"), "suanli_link"));
  }
  return 0;
}
