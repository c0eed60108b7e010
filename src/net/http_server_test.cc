#include "net/http_server.h"

#include <gtest/gtest.h>
#include <poll.h>

#include <atomic>
#include <boost/asio.hpp>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/http_client.h"

namespace suanli::net {
namespace {

using tcp = boost::asio::ip::tcp;
using core::StatusCode;

std::unique_ptr<HttpServer> StartOrDie(HttpServerOptions options, HttpHandler handler) {
  options.port = 0;
  auto server = HttpServer::Start(options, std::move(handler));
  SUANLI_CHECK(server.ok(), server.status().ToString());
  return std::move(server).value();
}

std::unique_ptr<HttpServer> StartOrDie(HttpHandler handler) {
  return StartOrDie(HttpServerOptions(), std::move(handler));
}

std::string UrlOf(const HttpServer& server) {
  return "http://127.0.0.1:" + std::to_string(server.port());
}

std::unique_ptr<HttpClient> ClientOf(const HttpServer& server, HttpClientOptions options = {}) {
  auto client = HttpClient::Create(UrlOf(server), options);
  SUANLI_CHECK(client.ok(), client.status().ToString());
  return std::move(client).value();
}

HttpResponse Text(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// Hands the Responders of requests the handler does not answer to the test, in order.
class ResponderQueue {
 public:
  void Push(Responder respond) {
    std::lock_guard<std::mutex> lock(mu_);
    waiting_.push_back(std::move(respond));
    cv_.notify_all();
  }
  // Blocks until a request arrived.
  Responder Pop() {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [this] { return !waiting_.empty(); });
    Responder respond = std::move(waiting_.front());
    waiting_.erase(waiting_.begin());
    return respond;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Responder> waiting_;  // guarded by mu_
};

// A plain TCP connection for what HttpClient will not send: malformed requests, several requests
// on one connection checked by hand.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) : socket_(ioc_) {
    socket_.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), port));
  }
  void Write(std::string_view bytes) { boost::asio::write(socket_, boost::asio::buffer(bytes)); }

  // One response: its head and its Content-Length body. Empty at end of stream.
  std::string ReadResponse() {
    boost::system::error_code ec;
    size_t head_end =
        boost::asio::read_until(socket_, boost::asio::dynamic_buffer(pending_), "\r\n\r\n", ec);
    if (ec) return "";
    std::string head = pending_.substr(0, head_end);
    size_t length = 0;
    size_t at = head.find("Content-Length: ");
    if (at != std::string::npos) length = std::stoul(head.substr(at + 16));
    if (pending_.size() < head_end + length) {
      boost::asio::read(socket_, boost::asio::dynamic_buffer(pending_),
                        boost::asio::transfer_exactly(head_end + length - pending_.size()), ec);
    }
    std::string response = pending_.substr(0, head_end + length);
    pending_.erase(0, head_end + length);
    return response;
  }

  // Whether the server closes the connection (within 10 s: a server that never does fails the
  // test instead of hanging it).
  bool ClosedByPeer() {
    pollfd ready{.fd = socket_.native_handle(), .events = POLLIN, .revents = 0};
    if (poll(&ready, 1, 10'000) != 1) return false;
    char byte = 0;
    boost::system::error_code ec;
    socket_.read_some(boost::asio::buffer(&byte, 1), ec);
    return ec == boost::asio::error::eof;
  }

 private:
  boost::asio::io_context ioc_;
  tcp::socket socket_;
  std::string pending_;
};

TEST(HttpServerTest, RoundTripsAGetAndAPostWithDecodedPathQueryAndHeaders) {
  std::mutex mu;
  std::vector<HttpRequest> seen;
  auto server = StartOrDie([&](HttpRequest&& request, Responder respond) {
    HttpResponse response = Text(201, request.method + " " + request.body);
    response.headers.emplace_back("X-Answer", "42");
    {
      std::lock_guard<std::mutex> lock(mu);
      seen.push_back(std::move(request));
    }
    respond(std::move(response));
  });
  auto client = ClientOf(*server);

  auto get = client->Send("GET", "/v1/pods%2Fp-1?state=running&name=a+b%26c&flag&state=x", {},
                          {{"X-Trace", "abc"}});
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->status, 201);
  EXPECT_EQ(get->body, "GET ");
  EXPECT_EQ(get->content_type, "text/plain");
  auto header = [](const HttpResponse& response, std::string_view name) -> std::string {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return "<missing>";
  };
  EXPECT_EQ(header(*get, "x-answer"), "42");
  EXPECT_EQ(header(*get, "server"), "suanli");

  auto post = client->Send("POST", "/v1/pods", R"({"gpu":"h100"})");
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_EQ(post->body, R"(POST {"gpu":"h100"})");

  std::lock_guard<std::mutex> lock(mu);
  ASSERT_EQ(seen.size(), 2u);
  const HttpRequest& first = seen[0];
  EXPECT_EQ(first.method, "GET");
  EXPECT_EQ(first.target, "/v1/pods%2Fp-1?state=running&name=a+b%26c&flag&state=x");
  EXPECT_EQ(first.path, "/v1/pods/p-1");
  ASSERT_EQ(first.query.size(), 4u);
  EXPECT_EQ(first.QueryValue("state"), "running");
  EXPECT_EQ(first.QueryValue("name"), "a b&c");
  EXPECT_EQ(first.QueryValue("flag"), "");
  EXPECT_EQ(first.query[3], (std::pair<std::string, std::string>("state", "x")));
  EXPECT_EQ(first.Header("x-trace"), "abc");
  EXPECT_EQ(first.Header("user-agent"), "suanli");
  EXPECT_EQ(first.Header("host"), "127.0.0.1:" + std::to_string(server->port()));
  EXPECT_EQ(first.Header("content-type"), std::nullopt);
  EXPECT_EQ(first.remote_address, "127.0.0.1");
  const HttpRequest& second = seen[1];
  EXPECT_EQ(second.method, "POST");
  EXPECT_EQ(second.body, R"({"gpu":"h100"})");
  EXPECT_EQ(second.Header("content-type"), "application/json");
  EXPECT_EQ(second.Header("content-length"), "14");
}

