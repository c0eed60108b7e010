// Two `suanli server` replicas on one PostgreSQL database, as an operator runs them: the real
// binary twice, a load of creates, stops and credits sent to both, and a real agent (simulated
// GPUs, containers on the engine) given both URLs. The replica that serves is killed with SIGKILL
// again and again, at moments that differ, and started again as a standby; the other must take
// over, and afterwards nothing acknowledged is missing, nothing is done twice, the ledger adds up,
// and the agent's pod ran on in its one container, billed exactly for the seconds it ran.
//
// Needs PostgreSQL (ctest's postgres fixture) and an engine: SUANLI_ENGINE_SOCKET, or one
// FindEngineSocket finds (sudo bash scripts/engine.sh starts Podman's).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <array>
#include <atomic>
#include <boost/json/serialize.hpp>
#include <chrono>
#include <cstdlib>
#include <iostream>
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
#include "store/postgres_testing.h"
#include "testing/api_client.h"

namespace suanli {
namespace {

namespace json = boost::json;
using testing::Acknowledged;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::ChildProcess;
using testing::Int;
using testing::ReadAdminToken;
using testing::ServerProcess;
using testing::Str;
using testing::TempDir;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

using testing::EngineSocket;
constexpr std::string_view kImage = testing::kTestImage;

core::TimePoint TimeOf(const json::value& value, std::string_view key) {
  core::Result<core::TimePoint> time = core::ParseTime(Str(value, key));
  EXPECT_TRUE(time.ok()) << key << " of " << json::serialize(value);
  return time.ok() ? *time : core::TimePoint{};
}

// Creates pods that wait (no node has the GPU type, so each is queued on purpose) and stops some,
// through `urls` (several replicas: the client moves on from one that cannot be reached). A
// request that fails on the way (its replica killed) is not acknowledged, and the load goes on.
void RunPodLoad(const std::string& urls, const std::string& token, uint32_t seed,
                const std::atomic<bool>& stop, Acknowledged& acked) {
  ApiClient api(urls, 10s);
  std::mt19937 random(seed);
  std::vector<std::string> mine;
  while (!stop) {
    int status = 0;
    if (mine.empty() || random() % 3 != 0) {
      const ApiReply reply = api.Post(
          "/v1/pods", token, R"({"image":"busybox","gpu_type":"H100","volume_gb":0,"queue":true})");
      status = reply.status;
      if (reply.status == 201) {
        std::lock_guard lock(acked.mutex);
        acked.created.push_back(Str(reply.json, "id"));
        mine.push_back(acked.created.back());
        ++acked.count;
      } else if (reply.status != 0 && reply.status != 503) {
        ADD_FAILURE() << "a create was refused: " << reply.Describe();
        return;
      }
    } else {
      const size_t index = random() % mine.size();
      const std::string id = mine[index];
      const ApiReply reply = api.Post("/v1/pods/" + id + "/stop", token);
      status = reply.status;
      if (reply.status == 200) {
        mine.erase(mine.begin() + static_cast<std::ptrdiff_t>(index));
        std::lock_guard lock(acked.mutex);
        acked.stopped.insert(id);
        ++acked.count;
      }
    }
    if (status == 0 || status == 503) std::this_thread::sleep_for(20ms);  // a takeover
  }
}

void RunCreditLoad(const std::string& urls, const std::string& admin, const std::string& user_id,
                   const std::atomic<bool>& stop, Acknowledged& acked) {
  ApiClient api(urls, 10s);
  while (!stop) {
    {
      std::lock_guard lock(acked.mutex);
      acked.attempted_micros += 7;
    }
    const ApiReply reply = api.Post("/v1/users/" + user_id + "/credits", admin,
                                    R"({"amount_micros":7,"note":"load"})");
    if (reply.status == 200) {
      std::lock_guard lock(acked.mutex);
      acked.credited_micros += 7;
      ++acked.count;
    } else {
      std::this_thread::sleep_for(20ms);
    }
  }
}

class ReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(root_.path().empty());
    ASSERT_EQ(database_.error(), "");
    socket_ = EngineSocket();
    ASSERT_FALSE(socket_.empty())
        << "no container engine: run `sudo bash scripts/engine.sh` (starts Podman's service)";
    auto engine = agent::Engine::Connect(socket_);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(engine).value();
  }

  void TearDown() override {
    agent_.reset();
    testing::RemoveContainersOfNode(*engine_, node_id_);
  }

  // Replica `which` (0 or 1), on its own data folder; on its first port again after the first
  // start.
  void Start(size_t which) {
    const std::string listen =
        ports_[which] == 0 ? "127.0.0.1:0" : "127.0.0.1:" + std::to_string(ports_[which]);
    replicas_[which] = std::make_unique<ServerProcess>(
        root_.path() / ("data-" + std::to_string(which)),
        root_.path() / ("replica-" + std::to_string(which) + ".log"), listen, database_.url());
    ASSERT_TRUE(replicas_[which]->WaitUntilListening()) << replicas_[which]->log_text();
    ports_[which] = replicas_[which]->port();
  }
  std::string Url(size_t which) const {
    return "http://127.0.0.1:" + std::to_string(ports_[which]);
  }

