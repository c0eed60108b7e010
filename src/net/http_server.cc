#include "net/http_server.h"

#include <algorithm>
#include <atomic>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <future>
#include <optional>
#include <string>
#include <thread>
#include <unordered_set>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "net/http_client.h"

namespace suanli::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

constexpr uint32_t kHeaderLimitBytes = 16 * 1024;
// How long a connection that we close after an error keeps reading (and discarding) what the client
// still sends, so that the client reads our answer instead of a reset.
constexpr std::chrono::seconds kLingerTime{2};

// "10 MiB (10485760 bytes)", or "4096 bytes" below a MiB.
std::string LimitText(size_t bytes) {
  if (bytes < (size_t{1} << 20) || bytes % (size_t{1} << 20) != 0) {
    return std::to_string(bytes) + " bytes";
  }
  return std::to_string(bytes >> 20) + " MiB (" + std::to_string(bytes) + " bytes)";
}

// An io_context whose services can be shut down before it is destroyed: Stop() uses it to destroy
// every handler still queued (and the connections they hold) once the threads are joined.
class IoContext : public asio::io_context {
 public:
  using asio::execution_context::shutdown;
  using asio::io_context::io_context;
};

class Connection;

// What the server and its connections share. Connections (and through them Responders that user
// code may keep past Stop) hold it by shared_ptr, so the io_context outlives every socket.
struct ServerState {
  ServerState(HttpServerOptions server_options, HttpHandler server_handler)
      : options(std::move(server_options)), handler(std::move(server_handler)) {}

  // Admits a post onto the io_context unless Stop() has closed the gate; LeavePost() when done.
  bool EnterPost() {
    posting.fetch_add(1);
    if (stopped.load()) {
      posting.fetch_sub(1);
      return false;
    }
    return true;
  }
  void LeavePost() { posting.fetch_sub(1); }

  void RequestStarted() { in_flight.fetch_add(1); }
  void RequestFinished() {
    if (in_flight.fetch_sub(1) == 1 && draining.load()) {
      core::MutexLock lock(drain_mu);
      drain_cv.NotifyAll();
    }
  }

  const HttpServerOptions options;
  const HttpHandler handler;
  IoContext ioc;
  // Keeps run() going while a connection waits for its handler with no I/O pending (after Stop()
  // closed the acceptor, nothing else would).
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work{
      asio::make_work_guard(ioc)};

  std::atomic<bool> draining{false};  // Stop() began: answer with Connection: close
  std::atomic<bool> stopped{false};   // no more posts onto ioc
  std::atomic<int> posting{0};
  std::atomic<int> in_flight{0};  // requests handed to the handler and not yet written
  core::Mutex drain_mu;
  core::CondVar drain_cv;

  core::Mutex connections_mu;
  std::unordered_set<Connection*> connections GUARDED_BY(connections_mu);
};

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

void ParseTarget(std::string_view target, HttpRequest& request) {
  size_t question = target.find('?');
  request.path = PercentDecode(target.substr(0, question), /*plus_is_space=*/false);
  if (question == std::string_view::npos) return;
  std::string_view rest = target.substr(question + 1);
  while (!rest.empty()) {
    size_t amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view() : rest.substr(amp + 1);
    if (pair.empty()) continue;
    size_t equals = pair.find('=');
    std::string_view key = pair.substr(0, equals);
    std::string_view value =
        equals == std::string_view::npos ? std::string_view() : pair.substr(equals + 1);
    request.query.emplace_back(PercentDecode(key, true), PercentDecode(value, true));
  }
}

// What the handler gets of a parsed message.
HttpRequest ToHttpRequest(http::request<http::string_body>&& message) {
  HttpRequest request;
  request.method = std::string(message.method_string());
  request.target = std::string(message.target());
  ParseTarget(request.target, request);
  request.headers.reserve(static_cast<size_t>(std::distance(message.begin(), message.end())));
  for (const auto& field : message) {
    request.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
  }
  request.body = std::move(message.body());
  return request;
}

