// The chaos soak (issue 18): one server, one agent and real containers put through the faults an
// operator meets, one after another, then everything checked at once. The server is killed -9 at
// random moments under a load of pod creations, stops and credits; the agent is cut off from the
// server (its own network namespace, link down) with pods running; the container engine's service
// is killed -9 and started again under a running pod. Afterwards no acknowledged write is lost, no
// pod ever had two containers and no container lacks a pod, and every pod's charges are exactly
// the price x whole seconds of its running intervals, recomputed from its transitions.
//
// Scaled by the environment: SUANLI_CHAOS_KILLS (10) server kills and SUANLI_CHAOS_PARTITION_S
// (20) seconds of partition; docs/reliability.md has the long run (100 kills, 300 s) and its
// figures. Needs root (network namespaces), Podman (this test runs a service of its own, so killing
// it disturbs no other test) and the test image (sudo bash scripts/engine.sh).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/engine.h"
#include "agent/reconcile.h"
#include "billing/meter.h"
#include "core/clock.h"
#include "engine_testing.h"
#include "process_testing.h"
#include "testing/api_client.h"

namespace suanli {
namespace {

namespace json = boost::json;
using core::ParseTime;
using core::TruncateToMillis;
using testing::Acknowledged;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::ChildProcess;
using testing::Int;
using testing::Partition;
using testing::ReadAdminToken;
using testing::ServerProcess;
using testing::Str;
using testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

constexpr std::string_view kImage = testing::kTestImage;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr && *value ? std::atoi(value) : fallback;
}

core::TimePoint TimeOf(const json::value& value, std::string_view key) {
  core::Result<core::TimePoint> time = ParseTime(Str(value, key));
  EXPECT_TRUE(time.ok()) << key << " of " << json::serialize(value);
  return time.ok() ? *time : core::TimePoint{};
}

// A pod that ends at once on SIGTERM (a bare `sleep` as PID 1 ignores it and would hold its GPU for
// the agent's whole 10 s grace), small enough that two fit the 2 vCPUs of a CI machine.
json::object PodBody(json::array command, bool queue) {
  return {{"image", kImage},        {"command", std::move(command)},
          {"gpu_type", "RTX 4090"}, {"vcpu", 1},
          {"memory_gb", 1},         {"container_disk_gb", 1},
          {"volume_gb", 0},         {"queue", queue}};
}
json::array UntilStopped() {
  return json::array{"sh", "-c", "trap 'exit 0' TERM; sleep 100000 & wait"};
}

// Every container of one node, listed through the engine a few times a second for the whole test:
// the pods that ever had two at once, and every container each pod ever had.
class ContainerWatch {
 public:
  ContainerWatch(const std::string& socket, std::string node_id) : node_id_(std::move(node_id)) {
    auto engine = agent::Engine::Connect(socket);
    if (!engine.ok()) return;
    thread_ = std::thread([this, engine = std::move(engine).value()] {
      while (!stop_) {
        Look(*engine);
        std::this_thread::sleep_for(300ms);
      }
    });
  }
  ~ContainerWatch() { Stop(); }
  ContainerWatch(const ContainerWatch&) = delete;
  ContainerWatch& operator=(const ContainerWatch&) = delete;

  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  int looks() const { return looks_; }
  // "pod: id, id" for every pod seen with more than one container in one listing.
  std::vector<std::string> doubles() {
    std::lock_guard lock(mutex_);
    return doubles_;
  }
  std::map<std::string, std::set<std::string>> containers_by_pod() {
    std::lock_guard lock(mutex_);
    return containers_by_pod_;
  }

 private:
  void Look(agent::Engine& engine) {
    auto containers = engine.ListLabelled(agent::kPodLabel);
    if (!containers.ok()) return;
    std::map<std::string, std::vector<std::string>> listing;
    for (const agent::ContainerInfo& container : *containers) {
      const auto node = container.labels.find(std::string(agent::kNodeLabel));
      if (node == container.labels.end() || node->second != node_id_) continue;
      listing[container.labels.at(std::string(agent::kPodLabel))].push_back(container.id);
    }
    std::lock_guard lock(mutex_);
    ++looks_;
    for (const auto& [pod, ids] : listing) {
      containers_by_pod_[pod].insert(ids.begin(), ids.end());
      if (ids.size() > 1) doubles_.push_back(pod + ": " + ids[0] + ", " + ids[1]);
    }
  }

