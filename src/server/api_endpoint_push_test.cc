// Http-mode endpoints over real HTTP: a job submitted to /v2 reaches the worker's node as a
// relayed POST to the worker's port (the test plays the node's agent, as api_relay_test.cc does),
// and the worker's answer becomes the job's output for /status and /runsync; a 5xx answer runs
// the job again.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <future>

#include "net/base64.h"
#include "net/http_client.h"
#include "server/api_testing.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using suanli::testing::ApiClient;
using suanli::testing::ApiReply;
using suanli::testing::Array;
using suanli::testing::Int;
using suanli::testing::IsApiError;
using suanli::testing::Str;

class ApiEndpointPushTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartServer());
    alice_ = CreateUser("alice", kPlentyOfCredits);
    node_ = RegisterNode("n1");
    const ApiReply created = api().PostJson("/v1/endpoints", alice_.token,
                                            json::object{{"name", "web"},
                                                         {"image", "busybox"},
                                                         {"gpu_type", "4090"},
                                                         {"max_workers", 1},
                                                         {"worker_mode", "http"},
                                                         {"http_port", 8080},
                                                         {"http_path", "/v1/completions"}});
    ASSERT_EQ(created.status, 201) << created.Describe();
    EXPECT_EQ(Str(created.json, "worker_mode"), "http");
    EXPECT_EQ(Int(created.json, "http_port"), 8080);
    EXPECT_EQ(Str(created.json, "http_path"), "/v1/completions");
    EXPECT_EQ(Int(created.json, "http_concurrency"), 1);
    endpoint_ = Str(created.json, "id");
  }

  std::string Url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

  // Submits a job; the first starts the worker, which the node then reports running and ready.
  std::string Run(std::string_view input) {
    const ApiReply run = api().Post("/v2/" + endpoint_ + "/run", alice_.token,
                                    R"({"input":)" + std::string(input) + "}");
    EXPECT_EQ(run.status, 200) << run.Describe();
    if (worker_.empty()) {
      const ApiReply endpoint = api().Get("/v1/endpoints/" + endpoint_, alice_.token);
      const json::array& workers = Array(endpoint.json, "workers");
      EXPECT_EQ(workers.size(), 1u);
      if (workers.empty()) return "";
      worker_ = Str(workers.front(), "id");
      const ApiReply reported = api().PostJson(
          "/v1/agent/pods/" + worker_ + "/status", node_.token,
          json::object{{"seq", 1}, {"state", "running"}, {"ready", true}, {"at", Now()}});
      EXPECT_EQ(reported.status, 200) << reported.Describe();
    }
    return Str(run.json, "id");
  }

  // The agent's long poll: the next request relayed to the node.
  json::object TakeRequest() {
    ApiClient agent(Url());
    const ApiReply reply = agent.Get("/v1/agent/requests?wait_s=30", node_.token);
    EXPECT_EQ(reply.status, 200) << reply.Describe();
    const json::array& requests = Array(reply.json, "requests");
    EXPECT_EQ(requests.size(), 1u) << reply.text;
    return requests.empty() || !requests[0].is_object() ? json::object() : requests[0].as_object();
  }

  ApiReply Answer(const json::object& request, int status, std::string_view type,
                  std::string_view body) {
    ApiClient agent(Url());
    // Not json::array{json::array{...}}: clang reads one braced element of the array's own type
    // as a copy (CWG 2137), and the headers would come out flat.
    json::array headers;
    headers.emplace_back(json::array{"Content-Type", type});
    return agent.PostJson("/v1/agent/requests/" + Str(request, "id"), node_.token,
                          json::object{{"status", status},
                                       {"headers", std::move(headers)},
                                       {"body_base64", net::Base64Encode(body)}});
  }

  json::value Status(const std::string& job) {
    return api().Get("/v2/" + endpoint_ + "/status/" + job, alice_.token).json;
  }

  Account alice_, node_;
  std::string endpoint_, worker_;
};

