#include "net/http_client.h"

#include <array>
#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <exception>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace suanli::net {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
using tcp = asio::ip::tcp;
using local_stream = asio::local::stream_protocol;
using ErrorCode = boost::system::error_code;

// Docker's list and inspect answers for a busy host stay well below this.
constexpr uint64_t kMaxResponseBodyBytes = uint64_t{64} << 20;
constexpr uint32_t kMaxResponseHeaderBytes = 64 * 1024;
constexpr size_t kStreamPieceBytes = 64 * 1024;

std::string Lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// "connection refused" rather than "Connection refused": it ends a sentence of ours.
std::string Reason(const ErrorCode& ec) {
  std::string message = ec.message();
  if (!message.empty() && message[0] >= 'A' && message[0] <= 'Z' &&
      !(message.size() > 1 && message[1] >= 'A' && message[1] <= 'Z')) {
    message[0] = static_cast<char>(message[0] - 'A' + 'a');
  }
  return message;
}

std::string Duration(std::chrono::milliseconds timeout) {
  if (timeout.count() % 1000 == 0) return std::to_string(timeout.count() / 1000) + " s";
  return std::to_string(timeout.count()) + " ms";
}

// A broken keep-alive connection shows up as one of these on the first write or read.
bool IsStaleConnection(const ErrorCode& ec) {
  return ec == http::error::end_of_stream || ec == asio::error::eof ||
         ec == asio::error::connection_reset || ec == asio::error::broken_pipe ||
         ec == asio::error::connection_aborted || ec == asio::error::not_connected;
}

template <typename Protocol>
class BeastHttpClient final : public HttpClient {
 public:
  using Socket = beast::basic_stream<Protocol, asio::any_io_executor, beast::unlimited_rate_policy>;

  // For TCP: host and port; for unix sockets: the socket's path in `host`.
  BeastHttpClient(std::string url, std::string host, std::string port, HttpClientOptions options)
      : url_(std::move(url)), host_(std::move(host)), port_(std::move(port)), options_(options) {}

  core::Result<HttpResponse> Send(std::string_view method, std::string_view target,
                                  std::string_view body, const Headers& headers) override {
    try {
      return Exchange(method, target, body, headers, nullptr);
    } catch (const std::exception& e) {
      Disconnect();
      return core::InternalError("request to " + url_ + " failed: " + e.what());
    }
  }

  core::Result<HttpResponse> Stream(std::string_view method, std::string_view target,
                                    std::string_view body, const Headers& headers,
                                    const std::function<bool(std::string_view)>& on_data) override {
    try {
      return Exchange(method, target, body, headers, &on_data);
    } catch (const std::exception& e) {
      Disconnect();
      return core::InternalError("request to " + url_ + " failed: " + e.what());
    }
  }

  bool last_request_unsent() const override { return last_request_unsent_; }

 private:
  // Runs the io_context until the started operation (and its timer) completes.
  void RunIo() {
    ioc_.restart();
    ioc_.run();
  }

  ErrorCode Connect() {
    stream_.emplace(ioc_);
    stream_->expires_after(options_.timeout);
    ErrorCode result;
    if constexpr (std::is_same_v<Protocol, tcp>) {
      tcp::resolver resolver(ioc_);
      ErrorCode ec;
      auto endpoints = resolver.resolve(host_, port_, ec);
      if (ec) return ec;
      stream_->async_connect(endpoints,
                             [&result](ErrorCode connect_ec, const tcp::endpoint& /*endpoint*/) {
                               result = connect_ec;
                             });
    } else {
      stream_->async_connect(local_stream::endpoint(host_),
                             [&result](ErrorCode connect_ec) { result = connect_ec; });
    }
    RunIo();
    if (!result && std::is_same_v<Protocol, tcp>) {
      ErrorCode ignored;
      stream_->socket().set_option(tcp::no_delay(true), ignored);
    }
    return result;
  }

  void Disconnect() {
    if (!stream_) return;
    ErrorCode ignored;
    stream_->socket().shutdown(asio::socket_base::shutdown_both, ignored);
    stream_->close();
    stream_.reset();
    buffer_.clear();
  }

