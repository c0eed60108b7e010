#include "net/outbound_policy.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <memory>
#include <optional>

namespace suanli::net {
namespace {

using Bytes = std::array<uint8_t, 16>;

Bytes MappedV4(const in_addr& v4) {
  Bytes bytes{};
  bytes[10] = 0xff;
  bytes[11] = 0xff;
  std::memcpy(&bytes[12], &v4, 4);
  return bytes;
}

Bytes FromV6(const in6_addr& v6) {
  Bytes bytes{};
  std::memcpy(bytes.data(), &v6, 16);
  return bytes;
}

// An address as text (no brackets, no port): its bytes, or nullopt.
std::optional<Bytes> ParseAddress(std::string_view text) {
  const std::string copy(text);
  in_addr v4{};
  if (inet_pton(AF_INET, copy.c_str(), &v4) == 1) return MappedV4(v4);
  in6_addr v6{};
  if (inet_pton(AF_INET6, copy.c_str(), &v6) == 1) return FromV6(v6);
  return std::nullopt;
}

std::string Format(const Bytes& bytes) {
  char text[INET6_ADDRSTRLEN] = {};
  const Bytes mapped_prefix = MappedV4(in_addr{});
  if (std::equal(bytes.begin(), bytes.begin() + 12, mapped_prefix.begin())) {
    inet_ntop(AF_INET, &bytes[12], text, sizeof text);
  } else {
    inet_ntop(AF_INET6, bytes.data(), text, sizeof text);
  }
  return text;
}

struct Rule {
  const char* range;
  const char* what;
};

// IPv4 ranges are written as IPv4 and held as ::ffff:a.b.c.d/(96 + prefix).
constexpr Rule kRefused[] = {
    {"0.0.0.0/8", "an unspecified address (\"this host\")"},
    {"10.0.0.0/8", "a private address (RFC 1918)"},
    {"100.64.0.0/10", "a carrier-grade NAT address (RFC 6598)"},
    {"127.0.0.0/8", "a loopback address"},
    {"169.254.0.0/16", "a link-local address (where cloud metadata services answer)"},
    {"172.16.0.0/12", "a private address (RFC 1918)"},
    {"192.0.0.0/24", "a reserved address (IETF protocol assignments)"},
    {"192.168.0.0/16", "a private address (RFC 1918)"},
    {"198.18.0.0/15", "a reserved address (benchmarking)"},
    {"224.0.0.0/4", "a multicast address"},
    {"240.0.0.0/4", "a reserved or broadcast address"},
    {"::/96", "an unspecified, loopback or IPv4-compatible address"},
    {"fe80::/10", "a link-local address"},
    {"fc00::/7", "a unique-local (private) address"},
    {"ff00::/8", "a multicast address"},
};

// The IPv4 address an IPv6 one carries to be translated (NAT64 64:ff9b::/96, 6to4 2002::/16).
std::optional<Bytes> EmbeddedV4(const Bytes& bytes) {
  static const AddressRange kNat64 = *ParseAddressRange("64:ff9b::/96");
  static const AddressRange k6to4 = *ParseAddressRange("2002::/16");
  in_addr v4{};
  if (kNat64.Contains(bytes)) {
    std::memcpy(&v4, &bytes[12], 4);
  } else if (k6to4.Contains(bytes)) {
    std::memcpy(&v4, &bytes[2], 4);
  } else {
    return std::nullopt;
  }
  return MappedV4(v4);
}

}  // namespace

bool AddressRange::Contains(const Bytes& address) const {
  int bits = prefix;
  for (size_t i = 0; i < 16 && bits > 0; ++i, bits -= 8) {
    const auto mask = static_cast<uint8_t>(bits >= 8 ? 0xff : 0xff << (8 - bits));
    if ((address[i] & mask) != (bytes[i] & mask)) return false;
  }
  return true;
}

core::Result<AddressRange> ParseAddressRange(std::string_view text) {
  const auto bad = [&text](std::string_view why) {
    return core::InvalidArgumentError("'" + std::string(text) + "' is not an address range (" +
                                      std::string(why) + "); write 10.0.0.0/8, 192.168.1.5 or " +
                                      "fd00::/8");
  };
  const size_t slash = text.find('/');
  const std::optional<Bytes> address = ParseAddress(text.substr(0, slash));
  if (!address) return bad("not an IPv4 or IPv6 address");
  const bool v4 = text.substr(0, slash).find(':') == std::string_view::npos;
  AddressRange range{*address, 128};
  if (slash != std::string_view::npos) {
    const std::string_view digits = text.substr(slash + 1);
    int prefix = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), prefix);
    if (error != std::errc() || end != digits.data() + digits.size() || prefix < 0 ||
        prefix > (v4 ? 32 : 128)) {
      return bad(v4 ? "the prefix must be 0 to 32" : "the prefix must be 0 to 128");
    }
    range.prefix = v4 ? 96 + prefix : prefix;
  }
  return range;
}

