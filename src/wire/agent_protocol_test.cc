#include "wire/agent_protocol.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>

namespace suanli::wire {
namespace {

using core::Result;

core::TimePoint At(int64_t millis) { return core::TimePoint(std::chrono::milliseconds(millis)); }

NodeReport SampleNodeReport() {
  NodeReport report;
  report.name = "gpu-host-1";
  // The second is a MIG slice in another link group, so that every field makes the trip.
  report.gpus = {{0, "GPU-aaa", "RTX 4090", 24.0, true, 0, core::kMilliGpu, ""},
                 {1, "MIG-bbb", "A100 80GB SXM", 39.25, false, 1, 428, "3g.40gb"}};
  report.vcpu = 32;
  report.memory_gb = 128;
  report.disk_gb = 900;
  report.agent_version = "0.5.0";
  report.labels = {{"zone", "a"}};
  report.address = "10.0.0.5";
  core::GpuHealth health;
  health.index = 1;
  health.utilization_percent = 87;
  health.memory_used_gb = 20.5;
  health.temperature_c = 71;
  health.power_w = 310.5;
  health.xid_errors = 2;
  health.last_xid = 79;
  report.gpu_health = {health};
  report.gpu_measurements = {{0, 912.5, 160.25, 161.0, 318.5},
                             {1, 1800.0, 250.0, std::nullopt, std::nullopt}};
  return report;
}

TEST(AgentProtocolTest, NodeReportsRoundTrip) {
  const NodeReport report = SampleNodeReport();
  Result<NodeReport> registration =
      DecodeNodeReport(EncodeNodeReport(report), NodeReportFor::kRegistration);
  ASSERT_TRUE(registration.ok()) << registration.status().message();
  EXPECT_EQ(*registration, report);
  NodeReport heartbeat = report;
  heartbeat.name.clear();
  Result<NodeReport> decoded =
      DecodeNodeReport(EncodeNodeReport(heartbeat), NodeReportFor::kHeartbeat);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, heartbeat);
}

TEST(AgentProtocolTest, TheServerRefusesMalformedNodeReports) {
  const struct {
    std::string body;
    std::string error;
  } cases[] = {
      {R"({"vcpu":4})", "name: is required"},
      {R"({"name":"n","gpus":[{"index":64,"type":"RTX 4090"}]})",
       "gpus: index: must be an integer from 0 to 63, got 64"},
      {R"({"name":"n","gpus":[{"index":0}]})", "gpus: type: is required"},
      {R"({"name":"n","cpus":4})", "unknown field 'cpus'"},
      {R"({"name":"n","gpu_health":[{"index":0,"utilization_percent":101}]})",
       "gpu_health: utilization_percent: must be an integer from 0 to 100, got 101"},
      {R"({"name":"n","gpu_measurements":[{"index":0,"memory_bandwidth_gbps":900}]})",
       "gpu_measurements: fp16_tflops: is required"},
      {R"({"name":"n","gpu_measurements":[{"index":0,"memory_bandwidth_gbps":0,"fp16_tflops":1}]})",
       "gpu_measurements: memory_bandwidth_gbps: must be a number from 1E-3 to 1E5, got 0"},
      {R"(["name"])", "must be a JSON object"},
      {R"({"name":)", "not valid JSON"},
  };
  for (const auto& bad : cases) {
    Result<NodeReport> decoded = DecodeNodeReport(bad.body, NodeReportFor::kRegistration);
    ASSERT_FALSE(decoded.ok()) << bad.body;
    EXPECT_EQ(decoded.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(decoded.status().message().find(bad.error), std::string::npos)
        << bad.body << " -> " << decoded.status().message();
  }
}

TEST(AgentProtocolTest, RegistrationsRoundTripAndMalformedOnesAreRefused) {
  core::Node node;
  node.id = "node_abc";
  node.token_hash = "must not travel";
  const std::string encoded = EncodeRegistration(node, "sln_secret");
  EXPECT_EQ(encoded.find("must not travel"), std::string::npos);
  Result<Registration> decoded = DecodeRegistration(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, (Registration{"node_abc", "sln_secret"}));
  // A newer server may add fields: the agent ignores them.
  EXPECT_TRUE(DecodeRegistration(R"({"token":"t","node":{"id":"n","new":1},"extra":true})").ok());
  for (const char* bad : {R"({"token":"t"})", R"({"token":"t","node":"n"})",
                          R"({"token":"t","node":{}})", R"({"token":7,"node":{"id":"n"}})",
                          R"({"node":{"id":"n"}})", R"({"token":"","node":{"id":"n"}})",
                          R"({"token":"t","node":{"id":["n"]}})", "[]", "{", "null"}) {
    Result<Registration> refused = DecodeRegistration(bad);
    EXPECT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.status().code(), core::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(AgentProtocolTest, PodReportsRoundTrip) {
  PodReport report;
  report.seq = 7;
  report.state = core::PodState::kRunning;
  report.at = At(1'764'000'000'123);
  report.container_id = "c0ffee";
  report.port_mappings = {{8888, "http", 20001}, {22, "tcp", 20002}};
  report.message = "started";
  report.exit_code = 0;
  report.ready = true;
  Result<PodReport> decoded = DecodePodReport(EncodePodReport(report));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, report);

  PodReport pulling;
  pulling.seq = 1;
  pulling.state = core::PodState::kStarting;
  pulling.at = At(5);
  pulling.pull = core::PullProgress{100, 0};
  decoded = DecodePodReport(EncodePodReport(pulling));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, pulling);

  // A crashed container's last output, bytes that are not UTF-8 included.
  PodReport crashed;
  crashed.seq = 3;
  crashed.state = core::PodState::kExited;
  crashed.at = At(9);
  crashed.exit_code = 1;
  crashed.logs = "2026-12-02T14:46:25.000000000Z Traceback \xff\n";
  decoded = DecodePodReport(EncodePodReport(crashed));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, crashed);
}

TEST(AgentProtocolTest, SavedLogsAreSelectedByTimeAndTailWithOrWithoutTheirTimes) {
  const std::string logs =
      "2026-03-01T10:00:00.100000000Z one\n"
      "2026-03-01T10:00:01.000000000Z two\n"
      "2026-03-01T10:00:02.500000000Z three\n";
  EXPECT_EQ(SelectLogLines(logs, -1, std::nullopt, false), "one\ntwo\nthree\n");
  EXPECT_EQ(SelectLogLines(logs, 2, std::nullopt, false), "two\nthree\n");
  EXPECT_EQ(SelectLogLines(logs, 0, std::nullopt, false), "");
  EXPECT_EQ(SelectLogLines(logs, -1, *core::ParseTime("2026-03-01T10:00:01.000Z"), true),
            "2026-03-01T10:00:01.000000000Z two\n2026-03-01T10:00:02.500000000Z three\n");
  EXPECT_EQ(SelectLogLines(logs, 1, *core::ParseTime("2026-03-01T10:00:00.200Z"), false),
            "three\n");
  EXPECT_EQ(SelectLogLines("2026-03-01T10:00:00.100000000Z no newline", -1, std::nullopt, false),
            "no newline");
}

TEST(AgentProtocolTest, ALongMessageIsShortenedOnAWholeCharacter) {
  PodReport report;
  report.seq = 1;
  report.state = core::PodState::kFailed;
  report.at = At(0);
  report.message = "x" + std::string(kMaxReportMessageLength, '\0');
  for (size_t i = 1; i < report.message.size(); i += 3) report.message.replace(i, 3, "算");
  report.message.resize(kMaxReportMessageLength + 40);
  Result<PodReport> decoded = DecodePodReport(EncodePodReport(report));
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_LE(decoded->message.size(), kMaxReportMessageLength);
  EXPECT_GE(decoded->message.size(), kMaxReportMessageLength - 3);
  EXPECT_EQ(report.message.compare(0, decoded->message.size(), decoded->message), 0);
}

TEST(AgentProtocolTest, TheServerRefusesMalformedPodReports) {
  for (const char* bad : {
           R"({"state":"running","at":"2026-12-02T14:46:25.123Z"})",          // no seq
           R"({"seq":0,"state":"running","at":"2026-12-02T14:46:25.123Z"})",  // seq from 1
           R"({"seq":1,"state":"pending","at":"2026-12-02T14:46:25.123Z"})",  // not the agent's
           R"({"seq":1,"state":"flying","at":"2026-12-02T14:46:25.123Z"})",
           R"({"seq":1,"state":"running","at":"soon"})",
           R"({"seq":1,"state":"running","at":"2026-12-02T14:46:25Z","ready":"yes"})",
           R"({"seq":1,"state":"running","at":"2026-12-02T14:46:25Z","port_mappings":[{}]})",
           R"({"seq":1,"state":"running","at":"2026-12-02T14:46:25Z","pull":{"total_bytes":1}})",
           R"({"seq":1,"state":"running","at":"2026-12-02T14:46:25Z","colour":"red"})",
           R"({"seq":1,"state":"exited","at":"2026-12-02T14:46:25Z","logs_base64":"@@"})",
       }) {
    Result<PodReport> refused = DecodePodReport(bad);
    EXPECT_FALSE(refused.ok()) << bad;
  }
}

DesiredPods SampleDesired() {
  DesiredPods desired;
  desired.generation = 42;
  DesiredPod entry;
  core::Pod& pod = entry.pod;
  pod.id = "pod_1";
  pod.name = "trainer";
  pod.owner_id = "usr_1";
  pod.image = "pytorch/pytorch:latest";
  pod.command = {"python", "train.py", "--model", "${MODEL}"};
  pod.env = {{"MODEL", "llama"}};
  pod.ports = {{8888, "http"}, {22, "tcp"}};
  pod.gpu_type = "RTX 4090";
  pod.gpu_count = 2;
  pod.gpu_indices = {0, 1};
  pod.vcpu = 8;
  pod.memory_gb = 32;
  pod.container_disk_gb = 20;
  pod.volume_gb = 50;
  pod.volume_mount_path = "/workspace";
  pod.desired = core::DesiredState::kStopped;
  pod.state = core::PodState::kStopping;
  pod.generation = 9;
  pod.restarts = 2;
  pod.node_id = "node_1";
  pod.jupyter_token = "jt";
  pod.link_token = "never to an agent";
  pod.ssh_host_key_seed = std::string(32, '\x07');
  entry.ssh_keys = {"ssh-ed25519 AAAA laptop"};
  desired.pods.push_back(entry);
  return desired;
}

TEST(AgentProtocolTest, DesiredPodsRoundTripInWhatTheAgentReads) {
  const DesiredPods desired = SampleDesired();
  const std::string encoded = EncodeDesiredPods(desired, At(0));
  EXPECT_EQ(encoded.find("never to an agent"), std::string::npos);
  Result<DesiredPods> decoded = DecodeDesiredPods(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(decoded->generation, 42);
  ASSERT_EQ(decoded->pods.size(), 1u);
  const core::Pod& want = desired.pods[0].pod;
  const core::Pod& got = decoded->pods[0].pod;
  EXPECT_EQ(got.id, want.id);
  EXPECT_EQ(got.name, want.name);
  EXPECT_EQ(got.owner_id, want.owner_id);
  EXPECT_EQ(got.image, want.image);
  EXPECT_EQ(got.command, want.command);
  EXPECT_EQ(got.env, want.env);
  EXPECT_EQ(got.ports, want.ports);
  EXPECT_EQ(got.gpu_type, want.gpu_type);
  EXPECT_EQ(got.gpu_count, want.gpu_count);
  EXPECT_EQ(got.gpu_indices, want.gpu_indices);
  EXPECT_EQ(got.vcpu, want.vcpu);
  EXPECT_EQ(got.memory_gb, want.memory_gb);
  EXPECT_EQ(got.container_disk_gb, want.container_disk_gb);
  EXPECT_EQ(got.volume_gb, want.volume_gb);
  EXPECT_EQ(got.volume_mount_path, want.volume_mount_path);
  EXPECT_EQ(got.desired, want.desired);
  EXPECT_EQ(got.state, want.state);
  EXPECT_EQ(got.generation, want.generation);
  EXPECT_EQ(got.restarts, want.restarts);
  EXPECT_EQ(got.node_id, want.node_id);
  EXPECT_EQ(got.jupyter_token, want.jupyter_token);
  EXPECT_EQ(got.ssh_host_key_seed, want.ssh_host_key_seed) << "its node's agent writes it";
  EXPECT_EQ(decoded->pods[0].ssh_keys, desired.pods[0].ssh_keys);
}

TEST(AgentProtocolTest, TheAgentIgnoresNewFieldsButRefusesMalformedPodLists) {
  EXPECT_TRUE(DecodeDesiredPods(R"({"generation":1,"pods":[],"new":{}})").ok());
  EXPECT_TRUE(DecodeDesiredPods(
                  R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"running",
                      "state":"pending","novel":[1,2]}]})")
                  .ok());
  for (
      const char* bad : {
          "",
          "[]",
          "{",
          R"({"pods":[]})",
          R"({"generation":1})",
          R"({"generation":"1","pods":[]})",
          R"({"generation":1,"pods":{}})",
          R"({"generation":1,"pods":[7]})",
          R"({"generation":1,"pods":[{"image":"i","desired_state":"running","state":"pending"}]})",
          R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"gone","state":"pending"}]})",
          R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"running","state":"odd"}]})",
          R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"running","state":"pending","ports":["x"]}]})",
          R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"running","state":"pending","gpu_indices":[-1]}]})",
          R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"running","state":"pending","env":{"A":1}}]})",
          // Ids that would make a path outside the agent's own directories (issue 34, item 8).
          R"({"generation":1,"pods":[{"id":"../p","image":"i","desired_state":"running","state":"pending"}]})",
          R"({"generation":1,"pods":[{"id":"p","image":"i","desired_state":"running","state":"pending",)"
          R"("volumes":[{"volume_id":"../../etc","mount_path":"/data","shared":true}]}]})",
      }) {
    Result<DesiredPods> refused = DecodeDesiredPods(bad);
    EXPECT_FALSE(refused.ok()) << bad;
  }
}

}  // namespace
}  // namespace suanli::wire