  core::Status Failure(const ErrorCode& ec, std::string_view method, std::string_view target) {
    Disconnect();
    if (ec == beast::error::timeout) {
      return core::UnavailableError(url_ + " did not answer " + std::string(method) + " " +
                                    std::string(target) + " within " + Duration(options_.timeout) +
                                    "; is it overloaded or stuck?");
    }
    if (ec == http::error::body_limit) {
      return core::ResourceExhaustedError(url_ + " answered " + std::string(method) + " " +
                                          std::string(target) + " with a body larger than the " +
                                          std::to_string(kMaxResponseBodyBytes >> 20) +
                                          " MiB limit");
    }
    if (ec == http::error::end_of_stream || ec == http::error::partial_message ||
        ec == asio::error::eof) {
      return core::UnavailableError(url_ + " closed the connection before answering " +
                                    std::string(method) + " " + std::string(target));
    }
    if (ec.category() == http::make_error_code(http::error::bad_version).category()) {
      return core::UnavailableError(url_ + " sent a malformed HTTP answer to " +
                                    std::string(method) + " " + std::string(target) + " (" +
                                    ec.message() + ")");
    }
    return core::UnavailableError("cannot reach " + url_ + ": " + Reason(ec));
  }

  http::request<http::string_body> BuildRequest(std::string_view method, std::string_view target,
                                                std::string_view body, const Headers& headers) {
    http::request<http::string_body> request;
    http::verb verb = http::string_to_verb(method);
    if (verb == http::verb::unknown) {
      request.method_string(method);
    } else {
      request.method(verb);
    }
    request.target(target);
    request.version(11);
    if constexpr (std::is_same_v<Protocol, tcp>) {
      bool ipv6 = host_.find(':') != std::string::npos;
      request.set(http::field::host, (ipv6 ? "[" + host_ + "]" : host_) + ":" + port_);
    } else {
      request.set(http::field::host, "localhost");  // what the docker CLI sends
    }
    request.set(http::field::user_agent, "suanli");
    if (!body.empty()) request.set(http::field::content_type, "application/json");
    for (const auto& [name, value] : headers) request.set(name, value);
    request.body() = std::string(body);
    request.prepare_payload();
    request.keep_alive(true);
    return request;
  }

  static HttpResponse ToResponse(const http::response_header<>& header) {
    HttpResponse response;
    response.status = static_cast<int>(header.result_int());
    auto content_type = header.find(http::field::content_type);
    response.content_type =
        content_type == header.end() ? std::string() : std::string(content_type->value());
    for (const auto& field : header) {
      response.headers.emplace_back(Lower(field.name_string()), std::string(field.value()));
    }
    return response;
  }

  core::Result<HttpResponse> Exchange(std::string_view method, std::string_view target,
                                      std::string_view body, const Headers& headers,
                                      const std::function<bool(std::string_view)>* on_data) {
    http::request<http::string_body> request = BuildRequest(method, target, body, headers);
    const bool head = request.method() == http::verb::head;
    last_request_unsent_ = false;
    for (int attempt = 0;; ++attempt) {
      const bool reused = stream_.has_value();
      if (!reused) {
        ErrorCode ec = Connect();
        if (ec) {
          last_request_unsent_ = true;
          return Failure(ec, method, target);
        }
      }
      // One deadline for the whole exchange; a reused connection gets a fresh one here.
      stream_->expires_after(options_.timeout);
      ErrorCode ec;
      http::async_write(*stream_, request,
                        [&ec](ErrorCode write_ec, size_t /*bytes*/) { ec = write_ec; });
      RunIo();
      if (ec) {
        if (reused && attempt == 0 && IsStaleConnection(ec)) {
          Disconnect();
          continue;
        }
        return Failure(ec, method, target);
      }
      bool stale = false;
      core::Result<HttpResponse> result = on_data == nullptr
                                              ? ReadWhole(method, target, head, stale)
                                              : ReadStream(method, target, head, *on_data, stale);
      if (stale && reused && attempt == 0) {
        Disconnect();
        continue;
      }
      return result;
    }
  }

