#include "agent/ports.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <random>
#include <string>

namespace suanli::agent {

core::Result<int> FreeHostPort(std::string_view address, const std::set<int>& taken) {
  sockaddr_in where{};
  where.sin_family = AF_INET;
  where.sin_addr.s_addr = htonl(INADDR_ANY);
  const std::string text(address);
  if (!text.empty() && text != "0.0.0.0" &&
      inet_pton(AF_INET, text.c_str(), &where.sin_addr) != 1) {
    return core::InvalidArgumentError("--publish-address " + text + " is not an IPv4 address");
  }
  constexpr int kCount = kLastPodPort - kFirstPodPort + 1;
  thread_local std::mt19937 random(std::random_device{}());
  const int start = std::uniform_int_distribution<int>(0, kCount - 1)(random);
  for (int step = 0; step < kCount; ++step) {
    const int port = kFirstPodPort + (start + step) % kCount;
    if (taken.contains(port)) continue;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return core::UnavailableError("cannot open a socket to find a free port");
    where.sin_port = htons(static_cast<uint16_t>(port));
    const bool free = ::bind(fd, reinterpret_cast<const sockaddr*>(&where), sizeof where) == 0;
    ::close(fd);
    if (free) return port;
  }
  return core::UnavailableError("every port from " + std::to_string(kFirstPodPort) + " to " +
                                std::to_string(kLastPodPort) + " is in use on " +
                                (text.empty() ? "this host" : text));
}

}  // namespace suanli::agent
