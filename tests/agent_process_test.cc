// The agent's faults with real processes and a real engine (Podman here): the `suanli server` and
// `suanli agent` binaries as children of the test, containers on the engine, and the failures an
// operator meets: the agent killed and restarted, the server killed and restarted, a container
// that exits by itself, the agent cut off from the server (its own network namespace, link down),
// and the engine's service stopped and started again. Times are checked against the engine's own
// record of the container, to the millisecond the API keeps.
//
// Needs root (network namespaces) and an engine: SUANLI_ENGINE_SOCKET, or one FindEngineSocket
// finds (sudo bash scripts/engine.sh starts Podman's).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/engine.h"
#include "agent/reconcile.h"
#include "core/clock.h"
#include "engine_testing.h"
#include "process_testing.h"
#include "testing/api_client.h"

namespace suanli {
namespace {

namespace json = boost::json;
using core::ParseTime;
using core::TruncateToMillis;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::ChildProcess;
using testing::Partition;
using testing::ReadAdminToken;
using testing::ServerProcess;
using testing::Str;
using testing::TempDir;
using namespace std::chrono_literals;

using testing::EngineSocket;
constexpr std::string_view kImage = testing::kTestImage;

core::TimePoint TimeOf(const json::value& value, std::string_view key) {
  core::Result<core::TimePoint> time = ParseTime(Str(value, key));
  return time.ok() ? *time : core::TimePoint{};
}

// A server, a renter with credits, and an agent on simulated GPUs, as separate processes.
class AgentFaultTest : public ::testing::Test {
 protected:
  void SetUp() override {
    socket_ = EngineSocket();
    ASSERT_FALSE(socket_.empty())
        << "no container engine: run `sudo bash scripts/engine.sh` (starts Podman's service)";
    auto engine = agent::Engine::Connect(socket_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    auto present = engine_->ImagePresent(kImage);
    ASSERT_TRUE(present.ok() && *present)
        << "the test image " << kImage << " is missing: run `sudo bash scripts/engine.sh`";
    ASSERT_FALSE(root_.path().empty());
  }

  void TearDown() override {
    // Whatever a failed test left: this test's node's containers and volumes.
    agent_.reset();
    testing::RemoveContainersOfNode(*engine_, node_id_);
  }

  void StartServer(const std::string& listen = "127.0.0.1:0") {
    server_ =
        std::make_unique<ServerProcess>(root_.path() / "data", root_.path() / "server.log", listen);
    ASSERT_TRUE(server_->WaitUntilListening()) << server_->log_text();
    api_ = std::make_unique<ApiClient>(server_->url());
    admin_ = ReadAdminToken(root_.path() / "data");
  }

  // The first start registers with a join token; later ones use the saved node token.
  void StartAgent(const std::vector<std::string>& prefix = {}, std::string server_url = "") {
    std::vector<std::string> args = prefix;
    for (std::string arg :
         {std::string(SUANLI_BINARY), std::string("agent"), std::string("--server"),
          server_url.empty() ? server_->url() : server_url, std::string("--state-dir"),
          (root_.path() / "agent").string(), std::string("--name"), std::string("fault-test"),
          std::string("--simulate-gpus"), std::string("2xRTX 4090"), std::string("--engine"),
          socket_}) {
      args.push_back(std::move(arg));
    }
    args.insert(args.end(), agent_flags_.begin(), agent_flags_.end());
    if (node_id_.empty()) {
      const ApiReply join = api_->Post("/v1/join-tokens", admin_, "{}");
      ASSERT_EQ(join.status, 201) << join.Describe();
      args.push_back("--join-token");
      args.push_back(Str(join.json, "secret"));
    }
    agent_ = std::make_unique<ChildProcess>(args, root_.path() / "agent.log");
    ASSERT_TRUE(agent_->WaitForLog(node_id_.empty() ? "registered as node" : "suanli agent for"))
        << agent_->log_text();
    if (node_id_.empty()) {
      const std::string log = agent_->log_text();
      const size_t at = log.find("registered as node ");
      node_id_ = log.substr(at + 19, log.find(' ', at + 19) - at - 19);
    }
  }

  void CreateRenter() {
    const ApiReply user = api_->PostJson(
        "/v1/users", admin_, json::object{{"name", "renter"}, {"credits_micros", 100'000'000}});
    ASSERT_EQ(user.status, 201) << user.Describe();
    renter_ = Str(user.json, "token");
  }

  // Small pods: a CI machine has 2 vCPUs, and the agent offers what the host has.
  std::string CreatePod(json::object body) {
    body["gpu_type"] = "RTX 4090";
    body["vcpu"] = 1;
    body["memory_gb"] = 1;
    body["container_disk_gb"] = 1;
    const ApiReply created = api_->PostJson("/v1/pods", renter_, body);
    EXPECT_EQ(created.status, 201) << created.Describe();
    return Str(created.json, "id");
  }

  // Polls the pod until `done` says so; the last answer either way.
  json::value WaitPod(const std::string& id, const std::function<bool(const json::value&)>& done,
                      std::chrono::seconds timeout = 60s) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    json::value pod;
    while (std::chrono::steady_clock::now() < deadline) {
      const ApiReply reply = api_->Get("/v1/pods/" + id, renter_);
      if (reply.status == 200) {
        pod = reply.json;
        if (done(pod)) return pod;
      }
      std::this_thread::sleep_for(50ms);
    }
    ADD_FAILURE() << "pod " << id << " did not get there in time: " << json::serialize(pod)
                  << "\n--- agent log:\n"
                  << (agent_ ? agent_->log_text() : "");
    return pod;
  }
  static std::function<bool(const json::value&)> InState(std::string state) {
    return [state](const json::value& pod) { return Str(pod, "state") == state; };
  }