// One TCP connection. Everything but Answer(), CloseNow() and the sweeper's two calls runs on the
// connection's strand.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  Connection(std::shared_ptr<ServerState> state, tcp::socket socket)
      : state_(std::move(state)), socket_(std::move(socket)) {
    ErrorCode ec;
    tcp::endpoint remote = socket_.remote_endpoint(ec);
    if (!ec) remote_address_ = remote.address().to_string();
  }

  ~Connection() {
    core::MutexLock lock(state_->connections_mu);
    state_->connections.erase(this);
  }

  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Once owned by a shared_ptr: the sweeper takes one from the set of connections.
  void Start() {
    {
      core::MutexLock lock(state_->connections_mu);
      state_->connections.insert(this);
    }
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] { self->DoRead(); });
  }

  // Called from any thread, once per request handed to the handler.
  void Answer(HttpResponse&& response) {
    if (!state_->EnterPost()) {
      state_->RequestFinished();  // Stop() closes the socket; nobody will write this
      return;
    }
    try {
      asio::dispatch(socket_.get_executor(),
                     [self = shared_from_this(), response = std::move(response)]() mutable {
                       self->Write(std::move(response), /*counted=*/true, /*close_after=*/false);
                     });
    } catch (...) {
      state_->RequestFinished();
    }
    state_->LeavePost();
  }

  // Whether the connection's deadline has passed: it was idle (or would not read) that long.
  bool PastDeadline(core::MonotonicTime now) const {
    return deadline_.load(std::memory_order_relaxed) <= now.time_since_epoch().count();
  }

  // Closes the connection if it is still past its deadline once on its strand (it may have just
  // become busy). From any thread.
  void CloseIfPastDeadline() {
    asio::dispatch(socket_.get_executor(), [self = shared_from_this()] {
      if (self->PastDeadline(core::MonotonicNow())) self->Close();
    });
  }

  // Stop() only, once the I/O threads are joined.
  void CloseNow() {
    ErrorCode ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

 private:
  void DoRead() {
    head_ = false;
    parser_.emplace();
    body_limit_ = state_->options.max_body_bytes;
    // With limits by route, none until the headers are read (the parser would refuse a
    // Content-Length above it while reading them); OnHeader sets the route's.
    if (state_->options.body_limit) {
      parser_->body_limit(boost::none);
    } else {
      parser_->body_limit(body_limit_);
    }
    parser_->header_limit(kHeaderLimitBytes);
    SetDeadline(state_->options.idle_timeout);
    // The headers first: the body's limit depends on the route.
    http::async_read_header(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](ErrorCode ec, size_t /*bytes*/) { self->OnHeader(ec); });
  }

  void OnHeader(ErrorCode ec) {
    if (ec || parser_->is_done()) return OnRead(ec);
    if (state_->options.body_limit) {
      const auto& header = parser_->get();
      body_limit_ = state_->options.body_limit(std::string_view(header.method_string()),
                                               std::string_view(header.target()));
      const boost::optional<uint64_t> length = parser_->content_length();
      if (length && *length > body_limit_) return OnRead(http::error::body_limit);
      parser_->body_limit(body_limit_);  // a chunked body is counted as it comes
    }
    http::async_read(
        socket_, buffer_, *parser_,
        [self = shared_from_this()](ErrorCode read, size_t /*bytes*/) { self->OnRead(read); });
  }

  void OnRead(ErrorCode ec) {
    if (ec == http::error::body_limit) {
      WriteError(ErrorResponse(413, "PAYLOAD_TOO_LARGE",
                               "request body is larger than this route's limit of " +
                                   LimitText(body_limit_) + "; send a smaller body"));
      return;
    }
    if (ec == http::error::header_limit) {
      WriteError(ErrorResponse(431, "HEADERS_TOO_LARGE",
                               "request headers are larger than the " +
                                   std::to_string(kHeaderLimitBytes) +
                                   "-byte limit; send fewer or shorter headers"));
      return;
    }
    if (ec && ec.category() == http::make_error_code(http::error::bad_method).category() &&
        ec != http::error::end_of_stream && ec != http::error::partial_message) {
      WriteError(ErrorResponse(400, "BAD_REQUEST", "malformed HTTP request: " + ec.message()));
      return;
    }
    if (ec) {  // the client left, went idle too long, or Stop() closed the socket
      Close();
      return;
    }
    ClearDeadline();  // the handler may take its time; the client has its own timeout

    http::request<http::string_body> message = parser_->release();
    parser_.reset();
    keep_alive_ = message.keep_alive();
    head_ = message.method() == http::verb::head;
    HttpRequest request = ToHttpRequest(std::move(message));
    request.remote_address = remote_address_;

    state_->RequestStarted();
    std::shared_ptr<ResponseState> answer;
    try {
      answer = std::make_shared<ResponseState>(shared_from_this());
    } catch (...) {
      state_->RequestFinished();
      Close();
      return;
    }
    try {
      state_->handler(std::move(request),
                      [answer](HttpResponse response) { answer->Answer(std::move(response)); });
    } catch (...) {
      // A handler that throws has dropped its Responder, which answers 500.
    }
  }

  // Answers once: the Responder's copies share it, and the last one to go answers 500 if nobody
  // answered, so that no client waits forever on a forgotten request.
  class ResponseState {
   public:
    explicit ResponseState(std::shared_ptr<Connection> connection)
        : connection_(std::move(connection)) {}
    ResponseState(const ResponseState&) = delete;
    ResponseState& operator=(const ResponseState&) = delete;
    ~ResponseState() {
      if (answered_.load()) return;
      try {
        connection_->Answer(ErrorResponse(
            500, "INTERNAL",
            "the server dropped this request without answering it; this is a bug in suanli"));
      } catch (...) {
        connection_->state_->RequestFinished();
      }
    }
    void Answer(HttpResponse&& response) {
      if (answered_.exchange(true)) return;  // a second answer is ignored
      connection_->Answer(std::move(response));
    }

   private:
    std::shared_ptr<Connection> connection_;
    std::atomic<bool> answered_{false};
  };

  void WriteError(HttpResponse&& response) {
    Write(std::move(response), /*counted=*/false, /*close_after=*/true);
  }

  void Write(HttpResponse&& response, bool counted, bool close_after) {
    counted_ = counted;
    close_after_ = close_after || !keep_alive_ || state_->draining.load();
    int status = response.status;
    if (status < 100 || status > 999) status = 500;
    response_.clear();
    response_.version(11);
    response_.result(static_cast<unsigned>(status));
    response_.set(http::field::server, "suanli");
    response_.set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) response_.insert(name, value);
    response_.body() = std::move(response.body);
    response_.keep_alive(!close_after_);
    response_.prepare_payload();
    // The answer to a HEAD has the Content-Length of the body it would have had, and no body: a
    // body sent after it would be read as the start of the next answer.
    if (head_) response_.body().clear();
    SetDeadline(state_->options.idle_timeout);  // a client that does not read is dropped
    http::async_write(
        socket_, response_,
        [self = shared_from_this()](ErrorCode ec, size_t /*bytes*/) { self->OnWrite(ec); });
  }

  void OnWrite(ErrorCode ec) {
    if (counted_) {
      counted_ = false;
      state_->RequestFinished();
    }
    response_.body().clear();
    if (ec) {
      Close();
      return;
    }
    if (close_after_) {
      Linger();
      return;
    }
    DoRead();
  }

  // Half-closes, then reads and discards until the client closes too (or kLingerTime passes):
  // closing with unread data would make the kernel send a reset that can destroy our answer.
  void Linger() {
    ErrorCode ec;
    socket_.shutdown(tcp::socket::shutdown_send, ec);
    if (ec) {
      Close();
      return;
    }
    buffer_.consume(buffer_.size());
    SetDeadline(kLingerTime);
    DrainSome();
  }

  void DrainSome() {
    socket_.async_read_some(buffer_.prepare(4096),
                            [self = shared_from_this()](ErrorCode ec, size_t bytes) {
                              if (ec) {
                                self->Close();
                                return;
                              }
                              self->buffer_.commit(bytes);
                              self->buffer_.consume(self->buffer_.size());
                              self->DrainSome();
                            });
  }

  void Close() {
    ErrorCode ec;
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }

  // The idle deadline, kept by the sweeper (BeastHttpServer::Sweep) rather than by a timer per
  // read and write: a timer is set and cancelled through the reactor's lock, which every I/O
  // thread shares (twice per request with Beast's timed stream: a tenth of a small GET's CPU).
  void SetDeadline(std::chrono::steady_clock::duration after) {
    deadline_.store((core::MonotonicNow() + after).time_since_epoch().count(),
                    std::memory_order_relaxed);
  }
  void ClearDeadline() { deadline_.store(kNoDeadline, std::memory_order_relaxed); }

  const std::shared_ptr<ServerState> state_;
  tcp::socket socket_;
  static constexpr std::chrono::steady_clock::rep kNoDeadline =
      std::chrono::steady_clock::time_point::max().time_since_epoch().count();
  std::atomic<std::chrono::steady_clock::rep> deadline_{kNoDeadline};
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  size_t body_limit_ = 0;  // the request being read's
  http::response<http::string_body> response_;
  std::string remote_address_;
  bool keep_alive_ = true;
  bool head_ = false;  // the request being answered is a HEAD
  bool counted_ = false;
  bool close_after_ = false;
};

