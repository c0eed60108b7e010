// The client against hand-written servers on a unix socket: canned answers that HttpServer (TCP
// only) would not give, such as chunked bodies and connections closed on purpose.
#include "net/http_client.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <boost/asio.hpp>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/http_server.h"
#include "testing/temp_dir.h"

namespace suanli::net {
namespace {

using local_stream = boost::asio::local::stream_protocol;
using core::StatusCode;

// A fresh directory for one test's socket, removed afterwards.
class TempSocketPath {
 public:
  std::string path() const { return dir_.File("s.sock").string(); }
  std::string url() const { return "unix://" + path(); }

 private:
  suanli::testing::TempDir dir_{"suanli-net-test"};
};

// Reads one request (head and Content-Length body) from `socket`; empty at end of stream.
std::string ReadRequest(local_stream::socket& socket, std::string& pending) {
  boost::system::error_code ec;
  size_t head_end =
      boost::asio::read_until(socket, boost::asio::dynamic_buffer(pending), "\r\n\r\n", ec);
  if (ec) return "";
  size_t length = 0;
  size_t at = pending.substr(0, head_end).find("Content-Length: ");
  if (at != std::string::npos) length = std::stoul(pending.substr(at + 16));
  if (pending.size() < head_end + length) {
    boost::asio::read(socket, boost::asio::dynamic_buffer(pending),
                      boost::asio::transfer_exactly(head_end + length - pending.size()), ec);
  }
  std::string request = pending.substr(0, head_end + length);
  pending.erase(0, head_end + length);
  return request;
}

// Serves canned answers: for each connection in turn, one answer per request read, then closes it.
class CannedServer {
 public:
  CannedServer(const std::string& path, std::vector<std::vector<std::string>> connections)
      : acceptor_(ioc_, local_stream::endpoint(path)) {
    thread_ = std::thread([this, connections = std::move(connections)] {
      for (const std::vector<std::string>& answers : connections) {
        local_stream::socket socket(ioc_);
        acceptor_.accept(socket);
        std::string pending;
        for (const std::string& answer : answers) {
          std::string request = ReadRequest(socket, pending);
          {
            std::lock_guard<std::mutex> lock(mu_);
            requests_.push_back(request);
          }
          boost::system::error_code ec;
          boost::asio::write(socket, boost::asio::buffer(answer), ec);
        }
      }
    });
  }
  ~CannedServer() { thread_.join(); }
  CannedServer(const CannedServer&) = delete;
  CannedServer& operator=(const CannedServer&) = delete;

  std::vector<std::string> requests() {
    std::lock_guard<std::mutex> lock(mu_);
    return requests_;
  }

 private:
  boost::asio::io_context ioc_;
  local_stream::acceptor acceptor_;
  std::thread thread_;
  std::mutex mu_;
  std::vector<std::string> requests_;  // guarded by mu_
};

std::unique_ptr<HttpClient> ClientOrDie(const std::string& url, HttpClientOptions options = {}) {
  auto client = HttpClient::Create(url, options);
  SUANLI_CHECK(client.ok(), client.status().ToString());
  return std::move(client).value();
}

constexpr std::string_view kOk =
    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

TEST(HttpClientTest, CreateAcceptsHttpAndUnixUrlsAndRejectsTheRest) {
  EXPECT_TRUE(HttpClient::Create("http://127.0.0.1:7070").ok());
  EXPECT_TRUE(HttpClient::Create("http://localhost:7070/").ok());
  EXPECT_TRUE(HttpClient::Create("http://[::1]:7070").ok());
  EXPECT_TRUE(HttpClient::Create("http://example.com").ok());
  EXPECT_TRUE(HttpClient::Create("unix:///var/run/docker.sock").ok());
  for (std::string_view bad : {"https://x:1", "ftp://x", "127.0.0.1:7070", "http://:7070",
                               "http://x:99999", "http://x:port", "http://x:1/v1", "unix://rel"}) {
    auto client = HttpClient::Create(bad);
    EXPECT_FALSE(client.ok()) << bad;
    if (!client.ok()) {
      EXPECT_EQ(client.status().code(), StatusCode::kInvalidArgument) << bad;
      EXPECT_NE(client.status().message().find(bad), std::string::npos)
          << client.status().message();
    }
  }
}

TEST(HttpClientTest, UnixSocketSendsWellFormedRequestsOnOneKeptConnection) {
  TempSocketPath socket;
  // One connection only: a second connect would never be accepted and the client would time out.
  CannedServer server(socket.path(), {{std::string(kOk), std::string(kOk), std::string(kOk)}});
  HttpClientOptions options;
  options.timeout = std::chrono::seconds(10);
  auto client = ClientOrDie(socket.url(), options);
  for (int i = 0; i < 3; ++i) {
    auto response = client->Send(i == 1 ? "POST" : "GET", "/containers/json?all=1",
                                 i == 1 ? R"({"a":1})" : "", {{"X-Registry-Auth", "e30="}});
    ASSERT_TRUE(response.ok()) << response.status().ToString();
    EXPECT_EQ(response->status, 200);
    EXPECT_EQ(response->content_type, "application/json");
    EXPECT_EQ(response->body, "{}");
  }
  std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].rfind("GET /containers/json?all=1 HTTP/1.1\r\n", 0), 0u) << requests[0];
  EXPECT_NE(requests[0].find("Host: localhost\r\n"), std::string::npos) << requests[0];
  EXPECT_NE(requests[0].find("User-Agent: suanli\r\n"), std::string::npos) << requests[0];
  EXPECT_NE(requests[0].find("X-Registry-Auth: e30=\r\n"), std::string::npos) << requests[0];
  EXPECT_EQ(requests[0].find("Content-Type"), std::string::npos) << requests[0];
  EXPECT_NE(requests[1].find("Content-Type: application/json\r\n"), std::string::npos)
      << requests[1];
  EXPECT_NE(requests[1].find("Content-Length: 7\r\n"), std::string::npos) << requests[1];
  EXPECT_NE(requests[1].find("\r\n\r\n{\"a\":1}"), std::string::npos) << requests[1];
}

