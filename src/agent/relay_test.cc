// The agent's relay end to end: a user's requests for a pod's logs and ports go to a real server
// over HTTP, the agent takes them with ServeRelay and does them against a real container on the
// real engine (Podman's Docker-compatible service here: `sudo bash scripts/engine.sh` starts it
// and builds the busybox image these tests run), and the answers travel back to the user.
#include "agent/relay.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <sstream>
#include <thread>

#include "agent/ports.h"
#include "agent/reconcile.h"
#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "net/http_client.h"
#include "server/server.h"
#include "testing/api_client.h"
#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

namespace json = boost::json;
using suanli::testing::ApiClient;
using suanli::testing::ApiReply;
using suanli::testing::Str;

constexpr std::string_view kImage = "localhost/suanli/busybox:latest";

TEST(NormalizeLogTimestampsTest, WritesEachLinesTimeAsFixedWidthUtc) {
  EXPECT_EQ(NormalizeLogTimestamps("2026-03-01T08:00:01.5+08:00 a b\nno time here\n"
                                   "2026-03-01T00:00:02Z c\n"),
            "2026-03-01T00:00:01.500000000Z a b\nno time here\n2026-03-01T00:00:02.000000000Z c\n");
}

// A host port for a test container, as the agent picks them (see ports.h).
int FreePort() {
  const core::Result<int> port = FreeHostPort("127.0.0.1", {});
  return port.ok() ? *port : 0;
}

template <typename Predicate>
bool WaitFor(Predicate predicate, std::chrono::milliseconds limit = std::chrono::seconds(20)) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (predicate()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return predicate();
}

std::string HeaderOf(const net::HttpResponse& response, std::string_view name) {
  for (const auto& [key, value] : response.headers) {
    if (key == name) return value;
  }
  return "";
}

// A CGI program for the pod's busybox httpd: it writes back the request as the pod saw it.
constexpr std::string_view kEchoCgi =
    "#!/bin/sh\n"
    "printf 'Content-Type: text/plain\\r\\nX-Pod: echo\\r\\nConnection: x-hop\\r\\nX-Hop: "
    "1\\r\\n'\n"
    "printf 'Clear-Site-Data: \"*\"\\r\\nService-Worker-Allowed: /\\r\\n'\n"
    "printf 'Strict-Transport-Security: max-age=9; includeSubDomains\\r\\n\\r\\n'\n"
    "echo \"$REQUEST_METHOD $REQUEST_URI\"\n"
    "echo \"authorization: ${HTTP_AUTHORIZATION:-none}\"\n"
    "echo \"x-probe: ${HTTP_X_PROBE:-none}\"\n"
    "echo \"x-forwarded-prefix: ${HTTP_X_FORWARDED_PREFIX:-none}\"\n"
    "echo \"body: $(cat)\"\n";

