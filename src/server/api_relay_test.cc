// A pod's logs and HTTP proxy, relayed through its node's agent over real HTTP: the test plays the
// agent, long-polling for relayed requests and posting the answers.
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
#include "net/proxy_headers.h"
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

TEST_F(ApiRelayTest, APodsCookiesStayOnItsOwnPaths) {
  // Every pod shares the console's origin: a pod must not set cookies for another pod's pages
  // (breaking its link or planting a session in its app), for the console, or over a pod link.
  auto get = UserSends("GET", "/v1/pods/" + running_ + "/proxy/8080/login", a_.token);
  const json::object request = TakeRequest(node_.token);
  const std::string others = "/v1/pods/pod_someone_else/proxy/8888/";
  auto cookie = [](const std::string& value) { return json::array{"Set-Cookie", value}; };
  const ApiReply posted = AnswerAs(
      node_.token, Str(request, "id"),
      json::object{
          {"status", 200},
          {"headers", json::array{cookie("session=planted; Path=" + others),
                                  cookie("suanli_link=stolen; Path=/"), cookie("own=1; HttpOnly"),
                                  cookie("__Host-x=1; Path=/; Secure"),
                                  cookie("wide=1; Domain=127.0.0.1; Path=/")}}});
  ASSERT_EQ(posted.status, 204) << posted.Describe();
  const core::Result<net::HttpResponse> got = get.get();
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  std::vector<std::string> cookies;
  for (const auto& [name, value] : got->headers) {
    if (net::LowerAscii(name) == "set-cookie") cookies.push_back(value);
  }
  const std::string own = "/v1/pods/" + running_ + "/proxy/";
  EXPECT_EQ(cookies,
            (std::vector<std::string>{"session=planted; Path=" + own,
                                      "own=1; HttpOnly; Path=" + own, "wide=1; Path=" + own}));
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

TEST_F(ApiRelayTest, AnExitedPodShowsNoPortsAndKeepsItsLastLogsReadable) {
  // Running: its host ports show.
  ApiReply ports = api().PostJson(
      "/v1/agent/pods/" + running_ + "/status", node_.token,
      json::object{{"seq", 2},
                   {"state", "running"},
                   {"at", Now()},
                   {"port_mappings",
                    json::array{json::object{
                        {"container_port", 8080}, {"protocol", "http"}, {"host_port", 20001}}}}});
  ASSERT_EQ(ports.status, 200) << ports.Describe();
  EXPECT_EQ(Array(api().Get("/v1/pods/" + running_, a_.token).json, "port_mappings").size(), 1u);

  // It crashes; its agent sends the end of its output with the report.
  const std::string logs =
      "2026-03-01T00:00:00.100000000Z starting\n"
      "2026-03-01T00:00:00.200000000Z Traceback (most recent call last)\n"
      "2026-03-01T00:00:00.300000000Z ZeroDivisionError: division by zero\n";
  const ApiReply exited = api().PostJson(
      "/v1/agent/pods/" + running_ + "/status", node_.token,
      json::object{{"seq", 3},
                   {"state", "exited"},
                   {"at", Now()},
                   {"exit_code", 1},
                   {"port_mappings",
                    json::array{json::object{
                        {"container_port", 8080}, {"protocol", "http"}, {"host_port", 20001}}}},
                   {"logs_base64", net::Base64Encode(logs)}});
  ASSERT_EQ(exited.status, 200) << exited.Describe();
  const ApiReply pod = api().Get("/v1/pods/" + running_, a_.token);
  EXPECT_EQ(Str(pod.json, "state"), "exited");
  EXPECT_TRUE(Array(pod.json, "port_mappings").empty()) << "a gone container's ports: " << pod.text;
  EXPECT_EQ(Str(pod.json, "node_address"), "");
  EXPECT_FALSE(pod.object().contains("last_logs")) << "logs are not part of the pod's view";

  // Served from what was saved, no agent asked: with tail, since and timestamps as for a live one.
  const ApiReply all = api().Get("/v1/pods/" + running_ + "/logs", a_.token);
  ASSERT_EQ(all.status, 200) << all.Describe();
  EXPECT_EQ(all.text,
            "starting\nTraceback (most recent call last)\nZeroDivisionError: division by zero\n");
  EXPECT_EQ(api().Get("/v1/pods/" + running_ + "/logs?tail=1&timestamps=true", a_.token).text,
            "2026-03-01T00:00:00.300000000Z ZeroDivisionError: division by zero\n");
  EXPECT_EQ(
      api().Get("/v1/pods/" + running_ + "/logs?since=2026-03-01T00:00:00.150Z", a_.token).text,
      "Traceback (most recent call last)\nZeroDivisionError: division by zero\n");
  EXPECT_TRUE(IsApiError(api().Get("/v1/pods/" + running_ + "/logs", b_.token), 404));
  // As text, as a live pod's are (the console reads the type), and said to be the saved ones.
  core::Result<net::HttpResponse> typed =
      UserSends("GET", "/v1/pods/" + running_ + "/logs?tail=1", a_.token).get();
  ASSERT_TRUE(typed.ok()) << typed.status().ToString();
  EXPECT_EQ(typed->content_type, "text/plain; charset=utf-8");
  EXPECT_EQ(HeaderOf(*typed, "x-suanli-logs-saved"), "true");
  int content_types = 0;
  for (const auto& [name, value] : typed->headers) content_types += name == "content-type";
  EXPECT_LE(content_types, 1) << "one Content-Type";

  // They survive a restart of the server.
  server_->Stop();
  server_.reset();
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.data_dir = dir_->path();
  core::Result<std::unique_ptr<Server>> restarted =
      Server::Start(options, *catalog::LoadBuiltInCatalog(), clock_, log_);
  ASSERT_TRUE(restarted.ok()) << restarted.status().ToString();
  server_ = std::move(*restarted);
  client_ = std::make_unique<ApiClient>(Url());
  EXPECT_EQ(api().Get("/v1/pods/" + running_ + "/logs?tail=1", a_.token).text,
            "ZeroDivisionError: division by zero\n");
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
