#include "net/outbound_policy.h"

#include <gtest/gtest.h>

namespace suanli::net {
namespace {

void ExpectRefused(const OutboundPolicy& policy, std::string_view address, std::string_view what) {
  const core::Status status = policy.Check(address);
  ASSERT_FALSE(status.ok()) << address;
  EXPECT_EQ(status.code(), core::StatusCode::kPermissionDenied) << address;
  EXPECT_NE(status.message().find("refused by policy"), std::string::npos) << status.message();
  EXPECT_NE(status.message().find(what), std::string::npos) << status.message();
}

TEST(OutboundPolicyTest, RefusesEveryInternalRangeAndAllowsPublicAddresses) {
  const OutboundPolicy policy;
  ExpectRefused(policy, "127.0.0.1", "loopback");
  ExpectRefused(policy, "127.255.0.9", "loopback");
  ExpectRefused(policy, "0.0.0.0", "unspecified");
  ExpectRefused(policy, "10.1.2.3", "private");
  ExpectRefused(policy, "172.31.255.255", "private");
  ExpectRefused(policy, "192.168.0.1", "private");
  ExpectRefused(policy, "100.64.0.1", "carrier-grade NAT");
  ExpectRefused(policy, "169.254.169.254", "metadata");
  ExpectRefused(policy, "224.0.0.1", "multicast");
  ExpectRefused(policy, "255.255.255.255", "broadcast");
  ExpectRefused(policy, "::1", "loopback");
  ExpectRefused(policy, "::", "unspecified");
  ExpectRefused(policy, "fe80::1", "link-local");
  ExpectRefused(policy, "fd12:3456::1", "unique-local");
  // IPv4 inside IPv6: mapped, NAT64 and 6to4 carry the address they translate to.
  ExpectRefused(policy, "::ffff:127.0.0.1", "loopback");
  ExpectRefused(policy, "64:ff9b::a9fe:a9fe", "link-local");
  ExpectRefused(policy, "2002:7f00:1::", "loopback");
  for (std::string_view public_address :
       {"8.8.8.8", "1.1.1.1", "172.32.0.1", "192.169.0.1", "2606:4700::1111", "64:ff9b::808:808"}) {
    EXPECT_TRUE(policy.Check(public_address).ok()) << public_address;
  }
}

TEST(OutboundPolicyTest, AnOperatorsAllowedRangeWinsOverEveryRule) {
  const core::Result<OutboundPolicy> policy = OutboundPolicy::Allowing({"127.0.0.0/8", "fd00::/8"});
  ASSERT_TRUE(policy.ok()) << policy.status().message();
  EXPECT_TRUE(policy->Check("127.0.0.1").ok());
  EXPECT_TRUE(policy->Check("fd00::5").ok());
  ExpectRefused(*policy, "10.0.0.1", "private");
  ExpectRefused(*policy, "fe80::1", "link-local");
  const core::Result<OutboundPolicy> one = OutboundPolicy::Allowing({"10.0.0.7"});
  ASSERT_TRUE(one.ok());
  EXPECT_TRUE(one->Check("10.0.0.7").ok());
  ExpectRefused(*one, "10.0.0.8", "private");
}

TEST(OutboundPolicyTest, ABadRangeIsRefusedWithHowToWriteOne) {
  for (const char* bad : {"10.0.0.0/33", "localhost", "10.0.0/8", "::1/129", "1.2.3.4/x", ""}) {
    const core::Result<OutboundPolicy> policy = OutboundPolicy::Allowing({bad});
    ASSERT_FALSE(policy.ok()) << bad;
    EXPECT_EQ(policy.status().code(), core::StatusCode::kInvalidArgument) << bad;
    EXPECT_NE(policy.status().message().find("10.0.0.0/8"), std::string::npos);
  }
}

// The forms an adversary tried: each is resolved as the system resolver reads it, then checked.
TEST(OutboundPolicyTest, NamesAndOddSpellingsOfLoopbackAreResolvedThenRefused) {
  const OutboundPolicy policy;
  for (const char* host : {"localhost", "127.1", "2130706433", "0x7f000001", "0.0.0.0", "[::1]"}) {
    const core::Result<std::vector<std::string>> addresses = policy.Resolve(host);
    ASSERT_FALSE(addresses.ok()) << host;
    EXPECT_EQ(addresses.status().code(), core::StatusCode::kPermissionDenied) << host;
    EXPECT_NE(addresses.status().message().find("refused by policy"), std::string::npos)
        << addresses.status().message();
  }
  const core::Result<OutboundPolicy> allowed = OutboundPolicy::Allowing({"127.0.0.0/8"});
  const core::Result<std::vector<std::string>> loopback = allowed->Resolve("127.1");
  ASSERT_TRUE(loopback.ok()) << loopback.status().message();
  EXPECT_EQ(*loopback, std::vector<std::string>{"127.0.0.1"});
}

TEST(OutboundPolicyTest, TheServersOwnAddressesAreRefusedToo) {
  OutboundPolicy policy;
  policy.WithOwnAddresses();
  // Loopback is always an interface of this machine: refused as the server's own first.
  ExpectRefused(policy, "127.0.0.1", "the server itself");
}

}  // namespace
}  // namespace suanli::net
