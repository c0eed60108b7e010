// The agent against a control plane that answers wrongly: a malformed or hostile answer to the
// registration or to the desired pods gives a clear error (or is logged and retried), never a
// crash. The "server" is a plain HTTP server of the test's; the engine is the real one (the agent
// lists its containers), so the agent runs whole.
#include <gtest/gtest.h>

#include <atomic>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "agent/agent.h"
#include "agent/engine.h"
#include "catalog/catalog_file.h"
#include "net/http_server.h"
#include "testing/locked_log.h"
#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

constexpr std::string_view kGoodRegistration = R"({"node":{"id":"node_t"},"token":"sln_t"})";

// A control plane that says what the test tells it to.
class ScriptedServer {
 public:
  ScriptedServer() {
    net::HttpServerOptions options;
    options.port = 0;
    auto started = net::HttpServer::Start(
        options,
        [this](net::HttpRequest&& request, net::Responder respond) { respond(Answer(request)); });
    EXPECT_TRUE(started.ok()) << started.status().ToString();
    if (started.ok()) server_ = std::move(*started);
  }

  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

  void SetRegistration(int status, std::string body) {
    std::lock_guard lock(mutex_);
    registration_ = {status, std::move(body)};
  }
  // Answers to GET /v1/agent/pods, one each, then the last again and again.
  void SetDesired(std::vector<std::string> bodies) {
    std::lock_guard lock(mutex_);
    desired_ = std::move(bodies);
    desired_served_ = 0;
  }
  int registrations() const { return registrations_; }
  std::string last_heartbeat() const {
    std::lock_guard lock(mutex_);
    return last_heartbeat_;
  }
  void ForgetHeartbeat() {
    std::lock_guard lock(mutex_);
    last_heartbeat_.clear();
  }
  // The `after` of the latest poll of the desired pods ("" before any).
  std::string last_after() const {
    std::lock_guard lock(mutex_);
    return last_after_;
  }

 private:
  net::HttpResponse Answer(const net::HttpRequest& request) {
    net::HttpResponse response;
    std::lock_guard lock(mutex_);
    if (request.path == "/v1/agent/register") {
      ++registrations_;
      response.status = registration_.first;
      response.body = registration_.second;
    } else if (request.path == "/v1/agent/pods") {
      last_after_ = request.QueryValue("after").value_or("");
      if (desired_.empty()) {
        response.body = R"({"generation":0,"pods":[]})";
      } else {
        response.body = desired_[std::min(desired_served_, desired_.size() - 1)];
        ++desired_served_;
      }
    } else if (request.path == "/v1/agent/heartbeat") {
      last_heartbeat_ = request.body;
      response.body = "{}";
    } else if (request.path == "/v1/agent/requests") {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a short long poll
      response.body = R"({"requests":[]})";
    } else {
      response.body = "{}";
    }
    return response;
  }

  mutable std::mutex mutex_;
  std::pair<int, std::string> registration_{201, std::string(kGoodRegistration)};
  std::vector<std::string> desired_;
  size_t desired_served_ = 0;
  std::atomic<int> registrations_ = 0;
  std::string last_after_;
  std::string last_heartbeat_;
  std::unique_ptr<net::HttpServer> server_;
};

class AgentFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* from_env = std::getenv("SUANLI_ENGINE_SOCKET");
    socket_ = from_env != nullptr && from_env[0] != '\0' ? from_env : FindEngineSocket();
    ASSERT_FALSE(socket_.empty()) << "no container engine socket: set SUANLI_ENGINE_SOCKET, or "
                                     "run `sudo bash scripts/engine.sh`";
  }

  std::unique_ptr<Agent> StartAgent(const std::string& state, std::string gpu_probe = "off") {
    AgentOptions options;
    options.gpu_probe = std::move(gpu_probe);
    options.server_url = server_.url();
    options.join_token = "slj_test";
    options.state_dir = dir_.path() / state;
    options.name = "faulty";
    options.simulate_gpus = "1xRTX 4090";
    options.engine_socket = socket_;
    options.heartbeat_interval = std::chrono::milliseconds(200);
    options.long_poll = std::chrono::seconds(1);
    auto agent = Agent::Start(options, catalog_, clock_, log_);
    EXPECT_TRUE(agent.ok()) << agent.status().ToString();
    return agent.ok() ? std::move(*agent) : nullptr;
  }

  // Waits up to 20 s for `done`.
  template <typename Done>
  static bool Eventually(Done done) {
    for (int i = 0; i < 200; ++i) {
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return done();
  }

  std::string socket_;
  suanli::testing::TempDir dir_{"suanli-agent-faults"};
  ScriptedServer server_;
  catalog::Catalog catalog_ = catalog::LoadBuiltInCatalog().value();
  core::SystemClock clock_;
  suanli::testing::LockedLog log_;  // read while the agent's threads write it
};

TEST_F(AgentFaultsTest, AMalformedRegistrationAnswerStopsTheAgentWithTheReason) {
  const struct {
    std::string body;
    std::string reason;
  } cases[] = {
      {R"({"token":"sln_t"})", "node: is required"},
      {R"({"token":"sln_t","node":"node_t"})", "node: must be an object"},
      {R"({"token":"sln_t","node":{"name":"x"}})", "node: id: is required"},
      {R"({"token":12,"node":{"id":"node_t"}})", "token: must be a string"},
      {R"({"token":"sln_t","node":{"id":["a"]}})", "node: id: must be a string"},
      {"[1,2]", "must be a JSON object"},
      {"<html>proxy error</html>", "is not valid JSON"},
  };
  int state = 0;
  for (const auto& bad : cases) {
    server_.SetRegistration(201, bad.body);
    std::unique_ptr<Agent> agent = StartAgent("state" + std::to_string(state++));
    ASSERT_NE(agent, nullptr);
    ASSERT_TRUE(Eventually([&] { return !agent->failure().ok(); })) << bad.body;
    const std::string message = agent->failure().message();
    EXPECT_NE(message.find("its answer could not be read"), std::string::npos) << message;
    EXPECT_NE(message.find(bad.reason), std::string::npos) << bad.body << " -> " << message;
    EXPECT_TRUE(agent->node_id().empty());
    agent->Stop();
  }
  // Each agent tried once: registering again would have made a second node of the host.
  EXPECT_EQ(server_.registrations(), static_cast<int>(std::size(cases)));
}

