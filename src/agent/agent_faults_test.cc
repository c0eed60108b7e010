// The agent against a control plane that answers wrongly: a malformed or hostile answer to the
// registration or to the desired pods gives a clear error (or is logged and retried), never a
// crash. The "server" is a plain HTTP server of the test's; the engine is the real one (the agent
// lists its containers), so the agent runs whole.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <thread>

#include "agent/agent.h"
#include "agent/engine.h"
#include "catalog/catalog_file.h"
#include "net/http_server.h"
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

  std::unique_ptr<Agent> StartAgent(const std::string& state) {
    AgentOptions options;
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
  std::ostringstream log_;
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

}  // namespace
}  // namespace suanli::agent