  std::string node_id_;
  std::atomic<bool> stop_{false};
  std::atomic<int> looks_{0};
  std::mutex mutex_;
  std::vector<std::string> doubles_;
  std::map<std::string, std::set<std::string>> containers_by_pod_;
  std::thread thread_;
};

// The server and the agent as processes (the agent in a network namespace of its own, on a Podman
// service of its own), a renter with credits and no quota to speak of.
class ChaosSoakTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string shared = testing::EngineSocket();
    ASSERT_FALSE(shared.empty())
        << "no container engine: run `sudo bash scripts/engine.sh` (starts Podman's service)";
    // The test watches through the shared service, which stays up while its own is killed.
    auto engine = agent::Engine::Connect(shared);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
    shared_socket_ = shared;
    auto present = engine_->ImagePresent(kImage);
    ASSERT_TRUE(present.ok() && *present)
        << "the test image " << kImage << " is missing: run `sudo bash scripts/engine.sh`";
    ASSERT_FALSE(root_.path().empty());
    ASSERT_TRUE(partition_.ok()) << "cannot make a network namespace (needs root and iproute2)";
    StartEngine();
    ASSERT_TRUE(std::filesystem::exists(own_socket_)) << engine_service_->log_text();
  }

  void TearDown() override {
    watch_.reset();
    agent_.reset();
    testing::RemoveContainersOfNode(*engine_, node_id_);
    engine_service_.reset();
  }

  void StartEngine() {
    own_socket_ = (root_.path() / "podman.sock").string();
    engine_service_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"podman", "system", "service", "--time=0",
                                 "unix://" + own_socket_},
        root_.path() / "podman.log");
    for (int i = 0; i < 100 && !std::filesystem::exists(own_socket_); ++i) {
      std::this_thread::sleep_for(100ms);
    }
  }

  void StartServer(const std::string& listen) {
    server_ =
        std::make_unique<ServerProcess>(root_.path() / "data", root_.path() / "server.log", listen);
    ASSERT_TRUE(server_->WaitUntilListening()) << server_->log_text();
    api_ = std::make_unique<ApiClient>(server_->url());
  }

  void StartAgent() {
    const ApiReply join = api_->Post("/v1/join-tokens", admin_, "{}");
    ASSERT_EQ(join.status, 201) << join.Describe();
    std::vector<std::string> args = partition_.prefix();
    for (std::string arg :
         {std::string(SUANLI_BINARY), std::string("agent"), std::string("--server"), server_->url(),
          std::string("--state-dir"), (root_.path() / "agent").string(), std::string("--name"),
          std::string("chaos"), std::string("--simulate-gpus"), std::string("2xRTX 4090"),
          std::string("--engine"), "unix://" + own_socket_, std::string("--join-token"),
          Str(join.json, "secret")}) {
      args.push_back(std::move(arg));
    }
    agent_ = std::make_unique<ChildProcess>(args, root_.path() / "agent.log");
    ASSERT_TRUE(agent_->WaitForLog("registered as node")) << agent_->log_text();
    const std::string log = agent_->log_text();
    const size_t at = log.find("registered as node ");
    node_id_ = log.substr(at + 19, log.find(' ', at + 19) - at - 19);
  }

  // All the renter's pods, page by page.
  json::array AllPods() {
    json::array pods;
    for (std::string after;;) {
      const ApiReply page = api_->Get("/v1/pods?after=" + after, renter_);
      EXPECT_EQ(page.status, 200) << page.Describe();
      if (page.status != 200) return pods;
      for (const json::value& pod : Array(page.json, "pods")) pods.push_back(pod);
      after = Str(page.json, "next_after");
      if (after.empty()) return pods;
    }
  }

  // Stops the pods that are `states` (or not yet asked to stop, when `states` is empty); the
  // stops are acknowledged writes like the load's.
  void StopPods(const std::set<std::string>& states) {
    for (const json::value& pod : AllPods()) {
      const bool pick = states.empty() ? Str(pod, "desired_state") != "stopped"
                                       : states.contains(Str(pod, "state"));
      if (!pick || Str(pod, "desired_state") == "stopped") continue;
      const std::string id = Str(pod, "id");
      if (api_->Post("/v1/pods/" + id + "/stop", renter_).status == 200) {
        std::lock_guard lock(acked_.mutex);
        acked_.stopped.insert(id);
      }
    }
  }

  json::value GetPod(const std::string& id) {
    const ApiReply reply = api_->Get("/v1/pods/" + id, renter_);
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    return reply.json;
  }
  json::value WaitPod(const std::string& id, std::string_view state,
                      std::chrono::seconds timeout = 90s) {
    const auto deadline = Clock::now() + timeout;
    json::value pod;
    while (Clock::now() < deadline) {
      const ApiReply reply = api_->Get("/v1/pods/" + id, renter_);
      if (reply.status == 200) {
        pod = reply.json;
        if (Str(pod, "state") == state) return pod;
      }
      std::this_thread::sleep_for(100ms);
    }
    ADD_FAILURE() << "pod " << id << " did not get to " << state << ": " << json::serialize(pod)
                  << "\n--- agent log:\n"
                  << agent_->log_text();
    return pod;
  }
  json::array Transitions(const std::string& id) {
    const ApiReply reply = api_->Get("/v1/pods/" + id + "/transitions", renter_);
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    return Array(reply.json, "transitions");
  }
  static int CountTo(const json::array& transitions, std::string_view to) {
    int count = 0;
    for (const json::value& transition : transitions) count += Str(transition, "to") == to;
    return count;
  }
  std::vector<agent::ContainerInfo> ContainersOf(const std::string& pod) {
    std::vector<agent::ContainerInfo> found;
    auto containers = engine_->ListLabelled(agent::kPodLabel);
    EXPECT_TRUE(containers.ok()) << containers.status().ToString();
    if (!containers.ok()) return found;
    for (const agent::ContainerInfo& container : *containers) {
      if (container.labels.at(std::string(agent::kPodLabel)) == pod) found.push_back(container);
    }
    return found;
  }

  TempDir root_;
  Partition partition_;
  std::string shared_socket_;
  std::string own_socket_;
  std::unique_ptr<agent::Engine> engine_;  // the shared service: it sees the same containers
  std::unique_ptr<ChildProcess> engine_service_;
  std::unique_ptr<ServerProcess> server_;
  std::unique_ptr<ApiClient> api_;
  std::unique_ptr<ChildProcess> agent_;
  std::unique_ptr<ContainerWatch> watch_;
  std::string admin_, renter_, renter_id_, node_id_;
  Acknowledged acked_;
};