TEST(HttpServerTest, BodyOverTheLimitGets413JsonErrorWithoutCallingTheHandler) {
  std::atomic<int> calls{0};
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  auto server = StartOrDie(options, [&](HttpRequest&& request, Responder respond) {
    ++calls;
    respond(Text(200, std::to_string(request.body.size())));
  });
  auto client = ClientOf(*server);

  auto big = client->Send("POST", "/v1/files", std::string(4096, 'x'));
  ASSERT_TRUE(big.ok()) << big.status().ToString();
  EXPECT_EQ(big->status, 413);
  EXPECT_EQ(big->content_type, "application/json");
  EXPECT_NE(big->body.find(R"({"error":{"code":"PAYLOAD_TOO_LARGE")"), std::string::npos)
      << big->body;
  EXPECT_NE(big->body.find("limit of 1024 bytes"), std::string::npos) << big->body;
  EXPECT_EQ(calls.load(), 0);

  // The server closed that connection; the client opens another for a body at the limit.
  auto fits = client->Send("POST", "/v1/files", std::string(1024, 'x'));
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ(fits->status, 200);
  EXPECT_EQ(fits->body, "1024");
  EXPECT_EQ(calls.load(), 1);
}

TEST(HttpServerTest, ARouteMayTakeALargerBodyAndOnlyThatRoute) {
  HttpServerOptions options;
  options.max_body_bytes = 1024;
  options.body_limit = [](std::string_view method, std::string_view target) -> size_t {
    return method == "POST" && target.starts_with("/big") ? size_t{2} << 20 : 1024;
  };
  auto server = StartOrDie(options, [](HttpRequest&& request, Responder respond) {
    respond(Text(200, std::to_string(request.body.size())));
  });
  auto client = ClientOf(*server);
  auto fits = client->Send("POST", "/big?x=1", std::string(size_t{2} << 20, 'x'));
  ASSERT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ(fits->status, 200);
  EXPECT_EQ(fits->body, std::to_string(size_t{2} << 20));
  auto over = client->Send("POST", "/big", std::string((size_t{2} << 20) + 1, 'x'));
  ASSERT_TRUE(over.ok()) << over.status().ToString();
  EXPECT_EQ(over->status, 413);
  EXPECT_NE(over->body.find("limit of 2 MiB (2097152 bytes)"), std::string::npos) << over->body;
  auto elsewhere = client->Send("POST", "/small", std::string(1025, 'x'));
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.status().ToString();
  EXPECT_EQ(elsewhere->status, 413);
  auto get = client->Send("GET", "/big");  // no body: nothing to limit
  ASSERT_TRUE(get.ok());
  EXPECT_EQ(get->status, 200);
}

