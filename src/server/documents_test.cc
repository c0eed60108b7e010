#include "server/documents.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <map>

#include "server/project_documents.h"

namespace suanli::server {
namespace {

core::TimePoint At(int64_t millis) { return core::TimePoint(std::chrono::milliseconds(millis)); }

core::Pod SamplePod() {
  core::Pod pod;
  pod.id = "pod_1";
  pod.owner_id = "usr_1";
  pod.name = "trainer";
  pod.template_id = "pytorch";
  pod.image = "pytorch/pytorch";
  pod.command = {"python", "-c", "print(1)"};
  pod.env = {{"A", "1"}};
  pod.ports = {{8888, "http"}, {22, "tcp"}};
  pod.gpu_type = "RTX 4090";
  pod.gpu_count = 2;
  pod.vcpu = 8;
  pod.memory_gb = 32;
  pod.container_disk_gb = 20;
  pod.volume_gb = 50;
  pod.volume_mount_path = "/workspace";
  pod.interruptible = true;
  pod.priority = 3;
  pod.node_selector = {{"zone", "a"}};
  pod.sequence = 17;
  pod.desired = core::DesiredState::kStopped;
  pod.state = core::PodState::kStopping;
  pod.state_reason = "asked";
  pod.state_since = At(1000);
  pod.generation = 4;
  pod.report_seq = 9;
  pod.restarts = 1;
  pod.node_id = "node_1";
  pod.last_node_id = "node_0";
  pod.gpu_indices = {0, 1};
  pod.container_id = "c0ffee";
  pod.port_mappings = {{8888, "http", 20001}};
  pod.ready = true;
  pod.pull = core::PullProgress{5, 10};
  pod.jupyter_token = "jt";
  pod.link_token = "lt";
  pod.ssh_host_key_seed = std::string(32, '\x07');
  pod.ssh_host_key = "ssh-ed25519 AAAA";
  pod.gpu_price_per_hour = core::Money::FromMicros(690'000);
  pod.storage_price_per_gb_month = core::Money::FromMicros(100'000);
  pod.created_at = At(500);
  pod.running_since = At(2000);
  pod.gpu_billed_to = At(3000);
  pod.storage_billed_to = At(3500);
  pod.cost = core::Money::FromMicros(-12);
  pod.volume_confirmed_empty = true;
  return pod;
}

TEST(DocumentsTest, EveryEntityRoundTrips) {
  const core::Pod pod = SamplePod();
  EXPECT_EQ(PodFromDocument(ToDocument(pod)).value(), pod);
  core::Pod fresh;  // the defaults: no running_since, no pull
  fresh.id = "pod_2";
  EXPECT_EQ(PodFromDocument(ToDocument(fresh)).value(), fresh);

  core::User user{"usr_1",
                  "alice",
                  core::Role::kAdmin,
                  core::Money::FromMicros(-5),
                  core::Money::FromMicros(2'000'000),
                  At(7),
                  {"stopped pod_1: out of money"}};
  EXPECT_EQ(UserFromDocument(ToDocument(user)).value(), user);
  user.monthly_budget = core::Money::FromMicros(50'000'000);
  user.budget_action = core::BudgetAction::kStopInterruptible;
  user.budget_warned_month = "2026-12";
  EXPECT_EQ(UserFromDocument(ToDocument(user)).value(), user);
  core::ApiToken token{"tok_1", "usr_1", "laptop", "ab12", "sl_ab", At(8)};
  EXPECT_EQ(ApiTokenFromDocument(ToDocument(token)).value(), token);
  token.read_only = true;
  EXPECT_EQ(ApiTokenFromDocument(ToDocument(token)).value(), token);
  boost::json::object before_read_only =
      ToDocument(token);  // stored before read-only tokens existed
  before_read_only.erase("read_only");
  EXPECT_FALSE(ApiTokenFromDocument(before_read_only).value().read_only);
  token.project_id = "prj_1";
  EXPECT_EQ(ApiTokenFromDocument(ToDocument(token)).value(), token);
  core::SshKey key{"key_1", "usr_1", "laptop", "ssh-ed25519 AAAA x", "SHA256:x", At(9)};
  EXPECT_EQ(SshKeyFromDocument(ToDocument(key)).value(), key);
  core::Template spec;
  spec.id = "tpl_1";
  spec.owner_id = "usr_1";
  spec.is_public = true;
  spec.name = "mine";
  spec.image = "busybox";
  spec.command = {"sleep", "1"};
  spec.env = {{"B", "2"}};
  spec.ports = {{80, "http"}};
  spec.created_at = At(10);
  EXPECT_EQ(TemplateFromDocument(ToDocument(spec)).value(), spec);
  core::Node node;
  node.id = "node_1";
  node.name = "n1";
  node.token_hash = "ffee";
  node.state = core::NodeState::kUnreachable;
  node.cordoned = node.draining = true;
  node.labels = {{"zone", "b"}};
  node.gpus = {{0, "GPU-1", "RTX 4090", 23.5, true, 0, core::kMilliGpu, ""},
               {1, "MIG-2", "RTX 4090", 12, false, 4, 428, "3g.12gb"}};
  node.vcpu = 16;
  node.memory_gb = 64;
  node.disk_gb = 500;
  node.agent_version = "0.5.0";
  node.address = "10.0.0.5";
  node.drain_reason = "GPU lost";
  node.generation = 3;
  node.registered_at = At(11);
  node.last_heartbeat = At(12);
  EXPECT_EQ(NodeFromDocument(ToDocument(node)).value(), node);
  core::JoinToken join{"join_1", "hash", "slj_ab", "rack 4", At(13), At(14)};
  EXPECT_EQ(JoinTokenFromDocument(ToDocument(join)).value(), join);
}

TEST(DocumentsTest, AFieldAnOlderVersionDidNotWriteKeepsItsDefault) {
  boost::json::object document = ToDocument(SamplePod());
  document.erase("link_token");
  document.erase("priority");
  document["added_by_a_newer_version"] = 1;
  core::Result<core::Pod> pod = PodFromDocument(document);
  ASSERT_TRUE(pod.ok()) << pod.status().message();
  EXPECT_EQ(pod->link_token, "");
  EXPECT_EQ(pod->priority, 0);
}

TEST(DocumentsTest, ACorruptDocumentIsRefusedWithItsId) {
  boost::json::object document = ToDocument(SamplePod());
  document["gpu_count"] = "two";
  core::Result<core::Pod> pod = PodFromDocument(document);
  ASSERT_FALSE(pod.ok());
  EXPECT_EQ(pod.status().code(), core::StatusCode::kInternal);
  EXPECT_NE(pod.status().message().find("pod pod_1 is corrupt: gpu_count: must be an integer"),
            std::string::npos)
      << pod.status().message();
  document = ToDocument(SamplePod());
  document["state"] = "levitating";
  EXPECT_FALSE(PodFromDocument(document).ok());
  boost::json::object user = ToDocument(core::User{});
  user["created_at"] = "last week";
  EXPECT_FALSE(UserFromDocument(user).ok());
}

// One bad row is not a reason to serve no one: the rest is read, the bad one and what belongs to it
// are set aside (and left in the store as they are), each with what is wrong.
TEST(DocumentsTest, AnUnreadableUserIsSetAsideWithWhatIsItsAndTheRestIsRead) {
  using store::Collection;
  core::User alice;
  alice.id = "usr_alice";
  alice.name = "alice";
  boost::json::object broken = ToDocument(alice);
  broken["balance_micros"] = "a lot";
  core::User bob;
  bob.id = "usr_bob";
  bob.name = "bob";
  core::Pod alices = SamplePod();
  alices.id = "pod_alice";
  alices.owner_id = alice.id;
  core::Pod bobs = SamplePod();
  bobs.id = "pod_bob";
  bobs.owner_id = bob.id;
  core::Project team;
  team.id = "prj_team";
  team.name = "team";
  team.owner_id = alice.id;
  core::Pod teams = SamplePod();
  teams.id = "pod_team";
  teams.owner_id = alice.id;
  teams.project_id = team.id;
  core::ApiToken token;
  token.id = "tok_alice";
  token.user_id = alice.id;
  const std::vector<store::Document> documents = {
      {Collection::kUsers, alice.id, boost::json::serialize(broken)},
      {Collection::kUsers, bob.id, DocumentText(bob)},
      {Collection::kPods, alices.id, DocumentText(alices)},
      {Collection::kPods, bobs.id, DocumentText(bobs)},
      {Collection::kPods, teams.id, DocumentText(teams)},
      {Collection::kProjects, team.id, DocumentText(team)},
      {Collection::kApiTokens, token.id, DocumentText(token)},
      {Collection::kNodes, "node_9", "not json"}};
  const StoredEntities stored = DecodeDocuments(documents);
  ASSERT_EQ(stored.users.size(), 1u);
  EXPECT_EQ(stored.users[0].id, bob.id);
  ASSERT_EQ(stored.pods.size(), 1u);
  EXPECT_EQ(stored.pods[0].id, bobs.id);
  EXPECT_TRUE(stored.projects.empty());
  EXPECT_TRUE(stored.tokens.empty());
  std::map<std::string, std::string> why;
  for (const auto& record : stored.unreadable) why[Describe(record)] = record.why;
  EXPECT_EQ(why.size(), 6u);
  EXPECT_NE(why["user usr_alice"].find("balance_micros"), std::string::npos);
  EXPECT_EQ(why["node node_9"], "not a JSON object");
  EXPECT_EQ(why["pod pod_alice"], "its owner usr_alice is unreadable");
  EXPECT_EQ(why["project prj_team"], "its owner usr_alice is unreadable");
  EXPECT_EQ(why["pod pod_team"], "its owner usr_alice is unreadable");
  EXPECT_EQ(why["API token tok_alice"], "its owner usr_alice is unreadable");
}

// A pod on a node that could not be read would be billed with no agent to report on it.
TEST(DocumentsTest, APodOnAnUnreadableNodeIsSetAside) {
  StoredEntities stored;
  core::Pod pod = SamplePod();
  stored.pods = {pod};
  stored.unreadable.push_back({store::Collection::kNodes, pod.node_id, "not a JSON object"});
  SetAsideDependents(stored);
  EXPECT_TRUE(stored.pods.empty());
  ASSERT_EQ(stored.unreadable.size(), 2u);
  EXPECT_EQ(stored.unreadable[1].why, "its node node_1 is unreadable");
}

}  // namespace
}  // namespace suanli::server
