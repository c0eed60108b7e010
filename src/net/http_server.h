// HttpServer: HTTP/1.1 with keep-alive on a TCP port, for the API, the console and the agents.
//
// Threading: `threads` I/O threads run the connections. The handler is called on one of them and
// must not block: it answers through the Responder, at once or later from any thread (a request
// that waits for a durable commit, or an agent's long poll). A Responder must be called exactly
// once; one dropped without being called answers 500 so no client hangs. The server reads the
// next request of a keep-alive connection only after the previous one is answered.
//
// Limits: a body larger than its request's limit (body_limit, else max_body_bytes) is answered 413
// naming the limit, without calling the handler; headers larger than 16 KiB get 431; a connection
// idle for idle_timeout (between requests, mid-request, or not reading its answer) is closed, at
// most a quarter of idle_timeout (and a second) later. A request whose handler takes longer is not
// idle: the client waits.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/status.h"
#include "net/http.h"

namespace suanli::net {

using Responder = std::function<void(HttpResponse)>;
using HttpHandler = std::function<void(HttpRequest&& request, Responder respond)>;

struct HttpServerOptions {
  std::string host = "127.0.0.1";
  uint16_t port = 7070;  // 0: any free port (tests), see HttpServer::port()
  size_t max_body_bytes = 1 << 20;
  // The largest body of a request with this method and target (as sent: path and query), asked
  // once its headers are read; absent: max_body_bytes for every request. Called on the I/O
  // threads; must not block.
  std::function<size_t(std::string_view method, std::string_view target)> body_limit;
  int threads = 2;
  std::chrono::seconds idle_timeout{75};
};

// One request read from `bytes` (all a client sent) as a connection of HttpServer reads it, the
// same code: Beast's parser with the server's header limit and `max_body_bytes`, then the request
// the handler would get. `split` cuts the bytes in two pieces fed one after the other, as the
// network may deliver them. nullopt when the bytes end before the request does; INVALID_ARGUMENT
// naming what was wrong (malformed, or RESOURCE_EXHAUSTED for a limit) otherwise. For the fuzz
// target (fuzz/http_request_fuzz.cc).
core::Result<std::optional<HttpRequest>> ReadHttpRequest(std::string_view bytes,
                                                         size_t max_body_bytes, size_t split);

class HttpServer {
 public:
  // Binds and starts serving. UNAVAILABLE when the address cannot be bound ("127.0.0.1:7070 is in
  // use; is another suanli server running? choose another with --listen").
  static core::Result<std::unique_ptr<HttpServer>> Start(const HttpServerOptions& options,
                                                         HttpHandler handler);

  virtual ~HttpServer() = default;
  virtual uint16_t port() const = 0;

  // Stops accepting, gives in-flight requests up to `grace` to be answered, closes every
  // connection and joins the threads. Idempotent; the destructor calls it.
  virtual void Stop(std::chrono::milliseconds grace = std::chrono::seconds(5)) = 0;
};

}  // namespace suanli::net