  json::array Transitions(const std::string& id) {
    const ApiReply reply = api_->Get("/v1/pods/" + id + "/transitions", renter_);
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    return Array(reply.json, "transitions");
  }
  static const json::value* TransitionTo(const json::array& transitions, std::string_view to) {
    const json::value* found = nullptr;
    for (const json::value& transition : transitions) {
      if (Str(transition, "to") == to) found = &transition;
    }
    return found;
  }
  static int CountTo(const json::array& transitions, std::string_view to) {
    int count = 0;
    for (const json::value& transition : transitions) count += Str(transition, "to") == to;
    return count;
  }

  agent::ContainerInfo ContainerOf(const std::string& pod_id) {
    auto container = engine_->Inspect(agent::ContainerName(pod_id));
    EXPECT_TRUE(container.ok()) << container.status().ToString();
    return container.ok() ? *container : agent::ContainerInfo{};
  }
  // Waits for the container to end and returns its record (before the agent removes it).
  agent::ContainerInfo WaitForExit(const std::string& pod_id, std::chrono::seconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      auto container = engine_->Inspect(agent::ContainerName(pod_id));
      if (container.ok() && !container->running && container->finished_at) return *container;
      std::this_thread::sleep_for(20ms);
    }
    ADD_FAILURE() << "the container of " << pod_id << " did not exit";
    return {};
  }