  core::Result<HttpResponse> ReadWhole(std::string_view method, std::string_view target, bool head,
                                       bool& stale) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(kMaxResponseBodyBytes);
    parser.header_limit(kMaxResponseHeaderBytes);
    parser.skip(head);
    ErrorCode ec;
    http::async_read(*stream_, buffer_, parser,
                     [&ec](ErrorCode read_ec, size_t /*bytes*/) { ec = read_ec; });
    RunIo();
    if (ec) {
      stale = !parser.got_some() && IsStaleConnection(ec);
      return Failure(ec, method, target);
    }
    HttpResponse response = ToResponse(parser.get().base());
    response.body = std::move(parser.get().body());
    if (!parser.get().keep_alive()) Disconnect();
    return response;
  }

  core::Result<HttpResponse> ReadStream(std::string_view method, std::string_view target, bool head,
                                        const std::function<bool(std::string_view)>& on_data,
                                        bool& stale) {
    http::response_parser<http::buffer_body> parser;
    parser.body_limit(boost::none);
    parser.header_limit(kMaxResponseHeaderBytes);
    parser.skip(head);
    ErrorCode ec;
    http::async_read_header(*stream_, buffer_, parser,
                            [&ec](ErrorCode read_ec, size_t /*bytes*/) { ec = read_ec; });
    RunIo();
    if (ec) {
      stale = !parser.got_some() && IsStaleConnection(ec);
      return Failure(ec, method, target);
    }
    HttpResponse response = ToResponse(parser.get().base());
    if (!piece_) piece_ = std::make_unique<std::array<char, kStreamPieceBytes>>();
    while (!parser.is_done()) {
      parser.get().body().data = piece_->data();
      parser.get().body().size = piece_->size();
      // A long stream (`docker logs -f`) may last: the timeout bounds each silence, not the whole.
      stream_->expires_after(options_.timeout);
      // read_some: hand over what has arrived rather than wait for a full piece.
      http::async_read_some(*stream_, buffer_, parser,
                            [&ec](ErrorCode read_ec, size_t /*bytes*/) { ec = read_ec; });
      RunIo();
      if (ec == http::error::need_buffer) ec = {};
      size_t received = piece_->size() - parser.get().body().size;
      if (received > 0 && !on_data(std::string_view(piece_->data(), received))) {
        Disconnect();
        return response;
      }
      if (ec) return Failure(ec, method, target);
    }
    if (!parser.get().keep_alive()) Disconnect();
    return response;
  }

  const std::string url_;
  const std::string host_;
  const std::string port_;
  const HttpClientOptions options_;
  bool last_request_unsent_ = false;
  asio::io_context ioc_{1};
  std::optional<Socket> stream_;  // the kept connection, if any
  beast::flat_buffer buffer_;
  std::unique_ptr<std::array<char, kStreamPieceBytes>> piece_;
};

// Several servers (replicas) behind one client: requests go to the one that last answered; one
// that cannot be connected to is passed over for the next, in order. Only a request that never
// left is sent again elsewhere, so nothing is done twice; one that failed on the way (the server
// died while answering) fails as it would with one server, and the next request moves on.
class FailoverHttpClient final : public HttpClient {
 public:
  explicit FailoverHttpClient(std::vector<std::unique_ptr<HttpClient>> servers)
      : servers_(std::move(servers)) {}

  core::Result<HttpResponse> Send(std::string_view method, std::string_view target,
                                  std::string_view body, const Headers& headers) override {
    return OnAny([&](HttpClient& server) { return server.Send(method, target, body, headers); });
  }

  core::Result<HttpResponse> Stream(std::string_view method, std::string_view target,
                                    std::string_view body, const Headers& headers,
                                    const std::function<bool(std::string_view)>& on_data) override {
    return OnAny(
        [&](HttpClient& server) { return server.Stream(method, target, body, headers, on_data); });
  }

  bool last_request_unsent() const override { return last_request_unsent_; }

 private:
  template <typename Exchange>
  core::Result<HttpResponse> OnAny(const Exchange& exchange) {
    last_request_unsent_ = false;
    std::string reasons;
    for (size_t tried = 0; tried < servers_.size(); ++tried) {
      HttpClient& server = *servers_[current_];
      core::Result<HttpResponse> answer = exchange(server);
      if (answer.ok() || !server.last_request_unsent()) return answer;
      reasons += (reasons.empty() ? "" : "; ") + answer.status().message();
      current_ = (current_ + 1) % servers_.size();
    }
    last_request_unsent_ = true;
    return core::UnavailableError("no server answered (" + reasons + ")");
  }

  std::vector<std::unique_ptr<HttpClient>> servers_;
  size_t current_ = 0;
  bool last_request_unsent_ = false;
};