TEST_F(ApiEndpointPushTest, AJobIsPostedToTheWorkersPortAndItsAnswerIsTheOutput) {
  const std::string job = Run(R"({"prompt":"hi","max_tokens":2})");
  const json::object request = TakeRequest();
  EXPECT_EQ(Str(request, "kind"), "http");
  EXPECT_EQ(Str(request, "pod_id"), worker_);
  EXPECT_EQ(Int(request, "port"), 8080);
  EXPECT_EQ(Str(request, "method"), "POST");
  EXPECT_EQ(Str(request, "target"), "/v1/completions");
  EXPECT_EQ(Int(request, "timeout_ms"), 602'000) << "the execution timeout, and a margin";
  EXPECT_EQ(*net::Base64Decode(Str(request, "body_base64")), R"({"prompt":"hi","max_tokens":2})");
  bool job_header = false;
  const json::value whole(request);
  for (const json::value& pair : Array(whole, "headers")) {
    const json::array& header = pair.as_array();
    job_header |= header[0] == "x-suanli-job-id" && header[1].is_string() &&
                  std::string_view(header[1].as_string()) == job;
  }
  EXPECT_TRUE(job_header) << json::serialize(request);
  EXPECT_EQ(Str(Status(job), "status"), "IN_PROGRESS");
  const ApiReply answered = Answer(request, 200, "application/json", R"({"text":"hello"})");
  EXPECT_EQ(answered.status, 204) << answered.Describe();
  const json::value done = Status(job);
  EXPECT_EQ(Str(done, "status"), "COMPLETED");
  EXPECT_EQ(json::serialize(done.as_object().at("output")), R"({"text":"hello"})");
  EXPECT_EQ(Str(done, "workerId"), worker_);
}

TEST_F(ApiEndpointPushTest, RunsyncAnswersWithTheWorkersTextAfterA5xxRanItAgain) {
  Run(R"({"warm":true})");  // starts the worker
  EXPECT_EQ(Answer(TakeRequest(), 200, "application/json", "1").status, 204);
  auto sync = std::async(std::launch::async, [this] {
    return api().Post("/v2/" + endpoint_ + "/runsync?wait=30000", alice_.token,
                      R"({"input":{"n":2}})");
  });
  EXPECT_EQ(Answer(TakeRequest(), 503, "text/plain", "loading").status, 204);
  clock_.Advance(std::chrono::seconds(1));  // the worker's pause after a failure
  const json::object again = TakeRequest();
  EXPECT_EQ(*net::Base64Decode(Str(again, "body_base64")), R"({"n":2})");
  EXPECT_EQ(Answer(again, 200, "text/plain", "two").status, 204);
  const ApiReply reply = sync.get();
  ASSERT_EQ(reply.status, 200) << reply.Describe();
  EXPECT_EQ(Str(reply.json, "status"), "COMPLETED");
  EXPECT_EQ(Str(reply.json, "output"), "two");
  EXPECT_EQ(Int(reply.json, "retries"), 1);
}

TEST_F(ApiEndpointPushTest, BadHttpSettingsAreA400NamingTheField) {
  const auto refused = [&](std::string_view body, std::string_view field) {
    const ApiReply reply = api().Send("POST", "/v1/endpoints", alice_.token, body);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT")) << body;
    EXPECT_NE(reply.error_message().find(field), std::string::npos)
        << body << ": " << reply.error_message();
  };
  refused(R"({"name": "e", "image": "busybox", "worker_mode": "push"})", "worker_mode");
  refused(R"({"name": "e", "image": "busybox", "worker_mode": "http"})", "http_port");
  refused(R"({"name": "e", "image": "busybox", "worker_mode": "http", "http_port": 0})",
          "http_port");
  refused(R"({"name": "e", "image": "busybox", "worker_mode": "http", "http_port": 80,
              "http_path": "run"})",
          "http_path");
  refused(R"({"name": "e", "image": "busybox", "worker_mode": "http", "http_port": 80,
              "http_concurrency": 65})",
          "http_concurrency");
  const ApiReply pulled = api().Get("/v2/" + endpoint_ + "/job-take/pod_x", "slw_x");
  EXPECT_EQ(pulled.status, 401) << "not a worker of it";
}

}  // namespace
}  // namespace suanli::server
