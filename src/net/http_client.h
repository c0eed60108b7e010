// HttpClient: a blocking HTTP/1.1 client with one keep-alive connection, for the CLI, the agent
// and the Docker Engine API.
//
// The base URL is "http://HOST:PORT" or "unix:///path/to/socket" (Docker and Podman). A broken
// keep-alive connection is reopened once, transparently. Not thread-safe: one per thread.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "net/http.h"

namespace suanli::net {

struct HttpClientOptions {
  std::chrono::milliseconds timeout{30'000};  // for one whole request and response
};

class HttpClient {
 public:
  // INVALID_ARGUMENT for a URL that is neither http:// nor unix://. Several http:// URLs separated
  // by commas are replicas of one server: a request goes to the one that last answered, and to
  // the next when no connection can be made to it (so a request is never sent twice).
  static core::Result<std::unique_ptr<HttpClient>> Create(std::string_view base_url,
                                                          HttpClientOptions options = {});
  virtual ~HttpClient() = default;

  // `target` is "/v1/pods?state=running". Any HTTP status is a successful Result; UNAVAILABLE when
  // the server cannot be reached or the timeout passes ("cannot reach http://127.0.0.1:7070:
  // connection refused").
  virtual core::Result<HttpResponse> Send(std::string_view method, std::string_view target,
                                          std::string_view body = {},
                                          const Headers& headers = {}) = 0;

  // Like Send, but hands the body to `on_data` piece by piece as it arrives (chunked responses such
  // as `docker logs -f` or a pull's progress); returns the response with an empty body. Returning
  // false from `on_data` closes the connection and ends the call OK.
  virtual core::Result<HttpResponse> Stream(
      std::string_view method, std::string_view target, std::string_view body,
      const Headers& headers, const std::function<bool(std::string_view)>& on_data) = 0;

  // After a failed Send or Stream: true when the request never left (no connection could be made),
  // so sending it to another server cannot do it twice.
  virtual bool last_request_unsent() const = 0;
};

// "http://a:1, http://b:2" -> {"http://a:1", "http://b:2"} (empty entries dropped).
std::vector<std::string> SplitBaseUrls(std::string_view base_urls);

// "%2F" -> "/", "+" stays "+" in paths; for query values "+" -> " ".
std::string PercentDecode(std::string_view text, bool plus_is_space);
std::string PercentEncode(std::string_view text);

}  // namespace suanli::net