  // Which replica serves itself (a standby's answers carry the server they came from), if one does.
  std::optional<size_t> Serving() const {
    for (size_t which = 0; which < 2; ++which) {
      ApiClient api(Url(which), 2s);
      const ApiReply health = api.Get("/healthz");
      if (health.status == 200 && health.Header("x-suanli-served-by").empty()) return which;
    }
    return std::nullopt;
  }

  TempDir root_;
  store::testing::PostgresDatabase database_;
  std::string socket_;
  std::unique_ptr<agent::Engine> engine_;
  std::array<std::unique_ptr<ServerProcess>, 2> replicas_;
  std::array<int, 2> ports_ = {0, 0};
  std::unique_ptr<ChildProcess> agent_;
  std::string node_id_;
};

TEST_F(ReplicasTest, TenKillsOfTheServingReplicaLoseNothingAndTheAgentsPodRunsOnBilledExactly) {
  constexpr int kKills = 10;
  constexpr int kAcksBeforeKill = 40;
  Start(0);
  Start(1);
  ASSERT_TRUE(replicas_[1]->WaitForLog("standby: another replica")) << replicas_[1]->log_text();
  ASSERT_EQ(Serving(), std::optional<size_t>(0)) << "the first to start holds the store";
  const std::string admin = ReadAdminToken(root_.path() / "data-0");
  // Both URLs, in both orders: the standby forwards, so either serves every request.
  const std::string both = Url(0) + "," + Url(1);
  const std::string both_reversed = Url(1) + "," + Url(0);
  ApiClient api(both_reversed);

  const ApiReply user = api.PostJson(
      "/v1/users", admin, json::object{{"name", "renter"}, {"credits_micros", 100'000'000'000}});
  ASSERT_EQ(user.status, 201) << user.Describe();
  EXPECT_EQ(user.Header("x-suanli-served-by"), Url(0)) << "the standby forwarded it";
  const std::string user_id = Str(user.object().at("user"), "id");
  const std::string token = Str(user.json, "token");
  ASSERT_EQ(api.Send("PUT", "/v1/users/" + user_id + "/quota", admin,
                     R"({"max_pods":1000000,"max_pending_pods":1000000})")
                .status,
            200);

  // The agent knows both; it talks to the standby first, whose long polls the other answers.
  const ApiReply join = api.Post("/v1/join-tokens", admin, "{}");
  ASSERT_EQ(join.status, 201) << join.Describe();
  agent_ = std::make_unique<ChildProcess>(
      std::vector<std::string>{SUANLI_BINARY, "agent", "--server", both_reversed, "--state-dir",
                               (root_.path() / "agent").string(), "--name", "replicas-test",
                               "--simulate-gpus", "1xRTX 4090", "--engine", socket_, "--join-token",
                               Str(join.json, "secret")},
      root_.path() / "agent.log");
  ASSERT_TRUE(agent_->WaitForLog("registered as node")) << agent_->log_text();
  {
    const std::string log = agent_->log_text();
    const size_t at = log.find("registered as node ") + 19;
    node_id_ = log.substr(at, log.find(' ', at) - at);
  }
  const ApiReply created =
      api.PostJson("/v1/pods", token,
                   json::object{{"image", kImage},
                                {"command", json::array{"sleep", "100000"}},
                                {"gpu_type", "RTX 4090"},
                                {"volume_gb", 0},  // no storage charge, so the balance ends exact
                                {"vcpu", 1},
                                {"memory_gb", 1},
                                {"container_disk_gb", 1}});
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string pod = Str(created.json, "id");
  // The pod once it is in `state`, or null after a minute.
  const auto wait_for = [&](std::string_view state) {
    for (const auto deadline = Clock::now() + 60s; Clock::now() < deadline;) {
      const ApiReply shown = api.Get("/v1/pods/" + pod, token);
      if (shown.status == 200 && Str(shown.json, "state") == state) return shown.json;
      std::this_thread::sleep_for(50ms);
    }
    return json::value();
  };
  const json::value running = wait_for("running");
  ASSERT_TRUE(running.is_object()) << "the pod did not start: " << agent_->log_text();
  const auto container = engine_->Inspect(agent::ContainerName(pod));
  ASSERT_TRUE(container.ok() && container->running) << container.status().ToString();

  Acknowledged acked;
  std::atomic<bool> stop{false};
  std::vector<std::thread> load;
  std::mt19937 random(20261206);
  for (uint32_t i = 0; i < 4; ++i) {
    load.emplace_back(RunPodLoad, i % 2 == 0 ? both : both_reversed, token, random(),
                      std::cref(stop), std::ref(acked));
  }
  load.emplace_back(RunCreditLoad, both, admin, user_id, std::cref(stop), std::ref(acked));

  std::vector<double> takeover_seconds;
  for (int kill = 0; kill < kKills; ++kill) {
    SCOPED_TRACE("kill " + std::to_string(kill));
    const std::optional<size_t> serving = Serving();
    ASSERT_TRUE(serving.has_value()) << "no replica serves";
    const int acked_before = acked.count;
    for (const auto deadline = Clock::now() + 20s;
         acked.count < acked_before + kAcksBeforeKill && Clock::now() < deadline;) {
      std::this_thread::sleep_for(2ms);
    }
    EXPECT_GE(acked.count, acked_before + kAcksBeforeKill) << "the load went on";
    std::this_thread::sleep_for(std::chrono::milliseconds(random() % 200));
    replicas_[*serving]->Signal(SIGKILL);
    ASSERT_TRUE(replicas_[*serving]->Wait(10s));
    const auto killed_at = Clock::now();
    const size_t other = 1 - *serving;
    while (Serving() != std::optional<size_t>(other) && Clock::now() < killed_at + 30s) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_EQ(Serving(), std::optional<size_t>(other)) << replicas_[other]->log_text();
    takeover_seconds.push_back(std::chrono::duration<double>(Clock::now() - killed_at).count());
    Start(*serving);  // back, as a standby
  }
  stop = true;
  for (std::thread& thread : load) thread.join();

  // Every acknowledged write is there, whole; the ledger adds up.
  std::lock_guard lock(acked.mutex);
  for (const std::string& id : acked.created) {
    const ApiReply shown = api.Get("/v1/pods/" + id, token);
    ASSERT_EQ(shown.status, 200) << "acknowledged pod " << id << " was lost: " << shown.Describe();
    if (acked.stopped.contains(id)) {
      EXPECT_EQ(Str(shown.json, "state"), "stopped") << id;
    }
    const ApiReply history = api.Get("/v1/pods/" + id + "/transitions", token);
    ASSERT_EQ(history.status, 200) << history.Describe();
    ASSERT_FALSE(Array(history.json, "transitions").empty()) << id;
    EXPECT_EQ(Str(Array(history.json, "transitions").front(), "reason"), "created");
  }
  // The agent's pod ran on in its one container, never restarted, its start billed from once.
  const auto still = engine_->Inspect(agent::ContainerName(pod));
  ASSERT_TRUE(still.ok()) << still.status().ToString();
  EXPECT_TRUE(still->running);
  EXPECT_EQ(still->id, container->id) << "never a second container for the pod";
  EXPECT_EQ(still->started_at, container->started_at) << "and never restarted";
  ASSERT_EQ(api.Post("/v1/pods/" + pod + "/stop", token).status, 200);
  ASSERT_TRUE(wait_for("stopped").is_object()) << agent_->log_text();
  const ApiReply history = api.Get("/v1/pods/" + pod + "/transitions", token);
  std::vector<std::string> states;
  core::TimePoint ran_from{};
  core::TimePoint ran_to{};
  for (const json::value& transition : Array(history.json, "transitions")) {
    states.push_back(Str(transition, "to"));
    if (states.back() == "running") ran_from = TimeOf(transition, "at");
    if (states.back() == "stopped") ran_to = TimeOf(transition, "at");
  }
  EXPECT_EQ(states, (std::vector<std::string>{"pending", "starting", "running", "stopped"}))
      << history.text;
  EXPECT_EQ(ran_from, core::TruncateToMillis(*container->started_at));
  const core::Money price = core::Money::FromMicros(Int(running, "gpu_price_per_hour_micros"));
  int64_t charged = 0;
  const ApiReply pod_ledger = api.Get("/v1/billing/ledger", token);
  for (const json::value& entry : Array(pod_ledger.json, "entries")) {
    if (Str(entry, "pod_id") == pod && Str(entry, "kind") == "gpu") {
      charged -= Int(entry, "amount_micros");
    }
  }
  EXPECT_EQ(charged, billing::ChargeBetween(price, ran_from, ran_from, ran_to).micros())
      << "every second the pod ran billed once, across " << kKills << " takeovers";

  // The ledger: no entry twice, and once the pod is stopped, the balance is what it adds up to.
  std::set<int64_t> seqs;
  int64_t sum = 0;
  int64_t credits = 0;
  const ApiReply ledger = api.Get("/v1/billing/ledger", token);
  ASSERT_EQ(ledger.status, 200) << ledger.Describe();
  for (const json::value& entry : Array(ledger.json, "entries")) {
    EXPECT_TRUE(seqs.insert(Int(entry, "seq")).second) << "duplicate seq " << Int(entry, "seq");
    sum += Int(entry, "amount_micros");
    if (Str(entry, "kind") == "credit") credits += Int(entry, "amount_micros");
  }
  EXPECT_EQ(Int(api.Get("/v1/billing/balance", token).json, "balance_micros"), sum);
  EXPECT_GE(credits, 100'000'000'000 + acked.credited_micros) << "an acknowledged credit was lost";
  EXPECT_LE(credits, 100'000'000'000 + acked.attempted_micros);

  double slowest = 0;
  for (double seconds : takeover_seconds) slowest = std::max(slowest, seconds);
  std::cout << "acknowledged over " << kKills
            << " kills of the serving replica: " << acked.created.size() << " creates, "
            << acked.stopped.size() << " stops, " << acked.credited_micros / 7
            << " credits; slowest takeover " << slowest << " s\n";
}

}  // namespace
}  // namespace suanli
