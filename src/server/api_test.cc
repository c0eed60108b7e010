// The API's contracts over real HTTP and a real SQLite store: who may call each route, the OpenAPI
// document against the router, and bad input that must be refused with the right status and leave
// everything as it was. The server runs in process on a free port with a ManualClock, so nothing
// accrues between two reads and "unchanged" can be checked byte for byte.
#include "server/api.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <boost/json/serialize.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <thread>
#include <vector>

#include "billing/meter.h"
#include "catalog/catalog_file.h"
#include "core/clock.h"
#include "core/status.h"
#include "net/base64.h"
#include "server/api_testing.h"
#include "server/server.h"

namespace suanli::server {
namespace {

using core::FormatTime;
using core::ParseTime;

namespace json = boost::json;
using testing::ApiClient;
using testing::ApiReply;
using testing::Array;
using testing::Int;
using testing::IsApiError;
using testing::Str;

constexpr std::string_view kSshKey =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAILMtOg015QXhz87u9yAjfzVXtanjHTcq9atSzFWQ9KNR a@host";
constexpr int64_t kPlentyOfCredits = 10'000'000'000;  // $10,000

json::object GpuJson(int index, std::string_view type) {
  return {{"index", index},
          {"uuid", "GPU-" + std::to_string(index)},
          {"type", type},
          {"memory_mb", 24564},
          {"simulated", true}};
}

json::object NodeBody(std::string_view name, std::string_view gpu_type = "RTX 4090", int gpus = 1) {
  json::array list;
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
    char pattern[] = "/tmp/suanli-api-test-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    core::Result<core::TimePoint> start = ParseTime("2026-03-01T00:00:00.000Z");
    ASSERT_TRUE(start.ok());
    clock_.Set(*start);
    core::Result<catalog::Catalog> catalog = catalog::LoadBuiltInCatalog();
    ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
    ServerOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = dir_;
    options.max_body_bytes = max_body_bytes;
    options.threads = threads;
    core::Result<std::unique_ptr<Server>> server =
        Server::Start(options, std::move(*catalog), clock_, log_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    client_ = std::make_unique<ApiClient>("http://127.0.0.1:" + std::to_string(server_->port()));
    std::ifstream file(dir_ / "admin-token");
    std::getline(file, admin_);
    ASSERT_TRUE(admin_.starts_with("sl_")) << "admin-token holds '" << admin_ << "'";
  }

  void TearDown() override {
    client_.reset();
    if (server_) server_->Stop();
    server_.reset();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  ApiClient& api() { return *client_; }

  Account CreateUser(std::string_view name, int64_t credits_micros) {
    const ApiReply reply = api().PostJson(
        "/v1/users", admin_, json::object{{"name", name}, {"credits_micros", credits_micros}});
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return {Str(reply.object().contains("user") ? reply.object().at("user") : json::value(), "id"),
            Str(reply.json, "token")};
  }

  std::string CreateJoinToken() {
    const ApiReply reply = api().Post("/v1/join-tokens", admin_, "{}");
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return Str(reply.json, "secret");
  }

  // Registers a node with a fresh join token; returns its id and token.
  Account RegisterNode(std::string_view name, std::string_view gpu_type = "RTX 4090",
                       int gpus = 1) {
    const ApiReply reply =
        api().PostJson("/v1/agent/register", CreateJoinToken(), NodeBody(name, gpu_type, gpus));
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    const json::value node =
        reply.object().contains("node") ? reply.object().at("node") : json::value();
    return {Str(node, "id"), Str(reply.json, "token")};
  }

  std::string CreatePod(std::string_view token, json::object body) {
    const ApiReply reply = api().PostJson("/v1/pods", token, json::value(std::move(body)));
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return Str(reply.json, "id");
  }

  std::string CreatePod(std::string_view token) {
    return CreatePod(token, {{"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 0}});
  }

  // An agent's report of a pod's state, at the clock's now.
  ApiReply Report(std::string_view node_token, std::string_view pod_id, int64_t seq,
                  std::string_view state) {
    return api().PostJson("/v1/agent/pods/" + std::string(pod_id) + "/status", node_token,
                          json::object{{"seq", seq}, {"state", state}, {"at", Now()}});
  }

  std::string Now() const { return FormatTime(clock_.Now()); }

  std::filesystem::path dir_;
  core::ManualClock clock_;
  std::ostringstream log_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<ApiClient> client_;
  std::string admin_;
};

// --- Authorization ------------------------------------------------------------------------------

enum class Caller { kNone, kBogus, kJoin, kNode, kUserB, kUserA, kAdmin };
constexpr Caller kCallers[] = {Caller::kNone,  Caller::kBogus, Caller::kJoin, Caller::kNode,
                               Caller::kUserB, Caller::kUserA, Caller::kAdmin};

std::string_view CallerName(Caller caller) {
  switch (caller) {
    case Caller::kNone:
      return "no token";
    case Caller::kBogus:
      return "bad token";
    case Caller::kJoin:
      return "join token";
    case Caller::kNode:
      return "node token";
    case Caller::kUserB:
      return "user B";
    case Caller::kUserA:
      return "user A";
    case Caller::kAdmin:
      return "admin";
  }
  return "?";
}

enum class Expect { kPass, kUnauthenticated, kForbidden, kNotFound };

// What one route's request looks like: the target with its {…} filled in, a body, and for B's
// requests on A's things, a path A reads before and after to show nothing changed.
struct Request {
  std::string target;
  std::string body;
  std::string probe;
};

struct RouteCase {
  std::function<Request()> make;  // called before each caller's request
  std::optional<Expect> user_b;   // B's outcome where it differs from A's (A's things)
};

class ApiAuthTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartServer());
    a_ = CreateUser("alice", kPlentyOfCredits);
    b_ = CreateUser("bob", kPlentyOfCredits);
    join_ = CreateJoinToken();
    node_ = RegisterNode("n1");
    a_pod_ = CreatePod(a_.token);
    ASSERT_FALSE(a_.token.empty() || b_.token.empty() || node_.token.empty() || a_pod_.empty());
    const ApiReply pod = api().Get("/v1/pods/" + a_pod_, a_.token);
    ASSERT_EQ(Str(pod.json, "node_id"), node_.id) << "A's pod is bound to n1: " << pod.Describe();
    const ApiReply tpl = api().PostJson(
        "/v1/templates", a_.token, json::object{{"name", "mine"}, {"image", "busybox:latest"}});
    ASSERT_EQ(tpl.status, 201) << tpl.Describe();
    a_template_ = Str(tpl.json, "id");
  }

  std::string TokenOf(Caller caller) const {
    switch (caller) {
      case Caller::kNone:
        return "";
      case Caller::kBogus:
        return "sl_bogus";
      case Caller::kJoin:
        return join_;
      case Caller::kNode:
        return node_.token;
      case Caller::kUserB:
        return b_.token;
      case Caller::kUserA:
        return a_.token;
      case Caller::kAdmin:
        return admin_;
    }
    return "";
  }

  static Expect Expected(Access access, Caller caller, const RouteCase& route) {
    const bool anonymous =
        caller == Caller::kNone || caller == Caller::kBogus || caller == Caller::kJoin;
    switch (access) {
      case Access::kPublic:
        return Expect::kPass;
      case Access::kJoin:
        return caller == Caller::kJoin ? Expect::kPass : Expect::kUnauthenticated;
      case Access::kUser:
      case Access::kUserOrPodLink:  // these requests carry no link
        if (anonymous) return Expect::kUnauthenticated;
        if (caller == Caller::kNode) return Expect::kForbidden;
        if (caller == Caller::kUserB && route.user_b) return *route.user_b;
        return Expect::kPass;
      case Access::kAdmin:
        if (anonymous) return Expect::kUnauthenticated;
        return caller == Caller::kAdmin ? Expect::kPass : Expect::kForbidden;
      case Access::kNode:
        if (anonymous) return Expect::kUnauthenticated;
        return caller == Caller::kNode ? Expect::kPass : Expect::kForbidden;
    }
    return Expect::kPass;
  }

  // A fresh SSH key of A's: removes A's keys, then adds the one test key.
  std::string FreshSshKeyOfA() {
    const ApiReply keys = api().Get("/v1/ssh-keys", a_.token);
    for (const json::value& key : Array(keys.json, "ssh_keys")) {
      EXPECT_TRUE(api().Send("DELETE", "/v1/ssh-keys/" + Str(key, "id"), a_.token).ok());
    }
    const ApiReply added = api().PostJson(
        "/v1/ssh-keys", a_.token, json::object{{"name", "laptop"}, {"public_key", kSshKey}});
    EXPECT_EQ(added.status, 201) << added.Describe();
    return Str(added.json, "id");
  }

  std::map<std::string, RouteCase> Cases() {
    const auto fixed = [](std::string target, std::string body = "{}") {
      return [target, body] { return Request{target, body, ""}; };
    };
    const auto fresh_pod = [this](std::string_view suffix) {
      const std::string tail(suffix);
      return [this, tail] {
        const std::string id = CreatePod(a_.token);
        return Request{"/v1/pods/" + id + tail, "{}", "/v1/pods/" + id};
      };
    };
    const auto fresh_node = [this](std::string_view suffix) {
      const std::string tail(suffix);
      return [this, tail] {
        const Account node = RegisterNode("spare-" + std::to_string(++counter_));
        return Request{"/v1/nodes/" + node.id + tail, "{}", ""};
      };
    };
    std::map<std::string, RouteCase> cases;
    cases["GET /healthz"] = {fixed("/healthz"), {}};
    cases["GET /metrics"] = {fixed("/metrics"), {}};
    cases["GET /v1/openapi.json"] = {fixed("/v1/openapi.json"), {}};
    cases["GET /v1/gpus"] = {fixed("/v1/gpus"), {}};
    cases["GET /v1/availability"] = {fixed("/v1/availability"), {}};
    cases["GET /v1/models"] = {fixed("/v1/models"), {}};
    cases["POST /v1/advise"] = {
        fixed("/v1/advise", R"({"workload":{"model":"llama-3-8b","task":"serve"}})"), {}};
    cases["POST /v1/users"] = {
        [this] {
          return Request{"/v1/users", R"({"name":"u)" + std::to_string(++counter_) + R"("})", ""};
        },
        {}};
    cases["GET /v1/users"] = {fixed("/v1/users"), {}};
    // Another person's account is an admin's business: B is refused, not misled.
    cases["GET /v1/users/{id}"] = {[this] {
                                     return Request{"/v1/users/" + a_.id, "", ""};
                                   },
                                   Expect::kForbidden};
    cases["POST /v1/users/{id}/credits"] = {
        [this] {
          return Request{"/v1/users/" + a_.id + "/credits", R"({"amount_micros":1})", ""};
        },
        {}};
    cases["PATCH /v1/users/me"] = {fixed("/v1/users/me", R"({"spend_cap_per_hour_micros":0})"), {}};
    cases["GET /v1/tokens"] = {fixed("/v1/tokens"), {}};
    cases["POST /v1/tokens"] = {fixed("/v1/tokens", R"({"name":"ci"})"), {}};
    cases["DELETE /v1/tokens/{id}"] = {
        [this] {
          const ApiReply created = api().Post("/v1/tokens", a_.token, R"({"name":"spare"})");
          EXPECT_EQ(created.status, 201) << created.Describe();
          const json::value token = created.object().at("token");
          return Request{"/v1/tokens/" + Str(token, "id"), "", "/v1/tokens"};
        },
        Expect::kNotFound};
    cases["GET /v1/ssh-keys"] = {fixed("/v1/ssh-keys"), {}};
    cases["POST /v1/ssh-keys"] = {
        [this] {
          return Request{"/v1/ssh-keys",
                         json::serialize(json::object{{"name", "k" + std::to_string(++counter_)},
                                                      {"public_key", kSshKey}}),
                         ""};
        },
        {}};
    cases["DELETE /v1/ssh-keys/{id}"] = {
        [this] {
          return Request{"/v1/ssh-keys/" + FreshSshKeyOfA(), "", "/v1/ssh-keys"};
        },
        Expect::kNotFound};
    cases["GET /v1/templates"] = {fixed("/v1/templates"), {}};
    cases["POST /v1/templates"] = {fixed("/v1/templates", R"({"name":"t","image":"busybox"})"), {}};
    cases["GET /v1/templates/{id}"] = {
        [this] {
          return Request{"/v1/templates/" + a_template_, "", "/v1/templates/" + a_template_};
        },
        Expect::kNotFound};
    cases["DELETE /v1/templates/{id}"] = {
        [this] {
          const ApiReply created =
              api().Post("/v1/templates", a_.token, R"({"name":"doomed","image":"busybox"})");
          EXPECT_EQ(created.status, 201) << created.Describe();
          const std::string id = Str(created.json, "id");
          return Request{"/v1/templates/" + id, "", "/v1/templates/" + id};
        },
        Expect::kNotFound};
    cases["GET /v1/pods"] = {fixed("/v1/pods"), {}};
    cases["POST /v1/pods"] = {
        fixed("/v1/pods", R"({"template":"pytorch","gpu_type":"4090","volume_gb":0})"), {}};
    cases["GET /v1/pods/{id}"] = {[this] {
                                    return Request{"/v1/pods/" + a_pod_, "", "/v1/pods/" + a_pod_};
                                  },
                                  Expect::kNotFound};
    cases["POST /v1/pods/{id}/stop"] = {fresh_pod("/stop"), Expect::kNotFound};
    cases["POST /v1/pods/{id}/start"] = {fresh_pod("/start"), Expect::kNotFound};
    cases["POST /v1/pods/{id}/restart"] = {fresh_pod("/restart"), Expect::kNotFound};
    cases["DELETE /v1/pods/{id}"] = {fresh_pod(""), Expect::kNotFound};
    cases["GET /v1/pods/{id}/transitions"] = {[this] {
                                                return Request{
                                                    "/v1/pods/" + a_pod_ + "/transitions", "",
                                                    "/v1/pods/" + a_pod_ + "/transitions"};
                                              },
                                              Expect::kNotFound};
    // Fresh pods wait for a GPU (A's first pod holds n1's only one): nothing to relay, a 409.
    cases["GET /v1/pods/{id}/logs"] = {fresh_pod("/logs"), Expect::kNotFound};
    for (std::string_view method : {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}) {
      cases[std::string(method) + " /v1/pods/{id}/proxy/{port}/{path...}"] = {
          fresh_pod("/proxy/8888/lab?x=1"), Expect::kNotFound};
    }
    cases["GET /v1/billing/balance"] = {fixed("/v1/billing/balance"), {}};
    cases["GET /v1/billing/ledger"] = {fixed("/v1/billing/ledger"), {}};
    cases["GET /v1/billing/usage"] = {fixed("/v1/billing/usage"), {}};
    cases["GET /v1/join-tokens"] = {fixed("/v1/join-tokens"), {}};
    cases["POST /v1/join-tokens"] = {fixed("/v1/join-tokens", R"({"note":"rack 2"})"), {}};
    cases["DELETE /v1/join-tokens/{id}"] = {
        [this] {
          const ApiReply created = api().Post("/v1/join-tokens", admin_, "{}");
          EXPECT_EQ(created.status, 201);
          const json::value token = created.object().at("join_token");
          return Request{"/v1/join-tokens/" + Str(token, "id"), "", ""};
        },
        {}};
    cases["GET /v1/nodes"] = {fixed("/v1/nodes"), {}};
    cases["GET /v1/nodes/{id}"] = {fresh_node(""), {}};
    cases["POST /v1/nodes/{id}/cordon"] = {fresh_node("/cordon"), {}};
    cases["POST /v1/nodes/{id}/uncordon"] = {fresh_node("/uncordon"), {}};
    cases["POST /v1/nodes/{id}/drain"] = {fresh_node("/drain"), {}};
    cases["DELETE /v1/nodes/{id}"] = {fresh_node(""), {}};
    cases["PUT /v1/prices/{gpu}"] = {fixed("/v1/prices/T4", R"({"price_per_hour_micros":123})"),
                                     {}};
    cases["POST /v1/agent/register"] = {
        [this] {
          return Request{"/v1/agent/register",
                         json::serialize(NodeBody("joined-" + std::to_string(++counter_))), ""};
        },
        {}};
    cases["POST /v1/agent/heartbeat"] = {
        [] {
          json::object body = NodeBody("n1");
          body.erase("name");  // a heartbeat does not rename the node
          return Request{"/v1/agent/heartbeat", json::serialize(body), ""};
        },
        {}};
    cases["GET /v1/agent/pods"] = {fixed("/v1/agent/pods?after=-1"), {}};
    cases["POST /v1/agent/pods/{id}/status"] = {
        [this] {
          return Request{"/v1/agent/pods/" + a_pod_ + "/status",
                         json::serialize(json::object{
                             {"seq", ++report_seq_}, {"state", "starting"}, {"at", Now()}}),
                         ""};
        },
        {}};
    cases["GET /v1/agent/requests"] = {fixed("/v1/agent/requests?wait_s=0"), {}};
    cases["POST /v1/agent/requests/{id}"] = {
        fixed("/v1/agent/requests/rly_unknown", R"({"status":200})"), {}};
    return cases;
  }

  Account a_, b_, node_;
  std::string join_, a_pod_, a_template_;
  int counter_ = 0;
  int64_t report_seq_ = 0;
};

TEST_F(ApiAuthTest, EveryRouteLetsInExactlyItsCallersAndHidesOnePersonsThingsFromAnother) {
  std::map<std::string, RouteCase> cases = Cases();
  std::set<std::string> covered;
  for (const RouteInfo& route : Api::Routes()) {
    const std::string key = std::string(route.method) + " " + std::string(route.pattern);
    const auto found = cases.find(key);
    if (found == cases.end()) {
      ADD_FAILURE() << "no authorization case for " << key << "; add one to Cases()";
      continue;
    }
    covered.insert(key);
    for (Caller caller : kCallers) {
      SCOPED_TRACE(key + " as " + std::string(CallerName(caller)));
      const Request request = found->second.make();
      const Expect expect = Expected(route.access, caller, found->second);
      const std::string probe_before =
          request.probe.empty() ? "" : api().Get(request.probe, a_.token).text;
      const bool has_body =
          route.method == "POST" || route.method == "PUT" || route.method == "PATCH";
      const ApiReply reply = api().Send(route.method, request.target, TokenOf(caller),
                                        has_body ? std::string_view(request.body) : "");
      ASSERT_NE(reply.status, 0) << reply.Describe();
      // The answer to a HEAD has no body: only its status can be checked.
      const auto is_error = [&reply, &route](int status, std::string_view code) {
        return route.method == "HEAD" ? ::testing::AssertionResult(reply.status == status)
                                      : IsApiError(reply, status, code);
      };
      switch (expect) {
        case Expect::kUnauthenticated:
          EXPECT_TRUE(is_error(401, "UNAUTHENTICATED"));
          break;
        case Expect::kForbidden:
          EXPECT_TRUE(is_error(403, "PERMISSION_DENIED"));
          break;
        case Expect::kNotFound:
          EXPECT_TRUE(is_error(404, "NOT_FOUND"));
          break;
        case Expect::kPass:
          EXPECT_NE(reply.status, 401) << reply.Describe();
          EXPECT_NE(reply.status, 403) << reply.Describe();
          EXPECT_FALSE(reply.router_refused()) << reply.Describe();
          EXPECT_LT(reply.status, 500) << reply.Describe();
          break;
      }
      if (caller == Caller::kUserB && !request.probe.empty()) {
        const ApiReply after = api().Get(request.probe, a_.token);
        EXPECT_EQ(after.status, 200) << "A's thing is still there: " << after.Describe();
        EXPECT_EQ(after.text, probe_before) << "B's request changed A's thing";
      }
    }
  }
  for (const auto& entry : cases) {
    EXPECT_TRUE(covered.contains(entry.first)) << entry.first << " is no longer a route";
  }
}

TEST_F(ApiAuthTest, EachCallerSeesOnlyTheirOwnPodsTokensKeysAndLedger) {
  const std::string b_pod = CreatePod(b_.token);
  const auto ids = [](const ApiReply& reply, std::string_view key) {
    std::set<std::string> out;
    for (const json::value& item : Array(reply.json, key)) out.insert(Str(item, "id"));
    return out;
  };
  EXPECT_EQ(ids(api().Get("/v1/pods", a_.token), "pods"), std::set<std::string>{a_pod_});
  EXPECT_EQ(ids(api().Get("/v1/pods", b_.token), "pods"), std::set<std::string>{b_pod});
  EXPECT_EQ(ids(api().Get("/v1/pods", admin_), "pods"), (std::set<std::string>{a_pod_, b_pod}));
  const ApiReply tokens = api().Get("/v1/tokens", b_.token);
  ASSERT_FALSE(Array(tokens.json, "tokens").empty()) << tokens.Describe();
  for (const json::value& token : Array(tokens.json, "tokens")) {
    EXPECT_EQ(Str(token, "user_id"), b_.id);
  }
  const ApiReply ledger = api().Get("/v1/billing/ledger", b_.token);
  ASSERT_FALSE(Array(ledger.json, "entries").empty()) << ledger.Describe();
  for (const json::value& entry : Array(ledger.json, "entries")) {
    EXPECT_EQ(Str(entry, "user_id"), b_.id);
  }
  EXPECT_TRUE(IsApiError(api().Get("/v1/billing/ledger?user=" + a_.id, b_.token), 403));
  EXPECT_TRUE(IsApiError(api().Get("/v1/billing/usage?user=" + a_.id, b_.token), 403));
  EXPECT_EQ(api().Get("/v1/billing/ledger?user=" + a_.id, admin_).status, 200);
  // B's templates list does not show A's private template.
  EXPECT_FALSE(ids(api().Get("/v1/templates", b_.token), "templates").contains(a_template_));
  EXPECT_TRUE(ids(api().Get("/v1/templates", a_.token), "templates").contains(a_template_));
}

TEST_F(ApiAuthTest, OnlyTheOwnerAndItsNodeSeeTheJupyterTokenAndEveryoneTheNodeAddress) {
  const std::string token = Str(api().Get("/v1/pods/" + a_pod_, a_.token).json, "jupyter_token");
  EXPECT_EQ(token.size(), 48u);
  EXPECT_EQ(token.find_first_not_of("0123456789abcdef"), std::string::npos) << token;
  const auto list_entry = [&](std::string_view caller) {
    const ApiReply list = api().Get("/v1/pods", caller);
    for (const json::value& pod : Array(list.json, "pods")) {
      if (Str(pod, "id") == a_pod_) return pod;
    }
    ADD_FAILURE() << "no " << a_pod_ << " in the list";
    return json::value();
  };
  EXPECT_EQ(Str(list_entry(a_.token), "jupyter_token"), token);
  for (const json::value& view :
       {api().Get("/v1/pods/" + a_pod_, admin_).json, list_entry(admin_)}) {
    EXPECT_FALSE(view.as_object().contains("jupyter_token")) << view;
    // No --public-address: the address the agent's requests came from.
    EXPECT_EQ(Str(view, "node_address"), "127.0.0.1") << view;
  }
  EXPECT_EQ(Str(list_entry(a_.token), "node_address"), "127.0.0.1");
  const ApiReply desired = api().Get("/v1/agent/pods?after=-1", node_.token);
  ASSERT_EQ(Array(desired.json, "pods").size(), 1u) << desired.Describe();
  EXPECT_EQ(Str(Array(desired.json, "pods").front(), "jupyter_token"), token);

  // An agent's --public-address wins, and a bad one is refused.
  json::object body = NodeBody("n1");
  body.erase("name");
  body["address"] = "gpu-7.example.org";
  EXPECT_EQ(api().PostJson("/v1/agent/heartbeat", node_.token, body).status, 200);
  EXPECT_EQ(Str(api().Get("/v1/pods/" + a_pod_, a_.token).json, "node_address"),
            "gpu-7.example.org");
  body["address"] = "evil; rm -rf /";
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/agent/heartbeat", node_.token, body), 400,
                         "INVALID_ARGUMENT"));
}

TEST_F(ApiAuthTest, GpuHealthFromTheHeartbeatIsShownToAdminsAndBadReadingsAreRefused) {
  json::object body = NodeBody("n1");
  body.erase("name");
  body["gpu_health"] = json::array{json::object{{"index", 0},
                                                {"utilization_percent", 87},
                                                {"memory_used_gb", 20.25},
                                                {"temperature_c", 71},
                                                {"power_w", 402.5},
                                                {"xid_errors", 1},
                                                {"last_xid", 79}}};
  ASSERT_EQ(api().PostJson("/v1/agent/heartbeat", node_.token, body).status, 200);
  const ApiReply node = api().Get("/v1/nodes/" + node_.id, admin_);
  ASSERT_EQ(Array(node.json, "gpu_health").size(), 1u) << node.Describe();
  const json::value& reading = Array(node.json, "gpu_health").front();
  EXPECT_EQ(Int(reading, "utilization_percent"), 87);
  EXPECT_EQ(Int(reading, "last_xid"), 79);
  EXPECT_EQ(reading.as_object().at("memory_used_gb").as_double(), 20.25);

  for (const auto& [field, value] : std::vector<std::pair<std::string, json::value>>{
           {"temperature_c", -5}, {"utilization_percent", 101}, {"power_w", "hot"}}) {
    json::object bad = body;
    bad["gpu_health"].as_array()[0].as_object()[field] = value;
    const ApiReply refused = api().PostJson("/v1/agent/heartbeat", node_.token, bad);
    EXPECT_TRUE(IsApiError(refused, 400, "INVALID_ARGUMENT")) << field;
    EXPECT_NE(refused.text.find("gpu_health: " + field), std::string::npos) << refused.text;
  }
  // The last good reading stays.
  EXPECT_EQ(Int(Array(api().Get("/v1/nodes/" + node_.id, admin_).json, "gpu_health").front(),
                "temperature_c"),
            71);
}

// --- OpenAPI ------------------------------------------------------------------------------------

using ApiOpenApiTest = ApiServerTest;

TEST_F(ApiOpenApiTest, DocumentListsEveryRouteAndEveryDocumentedOperationIsRouted) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const ApiReply reply = api().Get("/v1/openapi.json");
  ASSERT_EQ(reply.status, 200) << reply.Describe();
  ASSERT_TRUE(reply.json.is_object()) << "not JSON: " << reply.text.substr(0, 200);
  EXPECT_TRUE(Str(reply.json, "openapi").starts_with("3.")) << reply.text.substr(0, 200);
  ASSERT_TRUE(reply.object().contains("paths") && reply.object().at("paths").is_object());
  const json::object& paths = reply.object().at("paths").as_object();