TEST_F(AgentFaultsTest, MalformedDesiredPodsAreLoggedAndTheAgentGoesOn) {
  server_.SetDesired({
      "not json",
      R"({"pods":[]})",
      R"({"generation":3,"pods":[{"id":"pod_x"}]})",
      R"({"generation":3,"pods":[{"id":"pod_x","image":"i","desired_state":"running",
          "state":"running","gpu_indices":"all"}]})",
      R"({"generation":5,"pods":[]})",
  });
  std::unique_ptr<Agent> agent = StartAgent("state");
  ASSERT_NE(agent, nullptr);
  // After the good answer the agent polls for what comes after generation 5.
  ASSERT_TRUE(Eventually([&] { return server_.last_after() == "5"; })) << log_.str();
  EXPECT_TRUE(agent->failure().ok()) << agent->failure().ToString();
  EXPECT_EQ(agent->node_id(), "node_t");
  agent->Stop();
  const std::string log = log_.str();
  EXPECT_NE(log.find("the server's desired pods could not be read"), std::string::npos) << log;
  EXPECT_NE(log.find("generation: is required"), std::string::npos) << log;
  EXPECT_NE(log.find("pods: image: is required"), std::string::npos) << log;
  EXPECT_NE(log.find("gpu_indices: must be an array"), std::string::npos) << log;
}

// The probe is CUDA and these machines have no GPU: a simulated probe, a script that prints what
// suanli-gpu-probe prints for the agent's simulated RTX 4090 and counts its runs.
TEST_F(AgentFaultsTest, TheGpusAreMeasuredOnceAndTheFiguresGoWithEveryHeartbeat) {
  const std::filesystem::path probe = dir_.path() / "simulated-gpu-probe";
  {
    std::ofstream script(probe);
    script << "#!/bin/sh\necho run >> \"$0.runs\"\n"
              R"(echo '{"index":0,"name":"RTX 4090","uuid":"SIM-GPU-0-rtx-4090",)"
              R"("compute_capability":"8.9","memory_gb":24,"memory_bandwidth_gbps":905.5,)"
              R"("fp16_tflops":151.25,"bf16_tflops":150,"fp8_tflops":300}')"
              "\n";
  }
  std::filesystem::permissions(probe, std::filesystem::perms::owner_all);
  const auto runs = [&] {
    std::ifstream file(probe.string() + ".runs");
    int lines = 0;
    for (std::string line; std::getline(file, line);) ++lines;
    return lines;
  };
  // The last heartbeat's gpu_measurements, "" for none.
  const auto measured = [&]() -> std::string {
    boost::system::error_code error;
    const boost::json::value body = boost::json::parse(server_.last_heartbeat(), error);
    if (error || !body.is_object() || !body.as_object().contains("gpu_measurements")) return "";
    return boost::json::serialize(body.at("gpu_measurements"));
  };
  const std::string expected = boost::json::serialize(boost::json::parse(
      R"([{"index":0,"memory_bandwidth_gbps":905.5,"fp16_tflops":151.25,"bf16_tflops":150.0,)"
      R"("fp8_tflops":300.0}])"));
  const auto measured_in_heartbeat = [&] { return measured() == expected; };
  std::unique_ptr<Agent> agent = StartAgent("state", probe.string());
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(Eventually(measured_in_heartbeat)) << server_.last_heartbeat() << "\n" << log_.str();
  agent->Stop();
  EXPECT_EQ(runs(), 1);
  EXPECT_NE(log_.str().find("measured 1 GPU(s)"), std::string::npos) << log_.str();

  // A restart reports what was measured without measuring again.
  agent.reset();  // lets go of the state directory
  server_.ForgetHeartbeat();
  agent = StartAgent("state", probe.string());
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(Eventually(measured_in_heartbeat)) << server_.last_heartbeat();
  agent->Stop();
  EXPECT_EQ(runs(), 1);

  // A probe that fails is said in the log; the heartbeats go on without figures.
  const std::filesystem::path broken = dir_.path() / "broken-gpu-probe";
  {
    std::ofstream script(broken);
    script << "#!/bin/sh\necho 'no CUDA device: no driver' >&2\nexit 2\n";
  }
  std::filesystem::permissions(broken, std::filesystem::perms::owner_all);
  agent.reset();
  agent = StartAgent("other-state", broken.string());
  ASSERT_NE(agent, nullptr);
  ASSERT_TRUE(Eventually([&] {
    return log_.str().find(
               "GPUs not measured, so the advisor uses their datasheets: no CUDA "
               "device: no driver") != std::string::npos;
  })) << log_.str();
  server_.ForgetHeartbeat();
  ASSERT_TRUE(Eventually([&] { return !server_.last_heartbeat().empty(); }));
  agent->Stop();
  EXPECT_EQ(measured(), "");
  EXPECT_EQ(runs(), 1);
}

}  // namespace
}  // namespace suanli::agent
