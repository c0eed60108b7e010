// Who may call each route of the API over real HTTP and a real SQLite store: every route against
// every kind of caller, what each caller sees, and the OpenAPI document and the route table against
// the router. The server runs in process on a free port with a ManualClock (api_testing.h).
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
#include "server/api.h"
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

// --- Authorization ------------------------------------------------------------------------------

// kReadOnlyA: a read-only token of A's (GET and HEAD only). kProjectB: a token of B's scoped to a
// project of B's own (Principal::project_id): B, on the routes of a project's pods, its project,
// B's own user and the catalog only.
enum class Caller { kNone, kBogus, kJoin, kNode, kUserB, kProjectB, kReadOnlyA, kUserA, kAdmin };
constexpr Caller kCallers[] = {Caller::kNone,      Caller::kBogus, Caller::kJoin,
                               Caller::kNode,      Caller::kUserB, Caller::kProjectB,
                               Caller::kReadOnlyA, Caller::kUserA, Caller::kAdmin};

// The routes a project token reaches, written out here rather than taken from the server's list,
// so that a route added to it (or left out) is a decision this test sees.
bool ProjectTokenMayCall(std::string_view method, std::string_view pattern) {
  if (pattern == "/v1/pods" || pattern.starts_with("/v1/pods/") || pattern == "/v1/advise") {
    return true;
  }
  static const std::set<std::string_view> kReadable = {
      "/v1/projects", "/v1/projects/{id}", "/v1/users/{id}", "/v1/gpus",
      "/v1/models",   "/v1/availability",  "/v1/templates",  "/v1/templates/{id}"};
  return (method == "GET" || method == "HEAD") && kReadable.contains(pattern);
}

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
    case Caller::kProjectB:
      return "user B's project token";
    case Caller::kReadOnlyA:
      return "user A's read-only token";
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
    // The cases make a pod for each caller of each pod route: more than the default quotas.
    ASSERT_EQ(api()
                  .Send("PUT", "/v1/users/" + a_.id + "/quota", admin_,
                        R"({"max_pods":10000,"max_pending_pods":10000})")
                  .status,
              200);
    // A's pod reads A's volume "snapped", which so has its data on n1 and can be snapshotted.
    ASSERT_EQ(api().Post("/v1/volumes", a_.token, R"({"name":"snapped","size_gb":1})").status, 201);
    a_pod_ = CreatePod(
        a_.token,
        {{"template", "pytorch"},
         {"gpu_type", "4090"},
         {"volume_gb", 0},
         {"volumes", json::array{json::object{
                         {"name", "snapped"}, {"mount_path", "/data"}, {"read_only", true}}}}});
    ASSERT_FALSE(a_.token.empty() || b_.token.empty() || node_.token.empty() || a_pod_.empty());
    const ApiReply pod = api().Get("/v1/pods/" + a_pod_, a_.token);
    ASSERT_EQ(Str(pod.json, "node_id"), node_.id) << "A's pod is bound to n1: " << pod.Describe();
    const ApiReply tpl = api().PostJson(
        "/v1/templates", a_.token, json::object{{"name", "mine"}, {"image", "busybox:latest"}});
    ASSERT_EQ(tpl.status, 201) << tpl.Describe();
    a_template_ = Str(tpl.json, "id");
    const ApiReply reader = api().PostJson(
        "/v1/tokens", a_.token, json::object{{"name", "dashboard"}, {"read_only", true}});
    ASSERT_EQ(reader.status, 201) << reader.Describe();
    a_read_only_ = Str(reader.json, "secret");
    ASSERT_EQ(api().Post("/v1/projects", b_.token, R"({"name":"bs-team"})").status, 201);
    const ApiReply scoped = api().PostJson("/v1/tokens", b_.token,
                                           json::object{{"name", "ci"}, {"project", "bs-team"}});
    ASSERT_EQ(scoped.status, 201) << scoped.Describe();
    b_project_ = Str(scoped.json, "secret");
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
      case Caller::kProjectB:
        return b_project_;
      case Caller::kReadOnlyA:
        return a_read_only_;
      case Caller::kAdmin:
        return admin_;
    }
    return "";
  }

  static Expect Expected(RouteAccess access, Caller caller, const RouteCase& route,
                         std::string_view method, std::string_view pattern) {
    const bool anonymous =
        caller == Caller::kNone || caller == Caller::kBogus || caller == Caller::kJoin;
    // A's read-only token is A for reading, and may do nothing else that needs a token.
    if (caller == Caller::kReadOnlyA && access != RouteAccess::kPublic &&
        access != RouteAccess::kJoin && access != RouteAccess::kWorker) {
      if (method != "GET" && method != "HEAD") return Expect::kForbidden;
      caller = Caller::kUserA;
    }
    // B's project token is B where it reaches, and refused on a person's other routes.
    if (caller == Caller::kProjectB) {
      if ((access == RouteAccess::kUser || access == RouteAccess::kUserOrPodLink ||
           access == RouteAccess::kAdmin) &&
          !ProjectTokenMayCall(method, pattern)) {
        return Expect::kForbidden;
      }
      caller = Caller::kUserB;
    }
    switch (access) {
      case RouteAccess::kPublic:
        return Expect::kPass;
      case RouteAccess::kJoin:
        return caller == Caller::kJoin ? Expect::kPass : Expect::kUnauthenticated;
      case RouteAccess::kUser:
      case RouteAccess::kUserOrPodLink:  // these requests carry no link
        if (anonymous) return Expect::kUnauthenticated;
        if (caller == Caller::kNode) return Expect::kForbidden;
        if (caller == Caller::kUserB && route.user_b) return *route.user_b;
        return Expect::kPass;
      case RouteAccess::kAdmin:
        if (anonymous) return Expect::kUnauthenticated;
        return caller == Caller::kAdmin ? Expect::kPass : Expect::kForbidden;
      case RouteAccess::kNode:
        if (anonymous) return Expect::kUnauthenticated;
        return caller == Caller::kNode ? Expect::kPass : Expect::kForbidden;
      case RouteAccess::kWorker:  // no caller here holds a worker's token
        return Expect::kUnauthenticated;
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
    cases["PUT /v1/users/{id}/quota"] = {
        [this] {
          return Request{"/v1/users/" + a_.id + "/quota", R"({"max_pods":10000})", ""};
        },
        {}};
    cases["PATCH /v1/users/me"] = {fixed("/v1/users/me", R"({"spend_cap_per_hour_micros":0})"), {}};
    cases["PUT /v1/users/me/budget"] = {
        fixed("/v1/users/me/budget", R"({"monthly_budget_micros":0,"action":"stop_all"})"), {}};
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
    cases["GET /v1/events"] = {fixed("/v1/events?kind=pod.state&limit=5"), {}};
    cases["GET /v1/audit"] = {fixed("/v1/audit?tail=5&format=csv"), {}};
    cases["GET /v1/webhooks"] = {fixed("/v1/webhooks"), {}};
    cases["POST /v1/webhooks"] = {
        fixed("/v1/webhooks", R"({"url":"http://127.0.0.1:9/hook","kinds":["pod.idle_stop"]})"),
        {}};
    // One of A's each time: B cannot delete it (and the probe shows it is still there).
    cases["DELETE /v1/webhooks/{id}"] = {
        [this] {
          const ApiReply created =
              api().Post("/v1/webhooks", a_.token, R"({"url":"http://127.0.0.1:9/a"})");
          EXPECT_EQ(created.status, 201) << created.Describe();
          return Request{"/v1/webhooks/" + Str(created.json, "id"), "", "/v1/webhooks"};
        },
        Expect::kNotFound};
    // Projects: a fresh one of A's each time; B, no member, sees none of them.
    const auto fresh_project = [this](std::string tail, std::string body) {
      return [this, tail, body] {
        const ApiReply created = api().Post("/v1/projects", a_.token,
                                            R"({"name":"p)" + std::to_string(++counter_) + R"("})");
        EXPECT_EQ(created.status, 201) << created.Describe();
        const std::string id = Str(created.json, "id");
        return Request{"/v1/projects/" + id + tail, body, "/v1/projects/" + id};
      };
    };
    cases["GET /v1/projects"] = {fixed("/v1/projects"), {}};
    cases["POST /v1/projects"] = {[this] {
                                    return Request{
                                        "/v1/projects",
                                        R"({"name":"q)" + std::to_string(++counter_) + R"("})", ""};
                                  },
                                  {}};
    cases["GET /v1/projects/{id}"] = {fresh_project("", "{}"), Expect::kNotFound};
    cases["DELETE /v1/projects/{id}"] = {fresh_project("", "{}"), Expect::kNotFound};
    cases["PUT /v1/projects/{id}/members/{user}"] = {
        [this, fresh_project] {
          return fresh_project("/members/" + b_.id, R"({"role":"viewer"})")();
        },
        Expect::kNotFound};
    // B, made a viewer, may leave; so may the owner and an admin remove B.
    cases["PUT /v1/projects/{id}/budget"] = {
        fresh_project("/budget", R"({"monthly_budget_micros":5000000,"action":"stop_all"})"),
        Expect::kNotFound};
    cases["DELETE /v1/projects/{id}/members/{user}"] = {
        [this, fresh_project] {
          Request request = fresh_project("/members/" + b_.id, "{}")();
          EXPECT_EQ(api().Send("PUT", request.target, a_.token, R"({"role":"viewer"})").status,
                    200);
          request.probe.clear();  // B leaving changes A's project, as B may
          return request;
        },
        {}};
    // Volumes: a fresh one of A's each time; B sees none of them.
    const auto fresh_volume = [this] {
      const ApiReply created =
          api().Post("/v1/volumes", a_.token,
                     R"({"name":"v)" + std::to_string(++counter_) + R"(","size_gb":1})");
      EXPECT_EQ(created.status, 201) << created.Describe();
      const std::string id = Str(created.json, "id");
      return Request{"/v1/volumes/" + id, R"({"size_gb":2})", "/v1/volumes/" + id};
    };
    cases["GET /v1/volumes"] = {fixed("/v1/volumes"), {}};
    cases["POST /v1/volumes"] = {
        [this] {
          return Request{"/v1/volumes",
                         R"({"name":"w)" + std::to_string(++counter_) + R"(","size_gb":1})", ""};
        },
        {}};
    cases["GET /v1/volumes/{id}"] = {fresh_volume, Expect::kNotFound};
    cases["PATCH /v1/volumes/{id}"] = {fresh_volume, Expect::kNotFound};
    cases["DELETE /v1/volumes/{id}"] = {fresh_volume, Expect::kNotFound};
    // Snapshots: a fresh one of A's volume each time; B sees none of them.
    const auto fresh_snapshot = [this] {
      const ApiReply created = api().Post("/v1/volumes/snapped/snapshots", a_.token,
                                          R"({"name":"s)" + std::to_string(++counter_) + R"("})");
      EXPECT_EQ(created.status, 201) << created.Describe();
      const std::string id = Str(created.json, "id");
      return Request{"/v1/snapshots/" + id, "{}", "/v1/snapshots/" + id};
    };
    cases["POST /v1/volumes/{id}/snapshots"] = {
        [this] {
          return Request{"/v1/volumes/snapped/snapshots",
                         R"({"name":"t)" + std::to_string(++counter_) + R"("})", "/v1/snapshots"};
        },
        Expect::kNotFound};
    cases["GET /v1/snapshots"] = {fixed("/v1/snapshots"), {}};
    cases["GET /v1/snapshots/{id}"] = {fresh_snapshot, Expect::kNotFound};
    cases["DELETE /v1/snapshots/{id}"] = {fresh_snapshot, Expect::kNotFound};
    // No pod of n1 moves anything: the node's ask is a 404, anyone else's refused.
    cases["GET /v1/agent/moves/{id}/archive"] = {fixed("/v1/agent/moves/mv_unknown/archive"), {}};
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
    // Serverless: A's endpoint for the /v1 routes never has jobs (so no worker changes what B's
    // probe reads); its jobs are on a second one.
    const auto endpoint_of_a = [this] {
      const ApiReply created = api().Post("/v1/endpoints", a_.token,
                                          R"({"name":"e","image":"busybox","gpu_type":"4090"})");
      EXPECT_EQ(created.status, 201) << created.Describe();
      return Str(created.json, "id");
    };
    const std::string endpoint = endpoint_of_a();
    const std::string jobs = "/v2/" + endpoint_of_a();
    const auto job_of_a = [this, jobs](bool cancelled) {
      const ApiReply run = api().Post(jobs + "/run", a_.token, R"({"input":1})");
      EXPECT_EQ(run.status, 200) << run.Describe();
      const std::string id = Str(run.json, "id");
      if (cancelled) {
        EXPECT_EQ(api().Post(jobs + "/cancel/" + id, a_.token).status, 200);
      }
      return id;
    };
    const std::string job = job_of_a(false);
    cases["GET /v1/endpoints"] = {fixed("/v1/endpoints"), {}};
    cases["POST /v1/endpoints"] = {
        fixed("/v1/endpoints", R"({"name":"e","image":"busybox","gpu_type":"4090"})"), {}};
    cases["GET /v1/endpoints/{id}"] = {
        [endpoint] {
          return Request{"/v1/endpoints/" + endpoint, "", "/v1/endpoints/" + endpoint};
        },
        Expect::kNotFound};
    cases["PATCH /v1/endpoints/{id}"] = {[endpoint] {
                                           return Request{"/v1/endpoints/" + endpoint,
                                                          R"({"max_workers":3})",
                                                          "/v1/endpoints/" + endpoint};
                                         },
                                         Expect::kNotFound};
    cases["DELETE /v1/endpoints/{id}"] = {
        [endpoint_of_a] {
          return Request{"/v1/endpoints/" + endpoint_of_a(), "", ""};
        },
        Expect::kNotFound};
    cases["POST /v2/{endpoint}/run"] = {fixed(jobs + "/run", R"({"input":1})"), Expect::kNotFound};
    cases["POST /v2/{endpoint}/runsync"] = {fixed(jobs + "/runsync?wait=0", R"({"input":1})"),
                                            Expect::kNotFound};
    cases["GET /v2/{endpoint}/status/{job}"] = {fixed(jobs + "/status/" + job, ""),
                                                Expect::kNotFound};
    cases["GET /v2/{endpoint}/stream/{job}"] = {fixed(jobs + "/stream/" + job, ""),
                                                Expect::kNotFound};
    cases["POST /v2/{endpoint}/cancel/{job}"] = {
        [jobs, job_of_a] {
          return Request{jobs + "/cancel/" + job_of_a(false), "{}", ""};
        },
        Expect::kNotFound};
    cases["POST /v2/{endpoint}/retry/{job}"] = {
        [jobs, job_of_a] {
          return Request{jobs + "/retry/" + job_of_a(true), "{}", ""};
        },
        Expect::kNotFound};
    cases["GET /v2/{endpoint}/health"] = {fixed(jobs + "/health", ""), Expect::kNotFound};
    cases["POST /v2/{endpoint}/purge-queue"] = {fixed(jobs + "/purge-queue"), Expect::kNotFound};
    cases["GET /v2/{endpoint}/job-take/{worker}"] = {fixed(jobs + "/job-take/pod_x", ""), {}};
    cases["POST /v2/{endpoint}/job-done/{worker}/{job}"] = {
        fixed(jobs + "/job-done/pod_x/" + job, R"({"output":1})"), {}};
    cases["POST /v2/{endpoint}/job-stream/{worker}/{job}"] = {
        fixed(jobs + "/job-stream/pod_x/" + job, R"({"output":1})"), {}};
    return cases;
  }

  Account a_, b_, node_;
  std::string join_, a_pod_, a_template_, a_read_only_, b_project_;
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
      const Expect expect =
          Expected(route.access, caller, found->second, route.method, route.pattern);
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
      if ((caller == Caller::kUserB || caller == Caller::kProjectB) && !request.probe.empty()) {
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

TEST_F(ApiAuthTest, AReadOnlyTokenReadsItsOwnersThingsAndChangesNothingNotEvenTokens) {
  const ApiReply pods = api().Get("/v1/pods", a_read_only_);
  ASSERT_EQ(pods.status, 200) << pods.Describe();
  EXPECT_EQ(Array(pods.json, "pods").size(), 1u);  // A's pod
  const ApiReply create =
      api().PostJson("/v1/pods", a_read_only_, json::object{{"image", "busybox"}, {"queue", true}});
  EXPECT_TRUE(IsApiError(create, 403, "PERMISSION_DENIED"));
  EXPECT_NE(create.text.find("this API token is read-only: it cannot call POST /v1/pods; use a "
                             "full token (suanli tokens create NAME makes one)"),
            std::string::npos)
      << create.Describe();
  const ApiReply after = api().Get("/v1/pods", a_.token);
  EXPECT_EQ(Array(after.json, "pods").size(), 1u);
  // The pod's link and Jupyter token open its ports as its owner (POST, DELETE, running code in a
  // notebook): a read-only token sees neither, in the pod's view or the list; the full token does.
  for (const std::string& path : {"/v1/pods/" + a_pod_, std::string("/v1/pods")}) {
    const ApiReply as_reader = api().Get(path, a_read_only_);
    ASSERT_EQ(as_reader.status, 200) << as_reader.Describe();
    EXPECT_EQ(as_reader.text.find("link_token"), std::string::npos) << as_reader.text;
    EXPECT_EQ(as_reader.text.find("jupyter_token"), std::string::npos) << as_reader.text;
    const ApiReply as_owner = api().Get(path, a_.token);
    EXPECT_NE(as_owner.text.find("link_token"), std::string::npos) << as_owner.text;
    EXPECT_NE(as_owner.text.find("jupyter_token"), std::string::npos) << as_owner.text;
  }
  EXPECT_TRUE(IsApiError(api().Post("/v1/pods/" + a_pod_ + "/proxy/8888/api", a_read_only_, "{}"),
                         403, "PERMISSION_DENIED"));
  EXPECT_TRUE(
      IsApiError(api().PostJson("/v1/tokens", a_read_only_, json::object{{"name", "escape"}}), 403,
                 "PERMISSION_DENIED"));
  // The list says which is which; A's full token is not read-only.
  int read_only = 0;
  const ApiReply tokens = api().Get("/v1/tokens", a_.token);
  for (const json::value& token : Array(tokens.json, "tokens")) {
    if (token.as_object().at("read_only").as_bool()) {
      ++read_only;
      EXPECT_EQ(Str(token, "name"), "dashboard");
    }
  }
  EXPECT_EQ(read_only, 1);
  EXPECT_TRUE(IsApiError(
      api().PostJson("/v1/tokens", a_.token, json::object{{"name", "x"}, {"read_only", "yes"}}),
      400, "INVALID_ARGUMENT"));
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
  using enum RouteAccess;
  const std::map<std::string, RouteAccess> expected = {
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
      {"PUT /v1/users/{id}/quota", kAdmin},
      {"PATCH /v1/users/me", kUser},
      {"PUT /v1/users/me/budget", kUser},
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
      {"GET /v1/events", kUser},
      {"GET /v1/audit", kAdmin},
      {"GET /v1/webhooks", kUser},
      {"POST /v1/webhooks", kUser},
      {"DELETE /v1/webhooks/{id}", kUser},
      {"GET /v1/projects", kUser},
      {"POST /v1/projects", kUser},
      {"GET /v1/projects/{id}", kUser},
      {"DELETE /v1/projects/{id}", kUser},
      {"PUT /v1/projects/{id}/members/{user}", kUser},
      {"DELETE /v1/projects/{id}/members/{user}", kUser},
      {"PUT /v1/projects/{id}/budget", kUser},
      {"GET /v1/volumes", kUser},
      {"POST /v1/volumes", kUser},
      {"GET /v1/volumes/{id}", kUser},
      {"PATCH /v1/volumes/{id}", kUser},
      {"DELETE /v1/volumes/{id}", kUser},
      {"POST /v1/volumes/{id}/snapshots", kUser},
      {"GET /v1/snapshots", kUser},
      {"GET /v1/snapshots/{id}", kUser},
      {"DELETE /v1/snapshots/{id}", kUser},
      {"GET /v1/agent/moves/{id}/archive", kNode},
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
      {"GET /v1/endpoints", kUser},
      {"POST /v1/endpoints", kUser},
      {"GET /v1/endpoints/{id}", kUser},
      {"PATCH /v1/endpoints/{id}", kUser},
      {"DELETE /v1/endpoints/{id}", kUser},
      {"POST /v2/{endpoint}/run", kUser},
      {"POST /v2/{endpoint}/runsync", kUser},
      {"GET /v2/{endpoint}/status/{job}", kUser},
      {"GET /v2/{endpoint}/stream/{job}", kUser},
      {"POST /v2/{endpoint}/cancel/{job}", kUser},
      {"POST /v2/{endpoint}/retry/{job}", kUser},
      {"GET /v2/{endpoint}/health", kUser},
      {"POST /v2/{endpoint}/purge-queue", kUser},
      {"GET /v2/{endpoint}/job-take/{worker}", kWorker},
      {"POST /v2/{endpoint}/job-done/{worker}/{job}", kWorker},
      {"POST /v2/{endpoint}/job-stream/{worker}/{job}", kWorker},
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

// A project's roles across its pods' routes: the owner and members create and run them (billed
// to the owner), a viewer only sees them, anyone else does not know they exist.
TEST_F(ApiServerTest, ProjectRolesDecideWhoSeesAndRunsAProjectsPods) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  const Account node = RegisterNode("n1", "RTX 4090", 4);
  const Account owner = CreateUser("owner", kPlentyOfCredits);
  const Account member = CreateUser("member", 0);  // no credit of their own: the owner pays
  const Account viewer = CreateUser("viewer", kPlentyOfCredits);
  const Account stranger = CreateUser("stranger", kPlentyOfCredits);
  const ApiReply created = api().Post("/v1/projects", owner.token, R"({"name":"vision-team"})");
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string project = Str(created.json, "id");
  EXPECT_TRUE(IsApiError(api().Post("/v1/projects", stranger.token, R"({"name":"vision-team"})"),
                         409, "ALREADY_EXISTS"));
  const auto set_role = [&](const std::string& token, std::string_view user,
                            std::string_view role) {
    return api().Send("PUT", "/v1/projects/vision-team/members/" + std::string(user), token,
                      R"({"role":")" + std::string(role) + R"("})");
  };
  ASSERT_EQ(set_role(owner.token, "member", "member").status, 200);
  ASSERT_EQ(set_role(owner.token, viewer.id, "viewer").status, 200);
  EXPECT_TRUE(IsApiError(set_role(owner.token, "member", "admin"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(set_role(owner.token, "owner", "viewer"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(set_role(owner.token, "nobody", "viewer"), 404, "NOT_FOUND"));
  EXPECT_TRUE(IsApiError(set_role(member.token, stranger.id, "member"), 403, "PERMISSION_DENIED"));
  EXPECT_TRUE(IsApiError(set_role(stranger.token, stranger.id, "member"), 404, "NOT_FOUND"));
  // Its own limits are its owner's to set; a bad one is named.
  const auto set_budget = [&](const std::string& token, std::string_view body) {
    return api().Send("PUT", "/v1/projects/vision-team/budget", token, body);
  };
  EXPECT_TRUE(IsApiError(set_budget(member.token, R"({"monthly_budget_micros":1})"), 403,
                         "PERMISSION_DENIED"));
  EXPECT_TRUE(
      IsApiError(set_budget(owner.token, R"({"action":"panic"})"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(set_budget(owner.token, "{}"), 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(set_budget(owner.token, R"({"spend_cap_per_hour_micros":-5})"), 400,
                         "INVALID_ARGUMENT"));
  const ApiReply budgeted = set_budget(
      owner.token, R"({"spend_cap_per_hour_micros":100000000,"monthly_budget_micros":5000000000})");
  ASSERT_EQ(budgeted.status, 200) << budgeted.Describe();
  EXPECT_EQ(Int(budgeted.json, "spend_cap_per_hour_micros"), 100'000'000);
  EXPECT_EQ(Int(budgeted.json, "monthly_budget_micros"), 5'000'000'000);
  EXPECT_EQ(Str(budgeted.json, "budget_action"), "notify");

  const json::object pod_body{
      {"template", "pytorch"}, {"gpu_type", "4090"}, {"volume_gb", 0}, {"project", "vision-team"}};
  const std::string pod = CreatePod(member.token, pod_body);
  const ApiReply shown = api().Get("/v1/pods/" + pod, member.token);
  ASSERT_EQ(shown.status, 200) << shown.Describe();
  EXPECT_EQ(Str(shown.json, "project_id"), project);
  EXPECT_EQ(Str(shown.json, "owner_id"), owner.id) << "a project's pod bills its owner";
  EXPECT_EQ(Str(shown.json, "created_by"), member.id);
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/pods", viewer.token, json::value(pod_body)), 403,
                         "PERMISSION_DENIED"));
  // A person's own volume would be every member's in a project's pod: refused.
  ASSERT_EQ(api().Post("/v1/volumes", owner.token, R"({"name":"mine","size_gb":1})").status, 201);
  json::object with_volume = pod_body;
  with_volume["volumes"] = json::array{json::object{{"name", "mine"}, {"mount_path", "/data"}}};
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/pods", owner.token, json::value(with_volume)), 409,
                         "FAILED_PRECONDITION"));
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/pods", stranger.token, json::value(pod_body)), 404,
                         "NOT_FOUND"));

  // Who sees it: the project's people and an admin, in the list and one by one.
  const auto lists = [&](const std::string& token) {
    const ApiReply list = api().Get("/v1/pods", token);
    EXPECT_EQ(list.status, 200) << list.Describe();
    return list.text.find(pod) != std::string::npos;
  };
  for (const std::string& token : {owner.token, member.token, viewer.token, admin_}) {
    EXPECT_EQ(api().Get("/v1/pods/" + pod, token).status, 200);
    EXPECT_TRUE(lists(token));
  }
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + pod, stranger.token), 404, "NOT_FOUND"));
  EXPECT_FALSE(lists(stranger.token));
  // Who runs it: not the viewer.
  EXPECT_TRUE(IsApiError(api().Post("/v1/pods/" + pod + "/stop", viewer.token, "{}"), 403,
                         "PERMISSION_DENIED"));
  EXPECT_TRUE(
      IsApiError(api().Send("DELETE", "/v1/pods/" + pod, viewer.token), 403, "PERMISSION_DENIED"));
  EXPECT_TRUE(
      IsApiError(api().Post("/v1/pods/" + pod + "/stop", stranger.token, "{}"), 404, "NOT_FOUND"));
  // Its ports run code (a notebook): a member's, not a viewer's; its secrets are its owner's.
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + pod + "/proxy/8888/", viewer.token), 403,
                         "PERMISSION_DENIED"));
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + pod + "/proxy/8888/", member.token), 409,
                         "FAILED_PRECONDITION"))
      << "a member reaches it once it runs";
  const ApiReply as_viewer = api().Get("/v1/pods/" + pod, viewer.token);
  EXPECT_FALSE(as_viewer.object().contains("jupyter_token") ||
               as_viewer.object().contains("link_token"))
      << as_viewer.text;
  EXPECT_EQ(api().Post("/v1/pods/" + pod + "/stop", member.token, "{}").status, 200);
  // Why it stopped is a member's and a viewer's question too: its events, asked for by the pod.
  for (const std::string& token : {member.token, viewer.token, stranger.token}) {
    const ApiReply events = api().Get("/v1/events?pod=" + pod, token);
    ASSERT_EQ(events.status, 200) << events.Describe();
    EXPECT_EQ(events.text.find("pod.state") != std::string::npos, token != stranger.token)
        << events.text;
  }

  // The owner's own pods stay the owner's: a member does not see them.
  const std::string own = CreatePod(owner.token);
  const std::string own_too = CreatePod(owner.token);
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + own, member.token), 404, "NOT_FOUND"));

  // SSH: a project's pod takes its owner's and members' keys, not a viewer's; each of the owner's
  // own pods on the node takes the owner's (two on one node both do).
  const std::map<std::string, std::string> keys = {
      {owner.token, std::string(kSshKey)},
      {member.token,
       "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAP00WqSIQMqf+dwLI0iaIhMubJTACZpCbvYUU5DauCM m@host"},
      {viewer.token,
       "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGaGBQcZDCg6s1Li6Z3xd4NRae2olatAPETtunEVbOtX v@host"}};
  for (const auto& [token, key] : keys) {
    ASSERT_EQ(api()
                  .PostJson("/v1/ssh-keys", token, json::object{{"name", "k"}, {"public_key", key}})
                  .status,
              201);
  }
  const std::string team_pod = CreatePod(member.token, pod_body);
  const ApiReply desired = api().Get("/v1/agent/pods", node.token);
  ASSERT_EQ(desired.status, 200) << desired.Describe();
  std::map<std::string, std::string> keys_of;
  for (const json::value& entry : Array(desired.json, "pods")) {
    keys_of[Str(entry, "id")] = json::serialize(entry.at("ssh_keys"));
  }
  ASSERT_TRUE(keys_of.contains(team_pod) && keys_of.contains(own) && keys_of.contains(own_too))
      << desired.text;
  EXPECT_NE(keys_of[team_pod].find(" m@host"), std::string::npos) << keys_of[team_pod];
  EXPECT_NE(keys_of[team_pod].find(" a@host"), std::string::npos) << keys_of[team_pod];
  EXPECT_EQ(keys_of[team_pod].find(" v@host"), std::string::npos) << keys_of[team_pod];
  EXPECT_EQ(keys_of[own], "[\"" + std::string(kSshKey) + "\"]");
  EXPECT_EQ(keys_of[own_too], keys_of[own]);
  ASSERT_EQ(api().Send("DELETE", "/v1/pods/" + team_pod, member.token).status, 200);

  // A project with a live pod is not deleted; a member removed sees it no more.
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/projects/" + project, owner.token), 409,
                         "FAILED_PRECONDITION"));
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/projects/" + project, member.token), 403,
                         "PERMISSION_DENIED"));
  ASSERT_EQ(api().Send("DELETE", "/v1/projects/vision-team/members/member", owner.token).status,
            200);
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + pod, member.token), 404, "NOT_FOUND"));
  const ApiReply projects = api().Get("/v1/projects", member.token);
  EXPECT_EQ(Array(projects.json, "projects").size(), 0u) << projects.text;
  ASSERT_EQ(api().Send("DELETE", "/v1/pods/" + pod, owner.token).status, 200);
  ASSERT_EQ(api().Send("DELETE", "/v1/projects/" + project, owner.token).status, 200);
  EXPECT_EQ(api().Get("/v1/pods/" + pod, owner.token).status, 200) << "the owner's again";
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + pod, viewer.token), 404, "NOT_FOUND"));
}