  for (const RouteInfo& route : Api::Routes()) {
    std::string method(route.method);
    for (char& c : method) c = static_cast<char>(std::tolower(c));
    // A rest-of-path segment "{path...}" is documented as "{path}".
    std::string documented(route.pattern);
    if (const size_t dots = documented.find("...}"); dots != std::string::npos) {
      documented.erase(dots, 3);
    }
    const json::value* path = paths.if_contains(documented);
    ASSERT_NE(path, nullptr) << route.pattern << " is not in the document";
    EXPECT_TRUE(path->is_object() && path->as_object().contains(method))
        << route.method << " " << route.pattern << " is not in the document";
  }

  size_t operations = 0;
  for (const auto& path : paths) {
    ASSERT_TRUE(path.value().is_object());
    for (const auto& operation : path.value().as_object()) {
      ++operations;
      std::string method(operation.key());
      for (char& c : method) c = static_cast<char>(std::toupper(c));
      std::string target;
      bool in_param = false;
      for (char c : std::string_view(path.key())) {
        if (c == '{') {
          in_param = true;
          target += "x";
        } else if (c == '}') {
          in_param = false;
        } else if (!in_param) {
          target += c;
        }
      }
      const ApiReply routed = api().Send(method, target, "", "");
      EXPECT_NE(routed.status, 0) << routed.Describe();
      EXPECT_FALSE(routed.router_refused())
          << method << " " << path.key() << " is documented but not routed: " << routed.Describe();
    }
  }
  EXPECT_EQ(operations, Api::Routes().size());
}