TEST(HttpClientTest, ReopensAKeptConnectionThatTheServerClosed) {
  TempSocketPath socket;
  CannedServer server(socket.path(), {{std::string(kOk)}, {std::string(kOk)}});
  auto client = ClientOrDie(socket.url());
  ASSERT_TRUE(client->Send("GET", "/one").ok());
  auto response = client->Send("GET", "/two");
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->body, "{}");
  std::vector<std::string> requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].rfind("GET /two ", 0), 0u) << requests[1];
}

TEST(HttpClientTest, MissingUnixSocketIsUnavailableAndNamesTheUrl) {
  TempSocketPath socket;
  auto client = ClientOrDie(socket.url());
  auto response = client->Send("GET", "/_ping");
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(response.status().message(),
            "cannot reach " + socket.url() + ": no such file or directory");
}

TEST(HttpClientTest, StreamHandsOverEachChunkAsItArrives) {
  TempSocketPath socket;
  boost::asio::io_context ioc;
  local_stream::acceptor acceptor(ioc, local_stream::endpoint(socket.path()));
  std::promise<void> got_first;
  std::thread server([&] {
    local_stream::socket connection(ioc);
    acceptor.accept(connection);
    std::string pending;
    ReadRequest(connection, pending);
    boost::asio::write(connection, boost::asio::buffer(std::string_view(
                                       "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                                       "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")));
    // The rest is sent only once the client has handed "hello" over: proof it did not wait for
    // the whole body.
    got_first.get_future().wait();
    boost::asio::write(connection,
                       boost::asio::buffer(std::string_view("6\r\n world\r\n0\r\n\r\n")));
  });
  auto client = ClientOrDie(socket.url());
  std::string received;
  bool signalled = false;
  auto response =
      client->Stream("GET", "/containers/x/logs?follow=1", {}, {}, [&](std::string_view piece) {
        received += piece;
        if (!signalled && received.size() >= 5) {
          signalled = true;
          got_first.set_value();
        }
        return true;
      });
  server.join();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(response->status, 200);
  EXPECT_EQ(response->content_type, "text/plain");
  EXPECT_EQ(response->body, "");
  EXPECT_EQ(received, "hello world");
}

TEST(HttpClientTest, StreamEndsOkWhenOnDataReturnsFalse) {
  TempSocketPath socket;
  boost::asio::io_context ioc;
  local_stream::acceptor acceptor(ioc, local_stream::endpoint(socket.path()));
  std::thread server([&] {
    local_stream::socket connection(ioc);
    acceptor.accept(connection);
    std::string pending;
    ReadRequest(connection, pending);
    boost::system::error_code ec;
    boost::asio::write(connection,
                       boost::asio::buffer(std::string_view(
                           "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n")),
                       ec);
    // Never finishes the body: only the client closing ends this read.
    char byte = 0;
    connection.read_some(boost::asio::buffer(&byte, 1), ec);
  });
  auto client = ClientOrDie(socket.url());
  int pieces = 0;
  auto response = client->Stream("GET", "/events", {}, {}, [&](std::string_view piece) {
    ++pieces;
    EXPECT_EQ(piece, "abc");
    return false;
  });
  server.join();
  ASSERT_TRUE(response.ok()) << response.status().ToString();
  EXPECT_EQ(pieces, 1);
}

TEST(HttpClientTest, StreamTimesOutWhenTheBodyStalls) {
  TempSocketPath socket;
  boost::asio::io_context ioc;
  local_stream::acceptor acceptor(ioc, local_stream::endpoint(socket.path()));
  std::thread server([&] {
    local_stream::socket connection(ioc);
    acceptor.accept(connection);
    std::string pending;
    ReadRequest(connection, pending);
    boost::system::error_code ec;
    boost::asio::write(
        connection,
        boost::asio::buffer(std::string_view("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")),
        ec);
    char byte = 0;
    connection.read_some(boost::asio::buffer(&byte, 1), ec);  // until the client gives up
  });
  HttpClientOptions options;
  options.timeout = std::chrono::milliseconds(100);
  auto client = ClientOrDie(socket.url(), options);
  std::string received;
  auto response = client->Stream("GET", "/pull", {}, {}, [&](std::string_view piece) {
    received += piece;
    return true;
  });
  server.join();
  ASSERT_FALSE(response.ok());
  EXPECT_EQ(response.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(response.status().message().find("did not answer GET /pull within 100 ms"),
            std::string::npos)
      << response.status().message();
  EXPECT_EQ(received, "abc");
}

// A real server on a loopback port that answers `name`, or never answers when `hang`; counts what
// it was sent.
struct CountingServer {
  CountingServer(std::string name, bool hang) {
    HttpServerOptions options;
    options.port = 0;
    auto started = HttpServer::Start(options, [this, name = std::move(name), hang](
                                                  HttpRequest&& /*request*/, Responder respond) {
      ++requests;
      if (hang) {
        held.push_back(std::move(respond));  // answered (500) when the server stops
        return;
      }
      HttpResponse response;
      response.body = name;
      respond(std::move(response));
    });
    SUANLI_CHECK(started.ok(), started.status().ToString());
    server = std::move(started).value();
    url = "http://127.0.0.1:" + std::to_string(server->port());
  }
  std::atomic<int> requests{0};
  std::vector<Responder> held;  // only the server's I/O thread touches it before Stop
  std::unique_ptr<HttpServer> server;
  std::string url;
};

TEST(HttpClientTest, SeveralUrlsMoveOnOnlyFromAServerThatCannotBeReached) {
  // A port nobody listens on: take one, then free it.
  std::string refused;
  {
    CountingServer gone("gone", false);
    refused = gone.url;
    gone.server->Stop();
  }
  CountingServer b("b", false);
  auto client = ClientOrDie(refused + ", " + b.url + "/", {std::chrono::milliseconds(500)});
  auto answer = client->Send("POST", "/v1/pods", "{}");
  ASSERT_TRUE(answer.ok()) << answer.status().ToString();
  EXPECT_EQ(answer->body, "b");
  EXPECT_EQ(b.requests, 1) << "sent once";
  ASSERT_TRUE(client->Send("GET", "/again").ok());
  EXPECT_EQ(b.requests, 2) << "and the next goes where the last was answered";

  // A request that left and got no answer is not sent elsewhere: it may have been done.
  CountingServer hanging("hanging", true);
  CountingServer c("c", false);
  auto failing = ClientOrDie(hanging.url + "," + c.url, {std::chrono::milliseconds(300)});
  auto lost = failing->Send("POST", "/v1/pods", "{}");
  ASSERT_FALSE(lost.ok());
  EXPECT_FALSE(failing->last_request_unsent());
  EXPECT_EQ(hanging.requests, 1);
  EXPECT_EQ(c.requests, 0) << "not sent twice";
  hanging.server->Stop(std::chrono::milliseconds(0));
  auto moved = failing->Send("GET", "/v1/pods");
  ASSERT_TRUE(moved.ok()) << moved.status().ToString();
  EXPECT_EQ(moved->body, "c");

  // None answers: one error that names each.
  c.server->Stop();
  auto none = failing->Send("GET", "/v1/pods");
  ASSERT_FALSE(none.ok());
  EXPECT_TRUE(failing->last_request_unsent());
  EXPECT_NE(none.status().message().find(hanging.url), std::string::npos)
      << none.status().ToString();
  EXPECT_NE(none.status().message().find(c.url), std::string::npos) << none.status().ToString();

  EXPECT_EQ(HttpClient::Create("http://a:1,unix:///s").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(HttpClient::Create(" , ").status().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace suanli::net
