// The agent's relay against a real server over HTTP: a user's logs and proxied requests reach a
// pod through ServeRelay. The container engine is replaced at its interface (engine.h, the seam
// the agent has for it) by one that knows a single container; the pod's port is a real HTTP server.
#include "agent/relay.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/reconcile.h"
#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "net/http_server.h"
#include "server/api_testing.h"
#include "server/server.h"

namespace suanli::agent {
namespace {

namespace json = boost::json;
using server::testing::ApiClient;
using server::testing::ApiReply;
using server::testing::Str;

// One container, "suanli-<pod>", whose port 8080 is published on `host_port`.
class OneContainerEngine final : public Engine {
 public:
  OneContainerEngine(std::string pod_id, int host_port)
      : name_(ContainerName(pod_id)), host_port_(host_port) {}

  const std::string& socket_url() const override { return url_; }
  core::Result<EngineVersion> Version() override { return EngineVersion{}; }
  core::Result<bool> ImagePresent(std::string_view) override { return true; }
  core::Status Pull(std::string_view, const std::function<void(const PullProgress&)>&) override {
    return core::Status::Ok();
  }
  core::Result<std::string> Create(const ContainerSpec&) override { return std::string("c1"); }
  core::Status Start(std::string_view) override { return core::Status::Ok(); }
  core::Status Stop(std::string_view, std::chrono::seconds) override { return core::Status::Ok(); }
  core::Status Remove(std::string_view) override { return core::Status::Ok(); }
  core::Result<ContainerInfo> Inspect(std::string_view name) override {
    if (name != name_) return core::NotFoundError("no container " + std::string(name));
    ContainerInfo info;
    info.name = name_;
    info.running = true;
    info.ports = {{8080, host_port_, "tcp"}, {22, 1, "tcp"}};  // nothing listens on port 1
    return info;
  }
  core::Result<std::vector<ContainerInfo>> ListLabelled(std::string_view) override {
    return std::vector<ContainerInfo>{};
  }
  core::Status RemoveVolume(std::string_view) override { return core::Status::Ok(); }
  core::Result<std::string> Logs(std::string_view name, const LogOptions& options) override {
    if (name != name_) return core::NotFoundError("no container " + std::string(name));
    std::string logs;
    for (int i = 1; i <= 3; ++i) {
      if (options.timestamps) logs += "2026-03-01T08:00:0" + std::to_string(i) + ".5+08:00 ";
      logs += "line " + std::to_string(i) + "\n";
    }
    return logs;
  }
  core::Status FollowLogs(std::string_view, const LogOptions&,
                          const std::function<bool(std::string_view)>&) override {
    return core::InternalError("not used by the relay");
  }