// Who may call what, written out once more by hand: a route whose access is loosened (or a new
// route that nobody placed) fails here, not in production.
TEST(ApiRoutesTest, EachRouteIsOpenToTheCallersItsContractNames) {
  using enum Access;
  const std::map<std::string, Access> expected = {
      {"GET /healthz", kPublic},
      {"GET /metrics", kPublic},
      {"GET /v1/openapi.json", kPublic},
      {"GET /v1/gpus", kPublic},
      {"GET /v1/availability", kUser},
      {"POST /v1/advise", kUser},
      {"GET /v1/models", kPublic},
      {"POST /v1/users", kAdmin},
      {"GET /v1/users", kAdmin},
      {"GET /v1/users/{id}", kUser},
      {"POST /v1/users/{id}/credits", kAdmin},
      {"PATCH /v1/users/me", kUser},
      {"GET /v1/tokens", kUser},
      {"POST /v1/tokens", kUser},
      {"DELETE /v1/tokens/{id}", kUser},
      {"GET /v1/ssh-keys", kUser},
      {"POST /v1/ssh-keys", kUser},
      {"DELETE /v1/ssh-keys/{id}", kUser},
      {"GET /v1/templates", kUser},
      {"POST /v1/templates", kUser},
      {"GET /v1/templates/{id}", kUser},
      {"DELETE /v1/templates/{id}", kUser},
      {"GET /v1/pods", kUser},
      {"POST /v1/pods", kUser},
      {"GET /v1/pods/{id}", kUser},
      {"POST /v1/pods/{id}/stop", kUser},
      {"POST /v1/pods/{id}/start", kUser},
      {"POST /v1/pods/{id}/restart", kUser},
      {"DELETE /v1/pods/{id}", kUser},
      {"GET /v1/pods/{id}/transitions", kUser},
      {"GET /v1/billing/balance", kUser},
      {"GET /v1/billing/ledger", kUser},
      {"GET /v1/billing/usage", kUser},
      {"GET /v1/join-tokens", kAdmin},
      {"POST /v1/join-tokens", kAdmin},
      {"DELETE /v1/join-tokens/{id}", kAdmin},
      {"GET /v1/nodes", kAdmin},
      {"GET /v1/nodes/{id}", kAdmin},
      {"POST /v1/nodes/{id}/cordon", kAdmin},
      {"POST /v1/nodes/{id}/uncordon", kAdmin},
      {"POST /v1/nodes/{id}/drain", kAdmin},
      {"DELETE /v1/nodes/{id}", kAdmin},
      {"PUT /v1/prices/{gpu}", kAdmin},
      {"POST /v1/agent/register", kJoin},
      {"POST /v1/agent/heartbeat", kNode},
      {"GET /v1/agent/pods", kNode},
      {"POST /v1/agent/pods/{id}/status", kNode},
      {"GET /v1/pods/{id}/logs", kUser},
      {"GET /v1/pods/{id}/proxy/{port}/{path...}", kUserOrPodLink},
      {"POST /v1/pods/{id}/proxy/{port}/{path...}", kUserOrPodLink},
      {"PUT /v1/pods/{id}/proxy/{port}/{path...}", kUserOrPodLink},
      {"PATCH /v1/pods/{id}/proxy/{port}/{path...}", kUserOrPodLink},
      {"DELETE /v1/pods/{id}/proxy/{port}/{path...}", kUserOrPodLink},
      {"HEAD /v1/pods/{id}/proxy/{port}/{path...}", kUserOrPodLink},
      {"GET /v1/agent/requests", kNode},
      {"POST /v1/agent/requests/{id}", kNode},
  };
  size_t seen = 0;
  for (const RouteInfo& route : Api::Routes()) {
    const std::string key = std::string(route.method) + " " + std::string(route.pattern);
    const auto it = expected.find(key);
    if (it == expected.end()) {
      ADD_FAILURE() << key << " is not in this list; add it with the access it should have";
      continue;
    }
    ++seen;
    EXPECT_EQ(static_cast<int>(route.access), static_cast<int>(it->second)) << key;
  }
  EXPECT_EQ(seen, expected.size()) << "a route in this list is gone from the table";
}