core::Result<OutboundPolicy> OutboundPolicy::Allowing(const std::vector<std::string>& allowed) {
  OutboundPolicy policy;
  for (const std::string& text : allowed) {
    core::Result<AddressRange> range = ParseAddressRange(text);
    if (!range.ok()) return range.status();
    policy.allowed_.push_back(*range);
  }
  return policy;
}

OutboundPolicy& OutboundPolicy::WithOwnAddresses() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return *this;
  const std::unique_ptr<ifaddrs, decltype(&freeifaddrs)> owned(list, &freeifaddrs);
  for (const ifaddrs* entry = list; entry != nullptr; entry = entry->ifa_next) {
    if (entry->ifa_addr == nullptr) continue;
    if (entry->ifa_addr->sa_family == AF_INET) {
      own_.push_back(MappedV4(reinterpret_cast<const sockaddr_in*>(entry->ifa_addr)->sin_addr));
    } else if (entry->ifa_addr->sa_family == AF_INET6) {
      own_.push_back(FromV6(reinterpret_cast<const sockaddr_in6*>(entry->ifa_addr)->sin6_addr));
    }
  }
  return *this;
}

core::Status OutboundPolicy::Check(std::string_view address) const {
  const std::optional<Bytes> bytes = ParseAddress(address);
  if (!bytes) {
    return core::InvalidArgumentError("'" + std::string(address) + "' is not an IP address");
  }
  for (const AddressRange& range : allowed_) {
    if (range.Contains(*bytes)) return core::Status::Ok();
  }
  const auto refuse = [&](std::string_view what) {
    return core::PermissionDeniedError(
        "refused by policy: " + Format(*bytes) + " is " + std::string(what) +
        "; the server calls only public addresses unless its operator allows a range "
        "(suanli server --webhook-allow CIDR)");
  };
  if (std::find(own_.begin(), own_.end(), *bytes) != own_.end()) {
    return refuse("an address of the server itself");
  }
  static const std::vector<std::pair<AddressRange, const char*>> kRules = [] {
    std::vector<std::pair<AddressRange, const char*>> rules;
    for (const Rule& rule : kRefused) rules.emplace_back(*ParseAddressRange(rule.range), rule.what);
    return rules;
  }();
  for (const auto& [range, what] : kRules) {
    if (range.Contains(*bytes)) return refuse(what);
  }
  if (const std::optional<Bytes> inner = EmbeddedV4(*bytes)) {
    if (core::Status embedded = Check(Format(*inner)); !embedded.ok()) return embedded;
  }
  return core::Status::Ok();
}

core::Result<std::vector<std::string>> OutboundPolicy::Resolve(std::string_view host) const {
  std::string name(host);
  if (name.size() >= 2 && name.front() == '[' && name.back() == ']') {
    name = name.substr(1, name.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (const int error = getaddrinfo(name.c_str(), nullptr, &hints, &found); error != 0) {
    return core::UnavailableError("cannot resolve " + name + ": " + gai_strerror(error));
  }
  const std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> owned(found, &freeaddrinfo);
  std::vector<std::string> addresses;
  for (const addrinfo* entry = found; entry != nullptr; entry = entry->ai_next) {
    Bytes bytes{};
    if (entry->ai_family == AF_INET) {
      bytes = MappedV4(reinterpret_cast<const sockaddr_in*>(entry->ai_addr)->sin_addr);
    } else if (entry->ai_family == AF_INET6) {
      bytes = FromV6(reinterpret_cast<const sockaddr_in6*>(entry->ai_addr)->sin6_addr);
    } else {
      continue;
    }
    const std::string address = Format(bytes);
    if (core::Status allowed = Check(address); !allowed.ok()) {
      return core::PermissionDeniedError(
          (address == name ? "" : name + " resolves to " + address + ": ") + allowed.message());
    }
    if (std::find(addresses.begin(), addresses.end(), address) == addresses.end()) {
      addresses.push_back(address);
    }
  }
  if (addresses.empty()) return core::UnavailableError("cannot resolve " + name + ": no address");
  return addresses;
}

}  // namespace suanli::net