// A control-plane server with a user, a registered node and a running pod placed on it (the pod
// publishes 8080/http and 22/tcp), and the agent's relay serving that node against the real
// engine. Each test runs the pod's container itself (RunPod); TearDown removes it.
class ServeRelayTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* from_env = std::getenv("SUANLI_ENGINE_SOCKET");
    const std::string socket =
        from_env != nullptr && from_env[0] != '\0' ? from_env : FindEngineSocket();
    ASSERT_FALSE(socket.empty())
        << "no container engine socket: set SUANLI_ENGINE_SOCKET, or run `sudo bash "
           "scripts/engine.sh` (it starts Podman's service and builds "
        << kImage << ")";
    core::Result<std::unique_ptr<Engine>> engine = Engine::Connect(socket);
    ASSERT_TRUE(engine.ok()) << engine.status().ToString();
    engine_ = std::move(*engine);
    core::Result<bool> present = engine_->ImagePresent(kImage);
    ASSERT_TRUE(present.ok()) << present.status().ToString()
                              << " (run `sudo bash scripts/engine.sh`)";
    ASSERT_TRUE(*present) << kImage << " is missing; run `sudo bash scripts/engine.sh`";

    server::ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir_.path();
    auto started =
        server::Server::Start(options, catalog::LoadBuiltInCatalog().value(), clock_, server_log_);
    ASSERT_TRUE(started.ok()) << started.status().ToString();
    control_ = std::move(*started);
    url_ = "http://127.0.0.1:" + std::to_string(control_->port());
    std::string admin;
    std::getline(std::ifstream(dir_.path() / "admin-token"), admin);
    api_ = std::make_unique<ApiClient>(url_);

    const ApiReply alice =
        api_->Post("/v1/users", admin, R"({"name":"alice","credits_micros":100000000})");
    ASSERT_EQ(alice.status, 201) << alice.Describe();
    user_ = Str(alice.json, "token");
    const ApiReply join = api_->Post("/v1/join-tokens", admin, "{}");
    const ApiReply node = api_->PostJson(
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
    node_token_ = Str(node.json, "token");
    const ApiReply pod = api_->Post(
        "/v1/pods", user_,
        R"({"image":"busybox","gpu_type":"4090","volume_gb":0,"ports":["8080/http","22/tcp"]})");
    ASSERT_EQ(pod.status, 201) << pod.Describe();
    pod_id_ = Str(pod.json, "id");
    ASSERT_EQ(api_->PostJson(
                      "/v1/agent/pods/" + pod_id_ + "/status", node_token_,
                      json::object{
                          {"seq", 1}, {"state", "running"}, {"at", core::FormatTime(clock_.Now())}})
                  .status,
              200);

    RelayOptions relay;
    relay.server_url = url_;
    relay.poll_wait = std::chrono::seconds(1);
    relay.pod_timeout = std::chrono::seconds(10);
    agent_ = std::thread([this, relay] {
      ServeRelay(
          relay, [this] { return node_token_; }, *engine_, [this] { return stopping_.load(); },
          [this](const std::string& line) {
            std::lock_guard lock(log_mutex_);
            agent_log_ << line << "\n";
          });
    });
  }

  void TearDown() override {
    if (agent_.joinable()) {
      stopping_ = true;
      clock_.Advance(std::chrono::seconds(2));  // ends the agent's waiting poll
      agent_.join();
    }
    if (control_) control_->Stop();
    if (engine_ && !container_.empty()) {
      const core::Status removed = engine_->Remove(container_);
      EXPECT_TRUE(removed.ok() || removed.code() == core::StatusCode::kNotFound)
          << removed.ToString();
    }
    std::lock_guard lock(log_mutex_);
    if (HasFailure()) std::cerr << "agent log:\n" << agent_log_.str();
  }

  // Runs the pod's container, named as the agent names it, with `command` and its 8080 and 22
  // published on free host ports (on 22 nothing listens). Returns false (with a failure) when it
  // did not start.
  bool RunPod(std::vector<std::string> command,
              std::vector<std::pair<std::string, std::string>> env = {}) {
    web_port_ = FreePort();
    const int ssh_port = FreeHostPort("127.0.0.1", {web_port_}).value();
    EXPECT_GT(web_port_, 0);
    EXPECT_GT(ssh_port, 0);
    ContainerSpec spec;
    spec.name = ContainerName(pod_id_);
    spec.image = std::string(kImage);
    spec.command = std::move(command);
    spec.env = std::move(env);
    // Not the agent's labels (suanli.pod, suanli.node): no agent on this host may adopt it.
    spec.labels = {{"suanli.test", "relay-" + std::to_string(::getpid())}};
    spec.ports = {{8080, web_port_, "tcp"}, {22, ssh_port, "tcp"}};
    spec.publish_address = "127.0.0.1";
    container_ = spec.name;
    core::Result<std::string> id = engine_->Create(spec);
    EXPECT_TRUE(id.ok()) << id.status().ToString();
    if (!id.ok()) return false;
    const core::Status started = engine_->Start(*id);
    EXPECT_TRUE(started.ok()) << started.ToString();
    return started.ok();
  }

  // Waits until the pod's web server answers on its host port.
  bool WebServerAnswers() {
    auto http = net::HttpClient::Create("http://127.0.0.1:" + std::to_string(web_port_),
                                        {std::chrono::seconds(2)});
    if (!http.ok()) return false;
    return WaitFor([&] {
      core::Result<net::HttpResponse> response = (*http)->Send("GET", "/");
      return response.ok() && response->status == 200;
    });
  }

  // Waits until the container's logs (straight from the engine) end with `last_line`.
  bool LogsEndWith(std::string_view last_line) {
    LogOptions tail;
    tail.tail = 1;
    return WaitFor([&] {
      core::Result<std::string> logs = engine_->Logs(container_, tail);
      return logs.ok() && *logs == std::string(last_line) + "\n";
    });
  }

  // A user's request with extra headers, for what ApiClient does not show (response headers).
  core::Result<net::HttpResponse> Send(std::string_view method, std::string_view target,
                                       std::string_view body, net::Headers headers) {
    auto http = net::HttpClient::Create(url_, {std::chrono::seconds(30)});
    if (!http.ok()) return http.status();
    headers.emplace_back("Authorization", "Bearer " + user_);
    return (*http)->Send(method, target, body, headers);
  }

  core::ManualClock clock_{core::ParseTime("2026-03-01T00:00:00.000Z").value()};
  std::unique_ptr<Engine> engine_;
  suanli::testing::TempDir dir_{"suanli-relay-test"};
  std::ostringstream server_log_;
  std::unique_ptr<server::Server> control_;
  std::string url_;
  std::unique_ptr<ApiClient> api_;
  std::string user_;
  std::string node_token_;
  std::string pod_id_;
  std::thread agent_;
  std::atomic<bool> stopping_{false};
  std::mutex log_mutex_;
  std::ostringstream agent_log_;
  std::string container_;  // removed in TearDown
  int web_port_ = 0;
};