TEST(ApiRoutesTest, NoTwoRoutesShareAMethodAndPattern) {
  std::set<std::string> seen;
  for (const RouteInfo& route : Api::Routes()) {
    EXPECT_TRUE(seen.insert(std::string(route.method) + " " + std::string(route.pattern)).second)
        << route.method << " " << route.pattern;
    EXPECT_FALSE(route.summary.empty()) << route.pattern;
  }
}

// --- Concurrency --------------------------------------------------------------------------------

// The public catalog is read on every HTTP thread while an admin changes prices and a renter
// creates pods: prices live in the control plane's guarded state, so this must neither crash nor
// refuse anything.
TEST_F(ApiServerTest, TheConsoleIsServedAtTheRootWithoutATokenAndMayLoadOnlyItsOwnFiles) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto client = net::HttpClient::Create("http://127.0.0.1:" + std::to_string(server_->port()));
  ASSERT_TRUE(client.ok()) << client.status().ToString();
  const auto get = [&](std::string_view path) {
    core::Result<net::HttpResponse> response = (*client)->Send("GET", path);
    EXPECT_TRUE(response.ok()) << path << ": " << response.status().ToString();
    net::HttpResponse none;
    none.status = 0;
    return response.ok() ? *response : none;
  };
  const auto header = [](const net::HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return std::string();
  };
  const net::HttpResponse page = get("/");
  EXPECT_EQ(page.status, 200);
  EXPECT_EQ(page.content_type, "text/html; charset=utf-8");
  EXPECT_NE(page.body.find(R"(<script type="module" src="/console/app.js">)"), std::string::npos);
  const std::string policy = header(page, "content-security-policy");
  EXPECT_NE(policy.find("default-src 'self'"), std::string::npos) << policy;
  EXPECT_NE(policy.find("frame-ancestors 'none'"), std::string::npos) << policy;
  EXPECT_EQ(policy.find("unsafe-inline"), std::string::npos) << policy;
  EXPECT_EQ(header(page, "x-content-type-options"), "nosniff");

  const net::HttpResponse script = get("/console/app.js");
  EXPECT_EQ(script.status, 200);
  EXPECT_EQ(script.content_type, "text/javascript; charset=utf-8");
  // The console never parses the server's text as HTML.
  EXPECT_EQ(script.body.find("innerHTML"), std::string::npos);
  EXPECT_EQ(get("/console/style.css").content_type, "text/css; charset=utf-8");
  // The chart library (200 KiB, compiled in as bytes) arrives whole.
  std::ifstream chart_file(SUANLI_CHART_LIBRARY, std::ios::binary);
  const std::string chart_library{std::istreambuf_iterator<char>(chart_file), {}};
  ASSERT_FALSE(chart_library.empty()) << SUANLI_CHART_LIBRARY;
  const net::HttpResponse chart = get("/console/chart.umd.min.js");
  EXPECT_EQ(chart.content_type, "text/javascript; charset=utf-8");
  EXPECT_TRUE(chart.body == chart_library)
      << chart.body.size() << " bytes, not " << chart_library.size();
  EXPECT_NE(page.body.find(R"(<script defer src="/console/chart.umd.min.js">)"), std::string::npos);
  EXPECT_EQ(get("/console/nothing.js").status, 404);
  EXPECT_EQ(get("/index.html").body, page.body);
}

