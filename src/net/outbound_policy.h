// OutboundPolicy: which addresses the server may call on a user's behalf (webhooks).
//
// A webhook's URL is the user's to choose, and the server calls it from inside the operator's
// network: without a policy, a user makes the server call its own API, the node agents, a metadata
// service (169.254.169.254) or anything on the private network, and reads from the delivery log
// which ports answer. So a URL is resolved here, every address it resolves to is checked, and the
// call goes to the checked address (the name is not resolved twice, so a second answer from DNS
// cannot swap in another address). Refused: loopback, unspecified, link-local, private (RFC 1918,
// unique-local fc00::/7, carrier-grade NAT), multicast and reserved ranges, those inside
// IPv4-mapped and NAT64 IPv6 addresses, and the server's own interface addresses; unless an
// operator allows a range (`suanli server --webhook-allow 10.0.0.0/8`), which wins over every rule.
//
// The HTTP client follows no redirects: a 3xx answer is a failed delivery, so a redirect cannot
// lead past the policy.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace suanli::net {

// An IPv4 or IPv6 address as 16 bytes (IPv4 as ::ffff:a.b.c.d), with a prefix length.
struct AddressRange {
  std::array<uint8_t, 16> bytes{};
  int prefix = 128;
  bool Contains(const std::array<uint8_t, 16>& address) const;
};

class OutboundPolicy {
 public:
  // Every rule, no exception; the server's own addresses are added by WithOwnAddresses.
  OutboundPolicy() = default;
  // `allowed`: "10.0.0.0/8", "192.168.1.5", "fd00::/8"... INVALID_ARGUMENT naming a bad one.
  static core::Result<OutboundPolicy> Allowing(const std::vector<std::string>& allowed);
  // The addresses of this machine's interfaces (getifaddrs) refused as well.
  OutboundPolicy& WithOwnAddresses();
  // OK, or PERMISSION_DENIED "refused by policy: <address> is a loopback address; ...".
  core::Status Check(std::string_view address) const;
  // `host` resolved (a name, or an address), every answer checked: the addresses to call, or
  // PERMISSION_DENIED for the first refused one (all or nothing: a name that resolves to one
  // public and one private address is refused), UNAVAILABLE when it does not resolve.
  core::Result<std::vector<std::string>> Resolve(std::string_view host) const;

 private:
  std::vector<AddressRange> allowed_;
  std::vector<std::array<uint8_t, 16>> own_;
};

// "10.0.0.0/8" or "::1" (a whole address): the range, or INVALID_ARGUMENT.
core::Result<AddressRange> ParseAddressRange(std::string_view text);

}  // namespace suanli::net