TEST_F(ServeRelayTest, AUsersLogsReachThemWithTailSinceAndTimestampsInUtc) {
  ASSERT_TRUE(RunPod({"sh", "-c",
                      "echo line 1; echo line 2; sleep 2; echo line 3; "
                      "exec httpd -f -p 8080 -h /www"}));
  ASSERT_TRUE(LogsEndWith("line 3"));
  const core::Result<ContainerInfo> info = engine_->Inspect(container_);
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  ASSERT_TRUE(info->started_at.has_value());
  const std::string logs = "/v1/pods/" + pod_id_ + "/logs";

  const ApiReply all = api_->Get(logs, user_);
  EXPECT_EQ(all.status, 200) << all.Describe();
  EXPECT_EQ(all.text, "line 1\nline 2\nline 3\n");
  const ApiReply last = api_->Get(logs + "?tail=1", user_);
  EXPECT_EQ(last.status, 200) << last.Describe();
  EXPECT_EQ(last.text, "line 3\n");

  // Lines 1 and 2 come right after the start, line 3 two seconds later.
  const ApiReply recent = api_->Get(
      logs + "?since=" + core::FormatTime(*info->started_at + std::chrono::seconds(1)), user_);
  EXPECT_EQ(recent.status, 200) << recent.Describe();
  EXPECT_EQ(recent.text, "line 3\n");

  // The engine's times (Podman's are whole seconds, in the host's zone) as fixed-width UTC.
  const ApiReply stamped = api_->Get(logs + "?tail=3&timestamps=true", user_);
  EXPECT_EQ(stamped.status, 200) << stamped.Describe();
  // "2026-03-01T10:00:00.123456789Z line 1": a fixed-width stamp, then the line. (Checked by hand:
  // GCC 12's <regex> trips -Wmaybe-uninitialized under the sanitizers.)
  const auto is_stamp = [](std::string_view text) {
    constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd.dddddddddZ";
    if (text.size() != kShape.size()) return false;
    for (size_t i = 0; i < text.size(); ++i) {
      const bool digit = text[i] >= '0' && text[i] <= '9';
      if (kShape[i] == 'd' ? !digit : text[i] != kShape[i]) return false;
    }
    return true;
  };
  std::vector<core::TimePoint> times;
  std::string_view rest = stamped.text;
  while (!rest.empty()) {
    const size_t end = rest.find('\n');
    ASSERT_NE(end, std::string_view::npos) << "an unfinished line: " << stamped.text;
    const std::string_view text = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    const size_t space = text.find(' ');
    ASSERT_TRUE(is_stamp(text.substr(0, space))) << text;
    EXPECT_EQ(text.substr(space + 1), "line " + std::to_string(times.size() + 1)) << stamped.text;
    const std::optional<core::TimePoint> at = ParseEngineTime(text.substr(0, space));
    ASSERT_TRUE(at.has_value()) << text;
    EXPECT_GE(*at, *info->started_at - std::chrono::seconds(1)) << stamped.text;
    EXPECT_LE(*at, *info->started_at + std::chrono::seconds(10)) << stamped.text;
    times.push_back(*at);
  }
  ASSERT_EQ(times.size(), 3u) << "not three stamped lines: " << stamped.text;
  EXPECT_GE(times[2] - times[1], std::chrono::seconds(1)) << stamped.text;

  const ApiReply bad_since = api_->Get(logs + "?since=yesterday", user_);
  EXPECT_EQ(bad_since.status, 400) << bad_since.Describe();
}

TEST_F(ServeRelayTest, LogsBeyondTheRelaysLimitAreCutToTheirNewestWholeLines) {
  // 12000 lines of 62 bytes: 727 KiB, more than the 512 KiB the relay carries.
  const std::string pad(50, '.');
  ASSERT_TRUE(RunPod({"sh", "-c",
                      "busybox seq -w 1 12000 | busybox sed 's/.*/line & " + pad +
                          "/'; echo done; exec httpd -f -p 8080 -h /www"}));
  ASSERT_TRUE(LogsEndWith("done"));

  core::Result<net::HttpResponse> logs = Send("GET", "/v1/pods/" + pod_id_ + "/logs", "", {});
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  EXPECT_EQ(logs->status, 200) << logs->body.substr(0, 500);
  EXPECT_EQ(HeaderOf(*logs, "x-suanli-logs-truncated"), "true");
  EXPECT_LE(logs->body.size(), kMaxRelayedLogBytes);
  EXPECT_GT(logs->body.size(), kMaxRelayedLogBytes - 64);
  EXPECT_TRUE(logs->body.starts_with("line ")) << logs->body.substr(0, 100);
  EXPECT_TRUE(logs->body.ends_with("line 12000 " + pad + "\ndone\n"))
      << logs->body.substr(logs->body.size() - std::min<size_t>(logs->body.size(), 200));

  core::Result<net::HttpResponse> tail =
      Send("GET", "/v1/pods/" + pod_id_ + "/logs?tail=2", "", {});
  ASSERT_TRUE(tail.ok()) << tail.status().ToString();
  EXPECT_EQ(tail->body, "line 12000 " + pad + "\ndone\n");
  EXPECT_EQ(HeaderOf(*tail, "x-suanli-logs-truncated"), "");
}

