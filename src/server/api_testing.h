// The fixtures of the API's tests (api_*_test.cc): a server in process on a free port with its own
// data folder, a ManualClock and an admin, and helpers that set up users, nodes and pods over HTTP;
// ApiBadInputTest adds a world that a refused request must leave byte for byte as it was. For the
// server's tests only; the HTTP test client itself is testing/api_client.h.
#pragma once

#include <gtest/gtest.h>

#include <boost/json/value.hpp>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "core/status.h"
#include "server/server.h"
#include "testing/api_client.h"
#include "testing/temp_dir.h"

namespace suanli::server {

constexpr std::string_view kSshKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILMtOg015QXhz87u9yAjfzVXtanjHTcq9atSzFWQ9KNR a@host";
constexpr int64_t kPlentyOfCredits = 10'000'000'000;  // $10,000

inline boost::json::object GpuJson(int index, std::string_view type) {
  return {{"index", index},
          {"uuid", "GPU-" + std::to_string(index)},
          {"type", type},
          {"memory_mb", 24564},
          {"simulated", true}};
}

inline boost::json::object NodeBody(std::string_view name, std::string_view gpu_type = "RTX 4090",
                                    int gpus = 1) {
  boost::json::array list;
  for (int i = 0; i < gpus; ++i) list.emplace_back(GpuJson(i, gpu_type));
  return {
      {"name", name}, {"gpus", std::move(list)}, {"vcpu", 16}, {"memory_gb", 64}, {"disk_gb", 500}};
}

struct Account {
  std::string id;
  std::string token;
};

// A server on a free port with its own data folder; helpers to set up users, nodes and pods.
class ApiServerTest : public ::testing::Test {
 protected:
  void StartServer(size_t max_body_bytes = size_t{1} << 20, int threads = 2) {
    dir_.emplace("suanli-api-test");
    core::Result<core::TimePoint> start = core::ParseTime("2026-03-01T00:00:00.000Z");
    ASSERT_TRUE(start.ok());
    clock_.Set(*start);
    core::Result<catalog::Catalog> catalog = catalog::LoadBuiltInCatalog();
    ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir_->path();
    options.max_body_bytes = max_body_bytes;
    options.threads = threads;
    // The tests' webhook receivers are on loopback, which a server calls only where its operator
    // allows it (net::OutboundPolicy; WebhooksTest checks the refusal).
    options.webhook_allow = {"127.0.0.0/8"};
    core::Result<std::unique_ptr<Server>> server =
        Server::Start(options, std::move(*catalog), clock_, log_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<suanli::testing::ApiClient>("http://127.0.0.1:" +
                                                           std::to_string(server_->port()));
    std::ifstream file(dir_->path() / "admin-token");
    std::getline(file, admin_);
    ASSERT_TRUE(admin_.starts_with("sl_")) << "admin-token holds '" << admin_ << "'";
  }

  void TearDown() override {
    client_.reset();
    if (server_) server_->Stop();
    server_.reset();
    dir_.reset();
  }

  suanli::testing::ApiClient& api() { return *client_; }

  Account CreateUser(std::string_view name, int64_t credits_micros) {
    const suanli::testing::ApiReply reply =
        api().PostJson("/v1/users", admin_,
                       boost::json::object{{"name", name}, {"credits_micros", credits_micros}});
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return {suanli::testing::Str(
                reply.object().contains("user") ? reply.object().at("user") : boost::json::value(),
                "id"),
            suanli::testing::Str(reply.json, "token")};
  }

  std::string CreateJoinToken() {
    const suanli::testing::ApiReply reply = api().Post("/v1/join-tokens", admin_, "{}");
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return suanli::testing::Str(reply.json, "secret");
  }

  // Registers a node with a fresh join token; returns its id and token.
  Account RegisterNode(std::string_view name, std::string_view gpu_type = "RTX 4090",
                       int gpus = 1) {
    const suanli::testing::ApiReply reply =
        api().PostJson("/v1/agent/register", CreateJoinToken(), NodeBody(name, gpu_type, gpus));
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    const boost::json::value node =
        reply.object().contains("node") ? reply.object().at("node") : boost::json::value();
    return {suanli::testing::Str(node, "id"), suanli::testing::Str(reply.json, "token")};
  }

  std::string CreatePod(std::string_view token, boost::json::object body) {
    const suanli::testing::ApiReply reply =
        api().PostJson("/v1/pods", token, boost::json::value(std::move(body)));
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return suanli::testing::Str(reply.json, "id");
  }

  std::string CreatePod(std::string_view token) {
    return CreatePod(token, {{"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 0}});
  }

  // An agent's report of a pod's state, at the clock's now.
  suanli::testing::ApiReply Report(std::string_view node_token, std::string_view pod_id,
                                   int64_t seq, std::string_view state) {
    return api().PostJson("/v1/agent/pods/" + std::string(pod_id) + "/status", node_token,
                          boost::json::object{{"seq", seq}, {"state", state}, {"at", Now()}});
  }

  std::string Now() const { return core::FormatTime(clock_.Now()); }

  std::optional<suanli::testing::TempDir> dir_;  // from StartServer until TearDown
  core::ManualClock clock_;
  std::ostringstream log_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<suanli::testing::ApiClient> client_;
  std::string admin_;
};

class ApiBadInputTest : public ApiServerTest {
 protected:
  static constexpr size_t kMaxBody = 4096;

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartServer(kMaxBody));
    a_ = CreateUser("alice", kPlentyOfCredits);
    poor_ = CreateUser("poor", 10'000);  // $0.01
    node_ = RegisterNode("n1");
    other_node_ = RegisterNode("n2", "RTX 4090");
    // n2 is cordoned so A's pods go to n1 or wait: its token is for reports of pods it never had.
    ASSERT_EQ(api().Post("/v1/nodes/" + other_node_.id + "/cordon", admin_).status, 200);
    running_ = CreatePod(a_.token);
    ASSERT_EQ(suanli::testing::Str(api().Get("/v1/pods/" + running_, a_.token).json, "node_id"),
              node_.id);
    ASSERT_EQ(Report(node_.token, running_, 1, "running").status, 200);
    ASSERT_EQ(suanli::testing::Str(api().Get("/v1/pods/" + running_, a_.token).json, "state"),
              "running");
    pending_ =
        CreatePod(a_.token, {{"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 10}});
    ASSERT_EQ(suanli::testing::Str(api().Get("/v1/pods/" + pending_, a_.token).json, "state"),
              "pending");
    before_ = Snapshot();
  }

  // Everything a bad request must not change. The clock stands still, so a second read of an
  // unchanged world is byte for byte the same.
  std::string Snapshot() {
    std::string all;
    for (const std::string& token : {a_.token, poor_.token}) {
      for (std::string_view path : {"/v1/pods", "/v1/billing/balance", "/v1/billing/ledger",
                                    "/v1/users/me", "/v1/volumes"}) {
        const suanli::testing::ApiReply reply = api().Get(path, token);
        EXPECT_EQ(reply.status, 200) << path << ": " << reply.Describe();
        all += reply.text + "\n";
      }
    }
    for (std::string_view path : {"/v1/users", "/v1/nodes"}) all += api().Get(path, admin_).text;
    return all;
  }

  void ExpectNothingChanged() {
    EXPECT_EQ(Snapshot(), before_) << "a refused request changed state";
  }

  suanli::testing::ApiReply CreatePodWith(std::string_view body, std::string_view token = {}) {
    return api().Send("POST", "/v1/pods", token.empty() ? a_.token : token, body);
  }

  Account a_, poor_, node_, other_node_;
  std::string running_, pending_, before_;
};

}  // namespace suanli::server