// A project's volumes: its members create and mount them in its pods (and only there), its
// viewers see them, its owner pays; no one else sees them, and the project is not deleted under
// them.
TEST_F(ApiServerTest, AProjectsVolumesAreItsMembersAndMountOnlyInItsPods) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  RegisterNode("n1", "RTX 4090", 4);
  const Account owner = CreateUser("owner", kPlentyOfCredits);
  const Account member = CreateUser("member", 0);  // the owner pays
  const Account viewer = CreateUser("viewer", kPlentyOfCredits);
  const Account stranger = CreateUser("stranger", kPlentyOfCredits);
  const ApiReply created = api().Post("/v1/projects", owner.token, R"({"name":"lab"})");
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string project = Str(created.json, "id");
  for (const auto& [who, role] : {std::pair{"member", "member"}, std::pair{"viewer", "viewer"}}) {
    ASSERT_EQ(api()
                  .Send("PUT", "/v1/projects/lab/members/" + std::string(who), owner.token,
                        R"({"role":")" + std::string(role) + R"("})")
                  .status,
              200);
  }
  const ApiReply made =
      api().Post("/v1/volumes", member.token, R"({"name":"data","size_gb":2,"project":"lab"})");
  ASSERT_EQ(made.status, 201) << made.Describe();
  const std::string volume = Str(made.json, "id");
  EXPECT_EQ(Str(made.json, "project_id"), project);
  EXPECT_EQ(Str(made.json, "owner_id"), owner.id) << "the project's owner pays";
  EXPECT_TRUE(IsApiError(
      api().Post("/v1/volumes", member.token, R"({"name":"data","size_gb":1,"project":"lab"})"),
      409, "ALREADY_EXISTS"));
  EXPECT_TRUE(IsApiError(
      api().Post("/v1/volumes", viewer.token, R"({"name":"v","size_gb":1,"project":"lab"})"), 403,
      "PERMISSION_DENIED"));
  EXPECT_TRUE(IsApiError(
      api().Post("/v1/volumes", stranger.token, R"({"name":"v","size_gb":1,"project":"lab"})"), 404,
      "NOT_FOUND"));
  // The same name is free among a person's own volumes.
  ASSERT_EQ(api().Post("/v1/volumes", owner.token, R"({"name":"data","size_gb":1})").status, 201);

  // Seen by the project's people, by id and by name; not by a stranger.
  for (const std::string& token : {owner.token, member.token, viewer.token}) {
    EXPECT_EQ(api().Get("/v1/volumes/" + volume, token).status, 200);
    EXPECT_NE(api().Get("/v1/volumes", token).text.find(volume), std::string::npos);
  }
  EXPECT_EQ(Str(api().Get("/v1/volumes/data", member.token).json, "id"), volume);
  EXPECT_NE(Str(api().Get("/v1/volumes/data", owner.token).json, "id"), volume)
      << "a name is the caller's own volume first";
  EXPECT_TRUE(IsApiError(api().Get("/v1/volumes/" + volume, stranger.token), 404, "NOT_FOUND"));
  EXPECT_EQ(api().Get("/v1/volumes", stranger.token).text.find(volume), std::string::npos);
  EXPECT_TRUE(
      IsApiError(api().Send("PATCH", "/v1/volumes/" + volume, viewer.token, R"({"size_gb":3})"),
                 403, "PERMISSION_DENIED"));
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/volumes/" + volume, viewer.token), 403,
                         "PERMISSION_DENIED"));

  // Mounted in the project's pods, by its name there; not in a person's pod. (Queued for a GPU
  // no node has, so that its terminate is done at once, with no agent here.)
  json::object pod_body{
      {"template", "pytorch"},
      {"gpu_type", "3090"},
      {"queue", true},
      {"volume_gb", 0},
      {"project", "lab"},
      {"volumes", json::array{json::object{{"name", "data"}, {"mount_path", "/data"}}}}};
  const std::string pod = CreatePod(member.token, pod_body);
  const ApiReply shown = api().Get("/v1/pods/" + pod, viewer.token);
  ASSERT_EQ(shown.status, 200) << shown.Describe();
  EXPECT_NE(shown.text.find(volume), std::string::npos) << shown.text;
  pod_body.erase("project");
  const ApiReply personal = api().PostJson("/v1/pods", member.token, json::value(pod_body));
  EXPECT_TRUE(IsApiError(personal, 409, "FAILED_PRECONDITION")) << personal.text;
  EXPECT_NE(personal.text.find("another project's volume"), std::string::npos) << personal.text;

  // Not deleted under its data; deleted once its pods and volumes are.
  ASSERT_EQ(api().Send("DELETE", "/v1/pods/" + pod, member.token).status, 200);
  const ApiReply kept = api().Send("DELETE", "/v1/projects/lab", owner.token);
  EXPECT_TRUE(IsApiError(kept, 409, "FAILED_PRECONDITION"));
  EXPECT_NE(kept.text.find("volume data"), std::string::npos) << kept.text;
  ASSERT_EQ(api().Send("DELETE", "/v1/volumes/" + volume, member.token).status, 200);
  EXPECT_EQ(api().Send("DELETE", "/v1/projects/lab", owner.token).status, 200);
}