TEST_F(ChaosSoakTest, KillsPartitionAndEngineLossLoseNoWriteDuplicateNoContainerAndBillExactly) {
  const int kills = EnvInt("SUANLI_CHAOS_KILLS", 10);
  const int partition_s = std::max(6, EnvInt("SUANLI_CHAOS_PARTITION_S", 20));
  constexpr int64_t kInitialCredits = 100'000'000'000;  // $100,000: far more than is spent
  const auto began = Clock::now();

  StartServer(partition_.host_address() + ":0");
  const std::string listen = partition_.host_address() + ":" + std::to_string(server_->port());
  admin_ = ReadAdminToken(root_.path() / "data");
  const ApiReply user = api_->PostJson(
      "/v1/users", admin_, json::object{{"name", "renter"}, {"credits_micros", kInitialCredits}});
  ASSERT_EQ(user.status, 201) << user.Describe();
  renter_ = Str(user.json, "token");
  renter_id_ = Str(user.object().at("user"), "id");
  const ApiReply quota = api_->Send("PUT", "/v1/users/" + renter_id_ + "/quota", admin_,
                                    R"({"max_pods":1000000000,"max_pending_pods":1000000000})");
  ASSERT_EQ(quota.status, 200) << quota.Describe();
  StartAgent();
  ASSERT_FALSE(node_id_.empty());
  watch_ = std::make_unique<ContainerWatch>(shared_socket_, node_id_);

  // 1. The server killed -9 at a random moment of each round of load. Every fourth round the pods
  // that run are stopped (those still starting run on into the next rounds), so the queue moves,
  // containers start and stop, and pods run, and are billed, through several kills.
  std::mt19937 random(20261206);
  std::vector<std::vector<std::string>> mine(2);
  const std::string pod_body = json::serialize(PodBody(UntilStopped(), /*queue=*/true));
  for (int round = 0; round < kills; ++round) {
    SCOPED_TRACE("kill " + std::to_string(round + 1));
    std::atomic<bool> stop{false};
    size_t created_before = 0;
    {
      std::lock_guard lock(acked_.mutex);
      created_before = acked_.created.size();
    }
    const int acked_before = acked_.count;
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < mine.size(); ++i) {
      // Unlike the kill -9 test's load (pods that never run), paced, so that the agent's two GPUs
      // churn through a few dozen pods a round; and `mine` lives across the rounds.
      const testing::PodLoad load{pod_body, random(), /*stop_one_in=*/2, 20ms, 40ms};
      threads.emplace_back(testing::RunPodLoad, server_->url(), renter_, load, std::cref(stop),
                           std::ref(acked_), std::ref(mine[i]));
    }
    threads.emplace_back(testing::RunCreditLoad, server_->url(), admin_, renter_id_,
                         std::cref(stop), std::ref(acked_), 10ms);
    const auto deadline = Clock::now() + 20s;
    while (acked_.count < acked_before + 5 && Clock::now() < deadline) {
      std::this_thread::sleep_for(2ms);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 2000));
    server_->Signal(SIGKILL);
    const bool killed = server_->Wait(20s);
    stop = true;
    for (std::thread& thread : threads) thread.join();
    ASSERT_TRUE(killed && WIFSIGNALED(*server_->exit_status()));
    EXPECT_GE(acked_.count, acked_before + 5) << "the load made progress before the kill";

    StartServer(listen);
    std::vector<std::string> created;
    {
      std::lock_guard lock(acked_.mutex);
      created.assign(acked_.created.begin() + static_cast<std::ptrdiff_t>(created_before),
                     acked_.created.end());
    }
    for (const std::string& id : created) {
      ASSERT_EQ(api_->Get("/v1/pods/" + id, renter_).status, 200)
          << "acknowledged pod " << id << " was lost";
    }
    if (round % 4 == 3) StopPods({"running"});
  }
  const auto kills_done = Clock::now();
  std::cout << kills << " kills in "
            << std::chrono::duration_cast<std::chrono::seconds>(kills_done - began).count()
            << " s\n";

  // Everything stopped, so the partition's two pods have the GPUs.
  const auto settle = [&](std::chrono::seconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (Clock::now() < deadline) {
      StopPods({});
      bool settled = true;
      for (const json::value& pod : AllPods()) {
        const std::string state = Str(pod, "state");
        settled = settled && (state == "stopped" || state == "exited" || state == "failed");
      }
      if (settled) return true;
      std::this_thread::sleep_for(500ms);
    }
    return false;
  };
  ASSERT_TRUE(settle(180s)) << agent_->log_text();

  // 2. The agent cut off for the partition's seconds with two pods running: one runs through it,
  // one ends in the middle of it. The engine keeps both going; the end arrives, exact, after.
  const std::string steady =
      Str(api_->PostJson("/v1/pods", renter_, PodBody(UntilStopped(), false)).json, "id");
  const std::string ending =
      Str(api_->PostJson("/v1/pods", renter_,
                         PodBody(json::array{"sleep", std::to_string(partition_s / 2)}, false))
              .json,
          "id");
  ASSERT_FALSE(steady.empty());
  ASSERT_FALSE(ending.empty());
  const json::value steady_running = WaitPod(steady, "running");
  WaitPod(ending, "running");
  std::vector<agent::ContainerInfo> before = ContainersOf(steady);
  ASSERT_EQ(before.size(), 1u);

  agent_->SkipLogSoFar();
  const auto cut_at = Clock::now();
  ASSERT_TRUE(partition_.Cut());
  int partition_checks = 0;
  std::optional<core::TimePoint> ended_at;  // the engine's, read before the agent removes it
  while (Clock::now() < cut_at + std::chrono::seconds(partition_s)) {
    const std::vector<agent::ContainerInfo> now = ContainersOf(steady);
    ASSERT_EQ(now.size(), 1u);
    EXPECT_TRUE(now[0].running && now[0].id == before[0].id)
        << "the pod runs on through the partition";
    const std::vector<agent::ContainerInfo> other = ContainersOf(ending);
    EXPECT_LE(other.size(), 1u);
    if (!ended_at && other.size() == 1 && !other[0].running) ended_at = other[0].finished_at;
    ++partition_checks;
    std::this_thread::sleep_for(1s);
  }
  EXPECT_TRUE(agent_->WaitForLog("cannot reach the server", 1s)) << agent_->log_text();
  EXPECT_EQ(Str(GetPod(ending), "state"), "running") << "the server cannot know yet";
  ASSERT_TRUE(ended_at.has_value()) << "the short pod ended during the partition";
  ASSERT_TRUE(partition_.Heal());
  WaitPod(ending, "exited");
  const json::array ending_transitions = Transitions(ending);
  ASSERT_EQ(Str(ending_transitions.back(), "to"), "exited");
  EXPECT_EQ(TimeOf(ending_transitions.back(), "at"), TruncateToMillis(*ended_at))
      << "billed to the millisecond it really ended, though reported after the partition";
  EXPECT_EQ(Str(WaitPod(steady, "running"), "running_since"), Str(steady_running, "running_since"));

  // 3. The engine's service killed -9 under the running pod, and started again: the agent waits
  // it out and adopts the container it finds; nothing is started twice.
  agent_->SkipLogSoFar();
  engine_service_->Signal(SIGKILL);
  ASSERT_TRUE(engine_service_->Wait(30s));
  std::filesystem::remove(own_socket_);
  ASSERT_TRUE(agent_->WaitForLog("container engine is unavailable", 60s)) << agent_->log_text();
  const std::vector<agent::ContainerInfo> during = ContainersOf(steady);
  EXPECT_TRUE(during.size() == 1 && during[0].running) << "the container does not need the service";
  StartEngine();
  ASSERT_TRUE(agent_->WaitForLog("answers again", 60s)) << agent_->log_text();
  std::this_thread::sleep_for(5s);  // two resync passes of the agent
  const std::vector<agent::ContainerInfo> after = ContainersOf(steady);
  ASSERT_EQ(after.size(), 1u) << "never a second container for the same pod";
  EXPECT_EQ(after[0].id, before[0].id) << "the container was adopted, not replaced";
  EXPECT_TRUE(after[0].running);
  EXPECT_EQ(after[0].started_at, before[0].started_at) << "and not restarted";
  EXPECT_EQ(Str(WaitPod(steady, "running"), "running_since"), Str(steady_running, "running_since"));
  EXPECT_EQ(CountTo(Transitions(steady), "running"), 1);

  // 4. Everything stopped, then checked.
  ASSERT_TRUE(settle(120s)) << agent_->log_text();
  std::this_thread::sleep_for(2s);  // the agent removes the stopped pods' containers
  watch_->Stop();
  const json::array pods = AllPods();
  std::set<std::string> pod_ids;
  for (const json::value& pod : pods) pod_ids.insert(Str(pod, "id"));

  // No acknowledged write lost: every pod there, every stop in force, every credit in the ledger.
  std::lock_guard lock(acked_.mutex);
  for (const std::string& id : acked_.created) {
    EXPECT_TRUE(pod_ids.contains(id)) << "acknowledged pod " << id << " was lost";
  }
  for (const std::string& id : acked_.stopped) {
    const json::value pod = GetPod(id);
    EXPECT_EQ(Str(pod, "desired_state"), "stopped") << "acknowledged stop of " << id << " was lost";
    EXPECT_EQ(Str(pod, "state"), "stopped") << id;
  }

  // No pod with two containers at once, nor two over its life (none was started twice), and no
  // container without a pod.
  EXPECT_GT(watch_->looks(), 0);
  EXPECT_EQ(watch_->doubles(), std::vector<std::string>{});
  const auto containers = watch_->containers_by_pod();
  for (const auto& [pod, ids] : containers) {
    EXPECT_TRUE(pod_ids.contains(pod)) << "a container of no pod: " << *ids.begin();
    EXPECT_EQ(ids.size(), 1u) << "pod " << pod << " had " << ids.size() << " containers";
  }
  int running_left = 0;
  auto listed = engine_->ListLabelled(agent::kPodLabel);
  ASSERT_TRUE(listed.ok());
  for (const agent::ContainerInfo& container : *listed) {
    const auto node = container.labels.find(std::string(agent::kNodeLabel));
    running_left += node != container.labels.end() && node->second == node_id_ && container.running;
  }
  EXPECT_EQ(running_left, 0);

  // The ledger: each pod's charges are the price x whole seconds of its running intervals, from
  // its transitions; the balance is the credits less all that.
  const ApiReply ledger = api_->Get("/v1/billing/ledger", renter_);
  ASSERT_EQ(ledger.status, 200) << ledger.Describe();
  std::map<std::string, int64_t> charged;
  std::set<int64_t> seqs;
  int64_t credits = 0, sum = 0;
  for (const json::value& entry : Array(ledger.json, "entries")) {
    EXPECT_TRUE(seqs.insert(Int(entry, "seq")).second) << "duplicate seq " << Int(entry, "seq");
    sum += Int(entry, "amount_micros");
    if (Str(entry, "kind") == "credit") {
      credits += Int(entry, "amount_micros");
    } else {
      EXPECT_TRUE(pod_ids.contains(Str(entry, "pod_id"))) << json::serialize(entry);
      charged[Str(entry, "pod_id")] -= Int(entry, "amount_micros");
    }
  }
  int64_t recomputed_total = 0;
  int ran = 0, running_intervals = 0;
  for (const std::string& id : pod_ids) {
    const json::array transitions = Transitions(id);
    ASSERT_FALSE(transitions.empty()) << id;
    EXPECT_EQ(Str(transitions.front(), "reason"), "created") << id;
    core::Money expected;
    for (size_t i = 0; i < transitions.size(); ++i) {
      if (Str(transitions[i], "to") != "running") continue;
      ASSERT_LT(i + 1, transitions.size()) << id << " still running";
      const core::TimePoint from = TimeOf(transitions[i], "at");
      const core::TimePoint to = TimeOf(transitions[i + 1], "at");
      const core::Money price =
          core::Money::FromMicros(Int(transitions[i], "gpu_price_per_hour_micros"));
      expected = expected + billing::ChargeBetween(price, from, from, to);
      ++running_intervals;
    }
    ran += CountTo(transitions, "running") > 0;
    EXPECT_EQ(charged[id], expected.micros())
        << "pod " << id << ": " << json::serialize(transitions);
    recomputed_total += expected.micros();
  }
  EXPECT_GE(credits, kInitialCredits + acked_.credited_micros) << "an acknowledged credit was lost";
  EXPECT_LE(credits, kInitialCredits + acked_.attempted_micros);
  const ApiReply balance = api_->Get("/v1/billing/balance", renter_);
  ASSERT_EQ(balance.status, 200) << balance.Describe();
  EXPECT_EQ(Int(balance.json, "balance_micros"), sum);
  EXPECT_EQ(sum, credits - recomputed_total);

  std::cout << "chaos soak: " << kills << " server kills, " << partition_s << " s partition ("
            << partition_checks << " engine checks), engine killed once; "
            << std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - began).count()
            << " s in all\nacknowledged: " << acked_.created.size() << " creates, "
            << acked_.stopped.size() << " stops, " << acked_.credited_micros / 7 << " credits; "
            << pod_ids.size() << " pods, " << ran << " ran (" << running_intervals
            << " running intervals, " << containers.size() << " containers seen in "
            << watch_->looks() << " listings); charges " << recomputed_total
            << " micro-dollars recomputed, ledger " << credits - sum << "\n";
}

}  // namespace
}  // namespace suanli