TEST(HttpServerTest, HeadersOverTheLimitGet431) {
  std::atomic<int> calls{0};
  auto server = StartOrDie([&](HttpRequest&&, Responder respond) {
    ++calls;
    respond(Text(200, "ok"));
  });
  auto client = ClientOf(*server);
  auto response = client->Send("GET", "/", {}, {{"X-Big", std::string(20 * 1024, 'h')}});
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 431);
  EXPECT_NE(response->body.find("HEADERS_TOO_LARGE"), std::string::npos) << response->body;
  EXPECT_EQ(calls.load(), 0);
}

TEST(HttpServerTest, MalformedHttpGets400AndTheConnectionIsClosed) {
  auto server = StartOrDie([](HttpRequest&&, Responder respond) { respond(Text(200, "ok")); });
  RawConnection connection(server->port());
  connection.Write("GET /\r\nthis is not http\r\n\r\n");
  std::string response = connection.ReadResponse();
  EXPECT_EQ(response.rfind("HTTP/1.1 400 ", 0), 0u) << response;
  EXPECT_NE(response.find(R"({"error":{"code":"BAD_REQUEST")"), std::string::npos) << response;
  EXPECT_TRUE(connection.ClosedByPeer());
}

TEST(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnectionUntilClose) {
  std::atomic<int> calls{0};
  auto server = StartOrDie([&](HttpRequest&& request, Responder respond) {
    ++calls;
    respond(Text(200, request.path));
  });
  RawConnection connection(server->port());
  for (int i = 0; i < 3; ++i) {
    connection.Write("GET /n" + std::to_string(i) + " HTTP/1.1\r\nHost: x\r\n\r\n");
    std::string response = connection.ReadResponse();
    EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response;
    EXPECT_NE(response.find("Server: suanli\r\n"), std::string::npos) << response;
    EXPECT_NE(response.find("\r\n\r\n/n" + std::to_string(i)), std::string::npos) << response;
  }
  connection.Write("GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  std::string last = connection.ReadResponse();
  EXPECT_NE(last.find("Connection: close\r\n"), std::string::npos) << last;
  EXPECT_TRUE(connection.ClosedByPeer());
  EXPECT_EQ(calls.load(), 4);
}

// A HEAD is answered with the Content-Length its GET would have and no body, so the next answer on
// the connection is read from its own first byte.
TEST(HttpServerTest, AHeadIsAnsweredWithoutABodyAndTheConnectionStaysInStep) {
  auto server = StartOrDie([](HttpRequest&& request, Responder respond) {
    respond(Text(200, "body of " + request.method));
  });
  auto client = ClientOf(*server);
  core::Result<HttpResponse> head = client->Send("HEAD", "/x");
  ASSERT_TRUE(head.ok()) << head.status().ToString();
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->body, "");
  std::string length;
  for (const auto& [name, value] : head->headers) {
    if (name == "content-length") length = value;
  }
  EXPECT_EQ(length, std::to_string(std::string("body of HEAD").size()));
  core::Result<HttpResponse> get = client->Send("GET", "/x");
  ASSERT_TRUE(get.ok()) << get.status().ToString();
  EXPECT_EQ(get->body, "body of GET");
}