// A project token (a CI job's, a teammate's laptop's) reaches its project's pods as its user's role
// there, and nothing else of the account: not the user's own pods, volumes, tokens or billing.
TEST_F(ApiServerTest, AProjectTokenReachesOnlyItsProjectsPodsAsItsUsersRole) {
  ASSERT_NO_FATAL_FAILURE(StartServer());
  RegisterNode("n1", "RTX 4090", 4);
  const Account owner = CreateUser("owner", kPlentyOfCredits);
  const Account member = CreateUser("member", kPlentyOfCredits);
  ASSERT_EQ(api().Post("/v1/projects", owner.token, R"({"name":"ci-team"})").status, 201);
  ASSERT_EQ(api().Post("/v1/projects", owner.token, R"({"name":"other-team"})").status, 201);
  ASSERT_EQ(
      api()
          .Send("PUT", "/v1/projects/ci-team/members/member", owner.token, R"({"role":"member"})")
          .status,
      200);
  const auto make_token = [&](const std::string& token, std::string_view body) {
    return api().Post("/v1/tokens", token, body);
  };
  const ApiReply made = make_token(member.token, R"({"name":"ci","project":"ci-team"})");
  ASSERT_EQ(made.status, 201) << made.Describe();
  EXPECT_NE(Str(made.json.at("token"), "project_id"), "");
  const std::string scoped = Str(made.json, "secret");
  EXPECT_TRUE(IsApiError(make_token(member.token, R"({"name":"x","project":"other-team"})"), 404,
                         "NOT_FOUND"))
      << "a project the user is not in";
  EXPECT_TRUE(IsApiError(make_token(scoped, R"({"name":"x"})"), 403, "PERMISSION_DENIED"))
      << "a project token makes no tokens";

  const std::string personal = CreatePod(member.token);
  // Created with a project token, a pod is the project's without saying so.
  const std::string team_pod = CreatePod(scoped);
  const ApiReply team = api().Get("/v1/pods/" + team_pod, member.token);
  ASSERT_EQ(team.status, 200) << team.Describe();
  EXPECT_EQ(Str(team.json, "owner_id"), owner.id) << "billed to the project's owner";
  const ApiReply listed = api().Get("/v1/pods", scoped);
  ASSERT_EQ(listed.status, 200) << listed.Describe();
  EXPECT_NE(listed.text.find(team_pod), std::string::npos);
  EXPECT_EQ(listed.text.find(personal), std::string::npos) << "the user's own pods are not its";
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + personal, scoped), 404, "NOT_FOUND"));
  EXPECT_TRUE(
      IsApiError(api().Post("/v1/pods/" + personal + "/stop", scoped, "{}"), 404, "NOT_FOUND"));
  EXPECT_TRUE(IsApiError(api().PostJson("/v1/pods", scoped,
                                        json::object{{"template", "pytorch"},
                                                     {"gpu_type", "4090"},
                                                     {"volume_gb", 0},
                                                     {"project", "other-team"}}),
                         404, "NOT_FOUND"));
  EXPECT_EQ(api().Post("/v1/pods/" + team_pod + "/stop", scoped, "{}").status, 200);
  // It reads its project, the catalog and its user; the account's other things are not its.
  const ApiReply projects = api().Get("/v1/projects", scoped);
  ASSERT_EQ(projects.status, 200) << projects.Describe();
  EXPECT_NE(projects.text.find("ci-team"), std::string::npos);
  EXPECT_EQ(projects.text.find("other-team"), std::string::npos);
  EXPECT_EQ(api().Get("/v1/gpus", scoped).status, 200);
  EXPECT_EQ(api().Get("/v1/users/me", scoped).status, 200);
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/v1/tokens"},
           {"GET", "/v1/volumes"},
           {"GET", "/v1/billing/balance"},
           {"GET", "/v1/endpoints"},
           {"GET", "/v1/events"},
           {"POST", "/v1/projects"},
           {"PUT", "/v1/projects/ci-team/members/owner"}}) {
    const ApiReply refused = api().Send(method, path, scoped, "{}");
    EXPECT_TRUE(IsApiError(refused, 403, "PERMISSION_DENIED")) << method << " " << path;
    EXPECT_NE(refused.text.find("scoped to project"), std::string::npos) << refused.text;
  }
  // An admin's project token is no admin's; a member removed, the token reaches nothing.
  ASSERT_EQ(
      api()
          .Send("PUT",
                "/v1/projects/ci-team/members/" + Str(api().Get("/v1/users/me", admin_).json, "id"),
                owner.token, R"({"role":"viewer"})")
          .status,
      200);
  const ApiReply admin_made = make_token(admin_, R"({"name":"watch","project":"ci-team"})");
  ASSERT_EQ(admin_made.status, 201) << admin_made.Describe();
  const std::string admin_scoped = Str(admin_made.json, "secret");
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + personal, admin_scoped), 404, "NOT_FOUND"));
  EXPECT_EQ(api().Get("/v1/pods/" + team_pod, admin_scoped).status, 200);
  EXPECT_TRUE(IsApiError(api().Post("/v1/pods/" + team_pod + "/start", admin_scoped, "{}"), 403,
                         "PERMISSION_DENIED"))
      << "a viewer's";
  ASSERT_EQ(api().Send("DELETE", "/v1/projects/ci-team/members/member", owner.token).status, 200);
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + team_pod, scoped), 404, "NOT_FOUND"));
  EXPECT_TRUE(
      IsApiError(api().Post("/v1/pods/" + team_pod + "/start", scoped, "{}"), 404, "NOT_FOUND"));
}

}  // namespace
}  // namespace suanli::server