class BeastHttpServer final : public HttpServer {
 public:
  explicit BeastHttpServer(std::shared_ptr<ServerState> state)
      : state_(std::move(state)),
        acceptor_(asio::make_strand(state_->ioc)),
        retry_timer_(acceptor_.get_executor()),
        sweep_timer_(acceptor_.get_executor()) {}

  ~BeastHttpServer() override { Stop(std::chrono::milliseconds(0)); }

  BeastHttpServer(const BeastHttpServer&) = delete;
  BeastHttpServer& operator=(const BeastHttpServer&) = delete;

  core::Status Listen() {
    const HttpServerOptions& options = state_->options;
    std::string where = options.host + ":" + std::to_string(options.port);
    if (options.host.find(':') != std::string::npos) {
      where = "[" + options.host + "]:" + std::to_string(options.port);
    }
    ErrorCode ec;
    asio::ip::address address = asio::ip::make_address(options.host, ec);
    if (ec) {
      tcp::resolver resolver(state_->ioc);
      auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
      if (ec || results.empty()) {
        return core::InvalidArgumentError("cannot listen on " + where + ": '" + options.host +
                                          "' is neither an IP address nor a known host name");
      }
      address = results.begin()->endpoint().address();
    }
    tcp::endpoint endpoint(address, options.port);
    if (!acceptor_.open(endpoint.protocol(), ec)) {
      acceptor_.set_option(asio::socket_base::reuse_address(true), ec);
      if (!ec) acceptor_.bind(endpoint, ec);
      if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
    }
    if (ec) {
      std::string reason = ec == asio::error::address_in_use
                               ? "address already in use; is another suanli server running?"
                               : Lower(ec.message()) + ";";
      return core::UnavailableError("cannot listen on " + where + ": " + reason +
                                    " choose another address with --listen");
    }
    port_ = acceptor_.local_endpoint(ec).port();
    return core::Status::Ok();
  }