core::Result<std::unique_ptr<HttpClient>> CreateOne(std::string_view base_url,
                                                    HttpClientOptions options);

}  // namespace

std::vector<std::string> SplitBaseUrls(std::string_view base_urls) {
  std::vector<std::string> urls;
  while (true) {
    const size_t comma = base_urls.find(',');
    std::string_view url = base_urls.substr(0, comma);
    while (!url.empty() && url.front() == ' ') url.remove_prefix(1);
    while (!url.empty() && url.back() == ' ') url.remove_suffix(1);
    if (!url.empty()) urls.emplace_back(url);
    if (comma == std::string_view::npos) return urls;
    base_urls.remove_prefix(comma + 1);
  }
}

core::Result<std::unique_ptr<HttpClient>> HttpClient::Create(std::string_view base_url,
                                                             HttpClientOptions options) {
  if (base_url.find(',') == std::string_view::npos) return CreateOne(base_url, options);
  std::vector<std::unique_ptr<HttpClient>> servers;
  for (const std::string& url : SplitBaseUrls(base_url)) {
    if (!url.starts_with("http://")) {
      return core::InvalidArgumentError("'" + url + "' in '" + std::string(base_url) +
                                        "' is not http://HOST:PORT; several servers are "
                                        "http://A:PORT,http://B:PORT");
    }
    core::Result<std::unique_ptr<HttpClient>> server = CreateOne(url, options);
    if (!server.ok()) return server.status();
    servers.push_back(std::move(server).value());
  }
  if (servers.empty()) {
    return core::InvalidArgumentError("'" + std::string(base_url) + "' names no server");
  }
  return std::unique_ptr<HttpClient>(std::make_unique<FailoverHttpClient>(std::move(servers)));
}

namespace {

core::Result<std::unique_ptr<HttpClient>> CreateOne(std::string_view base_url,
                                                    HttpClientOptions options) {
  std::string url(base_url);
  while (url.size() > 1 && url.back() == '/' && url.rfind("unix://", 0) != 0) url.pop_back();
  constexpr std::string_view kHttp = "http://";
  constexpr std::string_view kUnix = "unix://";
  std::string_view text = url;
  if (text.substr(0, kUnix.size()) == kUnix) {
    std::string path(text.substr(kUnix.size()));
    if (path.empty() || path[0] != '/') {
      return core::InvalidArgumentError("'" + url +
                                        "' has no absolute socket path; write it as "
                                        "unix:///path/to/socket");
    }
    return std::unique_ptr<HttpClient>(
        std::make_unique<BeastHttpClient<local_stream>>(url, path, "", options));
  }
  if (text.substr(0, kHttp.size()) == kHttp) {
    std::string_view authority = text.substr(kHttp.size());
    if (authority.find('/') != std::string_view::npos) {
      return core::InvalidArgumentError("'" + url +
                                        "' has a path; give only http://HOST:PORT as the base URL");
    }
    std::string host;
    std::string port = "80";
    if (!authority.empty() && authority[0] == '[') {  // [::1]:7070
      size_t close = authority.find(']');
      if (close == std::string_view::npos) {
        return core::InvalidArgumentError("'" + url + "' has an unclosed '[' in its host");
      }
      host = std::string(authority.substr(1, close - 1));
      std::string_view rest = authority.substr(close + 1);
      if (!rest.empty()) {
        if (rest[0] != ':') {
          return core::InvalidArgumentError("'" + url + "' is not http://HOST:PORT");
        }
        port = std::string(rest.substr(1));
      }
    } else {
      size_t colon = authority.rfind(':');
      host = std::string(authority.substr(0, colon));
      if (colon != std::string_view::npos) port = std::string(authority.substr(colon + 1));
    }
    bool port_ok = !port.empty() && port.size() <= 5 &&
                   port.find_first_not_of("0123456789") == std::string::npos &&
                   std::stoi(port) <= 65535;
    if (host.empty() || !port_ok) {
      return core::InvalidArgumentError("'" + url +
                                        "' is not http://HOST:PORT with a port up to 65535");
    }
    return std::unique_ptr<HttpClient>(
        std::make_unique<BeastHttpClient<tcp>>(url, host, port, options));
  }
  return core::InvalidArgumentError("'" + url +
                                    "' is not a URL suanli can use; write http://HOST:PORT or "
                                    "unix:///path/to/socket");
}

}  // namespace
}  // namespace suanli::net