TEST_F(ApiServerTest, TheAdvisorAnswersAtThisCloudsPricesAndRefusesABadWorkload) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const ApiReply models = api().Get("/v1/models", "");
  ASSERT_EQ(models.status, 200) << models.Describe();
  EXPECT_GE(Array(models.json, "models").size(), 20u);
  EXPECT_NE(models.text.find(R"("name":"llama-3-8b")"), std::string::npos);
  const json::object workload{{"model", "llama-3-8b"}, {"task", "lora"}, {"tokens", 5e7}};
  ApiReply advice =
      api().PostJson("/v1/advise", renter.token, json::object{{"workload", workload}});
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  const json::array& estimates = Array(advice.json, "estimates");
  ASSERT_GE(estimates.size(), 30u) << "every catalog type is estimated";
  EXPECT_FALSE(Str(advice.object().at("recommendation"), "reason").empty()) << advice.text;
  const auto estimate_of = [](const ApiReply& reply, std::string_view gpu) {
    for (const json::value& estimate : Array(reply.json, "estimates")) {
      if (Str(estimate, "gpu") == gpu) return estimate;
    }
    ADD_FAILURE() << "no estimate for " << gpu;
    return json::value();
  };
  const std::string before = json::serialize(estimate_of(advice, "RTX 4090"));

  // An admin's price is the one the advisor costs with.
  ASSERT_EQ(
      api().Send("PUT", "/v1/prices/4090", admin_, R"({"price_per_hour_micros":3000000})").status,
      200);
  advice = api().PostJson("/v1/advise", renter.token, json::object{{"workload", workload}});
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  const json::value repriced = estimate_of(advice, "RTX 4090");
  EXPECT_NE(json::serialize(repriced), before);
  // $3.00 per GPU, for as many GPUs as the workload needs.
  EXPECT_EQ(repriced.as_object().at("rent_usd_per_hour").to_number<double>(),
            3.0 * static_cast<double>(Int(repriced, "count")))
      << repriced;

  for (const std::string body :
       {R"({})", R"({"workload":{"model":"llama-9000","task":"lora"}})",
        R"({"workload":{"model":"llama-3-8b","task":"juggle"}})",
        R"({"workload":{"model":"llama-3-8b","task":"lora","tokens":-1}})"}) {
    EXPECT_TRUE(
        IsApiError(api().Send("POST", "/v1/advise", renter.token, body), 400, "INVALID_ARGUMENT"))
        << body;
  }
}

TEST_F(ApiServerTest, TheAdvisorTakesAHuggingFaceConfigForAModelTheZooLacks) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const std::string config =
      R"({"model_type": "llama", "_name_or_path": "my-org/tiny-llama", "hidden_size": 2048,
          "intermediate_size": 5632, "num_hidden_layers": 22, "num_attention_heads": 32,
          "num_key_value_heads": 4, "vocab_size": 32000, "max_position_embeddings": 2048})";
  const ApiReply advice =
      api().Send("POST", "/v1/advise", renter.token,
                 R"({"workload":{"hf_config":)" + config + R"(,"task":"infer"}})");
  ASSERT_EQ(advice.status, 200) << advice.Describe();
  const json::value& workload = advice.object().at("workload");
  EXPECT_EQ(Str(workload, "model"), "my-org/tiny-llama");
  EXPECT_NEAR(workload.as_object().at("params").to_number<double>(), 1.1e9, 0.05e9);

  const std::map<std::string, std::string> refused = {
      {R"({"workload":{"model":"gpt2","hf_config":)" + config + R"(,"task":"infer"}})",
       "exactly one of model"},
      {R"({"workload":{"task":"infer"}})", "exactly one of model"},
      {R"({"workload":{"hf_config":"config.json","task":"infer"}})", "hf_config: must be"},
      {R"({"workload":{"hf_config":{"model_type":"abacus"},"task":"infer"}})", "abacus"},
  };
  for (const auto& [body, reason] : refused) {
    const ApiReply reply = api().Send("POST", "/v1/advise", renter.token, body);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT")) << body;
    EXPECT_NE(reply.text.find(reason), std::string::npos) << reply.text;
  }
}

TEST_F(ApiServerTest, CatalogReadsRacePriceChangesAndCreatesSafely) {
  ASSERT_NO_FATAL_FAILURE(StartServer(size_t{1} << 20, /*threads=*/4));
  const Account renter = CreateUser("renter", kPlentyOfCredits);
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::atomic<bool> stop{false};
  std::atomic<int> failures{0};
  const auto fail = [&failures](const std::string& what) {
    if (failures++ == 0) ADD_FAILURE() << what.substr(0, 300);
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, url] {
      ApiClient reader(url);
      while (!stop) {
        const ApiReply gpus = reader.Get("/v1/gpus");
        if (gpus.status != 200 || Array(gpus.json, "gpus").size() < 10) fail(gpus.Describe());
      }
    });
  }
  threads.emplace_back([&, url] {
    ApiClient renter_client(url);
    while (!stop) {
      const ApiReply pod = renter_client.Post(
          "/v1/pods", renter.token, R"({"image":"busybox","gpu_type":"L4","volume_gb":0})");
      if (pod.status != 201) fail(pod.Describe());
    }
  });
  ApiClient admin(url);
  constexpr int kRounds = 100;
  for (int i = 1; i <= kRounds; ++i) {
    for (std::string_view gpu : {"T4", "L4", "A10", "RTX 3090", "H100 SXM"}) {
      const ApiReply set =
          admin.Send("PUT", "/v1/prices/" + net::PercentEncode(gpu), admin_,
                     R"({"price_per_hour_micros":)" + std::to_string(i * 1000) + "}");
      if (set.status != 200) fail(std::string(gpu) + ": " + set.Describe());
    }
  }
  stop = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures, 0);
  const ApiReply gpus = api().Get("/v1/gpus");
  for (const json::value& gpu : Array(gpus.json, "gpus")) {
    if (Str(gpu, "name") == "T4") {
      EXPECT_EQ(Int(gpu, "price_per_hour_micros"), kRounds * 1000);
    }
  }
}

