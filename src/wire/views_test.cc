#include "wire/views.h"

#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>

namespace suanli::wire {
namespace {

TEST(ViewsTest, SecretsNeverAppearInViews) {
  core::ApiToken token{"tok_1", "usr_1", "laptop", "hash-of-secret", "sl_ab", {}};
  EXPECT_FALSE(ApiTokenView(token).contains("secret_hash"));
  EXPECT_EQ(ApiTokenView(token).at("prefix").as_string(), "sl_ab");
  core::Node node;
  node.id = "node_1";
  node.token_hash = "hash-of-node-token";
  EXPECT_FALSE(NodeView(node).contains("token_hash"));
  core::JoinToken join{"join_1", "hash", "slj_ab", "rack 4", {}, {}};
  EXPECT_FALSE(JoinTokenView(join).contains("secret_hash"));
}

TEST(ViewsTest, APodShowsItsSecretsOnlyToThoseTheContextNames) {
  core::Pod pod;
  pod.id = "pod_1";
  pod.jupyter_token = "jupyter-secret";
  pod.link_token = "link-secret";
  pod.state = core::PodState::kRunning;
  pod.running_since = core::TimePoint(std::chrono::seconds(100));
  const boost::json::object stranger =
      PodView(pod, {.now = core::TimePoint(std::chrono::seconds(160))});
  EXPECT_FALSE(stranger.contains("jupyter_token"));
  EXPECT_FALSE(stranger.contains("link_token"));
  EXPECT_EQ(stranger.at("uptime_s").as_int64(), 60);
  const boost::json::object agent = PodView(pod, {.with_jupyter_token = true});
  EXPECT_EQ(agent.at("jupyter_token").as_string(), "jupyter-secret");
  EXPECT_FALSE(agent.contains("link_token"));
  const boost::json::object owner = PodView(
      pod, {.node_address = "10.0.0.5", .with_jupyter_token = true, .with_link_token = true});
  EXPECT_EQ(owner.at("link_token").as_string(), "link-secret");
  EXPECT_EQ(owner.at("node_address").as_string(), "10.0.0.5");
  // The SSH host key: its public half for whoever sees the pod, its seed for no one.
  pod.ssh_host_key = "ssh-ed25519 AAAA";
  pod.ssh_host_key_seed = std::string(32, 'S');
  const boost::json::object with_key = PodView(
      pod, {.node_address = "10.0.0.5", .with_jupyter_token = true, .with_link_token = true});
  EXPECT_EQ(with_key.at("ssh_host_key").as_string(), "ssh-ed25519 AAAA");
  const std::string text = boost::json::serialize(with_key);
  EXPECT_EQ(text.find("ssh_host_key_seed"), std::string::npos) << text;
  EXPECT_EQ(text.find("U1NT"), std::string::npos) << "no base64 of the seed: " << text;
}

TEST(ViewsTest, StoragePricesPerHourRoundUp) {
  core::Pod pod;
  pod.volume_gb = 20;
  pod.storage_price_per_gb_month = core::Money::FromMicros(100'000);  // $0.10 per GB-month
  const boost::json::object view = PodViewWithoutTime(pod);
  EXPECT_EQ(view.at("storage_price_per_month_micros").as_int64(), 2'000'000);
  EXPECT_EQ(view.at("storage_price_per_hour_micros").as_int64(), 2778);  // 2'000'000 / 720, up
}

TEST(ViewsTest, PortsRoundTripThroughTheirText) {
  for (const char* text : {"22/tcp", "8888/http", "5000/udp"}) {
    core::Result<core::PortSpec> port = ParsePort(text);
    ASSERT_TRUE(port.ok()) << text;
    EXPECT_EQ(PortText(*port), text);
  }
  EXPECT_EQ(PortText(ParsePort("80").value()), "80/tcp");
  EXPECT_FALSE(ParsePort("0/tcp").ok());
  EXPECT_FALSE(ParsePort("22/sctp").ok());
  EXPECT_FALSE(ParsePort("http").ok());
}

}  // namespace
}  // namespace suanli::wire