TEST_F(ServeRelayTest, ProxiedRequestsReachThePodsWebServerWithoutTheUsersToken) {
  ASSERT_TRUE(RunPod({"sh", "-c",
                      "mkdir -p /www/cgi-bin && printf '%s' \"$ECHO_CGI\" > /www/cgi-bin/echo && "
                      "busybox chmod +x /www/cgi-bin/echo && "
                      "exec httpd -f -p 8080 -h /www"},
                     {{"ECHO_CGI", std::string(kEchoCgi)}}));
  ASSERT_TRUE(WebServerAnswers()) << "nothing answered on 127.0.0.1:" << web_port_;
  const std::string proxy = "/v1/pods/" + pod_id_ + "/proxy/8080";

  const ApiReply page = api_->Get(proxy + "/", user_);
  EXPECT_EQ(page.status, 200) << page.Describe();
  EXPECT_EQ(page.text, "<h1>suanli demo pod</h1>\n");

  const ApiReply get = api_->Get(proxy + "/cgi-bin/echo/hello?x=1", user_);
  EXPECT_EQ(get.status, 200) << get.Describe();
  EXPECT_EQ(get.text,
            "GET /cgi-bin/echo/hello?x=1\nauthorization: none\nx-probe: none\n"
            "x-forwarded-prefix: " +
                proxy + "\nbody: \n");

  core::Result<net::HttpResponse> post =
      Send("POST", proxy + "/cgi-bin/echo?form=1", "a=1&b=2",
           {{"Content-Type", "application/x-www-form-urlencoded"}, {"X-Probe", "yes"}});
  ASSERT_TRUE(post.ok()) << post.status().ToString();
  EXPECT_EQ(post->status, 200) << post->body;
  EXPECT_EQ(post->body,
            "POST /cgi-bin/echo?form=1\nauthorization: none\nx-probe: yes\n"
            "x-forwarded-prefix: " +
                proxy + "\nbody: a=1&b=2\n");
  EXPECT_EQ(post->content_type, "text/plain");
  EXPECT_EQ(HeaderOf(*post, "x-pod"), "echo");
  // What a pod may not say for the whole origin (issue 34, item 8): a header its Connection names
  // is its connection's, and the others would reach the console and every other pod.
  for (std::string_view dropped :
       {"x-hop", "clear-site-data", "service-worker-allowed", "strict-transport-security"}) {
    EXPECT_EQ(HeaderOf(*post, dropped), "") << dropped << " came through the proxy";
  }

  // The pod's own answers come through as they are, errors included.
  const ApiReply missing = api_->Get(proxy + "/missing", user_);
  EXPECT_EQ(missing.status, 404) << missing.Describe();
  EXPECT_NE(missing.text.find("404 Not Found"), std::string::npos) << missing.text;
}

TEST_F(ServeRelayTest, APortWithNothingListeningOrAnOversizedAnswerIsABadGateway) {
  ASSERT_TRUE(RunPod({"sh", "-c",
                      "busybox head -c 800000 /dev/zero > /www/big && "
                      "exec httpd -f -p 8080 -h /www"}));
  ASSERT_TRUE(WebServerAnswers()) << "nothing answered on 127.0.0.1:" << web_port_;

  // 22 is published, but nothing in the container listens on it.
  const ApiReply refused = api_->Get("/v1/pods/" + pod_id_ + "/proxy/22/", user_);
  EXPECT_EQ(refused.status, 502) << refused.Describe();
  EXPECT_NE(refused.error_message().find("nothing answers on port 22"), std::string::npos)
      << refused.text;

  const ApiReply big = api_->Get("/v1/pods/" + pod_id_ + "/proxy/8080/big", user_);
  EXPECT_EQ(big.status, 502) << big.Describe().substr(0, 500);
  EXPECT_EQ(big.error_code(), "PAYLOAD_TOO_LARGE") << big.text.substr(0, 500);
}

}  // namespace
}  // namespace suanli::agent