  TempDir root_;
  std::string socket_;
  std::unique_ptr<agent::Engine> engine_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<ApiClient> api_;
  std::unique_ptr<ChildProcess> agent_;
  std::string admin_;
  std::string renter_;
  std::string node_id_;
  std::vector<std::string> agent_flags_;  // more flags for every StartAgent
};

json::object LongRunning() {
  return {{"image", kImage}, {"command", json::array{"sleep", "100000"}}};
}

TEST_F(AgentFaultTest, AnAgentKilledAndRestartedAdoptsItsContainersAndRestartsNothing) {
  StartServer();
  StartAgent();
  CreateRenter();
  json::object body{{"template", "demo-http"}};
  const std::string pod = CreatePod(body);
  const json::value running =
      WaitPod(pod, [](const json::value& p) { return p.as_object().at("ready") == true; });
  const agent::ContainerInfo before = ContainerOf(pod);
  ASSERT_TRUE(before.running);

  agent_->Signal(SIGKILL);
  ASSERT_TRUE(agent_->Wait(10s));
  std::this_thread::sleep_for(1s);
  StartAgent();
  std::this_thread::sleep_for(5s);  // two resync passes of the new agent

  auto containers = engine_->ListLabelled(agent::kPodLabel);
  ASSERT_TRUE(containers.ok());
  int of_pod = 0;
  for (const agent::ContainerInfo& container : *containers) {
    of_pod += container.labels.at(std::string(agent::kPodLabel)) == pod;
  }
  EXPECT_EQ(of_pod, 1) << "never a second container for the same pod";
  const agent::ContainerInfo after = ContainerOf(pod);
  EXPECT_EQ(after.id, before.id) << "the container was adopted, not replaced";
  EXPECT_TRUE(after.running);
  EXPECT_EQ(after.started_at, before.started_at) << "and not restarted";
  const json::value now = WaitPod(pod, InState("running"));
  EXPECT_EQ(Str(now, "running_since"), Str(running, "running_since")) << "usage unchanged";
  EXPECT_EQ(CountTo(Transitions(pod), "running"), 1);
}

TEST_F(AgentFaultTest, AServerKilledAndRestartedFindsItsPodsRunningAndBillsThemExactly) {
  StartServer();
  const std::string listen = "127.0.0.1:" + std::to_string(server_->port());
  StartAgent();
  CreateRenter();
  const std::string pod = CreatePod(LongRunning());
  WaitPod(pod, InState("running"));
  const agent::ContainerInfo container = ContainerOf(pod);
  ASSERT_TRUE(container.started_at.has_value());

  server_->Signal(SIGKILL);
  ASSERT_TRUE(server_->Wait(10s));
  std::this_thread::sleep_for(2s);
  EXPECT_TRUE(ContainerOf(pod).running) << "the pod runs on without its server";
  StartServer(listen);  // same data, same address: the agent reconnects by itself

  const auto stop_asked = core::SystemClock().Now();
  ASSERT_EQ(api_->Post("/v1/pods/" + pod + "/stop", renter_).status, 200);
  const json::value stopped = WaitPod(pod, InState("stopped"));
  const json::array transitions = Transitions(pod);
  EXPECT_EQ(CountTo(transitions, "running"), 1) << "nothing duplicated";
  const json::value* to_running = TransitionTo(transitions, "running");
  const json::value* to_stopped = TransitionTo(transitions, "stopped");
  ASSERT_NE(to_running, nullptr);
  ASSERT_NE(to_stopped, nullptr);
  EXPECT_EQ(TimeOf(*to_running, "at"), TruncateToMillis(*container.started_at))
      << "billing starts when the engine started the container";
  EXPECT_GE(TimeOf(*to_stopped, "at"), TruncateToMillis(stop_asked) - 1ms);
  EXPECT_GT(testing::Int(stopped, "cost_micros"), 0);
}

TEST_F(AgentFaultTest, AContainerThatExitsByItselfEndsItsBillingAtItsExitTime) {
  StartServer();
  StartAgent();
  CreateRenter();
  const std::string pod =
      CreatePod({{"image", kImage}, {"command", json::array{"sh", "-c", "sleep 2; exit 3"}}});
  WaitPod(pod, InState("running"));
  const agent::ContainerInfo ended = WaitForExit(pod, 30s);
  ASSERT_TRUE(ended.finished_at.has_value());
  EXPECT_EQ(ended.exit_code, 3);
  const json::value exited = WaitPod(pod, InState("exited"));
  EXPECT_NE(Str(exited, "state_reason").find("3"), std::string::npos) << json::serialize(exited);
  const json::array transitions = Transitions(pod);
  const json::value* to_exited = TransitionTo(transitions, "exited");
  ASSERT_NE(to_exited, nullptr);
  EXPECT_EQ(TimeOf(*to_exited, "at"), TruncateToMillis(*ended.finished_at))
      << "the exit time is the engine's, not when the agent noticed";
  EXPECT_EQ(Str(exited, "desired_state"), "stopped") << "it stays down until its owner starts it";
}

TEST_F(AgentFaultTest, ACrashedPodsLastLogsStayReadableOnceItsContainerIsGone) {
  StartServer();
  StartAgent();
  CreateRenter();
  const std::string pod = CreatePod(
      {{"image", kImage},
       {"command", json::array{"sh", "-c", "echo starting; echo 'Traceback: boom' >&2; exit 3"}}});
  const json::value exited = WaitPod(pod, InState("exited"));
  EXPECT_TRUE(Array(exited, "port_mappings").empty());
  // Down and stopped: the agent removes the container, and the engine's logs with it.
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (engine_->Inspect(agent::ContainerName(pod)).ok() &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(50ms);
  }
  ASSERT_EQ(engine_->Inspect(agent::ContainerName(pod)).status().code(),
            core::StatusCode::kNotFound)
      << "the exited container was not removed";
  const ApiReply logs = api_->Get("/v1/pods/" + pod + "/logs", renter_);
  ASSERT_EQ(logs.status, 200) << logs.Describe();
  EXPECT_NE(logs.text.find("starting\n"), std::string::npos) << logs.text;
  EXPECT_NE(logs.text.find("Traceback: boom\n"), std::string::npos) << "stderr too: " << logs.text;
  const ApiReply last = api_->Get("/v1/pods/" + pod + "/logs?tail=1&timestamps=true", renter_);
  ASSERT_EQ(last.status, 200) << last.Describe();
  EXPECT_EQ(last.text.size(), std::string("2026-03-01T10:00:00.123456789Z ").size() +
                                  std::string("Traceback: boom\n").size())
      << "one line, after its fixed-width time: " << last.text;
}

// What a renter's code runs with, proved on a real pod: its container as the agent created it, read
// from the engine (the Docker API's GET /containers/{id}/json) and from inside (/proc/self/status).
TEST_F(AgentFaultTest, APodsContainerIsUnprivilegedLimitedAndSeesOnlyItsOwnVolume) {
  StartServer();
  StartAgent();
  CreateRenter();
  const std::string pod = CreatePod(  // 1 vCPU, 1 GB (CreatePod)
      {{"image", kImage},
       {"volume_gb", 1},
       {"command",
        json::array{
            "sh", "-c",
            "grep -E '^(CapBnd|CapEff|NoNewPrivs):' /proc/self/status; exec sleep 100000"}}});
  WaitPod(pod, InState("running"));

  ApiClient engine(socket_);
  const ApiReply inspect = engine.Get("/containers/" + agent::ContainerName(pod) + "/json");
  ASSERT_EQ(inspect.status, 200) << inspect.Describe();
  const json::object& host = inspect.json.at("HostConfig").as_object();
  EXPECT_FALSE(host.at("Privileged").as_bool());
  const json::array& security = host.at("SecurityOpt").as_array();
  EXPECT_NE(std::find(security.begin(), security.end(), json::value("no-new-privileges")),
            security.end())
      << json::serialize(host);
  EXPECT_EQ(host.at("PidsLimit").to_number<int64_t>(), 4096) << "the agent's default";
  EXPECT_EQ(host.at("Memory").to_number<int64_t>(), int64_t{1} << 30);
  const int64_t nano_cpus = host.at("NanoCpus").to_number<int64_t>();
  const int64_t quota = host.contains("CpuQuota") ? host.at("CpuQuota").to_number<int64_t>() : 0;
  const int64_t period = host.contains("CpuPeriod") ? host.at("CpuPeriod").to_number<int64_t>() : 0;
  EXPECT_TRUE(nano_cpus == 1'000'000'000 || (period > 0 && quota == period))
      << "1 vCPU: " << json::serialize(host);
  // The engine's socket never reaches a pod; its one mount is its own volume. Simulated GPUs: no
  // devices at all.
  EXPECT_EQ(json::serialize(inspect.json).find(".sock"), std::string::npos)
      << json::serialize(inspect.json);
  const json::array& mounts = inspect.json.at("Mounts").as_array();
  ASSERT_EQ(mounts.size(), 1u) << json::serialize(mounts);
  EXPECT_EQ(Str(mounts[0], "Type"), "volume");
  EXPECT_EQ(Str(mounts[0], "Name"), agent::VolumeName(pod));
  EXPECT_EQ(Str(mounts[0], "Destination"), "/workspace");
  const json::value* devices = host.if_contains("Devices");
  EXPECT_TRUE(devices == nullptr || devices->is_null() || devices->as_array().empty())
      << json::serialize(host);

  // From inside: exactly the capabilities docs/agent.md names (engine_json.cc), none more; and
  // no-new-privileges in force.
  std::string status;
  for (int i = 0; i < 100 && status.find("NoNewPrivs") == std::string::npos; ++i) {
    core::Result<std::string> logs = engine_->Logs(agent::ContainerName(pod), {});
    status = logs.ok() ? *logs : "";
    std::this_thread::sleep_for(50ms);
  }
  uint64_t expected = 0;
  // CHOWN 0, DAC_OVERRIDE 1, FOWNER 3, FSETID 4, KILL 5, SETGID 6, SETUID 7, NET_BIND_SERVICE 10,
  // SYS_CHROOT 18, AUDIT_WRITE 29 (linux/capability.h).
  for (int bit : {0, 1, 3, 4, 5, 6, 7, 10, 18, 29}) expected |= uint64_t{1} << bit;
  auto mask = [&status](std::string_view field) -> uint64_t {
    const size_t at = status.find(field);
    if (at == std::string::npos) return ~uint64_t{0};
    return std::stoull(status.substr(at + field.size()), nullptr, 16);
  };
  EXPECT_EQ(mask("CapBnd:"), expected) << status;
  EXPECT_EQ(mask("CapEff:"), expected) << status;
  EXPECT_NE(status.find("NoNewPrivs:\t1"), std::string::npos) << status;
}

// Issue 18: user-namespace remapping (--user-namespace remap). On Podman the pod is made through
// its own API then (engine_json.cc); what the compatible one gave it must hold there too: the
// hardening and limits, its owner's network, its port through the proxy, its volume.
TEST_F(AgentFaultTest, ARemappedPodIsRootOnlyInsideAndKeepsItsHardeningPortAndVolume) {
  if (engine_->Version().value().name.find("Podman") == std::string::npos) {
    GTEST_SUCCEED() << "Docker remaps daemon-wide (EngineTest checks it is asked for)";
    return;
  }
  agent_flags_ = {"--user-namespace", "remap"};
  StartServer();
  StartAgent();
  CreateRenter();
  const std::string pod = CreatePod(
      {{"image", kImage},
       {"volume_gb", 1},
       {"command", json::array{"sh", "-c",
                               "cat /proc/self/uid_map; grep NoNewPrivs /proc/self/status; "
                               "touch /workspace/mine && stat -c 'owner %u' /workspace/mine; "
                               "mkdir -p /www && echo remapped > /www/index.html && "
                               "exec httpd -f -p 8080 -h /www"}},
       {"ports", json::array{"8080/http"}}});
  WaitPod(pod, [](const json::value& shown) {
    return Str(shown, "state") == "running" && shown.at("ready").as_bool();
  });
  const ApiReply proxied = api_->Get("/v1/pods/" + pod + "/proxy/8080/", renter_);
  EXPECT_EQ(proxied.status, 200) << proxied.Describe();
  EXPECT_EQ(proxied.text, "remapped\n");

  const std::string logs = engine_->Logs(agent::ContainerName(pod), {}).value();
  std::istringstream uid_map(logs);
  int64_t inside = -1, outside = -1, count = -1;
  uid_map >> inside >> outside >> count;
  EXPECT_EQ(inside, 0) << logs;
  EXPECT_EQ(outside, agent::kRemappedRootId) << logs;
  EXPECT_EQ(count, agent::kRemappedIdCount) << logs;
  EXPECT_NE(logs.find("NoNewPrivs:\t1"), std::string::npos) << logs;
  EXPECT_NE(logs.find("owner 0"), std::string::npos) << "root in the pod owns its volume\n" << logs;

  ApiClient engine(socket_);
  const ApiReply inspect = engine.Get("/containers/" + agent::ContainerName(pod) + "/json");
  ASSERT_EQ(inspect.status, 200) << inspect.Describe();
  const json::object& host = inspect.json.at("HostConfig").as_object();
  EXPECT_FALSE(host.at("Privileged").as_bool());
  EXPECT_EQ(host.at("PidsLimit").to_number<int64_t>(), 4096);
  EXPECT_EQ(host.at("Memory").to_number<int64_t>(), int64_t{1} << 30);
  EXPECT_EQ(Str(host.at("PortBindings").at("8080/tcp").at(0), "HostIp"), "127.0.0.1");
  const std::string owner = Str(api_->Get("/v1/users/me", renter_).json, "id");
  EXPECT_TRUE(inspect.json.at("NetworkSettings")
                  .at("Networks")
                  .as_object()
                  .contains(agent::OwnerNetworkName(owner)));
  const core::Result<std::string> volume = engine_->VolumeDirectory(agent::VolumeName(pod));
  ASSERT_TRUE(volume.ok()) << volume.status().ToString();
  struct stat mine {};
  ASSERT_EQ(::stat((*volume + "/mine").c_str(), &mine), 0);
  EXPECT_EQ(mine.st_uid, agent::kRemappedRootId) << "the pod's root is nobody on the host";
}

// Issue 18's finding: from one renter's pod, another's container address and published ports
// answered. Now each owner's pods are on a network of their own, and ports are published on
// loopback unless the operator says otherwise.
TEST_F(AgentFaultTest, APodOfOneOwnerReachesNeitherAnotherOwnersPodNorItsPorts) {
  StartServer();
  StartAgent();
  CreateRenter();
  const std::string owner_a = Str(api_->Get("/v1/users/me", renter_).json, "id");
  const std::string server =
      CreatePod({{"image", kImage},
                 {"command", json::array{"sh", "-c",
                                         "mkdir -p /www && echo hello-a > /www/index.html && "
                                         "exec httpd -f -p 8080 -h /www"}},
                 {"ports", json::array{"8080/http"}}});
  const ApiReply other = api_->PostJson(
      "/v1/users", admin_, json::object{{"name", "other"}, {"credits_micros", 100'000'000}});
  ASSERT_EQ(other.status, 201) << other.Describe();
  std::string token_a = Str(other.json, "token");
  const std::string owner_b = Str(api_->Get("/v1/users/me", token_a).json, "id");
  std::swap(renter_, token_a);  // CreatePod and WaitPod act as renter_: B, for one pod
  const std::string stranger = CreatePod(LongRunning());
  WaitPod(stranger, InState("running"));
  std::swap(renter_, token_a);
  WaitPod(server, [](const json::value& pod) {
    return Str(pod, "state") == "running" && pod.at("ready").as_bool();
  });

  ApiClient engine(socket_);
  const ApiReply inspect = engine.Get("/containers/" + agent::ContainerName(server) + "/json");
  ASSERT_EQ(inspect.status, 200) << inspect.Describe();
  const std::string network = agent::OwnerNetworkName(owner_a);
  const json::object& networks = inspect.json.at("NetworkSettings").at("Networks").as_object();
  ASSERT_TRUE(networks.contains(network)) << json::serialize(networks);
  EXPECT_EQ(networks.size(), 1u) << "on its owner's network only";
  const std::string address(networks.at(network).at("IPAddress").as_string());
  const json::value& binding =
      inspect.json.at("HostConfig").at("PortBindings").at("8080/tcp").at(0);
  EXPECT_EQ(Str(binding, "HostIp"), "127.0.0.1") << "loopback unless the operator says otherwise";
  const int host_port = std::stoi(Str(binding, "HostPort"));

  // The server's authenticated proxy still reaches it, through the agent's relay on loopback.
  const ApiReply proxied = api_->Get("/v1/pods/" + server + "/proxy/8080/", renter_);
  EXPECT_EQ(proxied.status, 200) << proxied.Describe();
  EXPECT_EQ(proxied.text, "hello-a\n");

  // A neighbour on A's network (a bare container: two pods fill a 2-vCPU host) proves the server
  // answers there, so that B's failures are the isolation's and not a dead server's.
  agent::ContainerSpec neighbour;
  neighbour.name = "suanli-test-neighbour-" + std::to_string(::getpid());
  neighbour.image = std::string(kImage);
  neighbour.command = {"sleep", "600"};
  neighbour.network = network;
  core::Result<std::string> neighbour_id = engine_->Create(neighbour);
  ASSERT_TRUE(neighbour_id.ok()) << neighbour_id.status().ToString();
  struct RemoveAtExit {  // also when an assertion ends the test early
    agent::Engine& engine;
    std::string id;
    void Now() {
      if (!id.empty()) (void)engine.Remove(id);
      id.clear();
    }
    ~RemoveAtExit() { Now(); }
  } remove_neighbour{*engine_, *neighbour_id};
  ASSERT_TRUE(engine_->Start(*neighbour_id).ok());
  auto connects = [&](const std::string& from, const std::string& to, int port) {
    core::Result<agent::ExecResult> done = engine_->Exec(
        from, {"sh", "-c", "echo x | nc -w 2 " + to + " " + std::to_string(port)}, 20s);
    EXPECT_TRUE(done.ok()) << done.status().ToString();
    return done.ok() && done->exit_code == 0;
  };
  EXPECT_TRUE(connects(*neighbour_id, address, 8080));
  const std::string b_container = agent::ContainerName(stranger);
  EXPECT_FALSE(connects(b_container, address, 8080)) << "B's pod reached A's container";
  const ApiReply b_inspect = engine.Get("/containers/" + b_container + "/json");
  const std::string gateway(b_inspect.json.at("NetworkSettings")
                                .at("Networks")
                                .at(agent::OwnerNetworkName(owner_b))
                                .at("Gateway")
                                .as_string());
  EXPECT_FALSE(connects(b_container, gateway, host_port)) << "B's pod reached A's host port";

  // Once A has nothing on this host, the agent removes A's network.
  remove_neighbour.Now();
  ASSERT_EQ(api_->Send("DELETE", "/v1/pods/" + server, renter_).status, 200);
  WaitPod(server, InState("terminated"));
  bool pruned = false;
  for (int i = 0; i < 200 && !pruned; ++i) {
    core::Result<std::vector<std::string>> left =
        engine_->ListLabelledNetworks(agent::kNetworkLabel);
    pruned = left.ok() && std::find(left->begin(), left->end(), network) == left->end();
    if (!pruned) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(pruned) << network << " is still there\n" << agent_->log_text();
}

// Issue 18's finding: a pod with a 1 GB volume wrote 1.2 GB to it. Sizes are held by measuring
// (disk_quota.h): past one, the pod is stopped and its state says why and what to do.
TEST_F(AgentFaultTest, APodThatWritesPastItsVolumeIsStoppedAndToldWhy) {
  agent_flags_ = {"--disk-check-interval", "1"};
  StartServer();
  StartAgent();
  CreateRenter();
  json::object body = LongRunning();
  body["volume_gb"] = 1;
  body["command"] = json::array{
      "sh", "-c", "dd if=/dev/zero of=/workspace/big bs=1M count=1100 2>&1; exec sleep 100000"};
  const std::string pod = CreatePod(body);
  const json::value exited = WaitPod(pod, InState("exited"), 120s);
  // Measured every second while dd writes: anywhere from just past 1 GB to its 1.15 GB, so the
  // figure is "1.0" or "1.1" (once "1.0", on a loaded machine, which an exact "1.1" failed).
  const std::string reason = Str(exited, "state_reason");
  EXPECT_TRUE(
      reason.starts_with("wrote 1.0 GB to its 1 GB volume (/workspace), so it was stopped") ||
      reason.starts_with("wrote 1.1 GB to its 1 GB volume (/workspace), so it was stopped"))
      << json::serialize(exited);
  EXPECT_NE(agent_->log_text().find(pod + " " + reason.substr(0, reason.find(';'))),
            std::string::npos)
      << agent_->log_text();
  // The events say why as well (suanli events).
  const ApiReply events = api_->Get("/v1/events?pod=" + pod, renter_);
  EXPECT_NE(events.text.find("1 GB volume"), std::string::npos) << events.Describe();
}

// Issue 34, item 11: 1.3 GB went into a 1 GB volume of `suanli volumes`, and nothing happened.
TEST_F(AgentFaultTest, APodThatWritesPastAVolumeOfItsOwnersIsStoppedAndToldWhy) {
  agent_flags_ = {"--disk-check-interval", "1"};
  StartServer();
  StartAgent();
  CreateRenter();
  const ApiReply volume =
      api_->PostJson("/v1/volumes", renter_, json::object{{"name", "data"}, {"size_gb", 1}});
  ASSERT_EQ(volume.status, 201) << volume.Describe();
  json::object body = LongRunning();
  body["volumes"] = json::array{json::object{{"name", "data"}, {"mount_path", "/data"}}};
  body["command"] = json::array{
      "sh", "-c", "dd if=/dev/zero of=/data/big bs=1M count=1100 2>&1; exec sleep 100000"};
  const std::string pod = CreatePod(body);
  const json::value exited = WaitPod(pod, InState("exited"), 120s);
  const std::string reason = Str(exited, "state_reason");
  EXPECT_TRUE(reason.find("GB to volume " + Str(volume.json, "id") +
                          " (/data), past its 1 GB, so it was stopped") != std::string::npos)
      << json::serialize(exited);
  EXPECT_NE(reason.find("suanli volumes resize"), std::string::npos) << reason;
}

TEST_F(AgentFaultTest, TerminatingAStoppedPodHasItsLastNodeDeleteItsVolume) {
  StartServer();
  StartAgent();
  CreateRenter();
  json::object body = LongRunning();
  body["volume_gb"] = 1;
  const std::string pod = CreatePod(body);
  WaitPod(pod, InState("running"));
  ASSERT_EQ(api_->Post("/v1/pods/" + pod + "/stop", renter_).status, 200);
  const json::value stopped = WaitPod(pod, InState("stopped"));
  ASSERT_EQ(Str(stopped, "node_id"), "") << "a stop unbinds the pod; its volume stays on the node";
  const ApiReply removed = api_->Send("DELETE", "/v1/pods/" + pod + "?force=true", renter_, "");
  ASSERT_EQ(removed.status, 200) << removed.Describe();
  WaitPod(pod, InState("terminated"));
  EXPECT_EQ(engine_->RemoveVolume(agent::VolumeName(pod)).code(), core::StatusCode::kNotFound)
      << "the agent of the node it last ran on deleted the volume";
}

// A removed project member kept root SSH on the project's running pods: keys went into a pod only
// when its container started. Now the server wakes the node when a holder's keys change, and the
// agent rewrites them into the running container: the volume's .ssh/authorized_keys (what the
// demo image's Dropbear reads) and, where an image's entrypoint copied PUBLIC_KEY there,
// /root/.ssh/authorized_keys. Each file is read back from inside the container.
TEST_F(AgentFaultTest, ARunningPodsAuthorizedKeysFollowItsProjectsMembersAndTheirKeys) {
  constexpr std::string_view kOwnerKey =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILMtOg015QXhz87u9yAjfzVXtanjHTcq9atSzFWQ9KNR a@host";
  constexpr std::string_view kMemberKey =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAP00WqSIQMqf+dwLI0iaIhMubJTACZpCbvYUU5DauCM m@host";
  constexpr std::string_view kNewKey =
      "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGaGBQcZDCg6s1Li6Z3xd4NRae2olatAPETtunEVbOtX v@host";
  StartServer();
  StartAgent();
  CreateRenter();
  const ApiReply user = api_->PostJson(
      "/v1/users", admin_, json::object{{"name", "member"}, {"credits_micros", 100'000'000}});
  ASSERT_EQ(user.status, 201) << user.Describe();
  const std::string member = Str(user.json, "token");
  auto add_key = [&](const std::string& token, std::string_view key) {
    const ApiReply added =
        api_->PostJson("/v1/ssh-keys", token, json::object{{"name", "k"}, {"public_key", key}});
    EXPECT_EQ(added.status, 201) << added.Describe();
    return Str(added.json, "id");
  };
  const std::string owner_key = add_key(renter_, kOwnerKey);
  add_key(member, kMemberKey);
  ASSERT_EQ(api_->Post("/v1/projects", renter_, R"({"name":"team"})").status, 201);
  auto set_member = [&] {
    const ApiReply set =
        api_->Send("PUT", "/v1/projects/team/members/member", renter_, R"({"role":"member"})");
    ASSERT_EQ(set.status, 200) << set.Describe();
  };
  set_member();
  // An entrypoint of the RunPod kind: PUBLIC_KEY copied into root's own authorized_keys.
  const std::string pod =
      CreatePod({{"image", kImage},
                 {"volume_gb", 1},
                 {"project", "team"},
                 {"command", json::array{"sh", "-c",
                                         "mkdir -p /root/.ssh && printf '%s' \"$PUBLIC_KEY\" > "
                                         "/root/.ssh/authorized_keys && exec sleep 100000"}}});
  WaitPod(pod, InState("running"));

  using Keys = std::vector<std::string>;
  auto keys_in = [&](const std::string& path) {
    Keys keys;
    core::Result<agent::ExecResult> read =
        engine_->Exec(agent::ContainerName(pod), {"cat", path}, 10s);
    if (!read.ok() || read->exit_code != 0) return Keys{"(unreadable)"};
    std::istringstream lines(read->output);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty()) keys.push_back(line);
    }
    std::ranges::sort(keys);
    return keys;
  };
  // Both files hold exactly `expected` within a few seconds.
  auto expect_keys = [&](const std::string& when, Keys expected) {
    std::ranges::sort(expected);
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    Keys volume, root;
    while (std::chrono::steady_clock::now() < deadline) {
      volume = keys_in("/workspace/.ssh/authorized_keys");
      root = keys_in("/root/.ssh/authorized_keys");
      if (volume == expected && root == expected) return;
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << when << ": the volume's keys\n  " << ::testing::PrintToString(volume)
                  << "\nroot's keys\n  " << ::testing::PrintToString(root) << "\nnot\n  "
                  << ::testing::PrintToString(expected) << "\n--- agent log:\n"
                  << agent_->log_text();
  };
  const std::string owner(kOwnerKey), member_key(kMemberKey), fresh(kNewKey);
  expect_keys("at the start", {owner, member_key});

  ASSERT_EQ(api_->Send("DELETE", "/v1/projects/team/members/member", renter_).status, 200);
  expect_keys("the member removed", {owner});
  set_member();
  expect_keys("the member back", {owner, member_key});
  ASSERT_EQ(api_->Send("DELETE", "/v1/ssh-keys/" + owner_key, renter_).status, 200);
  expect_keys("the owner's key deleted", {member_key});
  add_key(renter_, kNewKey);
  expect_keys("the owner's new key added", {member_key, fresh});

  // Changed while the agent was down: its successor, which knows nothing of what went in, writes
  // the keys once again.
  agent_->Signal(SIGKILL);
  ASSERT_TRUE(agent_->Wait(10s));
  ASSERT_EQ(api_->Send("DELETE", "/v1/projects/team/members/member", renter_).status, 200);
  StartAgent();
  expect_keys("the member removed while the agent was down", {fresh});
  EXPECT_TRUE(ContainerOf(pod).running) << "the pod ran on throughout";
  EXPECT_EQ(CountTo(Transitions(pod), "running"), 1);
}

TEST_F(AgentFaultTest, CutOffFromTheServerPodsRunOnAndTheirChangesArriveExactAfterwards) {
  Partition partition;
  ASSERT_TRUE(partition.ok()) << "cannot make a network namespace (needs root and iproute2)";
  StartServer(partition.host_address() + ":0");
  StartAgent(partition.prefix());
  CreateRenter();
  const std::string steady = CreatePod(LongRunning());
  const std::string ending =
      CreatePod({{"image", kImage}, {"command", json::array{"sh", "-c", "sleep 6"}}});
  const json::value steady_running = WaitPod(steady, InState("running"));
  WaitPod(ending, InState("running"));
  const agent::ContainerInfo steady_before = ContainerOf(steady);

  ASSERT_TRUE(partition.Cut());
  ASSERT_TRUE(agent_->WaitForLog("cannot reach the server", 30s)) << agent_->log_text();
  const agent::ContainerInfo ended = WaitForExit(ending, 30s);
  ASSERT_TRUE(ended.finished_at.has_value());
  ASSERT_TRUE(agent_->WaitForLog(ending + " is exited", 30s)) << agent_->log_text();
  // The agent dies with the report unsent; its successor finds it on disk.
  agent_->Signal(SIGKILL);
  ASSERT_TRUE(agent_->Wait(10s));
  StartAgent(partition.prefix(), server_->url());
  EXPECT_EQ(Str(WaitPod(ending, [](const json::value&) { return true; }), "state"), "running")
      << "the server cannot know yet";

  ASSERT_TRUE(partition.Heal());
  WaitPod(ending, InState("exited"));
  const json::array transitions = Transitions(ending);
  const json::value* to_exited = TransitionTo(transitions, "exited");
  ASSERT_NE(to_exited, nullptr);
  EXPECT_EQ(TimeOf(*to_exited, "at"), TruncateToMillis(*ended.finished_at))
      << "billed to the second it really ended, though reported much later";

  const agent::ContainerInfo steady_after = ContainerOf(steady);
  EXPECT_EQ(steady_after.id, steady_before.id);
  EXPECT_TRUE(steady_after.running) << "the other pod ran on through the partition";
  const json::value steady_now = WaitPod(steady, InState("running"));
  EXPECT_EQ(Str(steady_now, "running_since"), Str(steady_running, "running_since"));
}

TEST_F(AgentFaultTest, AnEngineThatStopsIsWaitedOutAndReconciledWhenItReturns) {
  // A Podman service of this test's own, so stopping it disturbs no other test.
  const std::string own_socket = (root_.path() / "podman.sock").string();
  auto start_engine = [&] {
    auto service = std::make_unique<ChildProcess>(
        std::vector<std::string>{"podman", "system", "service", "--time=0", "unix://" + own_socket},
        root_.path() / "podman.log");
    for (int i = 0; i < 100 && !std::filesystem::exists(own_socket); ++i) {
      std::this_thread::sleep_for(100ms);
    }
    return service;
  };
  std::unique_ptr<ChildProcess> service = start_engine();
  ASSERT_TRUE(std::filesystem::exists(own_socket)) << service->log_text();
  socket_ = "unix://" + own_socket;
  StartServer();
  StartAgent();
  CreateRenter();
  const std::string pod = CreatePod(LongRunning());
  WaitPod(pod, InState("running"));

  service->Signal(SIGTERM);
  ASSERT_TRUE(service->Wait(30s));
  std::filesystem::remove(own_socket);
  ASSERT_TRUE(agent_->WaitForLog("container engine is unavailable", 30s)) << agent_->log_text();
  ASSERT_EQ(api_->Post("/v1/pods/" + pod + "/stop", renter_).status, 200);
  std::this_thread::sleep_for(3s);
  EXPECT_EQ(Str(WaitPod(pod, [](const json::value&) { return true; }), "state"), "running")
      << "nothing can stop it while the engine is away, and nothing pretends to";
  EXPECT_TRUE(ContainerOf(pod).running) << "the container itself does not need the service";

  service = start_engine();
  ASSERT_TRUE(agent_->WaitForLog("answers again", 30s)) << agent_->log_text();
  WaitPod(pod, InState("stopped"));
  const auto container = engine_->Inspect(agent::ContainerName(pod));
  EXPECT_FALSE(container.ok() && container->running);
}

// Podman's service killed while it removes a container can leave the container's record without
// its storage; every list of containers then fails on it ("getting container from store ...:
// container not known"), so an agent could never reconcile again. The engine client removes such
// a record and lists again. The ghost is made in a Podman store of the test's own (vfs, in a
// temporary folder), so breaking it disturbs no other test.
TEST(EngineRepairTest, AContainerRecordWhoseStorageIsGoneIsRemovedAndTheListWorksAgain) {
  TempDir root("suanli-ghost");
  const std::filesystem::path log = root.path() / "podman.log";
  const std::vector<std::string> store = {"--root",           (root.path() / "root").string(),
                                          "--runroot",        (root.path() / "run").string(),
                                          "--tmpdir",         (root.path() / "tmp").string(),
                                          "--storage-driver", "vfs"};
  auto podman = [&](std::vector<std::string> args) {
    args.insert(args.begin(), store.begin(), store.end());
    args.insert(args.begin(), "podman");
    ChildProcess command(std::move(args), log);
    return command.Wait(60s) && command.exit_status() == 0;
  };
  std::filesystem::create_directories(root.path() / "rootfs");
  std::ofstream(root.path() / "rootfs" / "hello") << "hello\n";
  ASSERT_EQ(std::system(("tar -C " + (root.path() / "rootfs").string() + " -cf " +
                         (root.path() / "image.tar").string() + " .")
                            .c_str()),
            0);
  ASSERT_TRUE(podman({"import", (root.path() / "image.tar").string(), "localhost/suanli/ghost"}))
      << testing::ReadFile(log);
  ASSERT_TRUE(podman({"create", "--name", "suanli-ghost", "--label", "suanli.node=ghost",
                      "localhost/suanli/ghost", "/hello"}))
      << testing::ReadFile(log);
  // The storage forgets the container; Podman's own record of it stays.
  std::ofstream(root.path() / "root" / "vfs-containers" / "containers.json", std::ios::trunc)
      << "[]";
  ASSERT_FALSE(podman({"container", "inspect", "suanli-ghost"})) << "the container is a ghost";

  const std::string socket = (root.path() / "podman.sock").string();
  std::vector<std::string> service = {"podman"};
  service.insert(service.end(), store.begin(), store.end());
  service.insert(service.end(), {"system", "service", "--time=0", "unix://" + socket});
  ChildProcess engine_service(service, log);
  for (int i = 0; i < 100 && !std::filesystem::exists(socket); ++i)
    std::this_thread::sleep_for(100ms);
  core::Result<std::unique_ptr<agent::Engine>> engine = agent::Engine::Connect("unix://" + socket);
  ASSERT_TRUE(engine.ok()) << engine.status().ToString();
  std::vector<std::string> notices;
  (*engine)->SetNoticeHandler([&](const std::string& line) { notices.push_back(line); });

  core::Result<std::vector<agent::ContainerInfo>> listed = (*engine)->ListLabelled("suanli.node");
  ASSERT_TRUE(listed.ok()) << listed.status().ToString() << "\n" << testing::ReadFile(log);
  EXPECT_TRUE(listed->empty());
  ASSERT_EQ(notices.size(), 1u);
  EXPECT_NE(notices[0].find("storage was gone"), std::string::npos) << notices[0];
  EXPECT_FALSE(podman({"container", "exists", "suanli-ghost"})) << "the record is gone too";
  ASSERT_TRUE((*engine)->ListLabelledNetworks("suanli.network").ok());
  EXPECT_EQ(notices.size(), 1u) << "nothing else to repair";
}

}  // namespace
}  // namespace suanli