 private:
  const std::string url_ = "unix:///nowhere";
  const std::string name_;
  const int host_port_;
};

TEST(NormalizeLogTimestampsTest, WritesEachLinesTimeAsFixedWidthUtc) {
  EXPECT_EQ(NormalizeLogTimestamps("2026-03-01T08:00:01.5+08:00 a b\nno time here\n"
                                   "2026-03-01T00:00:02Z c\n"),
            "2026-03-01T00:00:01.500000000Z a b\nno time here\n2026-03-01T00:00:02.000000000Z c\n");
}

TEST(ServeRelayTest, AUsersLogsAndProxiedRequestsReachThePodThroughTheAgent) {
  char pattern[] = "/tmp/suanli-relay-test-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::filesystem::path dir = pattern;
  core::ManualClock clock(core::ParseTime("2026-03-01T00:00:00.000Z").value());
  std::ostringstream server_log;
  server::ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = dir;
  auto started =
      server::Server::Start(options, catalog::LoadBuiltInCatalog().value(), clock, server_log);
  ASSERT_TRUE(started.ok()) << started.status().ToString();
  std::unique_ptr<server::Server> control = std::move(*started);
  const std::string url = "http://127.0.0.1:" + std::to_string(control->port());
  std::string admin;
  std::getline(std::ifstream(dir / "admin-token"), admin);
  ApiClient api(url);

  const ApiReply alice =
      api.Post("/v1/users", admin, R"({"name":"alice","credits_micros":100000000})");
  ASSERT_EQ(alice.status, 201) << alice.Describe();
  const std::string user = Str(alice.json, "token");
  const ApiReply join = api.Post("/v1/join-tokens", admin, "{}");
  const ApiReply node = api.PostJson(
      "/v1/agent/register", Str(join.json, "secret"),
      json::object{
          {"name", "n1"},
          {"vcpu", 16},
          {"memory_gb", 64},
          {"disk_gb", 500},
          {"gpus",
           json::array{json::object{
               {"index", 0}, {"type", "RTX 4090"}, {"memory_mb", 24564}, {"simulated", true}}}}});
  ASSERT_EQ(node.status, 201) << node.Describe();
  const std::string node_token = Str(node.json, "token");
  const ApiReply pod = api.Post(
      "/v1/pods", user,
      R"({"image":"busybox","gpu_type":"4090","volume_gb":0,"ports":["8080/http","22/tcp"]})");
  ASSERT_EQ(pod.status, 201) << pod.Describe();
  const std::string pod_id = Str(pod.json, "id");
  ASSERT_EQ(
      api.PostJson(
             "/v1/agent/pods/" + pod_id + "/status", node_token,
             json::object{{"seq", 1}, {"state", "running"}, {"at", core::FormatTime(clock.Now())}})
          .status,
      200);

  // The pod's web server on port 8080 (published on a free host port).
  auto pod_server = net::HttpServer::Start(
      {.host = "127.0.0.1", .port = 0}, [](net::HttpRequest&& request, net::Responder respond) {
        net::HttpResponse response;
        response.content_type = "text/plain";
        response.body = request.method + " " + request.target + " " + request.body;
        if (request.Header("authorization")) response.body += " (with the user's token!)";
        respond(std::move(response));
      });
  ASSERT_TRUE(pod_server.ok()) << pod_server.status().ToString();
  OneContainerEngine engine(pod_id, (*pod_server)->port());

  std::atomic<bool> stopping{false};
  std::ostringstream agent_log;
  std::mutex log_mutex;
  RelayOptions relay;
  relay.server_url = url;
  relay.poll_wait = std::chrono::seconds(1);
  std::thread agent([&] {
    ServeRelay(
        relay, [&] { return node_token; }, engine, [&] { return stopping.load(); },
        [&](const std::string& line) {
          std::lock_guard lock(log_mutex);
          agent_log << line << "\n";
        });
  });

  const ApiReply logs = api.Get("/v1/pods/" + pod_id + "/logs?tail=3&timestamps=true", user);
  EXPECT_EQ(logs.status, 200) << logs.Describe();
  EXPECT_EQ(logs.text,
            "2026-03-01T00:00:01.500000000Z line 1\n2026-03-01T00:00:02.500000000Z line 2\n"
            "2026-03-01T00:00:03.500000000Z line 3\n");
  const ApiReply get = api.Get("/v1/pods/" + pod_id + "/proxy/8080/hello?x=1", user);
  EXPECT_EQ(get.status, 200) << get.Describe();
  EXPECT_EQ(get.text, "GET /hello?x=1 ");
  const ApiReply post = api.Send("POST", "/v1/pods/" + pod_id + "/proxy/8080/form", user, "a=1");
  EXPECT_EQ(post.status, 200) << post.Describe();
  EXPECT_EQ(post.text, "POST /form a=1");
  const ApiReply refused = api.Get("/v1/pods/" + pod_id + "/proxy/22/", user);
  EXPECT_EQ(refused.status, 502) << refused.Describe();
  EXPECT_NE(refused.error_message().find("nothing answers on port 22"), std::string::npos)
      << refused.text;

  stopping = true;
  clock.Advance(std::chrono::seconds(2));  // ends the agent's waiting poll
  agent.join();
  control->Stop();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

}  // namespace
}  // namespace suanli::agent