TEST(HttpServerTest, PipelinedRequestsAreHandledOneAtATimeInOrder) {
  std::atomic<int> active{0};
  std::atomic<bool> overlapped{false};
  ResponderQueue queue;
  auto server = StartOrDie([&](HttpRequest&& request, Responder respond) {
    if (++active > 1) overlapped = true;
    std::string path = request.path;
    queue.Push([&active, respond = std::move(respond), path](HttpResponse) {
      --active;
      respond(Text(200, path));
    });
  });
  RawConnection connection(server->port());
  connection.Write("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n");
  std::thread answerer([&] {
    queue.Pop()(HttpResponse());
    queue.Pop()(HttpResponse());
  });
  std::string first = connection.ReadResponse();
  std::string second = connection.ReadResponse();
  answerer.join();
  EXPECT_NE(first.find("\r\n\r\n/a"), std::string::npos) << first;
  EXPECT_NE(second.find("\r\n\r\n/b"), std::string::npos) << second;
  EXPECT_FALSE(overlapped.load());
}

TEST(HttpServerTest, ResponderCalledLaterFromAnotherThreadAnswers) {
  ResponderQueue queue;
  auto server =
      StartOrDie([&](HttpRequest&&, Responder respond) { queue.Push(std::move(respond)); });
  std::thread answerer([&] { queue.Pop()(Text(202, "later")); });
  auto client = ClientOf(*server);
  auto response = client->Send("POST", "/v1/commit", "{}");
  answerer.join();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 202);
  EXPECT_EQ(response->body, "later");
}

TEST(HttpServerTest, DroppedResponderAnswers500) {
  auto server = StartOrDie([](HttpRequest&&, Responder) {});
  auto client = ClientOf(*server);
  auto response = client->Send("GET", "/forgotten");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 500);
  EXPECT_NE(response->body.find(R"("code":"INTERNAL")"), std::string::npos) << response->body;
  // The connection is still usable after the 500.
  auto again = client->Send("GET", "/forgotten");
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->status, 500);
}

TEST(HttpServerTest, HandlerThatThrowsAnswers500) {
  auto server =
      StartOrDie([](HttpRequest&&, Responder) { throw std::runtime_error("handler bug"); });
  auto client = ClientOf(*server);
  auto response = client->Send("GET", "/");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 500);
}

TEST(HttpServerTest, SecondAnswerOfOneRequestIsIgnored) {
  auto server = StartOrDie([](HttpRequest&&, Responder respond) {
    respond(Text(200, "first"));
    respond(Text(200, "second"));
  });
  auto client = ClientOf(*server);
  for (int i = 0; i < 2; ++i) {
    auto response = client->Send("GET", "/");
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->body, "first");
  }
}

TEST(HttpServerTest, ManyClientsOnManyThreadsAllGetTheirOwnAnswers) {
  HttpServerOptions options;
  options.threads = 4;
  auto server = StartOrDie(options, [](HttpRequest&& request, Responder respond) {
    respond(Text(200, request.QueryValue("i").value_or("?")));
  });
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto client = ClientOf(*server);
      for (int i = 0; i < 50; ++i) {
        std::string expected = std::to_string(t * 1000 + i);
        auto response = client->Send("GET", "/echo?i=" + expected);
        if (!response.ok() || response->body != expected) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(HttpServerTest, StartOnABusyPortIsUnavailableAndSaysWhatToDo) {
  auto first = StartOrDie([](HttpRequest&&, Responder respond) { respond(Text(200, "")); });
  HttpServerOptions options;
  options.port = first->port();
  auto second = HttpServer::Start(options, [](HttpRequest&&, Responder) {});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), StatusCode::kUnavailable);
  const std::string message = second.status().message();
  EXPECT_NE(message.find("127.0.0.1:" + std::to_string(first->port())), std::string::npos)
      << message;
  EXPECT_NE(message.find("address already in use"), std::string::npos) << message;
  EXPECT_NE(message.find("--listen"), std::string::npos) << message;
}

TEST(HttpServerTest, StartWithAHostThatIsNoAddressIsInvalidArgument) {
  HttpServerOptions options;
  options.host = "no such host.invalid";
  options.port = 0;
  auto server = HttpServer::Start(options, [](HttpRequest&&, Responder) {});
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), StatusCode::kInvalidArgument);
}