// --- Bad input ----------------------------------------------------------------------------------

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
    ASSERT_EQ(Str(api().Get("/v1/pods/" + running_, a_.token).json, "node_id"), node_.id);
    ASSERT_EQ(Report(node_.token, running_, 1, "running").status, 200);
    ASSERT_EQ(Str(api().Get("/v1/pods/" + running_, a_.token).json, "state"), "running");
    pending_ =
        CreatePod(a_.token, {{"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 10}});
    ASSERT_EQ(Str(api().Get("/v1/pods/" + pending_, a_.token).json, "state"), "pending");
    before_ = Snapshot();
  }

  // Everything a bad request must not change. The clock stands still, so a second read of an
  // unchanged world is byte for byte the same.
  std::string Snapshot() {
    std::string all;
    for (const std::string& token : {a_.token, poor_.token}) {
      for (std::string_view path :
           {"/v1/pods", "/v1/billing/balance", "/v1/billing/ledger", "/v1/users/me"}) {
        const ApiReply reply = api().Get(path, token);
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

  ApiReply CreatePodWith(std::string_view body, std::string_view token = {}) {
    return api().Send("POST", "/v1/pods", token.empty() ? a_.token : token, body);
  }

  Account a_, poor_, node_, other_node_;
  std::string running_, pending_, before_;
};

TEST_F(ApiBadInputTest, MalformedJsonIsInvalidArgument) {
  EXPECT_TRUE(IsApiError(CreatePodWith(R"({"template": "pytorch",)"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(CreatePodWith("not json at all"), 400, "INVALID_ARGUMENT"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ABodyThatIsNotAnObjectIsInvalidArgument) {
  const ApiReply reply = CreatePodWith(R"([{"template":"pytorch"}])");
  EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(CreatePodWith(R"("pytorch")"), 400, "INVALID_ARGUMENT"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnUnknownFieldIsNamed) {
  const ApiReply reply = CreatePodWith(R"({"template":"pytorch","gpu":"4090"})");
  ASSERT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  EXPECT_NE(reply.error_message().find("'gpu'"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, WrongTypesAreNamed) {
  for (std::string_view body :
       {R"({"template":"pytorch","gpu_type":"4090","gpu_count":"two"})",
        R"({"template":"pytorch","gpu_type":"4090","gpu_count":1.5})",
        R"({"template":"pytorch","gpu_type":4090})",
        R"({"template":"pytorch","gpu_type":"4090","env":["A=1"]})",
        R"({"template":"pytorch","gpu_type":"4090","interruptible":"yes"})"}) {
    SCOPED_TRACE(body);
    const ApiReply reply = CreatePodWith(body);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
  }
  const ApiReply reply =
      CreatePodWith(R"({"template":"pytorch","gpu_type":"4090","gpu_count":"two"})");
  EXPECT_NE(reply.error_message().find("gpu_count"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, NegativeZeroAndAbsurdSizesAreRefused) {
  for (std::string_view extra :
       {R"("gpu_count":-1)", R"("gpu_count":0)", R"("gpu_count":1000)", R"("volume_gb":-5)",
        R"("memory_gb":1000000000)", R"("vcpu":0)", R"("container_disk_gb":-1)",
        R"("gpu_count":99999999999999999999)"}) {
    SCOPED_TRACE(extra);
    const ApiReply reply =
        CreatePodWith(R"({"template":"pytorch","gpu_type":"4090",)" + std::string(extra) + "}");
    ASSERT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT"));
    const std::string field(extra.substr(1, extra.find('"', 1) - 1));
    EXPECT_NE(reply.error_message().find(field), std::string::npos) << reply.text;
  }
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnUnknownGpuIsNotFoundWithSuggestions) {
  const ApiReply reply = CreatePodWith(R"({"template":"pytorch","gpu_type":"RTX 9999"})");
  ASSERT_TRUE(IsApiError(reply, 404, "NOT_FOUND"));
  const std::string& message = reply.error_message();
  EXPECT_TRUE(message.find("did you mean") != std::string::npos ||
              message.find("suanli gpus") != std::string::npos)
      << message;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnUnknownTemplateIsNotFound) {
  const ApiReply reply = CreatePodWith(R"({"template":"pytorhc","gpu_type":"4090"})");
  ASSERT_TRUE(IsApiError(reply, 404, "NOT_FOUND"));
  EXPECT_NE(reply.error_message().find("pytorch"), std::string::npos)
      << "suggests the close name: " << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ABodyOverTheLimitIsPayloadTooLarge) {
  std::string body = R"({"template":"pytorch","gpu_type":"4090","env":{"PAD":")";
  body += std::string(10 * 1024, 'x');
  body += R"("}})";
  const ApiReply reply = CreatePodWith(body);
  EXPECT_TRUE(IsApiError(reply, 413));
  // The server still answers on a new connection.
  EXPECT_EQ(api().Get("/healthz").status, 200);
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, TooLittleBalanceIsResourceExhausted) {
  const ApiReply reply = CreatePodWith(R"({"image":"busybox","gpu_type":"H100 SXM"})", poor_.token);
  EXPECT_TRUE(IsApiError(reply, core::HttpStatusFor(core::StatusCode::kResourceExhausted),
                         "RESOURCE_EXHAUSTED"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnActionNotAllowedInTheStateIsAConflictWithTheReason) {
  for (const std::string& pod : {running_, pending_}) {
    const ApiReply reply = api().Post("/v1/pods/" + pod + "/start", a_.token);
    EXPECT_TRUE(IsApiError(reply, 409, "FAILED_PRECONDITION")) << pod;
  }
  const ApiReply restart = api().Post("/v1/pods/" + pending_ + "/restart", a_.token);
  EXPECT_TRUE(IsApiError(restart, 409, "FAILED_PRECONDITION"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, TerminatingAVolumeWithoutForceIsAConflict) {
  const ApiReply reply = api().Send("DELETE", "/v1/pods/" + pending_, a_.token);
  ASSERT_TRUE(IsApiError(reply, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(reply.error_message().find("force"), std::string::npos) << reply.text;
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ForgedAndRevokedTokensAreUnauthenticated) {
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods", "sl_0123456789abcdef"), 401, "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods", a_.token + "x"), 401, "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(api().Send("GET", "/v1/pods", " "), 401, "UNAUTHENTICATED"));
  const ApiReply created = api().Post("/v1/tokens", a_.token, R"({"name":"short-lived"})");
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string secret = Str(created.json, "secret");
  const std::string id = Str(created.object().at("token"), "id");
  ASSERT_EQ(api().Get("/v1/pods", secret).status, 200);
  ASSERT_EQ(api().Send("DELETE", "/v1/tokens/" + id, a_.token).status, 200);
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods", secret), 401, "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(CreatePodWith(R"({"template":"pytorch","gpu_type":"4090"})", secret), 401,
                         "UNAUTHENTICATED"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AnAgentCannotReportAPodOfAnotherNode) {
  EXPECT_TRUE(
      IsApiError(Report(other_node_.token, running_, 99, "stopped"), 403, "PERMISSION_DENIED"));
  EXPECT_TRUE(IsApiError(Report(other_node_.token, "pod_doesnotexist", 1, "running"), 403,
                         "PERMISSION_DENIED"));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, ARemovedNodesTokenIsUnauthenticated) {
  ASSERT_EQ(api().Send("DELETE", "/v1/nodes/" + other_node_.id, admin_).status, 200);
  json::object heartbeat = NodeBody("n2");
  heartbeat.erase("name");
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/agent/heartbeat", other_node_.token, heartbeat), 401,
                         "UNAUTHENTICATED"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods", other_node_.token), 401, "UNAUTHENTICATED"));
  // The node that holds a pod cannot be removed until it is drained.
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/nodes/" + node_.id, admin_), 409,
                         "FAILED_PRECONDITION"));
  EXPECT_EQ(api().PostJson("/v1/agent/heartbeat", node_.token, heartbeat).status, 200);
}

TEST_F(ApiBadInputTest, AnAgentReportWithABadStateOrTimeIsInvalidArgument) {
  const std::string target = "/v1/agent/pods/" + running_ + "/status";
  for (const json::object& body :
       {json::object{{"seq", 5}, {"state", "sleeping"}, {"at", Now()}},
        json::object{{"seq", 5}, {"state", "pending"}, {"at", Now()}},
        json::object{{"seq", 5}, {"state", "stopped"}, {"at", "yesterday"}},
        json::object{{"seq", 5}, {"state", "stopped"}, {"at", "2026-13-45T99:00:00Z"}},
        json::object{{"seq", 0}, {"state", "stopped"}, {"at", Now()}},
        json::object{{"seq", "5"}, {"state", "stopped"}, {"at", Now()}},
        json::object{{"state", "stopped"}, {"at", Now()}},
        json::object{{"seq", 5}, {"state", "stopped"}, {"at", Now()}, {"colour", "red"}},
        json::object{{"seq", 5},
                     {"state", "running"},
                     {"at", Now()},
                     {"port_mappings", json::array{json::object{{"container_port", 0}}}}},
        json::object{{"seq", 5}, {"state", "running"}, {"at", Now()}, {"port_mappings", 8080}},
        json::object{
            {"seq", 5}, {"state", "running"}, {"at", Now()}, {"port_mappings", json::array{8080}}},
        json::object{{"seq", 5},
                     {"state", "running"},
                     {"at", Now()},
                     {"port_mappings", json::array{json::object{{"container_port", 80},
                                                                {"protocol", "tcp"},
                                                                {"host_port", 4000},
                                                                {"colour", "red"}}}}},
        json::object{{"seq", 5}, {"state", "starting"}, {"at", Now()}, {"pull", 50}},
        json::object{{"seq", 5},
                     {"state", "starting"},
                     {"at", Now()},
                     {"pull", json::object{{"current_bytes", -1}, {"total_bytes", 10}}}}}) {
    SCOPED_TRACE(json::serialize(body));
    EXPECT_TRUE(IsApiError(api().PostJson(target, node_.token, json::value(body)), 400,
                           "INVALID_ARGUMENT"));
  }
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, AWrongMethodIsNotAllowedAndAnUnknownPathIsNotFound) {
  EXPECT_TRUE(IsApiError(api().Send("PUT", "/v1/pods", a_.token, "{}"), 405));
  EXPECT_TRUE(IsApiError(api().Send("PATCH", "/v1/pods/" + running_, a_.token, "{}"), 405));
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/gpus"), 405));
  EXPECT_TRUE(IsApiError(api().Get("/v1/nope", a_.token), 404, "NOT_FOUND"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/nope", a_.token), 404));
  EXPECT_TRUE(IsApiError(api().Get("/v2/pods", a_.token), 404));
  ExpectNothingChanged();
}

TEST_F(ApiBadInputTest, BadQueryValuesAreInvalidArgument) {
  EXPECT_TRUE(IsApiError(api().Get("/v1/billing/usage?by=week", a_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/billing/usage?format=xml", a_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods?after=abc", node_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/pods?wait_s=100000", node_.token), 400));
  ExpectNothingChanged();
}

// --- The agent's protocol: times it reports, and long polls --------------------------------------

using ApiAgentProtocolTest = ApiBadInputTest;

int64_t GpuCharges(ApiClient& api, std::string_view token, std::string_view pod) {
  const ApiReply ledger = api.Get("/v1/billing/ledger", token);
  EXPECT_EQ(ledger.status, 200) << ledger.Describe();
  int64_t sum = 0;
  for (const json::value& entry : Array(ledger.json, "entries")) {
    if (Str(entry, "pod_id") == pod && Str(entry, "kind") == "gpu") {
      sum -= Int(entry, "amount_micros");
    }
  }
  return sum;
}

TEST_F(ApiAgentProtocolTest, AReportFromTheFutureIsTakenAsNowSoNoUnlivedSecondIsBilled) {
  const ApiReply pod = api().Get("/v1/pods/" + running_, a_.token);
  const core::Money price = core::Money::FromMicros(Int(pod.json, "gpu_price_per_hour_micros"));
  ASSERT_GT(price.micros(), 0);
  const core::TimePoint since = clock_.Now();
  ASSERT_EQ(Str(pod.json, "running_since"), FormatTime(since));
  clock_.Advance(std::chrono::seconds(100));
  const ApiReply stopped =
      api().PostJson("/v1/agent/pods/" + running_ + "/status", node_.token,
                     json::object{{"seq", 2},
                                  {"state", "stopped"},
                                  {"at", FormatTime(clock_.Now() + std::chrono::hours(5))}});
  ASSERT_EQ(stopped.status, 200) << stopped.Describe();
  EXPECT_EQ(Str(stopped.json, "state_since"), Now());
  EXPECT_EQ(GpuCharges(api(), a_.token, running_),
            billing::ChargeBetween(price, since, since, clock_.Now()).micros());
  EXPECT_EQ(GpuCharges(api(), a_.token, running_), price.micros() * 100 / 3600);
}

TEST_F(ApiAgentProtocolTest, AReportFromBeforeTheLastChangeIsTakenAsThatChange) {
  clock_.Advance(std::chrono::seconds(100));
  const ApiReply stopped =
      api().PostJson("/v1/agent/pods/" + running_ + "/status", node_.token,
                     json::object{{"seq", 2},
                                  {"state", "stopped"},
                                  {"at", FormatTime(clock_.Now() - std::chrono::hours(5))}});
  ASSERT_EQ(stopped.status, 200) << stopped.Describe();
  EXPECT_EQ(Str(stopped.json, "state_since"), FormatTime(clock_.Now() - std::chrono::seconds(100)));
  EXPECT_EQ(GpuCharges(api(), a_.token, running_), 0) << "no second ran after it stopped";
}

TEST_F(ApiAgentProtocolTest, ALongPollWakesWhenThePodsDesiredStateChanges) {
  const ApiReply now = api().Get("/v1/agent/pods", node_.token);
  ASSERT_EQ(now.status, 200) << now.Describe();
  const int64_t generation = Int(now.json, "generation");
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::future<ApiReply> poll = std::async(std::launch::async, [url, generation, this] {
    ApiClient agent(url);
    return agent.Get("/v1/agent/pods?after=" + std::to_string(generation) + "&wait_s=60",
                     node_.token);
  });
  // It waits: nothing changed (the clock stands still, so its 60 s never pass).
  EXPECT_EQ(poll.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  ASSERT_EQ(api().Post("/v1/pods/" + running_ + "/stop", a_.token).status, 200);
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const ApiReply woke = poll.get();
  ASSERT_EQ(woke.status, 200) << woke.Describe();
  EXPECT_GT(Int(woke.json, "generation"), generation);
  ASSERT_EQ(Array(woke.json, "pods").size(), 1u) << woke.text;
  EXPECT_EQ(Str(Array(woke.json, "pods").front(), "desired_state"), "stopped");
}

TEST_F(ApiAgentProtocolTest, ALongPollAnswersUnchangedOnceItsTimeIsUp) {
  const ApiReply now = api().Get("/v1/agent/pods", node_.token);
  const int64_t generation = Int(now.json, "generation");
  const std::string url = "http://127.0.0.1:" + std::to_string(server_->port());
  std::future<ApiReply> poll = std::async(std::launch::async, [url, generation, this] {
    ApiClient agent(url);
    return agent.Get("/v1/agent/pods?after=" + std::to_string(generation) + "&wait_s=5",
                     node_.token);
  });
  EXPECT_EQ(poll.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  clock_.Advance(std::chrono::seconds(6));  // the server's ticker notices within a tick
  ASSERT_EQ(poll.wait_for(std::chrono::seconds(10)), std::future_status::ready);
  const ApiReply answered = poll.get();
  ASSERT_EQ(answered.status, 200) << answered.Describe();
  EXPECT_EQ(Int(answered.json, "generation"), generation);
}

// --- Logs and the HTTP proxy, relayed by the agent ----------------------------------------------

// The test plays the node's agent over real HTTP: it long-polls for relayed requests and posts
// the answers, as src/agent/relay.cc does.
class ApiRelayTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartServer());
    a_ = CreateUser("alice", kPlentyOfCredits);
    b_ = CreateUser("bob", kPlentyOfCredits);
    node_ = RegisterNode("n1");
    other_node_ = RegisterNode("n2");
    ASSERT_EQ(api().Post("/v1/nodes/" + other_node_.id + "/cordon", admin_).status, 200);
    running_ = CreatePod(a_.token, {{"image", "busybox"},
                                    {"gpu_type", "4090"},
                                    {"volume_gb", 0},
                                    {"ports", json::array{"8080/http", "22/tcp"}}});
    ASSERT_EQ(Str(api().Get("/v1/pods/" + running_, a_.token).json, "node_id"), node_.id);
    ASSERT_EQ(Report(node_.token, running_, 1, "running").status, 200);
    pending_ = CreatePod(a_.token);
    ASSERT_EQ(Str(api().Get("/v1/pods/" + pending_, a_.token).json, "state"), "pending");
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

  // A user's request on its own connection, answered later; headers as given.
  std::future<core::Result<net::HttpResponse>> UserSends(std::string method, std::string target,
                                                         std::string token, std::string body = "",
                                                         net::Headers headers = {}) {
    return std::async(std::launch::async, [=, this]() mutable {
      auto client = net::HttpClient::Create(Url());
      if (!client.ok()) return core::Result<net::HttpResponse>(client.status());
      if (!token.empty()) headers.emplace_back("Authorization", "Bearer " + token);
      return (*client)->Send(method, target, body, headers);
    });
  }

  // The agent's long poll: the next relayed request for `node_token`'s node (the clock stands
  // still, so the poll waits for one).
  json::object TakeRequest(std::string_view node_token) {
    ApiClient agent(Url());
    const ApiReply reply = agent.Get("/v1/agent/requests?wait_s=30", node_token);
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    const json::array& requests = Array(reply.json, "requests");
    EXPECT_EQ(requests.size(), 1u) << reply.text;
    return requests.empty() || !requests[0].is_object() ? json::object() : requests[0].as_object();
  }

  ApiReply AnswerAs(std::string_view node_token, std::string_view id, const json::value& body) {
    ApiClient agent(Url());
    return agent.PostJson("/v1/agent/requests/" + std::string(id), node_token, body);
  }

  static std::string HeaderOf(const net::HttpResponse& response, std::string_view name) {
    for (const auto& [key, value] : response.headers) {
      if (key == name) return value;
    }
    return "";
  }

  static std::map<std::string, std::string> HeadersOf(const json::object& request) {
    std::map<std::string, std::string> headers;
    const json::value whole(request);
    for (const json::value& pair : Array(whole, "headers")) {
      headers[std::string(pair.as_array()[0].as_string())] =
          std::string(pair.as_array()[1].as_string());
    }
    return headers;
  }

  Account a_, b_, node_, other_node_;
  std::string running_, pending_;
};

TEST_F(ApiRelayTest, APodsLogsAreWhatItsNodesAgentPosts) {
  auto user = UserSends("GET", "/v1/pods/" + running_ + "/logs?tail=5&timestamps=true", a_.token);
  const json::object request = TakeRequest(node_.token);
  EXPECT_EQ(Str(request, "kind"), "logs");
  EXPECT_EQ(Str(request, "pod_id"), running_);
  EXPECT_EQ(Int(request, "tail"), 5);
  EXPECT_TRUE(request.contains("timestamps") && request.at("timestamps") == true);
  EXPECT_TRUE(Str(request, "id").starts_with("rly_"));
  // json::value(...) around the inner pair: clang reads json::array{json::array{...}} as a copy of
  // the inner array, not as an array holding it (GCC reads the latter).
  const ApiReply posted =
      AnswerAs(node_.token, Str(request, "id"),
               json::object{{"status", 200},
                            {"headers", json::array{json::value(json::array{
                                            "Content-Type", "text/plain; charset=utf-8"})}},
                            {"body_base64", net::Base64Encode("line 1\nline 2\n")}});
  EXPECT_EQ(posted.status, 204) << posted.Describe();
  core::Result<net::HttpResponse> logs = user.get();
  ASSERT_TRUE(logs.ok()) << logs.status().ToString();
  EXPECT_EQ(logs->status, 200);
  EXPECT_EQ(logs->body, "line 1\nline 2\n");
  EXPECT_EQ(logs->content_type, "text/plain; charset=utf-8");
}

TEST_F(ApiRelayTest, AProxiedGetAndPostReachTheAgentIntactWithoutTheUsersToken) {
  auto get =
      UserSends("GET", "/v1/pods/" + running_ + "/proxy/8080/api/items%20x?q=a%20b&n=1", a_.token,
                "", {{"X-Custom", "yes"}, {"Connection", "keep-alive, X-Gone"}, {"X-Gone", "hop"}});
  json::object request = TakeRequest(node_.token);
  EXPECT_EQ(Str(request, "kind"), "http");
  EXPECT_EQ(Str(request, "pod_id"), running_);
  EXPECT_EQ(Int(request, "port"), 8080);
  EXPECT_EQ(Str(request, "method"), "GET");
  EXPECT_EQ(Str(request, "target"), "/api/items%20x?q=a%20b&n=1");
  std::map<std::string, std::string> headers = HeadersOf(request);
  EXPECT_EQ(headers["x-custom"], "yes");
  EXPECT_FALSE(headers.contains("authorization")) << "the user's token must not reach the pod";
  EXPECT_FALSE(headers.contains("connection"));
  EXPECT_FALSE(headers.contains("x-gone")) << "named by Connection: hop-by-hop";
  EXPECT_FALSE(headers.contains("host"));
  EXPECT_EQ(headers["x-forwarded-prefix"], "/v1/pods/" + running_ + "/proxy/8080");
  EXPECT_EQ(Str(request, "body_base64"), "");
  ApiReply posted =
      AnswerAs(node_.token, Str(request, "id"),
               json::object{{"status", 201},
                            {"headers", json::array{json::array{"Content-Type", "application/json"},
                                                    json::array{"X-Pod", "p1"},
                                                    json::array{"Transfer-Encoding", "chunked"},
                                                    json::array{"Connection", "close"}}},
                            {"body_base64", net::Base64Encode(R"({"ok":true})")}});
  EXPECT_EQ(posted.status, 204) << posted.Describe();
  core::Result<net::HttpResponse> got = get.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(got->status, 201);
  EXPECT_EQ(got->body, R"({"ok":true})");
  EXPECT_EQ(got->content_type, "application/json");
  EXPECT_EQ(HeaderOf(*got, "x-pod"), "p1");
  // The pod's page gets an origin of its own: it cannot read the console's token.
  const std::string sandbox = HeaderOf(*got, "content-security-policy");
  EXPECT_TRUE(sandbox.starts_with("sandbox ")) << sandbox;
  EXPECT_EQ(sandbox.find("allow-same-origin"), std::string::npos) << sandbox;

  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes.push_back(static_cast<char>(i));
  auto post = UserSends("POST", "/v1/pods/" + running_ + "/proxy/8080", admin_, bytes,
                        {{"Content-Type", "application/octet-stream"}});
  request = TakeRequest(node_.token);
  EXPECT_EQ(Str(request, "method"), "POST");
  EXPECT_EQ(Str(request, "target"), "/");
  const core::Result<std::string> sent = net::Base64Decode(Str(request, "body_base64"));
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(*sent, bytes);
  headers = HeadersOf(request);
  EXPECT_EQ(headers["content-type"], "application/octet-stream");
  EXPECT_FALSE(headers.contains("authorization"));
  posted = AnswerAs(node_.token, Str(request, "id"), json::object{{"status", 204}});
  EXPECT_EQ(posted.status, 204) << posted.Describe();
  core::Result<net::HttpResponse> created = post.get();
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->status, 204);
}

TEST_F(ApiRelayTest, APodLinkOpensThatPodsPortsAndNothingElse) {
  const std::string link = Str(api().Get("/v1/pods/" + running_, a_.token).json, "link_token");
  ASSERT_EQ(link.size(), 48u);
  const std::string proxy = "/v1/pods/" + running_ + "/proxy/8080";
  // The link in the query: a redirect without it, and a cookie for this pod's proxy paths only.
  core::Result<net::HttpResponse> redirect =
      UserSends("GET", proxy + "/lab?x=1&suanli_link=" + link, "").get();
  ASSERT_TRUE(redirect.ok()) << redirect.status().ToString();
  EXPECT_EQ(redirect->status, 303);
  EXPECT_EQ(HeaderOf(*redirect, "location"), proxy + "/lab?x=1");
  EXPECT_EQ(HeaderOf(*redirect, "set-cookie"), "suanli_link=" + link + "; Path=/v1/pods/" +
                                                   running_ + "/proxy/; HttpOnly; SameSite=Lax");
  // The browser comes back with the cookie: relayed as the owner, the pod's own cookies kept.
  auto follow =
      UserSends("GET", proxy + "/lab?x=1", "", "", {{"Cookie", "_xsrf=abc; suanli_link=" + link}});
  const json::object request = TakeRequest(node_.token);
  EXPECT_EQ(Str(request, "target"), "/lab?x=1");
  EXPECT_EQ(HeadersOf(request)["cookie"], "_xsrf=abc");
  EXPECT_EQ(AnswerAs(node_.token, Str(request, "id"), json::object{{"status", 200}}).status, 204);
  core::Result<net::HttpResponse> followed = follow.get();
  ASSERT_TRUE(followed.ok()) << followed.status().ToString();
  EXPECT_EQ(followed->status, 200);

  // A wrong link, this link on another pod, or this link on any other route: 401.
  const auto status_of = [&](std::string target, std::string cookie_link) {
    core::Result<net::HttpResponse> reply =
        UserSends("GET", std::move(target), "", "", {{"Cookie", "suanli_link=" + cookie_link}})
            .get();
    return reply.ok() ? reply->status : 0;
  };
  EXPECT_EQ(status_of(proxy + "/", std::string(48, '0')), 401);
  EXPECT_EQ(status_of("/v1/pods/" + pending_ + "/proxy/8888/", link), 401);
  EXPECT_EQ(status_of("/v1/pods/" + running_, link), 401);
  EXPECT_EQ(status_of("/v1/pods/" + running_ + "/logs", link), 401);
  // Nobody else is shown the link.
  EXPECT_FALSE(api().Get("/v1/pods/" + running_, admin_).object().contains("link_token"));
}

TEST_F(ApiRelayTest, NoAnswerInTimeIs504AndTheLateAnswerIsUnknown) {
  auto user = UserSends("GET", "/v1/pods/" + running_ + "/logs", a_.token);
  const json::object request = TakeRequest(node_.token);
  clock_.Advance(std::chrono::seconds(31));
  core::Result<net::HttpResponse> timed_out = user.get();
  ASSERT_TRUE(timed_out.ok()) << timed_out.status().ToString();
  EXPECT_EQ(timed_out->status, 504) << timed_out->body;
  EXPECT_NE(timed_out->body.find("n1"), std::string::npos) << timed_out->body;
  EXPECT_TRUE(IsApiError(AnswerAs(node_.token, Str(request, "id"), json::object{{"status", 200}}),
                         404, "NOT_FOUND"));
}

TEST_F(ApiRelayTest, OnlyTheNodeOfThePodMayAnswerAndMalformedAnswersAreRefused) {
  auto user = UserSends("GET", "/v1/pods/" + running_ + "/proxy/22/", a_.token);
  const json::object request = TakeRequest(node_.token);
  const std::string id = Str(request, "id");
  EXPECT_TRUE(
      IsApiError(AnswerAs(other_node_.token, id, json::object{{"status", 200}}), 404, "NOT_FOUND"));
  EXPECT_TRUE(IsApiError(AnswerAs(a_.token, id, json::object{{"status", 200}}), 403));
  for (const json::value& bad :
       {json::value(json::object{}), json::value(json::object{{"status", 99}}),
        json::value(json::object{{"status", "200"}}),
        json::value(json::object{{"status", 200}, {"colour", "red"}}),
        json::value(json::object{{"status", 200}, {"body_base64", "not base64!"}}),
        json::value(json::object{
            {"status", 200}, {"headers", json::array{json::value(json::array{"Bad Name", "v"})}}}),
        json::value(json::object{
            {"status", 200}, {"headers", json::array{json::value(json::array{"X", "a\r\nB: c"})}}}),
        json::value(
            json::object{{"status", 200}, {"headers", json::array{json::value(json::array{"X"})}}}),
        json::value(json::object{{"status", 200}, {"headers", "X: y"}}),
        json::value(json::array{})}) {
    SCOPED_TRACE(json::serialize(bad));
    EXPECT_TRUE(IsApiError(AnswerAs(node_.token, id, bad), 400, "INVALID_ARGUMENT"));
  }
  EXPECT_EQ(AnswerAs(node_.token, id,
                     json::object{{"status", 502}, {"body_base64", net::Base64Encode("down")}})
                .status,
            204);
  core::Result<net::HttpResponse> answered = user.get();
  ASSERT_TRUE(answered.ok()) << answered.status().ToString();
  EXPECT_EQ(answered->status, 502);
  EXPECT_EQ(answered->body, "down");
}

TEST_F(ApiRelayTest, WhatCannotBeRelayedIsRefusedAtOnce) {
  // A port the pod does not have; a port that is no number.
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/proxy/9999/", a_.token), 400,
                         "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/proxy/http/", a_.token), 400));
  // Another user's pod does not exist for them.
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/logs", b_.token), 404, "NOT_FOUND"));
  EXPECT_TRUE(
      IsApiError(api().Get("/v1/pods/" + running_ + "/proxy/8080/", b_.token), 404, "NOT_FOUND"));
  // A pod on no node has no logs and no ports to reach.
  const ApiReply logs = api().Get("/v1/pods/" + pending_ + "/logs", a_.token);
  EXPECT_TRUE(IsApiError(logs, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(logs.error_message().find("no logs"), std::string::npos) << logs.text;
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + pending_ + "/proxy/8888/", a_.token), 409,
                         "FAILED_PRECONDITION"));
  // Bad query values.
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/logs?tail=-1", a_.token), 400));
  EXPECT_TRUE(
      IsApiError(api().Get("/v1/pods/" + running_ + "/logs?since=yesterday", a_.token), 400));
  EXPECT_TRUE(
      IsApiError(api().Get("/v1/pods/" + running_ + "/logs?timestamps=yes", a_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/requests?wait_s=100000", node_.token), 400));
  EXPECT_TRUE(IsApiError(api().Get("/v1/agent/requests?max=0", node_.token), 400));
  // Nothing was queued by any of these.
  const ApiReply empty = api().Get("/v1/agent/requests?wait_s=0", node_.token);
  ASSERT_EQ(empty.status, 200) << empty.Describe();
  EXPECT_TRUE(Array(empty.json, "requests").empty()) << empty.text;
}

TEST_F(ApiRelayTest, APodOnAnUnreachableNodeIs503) {
  clock_.Advance(std::chrono::seconds(45));  // no heartbeat: the server's ticker marks n1
  for (int i = 0; i < 100; ++i) {
    if (Str(api().Get("/v1/nodes/" + node_.id, admin_).json, "state") == "unreachable") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  const ApiReply logs = api().Get("/v1/pods/" + running_ + "/logs", a_.token);
  EXPECT_TRUE(IsApiError(logs, 503, "UNAVAILABLE"));
  EXPECT_NE(logs.error_message().find("node n1"), std::string::npos) << logs.text;
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/proxy/8080/x", a_.token), 503));
}

}  // namespace
}  // namespace suanli::server