  void Run() {
    DoAccept();
    Sweep();
    int threads = std::max(1, state_->options.threads);
    threads_.reserve(static_cast<size_t>(threads));
    for (int i = 0; i < threads; ++i) {
      threads_.emplace_back([state = state_] {
        for (;;) {
          try {
            state->ioc.run();
            return;
          } catch (...) {
            // A handler threw past its own catch; the connection it served is gone, serve on.
          }
        }
      });
    }
  }

  uint16_t port() const override { return port_; }

  void Stop(std::chrono::milliseconds grace) override {
    core::MutexLock stop_lock(stop_mu_);
    if (stopped_) return;
    stopped_ = true;
    try {
      // Draining first: a client that sees the listener closed must also get `Connection: close`.
      state_->draining.store(true);
      StopAccepting();
      {
        core::MutexLock lock(state_->drain_mu);
        state_->drain_cv.WaitFor(state_->drain_mu, grace,
                                 [this] { return state_->in_flight.load() == 0; });
      }
      state_->stopped.store(true);
      while (state_->posting.load() != 0) std::this_thread::yield();
      state_->work.reset();
      state_->ioc.stop();
      for (std::thread& thread : threads_) thread.join();
      threads_.clear();
      {
        core::MutexLock lock(state_->connections_mu);
        for (Connection* connection : state_->connections) connection->CloseNow();
      }
      // Destroys every queued handler and the connections they hold; connections that a Responder
      // still holds die with it.
      state_->ioc.shutdown();
    } catch (...) {
      // Nothing here should throw; if it did, there is nothing better to do than stop anyway.
    }
  }

 private:
  void DoAccept() {
    acceptor_.async_accept(asio::make_strand(state_->ioc),
                           [this](ErrorCode ec, tcp::socket socket) { OnAccept(ec, socket); });
  }

