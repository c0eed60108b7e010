#include "agent/readiness_probe.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <string>
#include <string_view>
#include <thread>

namespace suanli::agent {
namespace {

constexpr std::string_view kAddress = "127.0.0.1";

// A socket bound to a free port on 127.0.0.1; listening unless told otherwise.
int BoundSocket(bool listening) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(fd, 0);
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = 0;
  inet_pton(AF_INET, std::string(kAddress).c_str(), &where.sin_addr);
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&where), sizeof where), 0);
  if (listening) {
    EXPECT_EQ(::listen(fd, 8), 0);
  }
  return fd;
}

int PortOf(int fd) {
  sockaddr_in where{};
  socklen_t size = sizeof where;
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&where), &size), 0);
  return ntohs(where.sin_port);
}

// A server on 127.0.0.1 that treats the one connection it is made in one of these ways.
enum class Behaviour {
  kSilent,          // never accepts: the kernel completes the handshake, nobody speaks
  kAcceptAndClose,  // as the engine's port forwarder does when nothing listens in the container
  kHttp,            // reads a request and answers "HTTP/1.0 200 OK"
  kBanner,          // greets at once, as sshd does
};

class TestServer {
 public:
  explicit TestServer(Behaviour behaviour)
      : listener_(BoundSocket(true)), port_(PortOf(listener_)) {
    if (behaviour != Behaviour::kSilent)
      thread_ = std::thread([this, behaviour] { Serve(behaviour); });
  }
  ~TestServer() {
    if (thread_.joinable()) thread_.join();
    ::close(listener_);
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  core::PortMapping Port(std::string protocol) const { return {80, std::move(protocol), port_}; }

 private:
  void Serve(Behaviour behaviour) {
    pollfd ready{listener_, POLLIN, 0};
    if (::poll(&ready, 1, 5'000) != 1) return;  // no probe came: the test fails on its own
    const int connection = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) return;
    if (behaviour == Behaviour::kHttp) {
      std::string request;
      char buffer[512];
      pollfd readable{connection, POLLIN, 0};
      while (request.find("\r\n\r\n") == std::string::npos && ::poll(&readable, 1, 2'000) == 1) {
        const ssize_t got = ::recv(connection, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        request.append(buffer, static_cast<size_t>(got));
      }
      constexpr std::string_view kAnswer = "HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n";
      (void)::send(connection, kAnswer.data(), kAnswer.size(), MSG_NOSIGNAL);
    } else if (behaviour == Behaviour::kBanner) {
      constexpr std::string_view kBanner = "SSH-2.0-OpenSSH_9.2\r\n";
      (void)::send(connection, kBanner.data(), kBanner.size(), MSG_NOSIGNAL);
    }
    ::close(connection);
  }

  const int listener_;
  const int port_;
  std::thread thread_;
};

TEST(ReadinessProbeTest, AnHttpPortAnswersWithAnHttpStatus) {
  TestServer server(Behaviour::kHttp);
  EXPECT_TRUE(PortAnswers(std::string(kAddress), server.Port("http")));
}

TEST(ReadinessProbeTest, ATcpPortAnswersWithAGreeting) {
  TestServer server(Behaviour::kBanner);
  EXPECT_TRUE(PortAnswers(std::string(kAddress), server.Port("tcp")));
}

TEST(ReadinessProbeTest, ASilentTcpPortIsAServerWaitingForItsClient) {
  TestServer server(Behaviour::kSilent);
  EXPECT_TRUE(PortAnswers(std::string(kAddress), server.Port("tcp")));
}

TEST(ReadinessProbeTest, ASilentHttpPortHasNotAnswered) {
  TestServer server(Behaviour::kSilent);
  EXPECT_FALSE(PortAnswers(std::string(kAddress), server.Port("http")));
}

TEST(ReadinessProbeTest, AnHttpPortThatSpeaksSomethingElseHasNotAnswered) {
  TestServer server(Behaviour::kBanner);
  EXPECT_FALSE(PortAnswers(std::string(kAddress), server.Port("http")));
}

TEST(ReadinessProbeTest, AcceptingAndClosingIsNotAnswering) {
  {
    TestServer server(Behaviour::kAcceptAndClose);
    EXPECT_FALSE(PortAnswers(std::string(kAddress), server.Port("tcp")));
  }
  {
    TestServer server(Behaviour::kAcceptAndClose);
    EXPECT_FALSE(PortAnswers(std::string(kAddress), server.Port("http")));
  }
}

TEST(ReadinessProbeTest, AClosedPortDoesNotAnswer) {
  const int fd = BoundSocket(false);  // holds the port so nothing else listens there meanwhile
  const int port = PortOf(fd);
  EXPECT_FALSE(PortAnswers(std::string(kAddress), {80, "tcp", port}));
  EXPECT_FALSE(PortAnswers(std::string(kAddress), {80, "http", port}));
  ::close(fd);
}

}  // namespace
}  // namespace suanli::agent