TEST(HttpServerTest, StopClosesARequestStillInFlightAfterTheGraceWithoutHanging) {
  ResponderQueue queue;
  auto server =
      StartOrDie([&](HttpRequest&&, Responder respond) { queue.Push(std::move(respond)); });
  auto client = ClientOf(*server);
  std::future<core::Result<HttpResponse>> pending =
      std::async(std::launch::async, [&] { return client->Send("GET", "/slow"); });
  Responder late = queue.Pop();  // the handler has the request
  server->Stop(std::chrono::milliseconds(20));
  core::Result<HttpResponse> result = pending.get();  // must not wait for the 30 s timeout
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kUnavailable);
  late(Text(200, "too late"));  // after Stop: dropped, no crash
  server->Stop();               // idempotent
}

TEST(HttpServerTest, StopWaitsForARequestAnsweredWithinTheGrace) {
  ResponderQueue queue;
  auto server =
      StartOrDie([&](HttpRequest&&, Responder respond) { queue.Push(std::move(respond)); });
  auto client = ClientOf(*server);
  std::future<core::Result<HttpResponse>> pending =
      std::async(std::launch::async, [&] { return client->Send("GET", "/slow"); });
  Responder respond = queue.Pop();
  std::thread stopper([&] { server->Stop(std::chrono::seconds(30)); });
  // Stop closes the listener first; once connecting fails it is waiting for our answer.
  for (;;) {
    boost::asio::io_context ioc;
    tcp::socket probe(ioc);
    boost::system::error_code ec;
    probe.connect(tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), server->port()), ec);
    if (ec) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  respond(Text(200, "in time"));
  core::Result<HttpResponse> result = pending.get();
  stopper.join();
  ASSERT_TRUE(result.ok()) << result.status().ToString();
  EXPECT_EQ(result->body, "in time");
  auto header = std::find_if(result->headers.begin(), result->headers.end(),
                             [](const auto& field) { return field.first == "connection"; });
  ASSERT_NE(header, result->headers.end());
  EXPECT_EQ(header->second, "close");
}

TEST(HttpServerTest, StopClosesIdleKeepAliveConnections) {
  auto server = StartOrDie([](HttpRequest&&, Responder respond) { respond(Text(200, "ok")); });
  RawConnection connection(server->port());
  connection.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_NE(connection.ReadResponse(), "");
  server->Stop();
  EXPECT_TRUE(connection.ClosedByPeer());
}

TEST(HttpServerTest, ConnectionsIdleForTheTimeoutAreClosedMidRequestOrBetweenRequests) {
  HttpServerOptions options;
  options.idle_timeout = std::chrono::seconds(1);
  auto server =
      StartOrDie(options, [](HttpRequest&&, Responder respond) { respond(Text(200, "ok")); });
  RawConnection kept(server->port());  // one request answered, then nothing
  kept.Write("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  EXPECT_EQ(kept.ReadResponse().rfind("HTTP/1.1 200 ", 0), 0u);
  const auto start = std::chrono::steady_clock::now();
  RawConnection stalled(server->port());  // half a request's headers, then nothing
  stalled.Write("GET / HTTP/1.1\r\nHost: x\r\n");
  RawConnection silent(server->port());  // not a byte
  EXPECT_TRUE(kept.ClosedByPeer());
  EXPECT_TRUE(stalled.ClosedByPeer());
  EXPECT_TRUE(silent.ClosedByPeer());
  // Not before its time: the timeout is the least a client is given.
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(900));
}

TEST(HttpServerTest, AHandlerSlowerThanTheIdleTimeoutStillAnswers) {
  HttpServerOptions options;
  options.idle_timeout = std::chrono::seconds(1);
  ResponderQueue queue;
  auto server = StartOrDie(
      options, [&](HttpRequest&&, Responder respond) { queue.Push(std::move(respond)); });
  std::thread late([&] {
    Responder respond = queue.Pop();
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // the client waits, not idle
    respond(Text(200, "late"));
  });
  auto response = ClientOf(*server)->Send("GET", "/slow");
  late.join();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "late");
}

