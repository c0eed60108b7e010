#include "agent/readiness_probe.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string_view>

namespace suanli::agent {

bool PortAnswers(const std::string& address, const core::PortMapping& port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return false;
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_port = htons(static_cast<uint16_t>(port.host_port));
  inet_pton(AF_INET, address.c_str(), &where.sin_addr);
  auto wait_for = [&](short events, int timeout_ms) {
    pollfd poll_fd{fd, events, 0};
    return ::poll(&poll_fd, 1, timeout_ms) == 1 && (poll_fd.revents & events) != 0;
  };
  bool answers = false;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&where), sizeof where) == 0 ||
      (errno == EINPROGRESS && wait_for(POLLOUT, 500))) {
    int error = 0;
    socklen_t size = sizeof error;
    getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size);
    if (error == 0) {
      if (port.protocol == "http") {
        constexpr std::string_view kRequest = "HEAD / HTTP/1.0\r\nHost: localhost\r\n\r\n";
        (void)::send(fd, kRequest.data(), kRequest.size(), MSG_NOSIGNAL);
      }
      char first[5] = {};
      if (wait_for(POLLIN, port.protocol == "http" ? 1000 : 300)) {
        const ssize_t got = ::recv(fd, first, sizeof first, 0);
        answers =
            port.protocol == "http" ? got == 5 && std::string_view(first, 5) == "HTTP/" : got > 0;
      } else {
        answers = port.protocol != "http";  // open and silent: a server waiting for its client
      }
    }
  }
  ::close(fd);
  return answers;
}

}  // namespace suanli::agent