  void OnAccept(ErrorCode ec, tcp::socket& socket) {
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of file descriptors, typically: wait a little instead of spinning.
      retry_timer_.expires_after(std::chrono::milliseconds(50));
      retry_timer_.async_wait([this](ErrorCode timer_ec) {
        if (!timer_ec && acceptor_.is_open()) DoAccept();
      });
      return;
    }
    ErrorCode option_ec;
    socket.set_option(tcp::no_delay(true), option_ec);
    try {
      std::make_shared<Connection>(state_, std::move(socket))->Start();
    } catch (...) {
      // Out of memory for one connection: it is dropped, the server goes on.
    }
    DoAccept();
  }

  // Closes the connections past their deadline, a few times per idle timeout (so each is closed
  // between its timeout and a quarter of it later), until the server stops accepting.
  void Sweep() {
    const auto every = std::clamp<std::chrono::steady_clock::duration>(
        state_->options.idle_timeout / 4, std::chrono::milliseconds(100), std::chrono::seconds(1));
    sweep_timer_.expires_after(every);
    sweep_timer_.async_wait([this](ErrorCode ec) {
      if (ec || !acceptor_.is_open()) return;
      const auto now = core::MonotonicNow();
      std::vector<std::shared_ptr<Connection>> past;
      {
        core::MutexLock lock(state_->connections_mu);
        for (Connection* connection : state_->connections) {
          if (!connection->PastDeadline(now)) continue;
          // Empty when the connection is being destroyed (its destructor waits for this lock).
          if (std::shared_ptr<Connection> held = connection->weak_from_this().lock()) {
            past.push_back(std::move(held));
          }
        }
      }
      for (const std::shared_ptr<Connection>& connection : past) connection->CloseIfPastDeadline();
      Sweep();
    });
  }

  void StopAccepting() {
    ErrorCode ec;
    if (threads_.empty()) {  // never ran: nothing else touches the acceptor
      acceptor_.close(ec);
      return;
    }
    std::promise<void> closed;
    std::future<void> done = closed.get_future();
    asio::post(acceptor_.get_executor(), [this, &closed, &ec] {
      acceptor_.close(ec);
      retry_timer_.cancel();
      sweep_timer_.cancel();
      closed.set_value();
    });
    done.wait();
  }

  std::shared_ptr<ServerState> state_;
  tcp::acceptor acceptor_;
  asio::steady_timer retry_timer_;
  asio::steady_timer sweep_timer_;
  uint16_t port_ = 0;
  std::vector<std::thread> threads_;
  core::Mutex stop_mu_;
  bool stopped_ GUARDED_BY(stop_mu_) = false;
};

}  // namespace

core::Result<std::unique_ptr<HttpServer>> HttpServer::Start(const HttpServerOptions& options,
                                                            HttpHandler handler) {
  try {
    auto server = std::make_unique<BeastHttpServer>(
        std::make_shared<ServerState>(options, std::move(handler)));
    SUANLI_RETURN_IF_ERROR(server->Listen());
    server->Run();
    return std::unique_ptr<HttpServer>(std::move(server));
  } catch (const std::exception& e) {
    return core::InternalError(std::string("cannot start the HTTP server: ") + e.what());
  }
}

core::Result<std::optional<HttpRequest>> ReadHttpRequest(std::string_view bytes,
                                                         size_t max_body_bytes, size_t split) {
  http::request_parser<http::string_body> parser;
  parser.header_limit(kHeaderLimitBytes);
  parser.body_limit(max_body_bytes);
  split = std::min(split, bytes.size());
  std::string unread;  // what the parser left of the pieces so far, as a connection's buffer
  ErrorCode ec;
  for (std::string_view piece : {bytes.substr(0, split), bytes.substr(split)}) {
    unread.append(piece);
    std::string_view left = unread;
    while (!left.empty() && !parser.is_done()) {
      const size_t used = parser.put(asio::buffer(left.data(), left.size()), ec);
      left.remove_prefix(used);  // need_more may still have taken some (a chunk's bytes)
      if (ec == http::error::need_more) {
        ec = {};
        break;
      }
      if (ec == http::error::body_limit || ec == http::error::header_limit) {
        return core::ResourceExhaustedError("request over a limit: " + ec.message());
      }
      if (ec) return core::InvalidArgumentError("malformed HTTP request: " + ec.message());
    }
    if (parser.is_done()) return std::optional<HttpRequest>(ToHttpRequest(parser.release()));
    unread = std::string(left);
  }
  return std::optional<HttpRequest>();
}

}  // namespace suanli::net