TEST(HttpClientTest, ClosedPortIsUnavailableAndNamesTheUrl) {
  uint16_t port = 0;
  {
    boost::asio::io_context ioc;
    tcp::acceptor acceptor(ioc, tcp::endpoint(boost::asio::ip::make_address("127.0.0.1"), 0));
    port = acceptor.local_endpoint().port();
  }
  std::string url = "http://127.0.0.1:" + std::to_string(port);
  auto client = HttpClient::Create(url);
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  auto response = (*client)->Send("GET", "/v1/pods");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(), "cannot reach " + url + ": connection refused");
}

TEST(HttpClientTest, TimesOutWhenTheServerDoesNotAnswer) {
  ResponderQueue queue;
  auto server =
      StartOrDie([&](HttpRequest&&, Responder respond) { queue.Push(std::move(respond)); });
  HttpClientOptions options;
  options.timeout = std::chrono::milliseconds(200);
  auto client = ClientOf(*server, options);
  auto response = client->Send("GET", "/v1/stuck");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(),
            UrlOf(*server) +
                " did not answer GET /v1/stuck within 200 ms; is it overloaded or "
                "stuck?");
  queue.Pop()(Text(200, "too late"));  // the server writes to a closed connection: no harm

  // The client recovers with a new connection.
  std::thread answerer([&] { queue.Pop()(Text(200, "now")); });
  auto again = client->Send("GET", "/v1/stuck");
  answerer.join();
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ(again->body, "now");
}

TEST(HttpClientTest, ReconnectsOnceWhenTheServerClosedTheKeptConnection) {
  std::atomic<int> calls{0};
  HttpServerOptions options;
  options.idle_timeout = std::chrono::seconds(75);
  auto first = StartOrDie(options, [&](HttpRequest&&, Responder respond) {
    ++calls;
    respond(Text(200, "one"));
  });
  auto client = ClientOf(*first);
  ASSERT_TRUE(client->Send("GET", "/").ok());
  // Stop closes the kept connection; a new server on the same port takes the next request.
  uint16_t port = first->port();
  first->Stop();
  options.port = port;
  auto second = HttpServer::Start(options, [&](HttpRequest&&, Responder respond) {
    ++calls;
    respond(Text(200, "two"));
  });
  ASSERT_TRUE(second.ok()) << second.status().ToString();
  auto response = client->Send("GET", "/");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "two");
  EXPECT_EQ(calls.load(), 2);
}

TEST(ReadHttpRequestTest, GivesWhatTheHandlerWouldGetWhereverTheBytesAreCut) {
  const std::string bytes =
      "POST /v1/pods/a%20b?x=1&suanli_link=s HTTP/1.1\r\nHost: h\r\nX-Thing: V\r\n"
      "Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
  for (size_t split = 0; split <= bytes.size(); ++split) {
    SCOPED_TRACE(split);
    core::Result<std::optional<HttpRequest>> read = ReadHttpRequest(bytes, 100, split);
    ASSERT_TRUE(read.ok()) << read.status().ToString();
    ASSERT_TRUE(read->has_value());
    const HttpRequest& request = **read;
    EXPECT_EQ(request.method, "POST");
    EXPECT_EQ(request.path, "/v1/pods/a b");
    EXPECT_EQ(request.QueryValue("x"), "1");
    EXPECT_EQ(request.Header("x-thing"), "V");
    EXPECT_EQ(request.body, "abcde");
  }
  EXPECT_FALSE(ReadHttpRequest(bytes.substr(0, 40), 100, 10).value().has_value())
      << "not whole yet";
  EXPECT_EQ(ReadHttpRequest(bytes, 4, 0).status().code(), StatusCode::kResourceExhausted)
      << "the body is over the limit";
  EXPECT_EQ(ReadHttpRequest("G\x01T / HTTP/1.1\r\n\r\n", 100, 3).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ReadHttpRequest("GET / HTTP/1.1\r\nX: " + std::string(20'000, 'a') + "\r\n\r\n", 100, 0)
                .status()
                .code(),
            StatusCode::kResourceExhausted)
      << "headers over the server's 16 KiB";
}

}  // namespace
}  // namespace suanli::net
