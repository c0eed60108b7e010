// Serverless endpoints over HTTP: /v1/endpoints, RunPod's job API under /v2, and the workers'
// routes, as a client of RunPod's API and RunPod's worker library would call them.
#include <gtest/gtest.h>

#include <boost/json/serialize.hpp>
#include <thread>

#include "core/mutex.h"
#include "net/http_client.h"
#include "net/http_server.h"
#include "server/api.h"
#include "server/api_testing.h"
#include "server/webhooks.h"

namespace suanli::server {
namespace {

namespace json = boost::json;
using suanli::testing::ApiReply;
using suanli::testing::Array;
using suanli::testing::Int;
using suanli::testing::IsApiError;
using suanli::testing::Str;

class ApiEndpointsTest : public ApiServerTest {
 protected:
  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(StartServer(kMaxBody));
    alice_ = CreateUser("alice", kPlentyOfCredits);
    bob_ = CreateUser("bob", kPlentyOfCredits);
  }

  std::string CreateEndpoint(json::object body = {
                                 {"name", "echo"}, {"image", "busybox"}, {"gpu_type", "4090"}}) {
    const ApiReply reply = api().PostJson("/v1/endpoints", alice_.token, body);
    EXPECT_EQ(reply.status, 201) << reply.Describe();
    return Str(reply.json, "id");
  }

  // The endpoint's first worker (the server's tick starts it), and its token from its pod's env.
  std::pair<std::string, std::string> WaitForWorker(const std::string& endpoint) {
    for (int i = 0; i < 200; ++i) {
      const ApiReply reply = api().Get("/v1/endpoints/" + endpoint, alice_.token);
      const json::array& workers = Array(reply.json, "workers");
      if (!workers.empty()) {
        const std::string pod = Str(workers.front(), "id");
        const ApiReply pod_reply = api().Get("/v1/pods/" + pod, alice_.token);
        const json::value env =
            pod_reply.object().contains("env") ? pod_reply.object().at("env") : json::value();
        return {pod, Str(env, "RUNPOD_AI_API_KEY")};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ADD_FAILURE() << "no worker was started";
    return {};
  }

  // A request as RunPod's worker library sends it: the token bare in Authorization.
  ApiReply WorkerSend(std::string_view method, std::string_view target, std::string_view token,
                      std::string_view body = {}) {
    auto client = net::HttpClient::Create("http://127.0.0.1:" + std::to_string(server_->port()),
                                          net::HttpClientOptions{});
    EXPECT_TRUE(client.ok());
    net::Headers headers;
    headers.emplace_back("Authorization", std::string(token));
    if (!body.empty()) headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
    core::Result<net::HttpResponse> response = (*client)->Send(method, target, body, headers);
    ApiReply reply;
    if (!response.ok()) {
      reply.transport_error = response.status().ToString();
      return reply;
    }
    reply.status = response->status;
    reply.text = response->body;
    boost::system::error_code error;
    json::value parsed = json::parse(reply.text, error);
    if (!error) reply.json = std::move(parsed);
    return reply;
  }

  static constexpr size_t kMaxBody = 8192;
  Account alice_, bob_;
};

TEST_F(ApiEndpointsTest, EndpointsAreCreatedListedUpdatedAndDeletedByTheirOwner) {
  const ApiReply created = api().PostJson("/v1/endpoints", alice_.token,
                                          json::object{{"name", "echo"},
                                                       {"template", "demo-worker"},
                                                       {"gpu_type", "4090"},
                                                       {"gpu_count", 0.5},
                                                       {"max_workers", 5},
                                                       {"scaler", "request_count"},
                                                       {"scaler_value", 2},
                                                       {"idle_timeout_s", 30}});
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string id = Str(created.json, "id");
  EXPECT_TRUE(id.starts_with("ep_")) << id;
  EXPECT_EQ(Str(created.json, "gpu_type"), "RTX 4090");
  EXPECT_EQ(Int(created.json, "gpu_milli"), 500);
  EXPECT_EQ(Int(created.json, "min_workers"), 0);
  EXPECT_EQ(Int(created.json, "max_workers"), 5);
  EXPECT_EQ(Str(created.json, "scaler"), "request_count");
  EXPECT_EQ(Str(created.json, "url"), "/v2/" + id);
  EXPECT_EQ(Array(api().Get("/v1/endpoints", alice_.token).json, "endpoints").size(), 1u);
  EXPECT_EQ(Array(api().Get("/v1/endpoints", bob_.token).json, "endpoints").size(), 0u);
  EXPECT_EQ(Array(api().Get("/v1/endpoints", admin_).json, "endpoints").size(), 1u);
  EXPECT_TRUE(IsApiError(api().Get("/v1/endpoints/" + id, bob_.token), 404, "NOT_FOUND"));
  const ApiReply updated =
      api().Send("PATCH", "/v1/endpoints/" + id, alice_.token, R"({"min_workers": 1})");
  ASSERT_EQ(updated.status, 200) << updated.Describe();
  EXPECT_EQ(Int(updated.json, "min_workers"), 1);
  EXPECT_EQ(Int(updated.json, "max_workers"), 5);  // unchanged
  EXPECT_TRUE(
      IsApiError(api().Send("PATCH", "/v1/endpoints/" + id, alice_.token, R"({"min_workers": 6})"),
                 400, "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/endpoints/" + id, bob_.token), 404));
  EXPECT_EQ(api().Send("DELETE", "/v1/endpoints/" + id, alice_.token).status, 200);
  EXPECT_TRUE(IsApiError(api().Get("/v1/endpoints/" + id, alice_.token), 404));
}

// A project's endpoint: its members make it and run jobs on it, its viewers read it and its jobs,
// its workers are the project's pods, its owner pays; no one else sees it.
TEST_F(ApiEndpointsTest, AProjectsEndpointIsRunByItsMembersAndItsWorkersAreItsPods) {
  const Account viewer = CreateUser("viewer", kPlentyOfCredits);
  const ApiReply made = api().Post("/v1/projects", alice_.token, R"({"name":"ml"})");
  ASSERT_EQ(made.status, 201) << made.Describe();
  const std::string project = Str(made.json, "id");
  ASSERT_EQ(
      api().Send("PUT", "/v1/projects/ml/members/bob", alice_.token, R"({"role":"member"})").status,
      200);
  ASSERT_EQ(api()
                .Send("PUT", "/v1/projects/ml/members/viewer", alice_.token, R"({"role":"viewer"})")
                .status,
            200);
  const json::object body{
      {"name", "echo"}, {"image", "busybox"}, {"gpu_type", "4090"}, {"project", "ml"}};
  EXPECT_TRUE(
      IsApiError(api().PostJson("/v1/endpoints", viewer.token, body), 403, "PERMISSION_DENIED"));
  const ApiReply created = api().PostJson("/v1/endpoints", bob_.token, body);
  ASSERT_EQ(created.status, 201) << created.Describe();
  const std::string endpoint = Str(created.json, "id");
  EXPECT_EQ(Str(created.json, "project_id"), project);
  EXPECT_EQ(Str(created.json, "owner_id"), alice_.id) << "the project's owner pays";
  EXPECT_TRUE(IsApiError(
      api().Send("PATCH", "/v1/endpoints/" + endpoint, bob_.token, R"({"project":"elsewhere"})"),
      400, "INVALID_ARGUMENT"));

  const std::string v2 = "/v2/" + endpoint;
  const json::object input{{"input", {{"prompt", "hello"}}}};
  EXPECT_TRUE(
      IsApiError(api().PostJson(v2 + "/run", viewer.token, input), 403, "PERMISSION_DENIED"));
  const ApiReply run = api().PostJson(v2 + "/run", bob_.token, input);
  ASSERT_EQ(run.status, 200) << run.Describe();
  const std::string job = Str(run.json, "id");
  EXPECT_EQ(api().Get(v2 + "/status/" + job, viewer.token).status, 200);
  EXPECT_EQ(api().Get("/v1/endpoints/" + endpoint, viewer.token).status, 200);
  EXPECT_NE(api().Get("/v1/endpoints", viewer.token).text.find(endpoint), std::string::npos);
  const Account stranger = CreateUser("stranger", kPlentyOfCredits);
  EXPECT_TRUE(IsApiError(api().Get("/v1/endpoints/" + endpoint, stranger.token), 404));
  EXPECT_TRUE(IsApiError(api().Get(v2 + "/status/" + job, stranger.token), 404));
  EXPECT_TRUE(IsApiError(api().Send("DELETE", "/v1/endpoints/" + endpoint, viewer.token), 403,
                         "PERMISSION_DENIED"));

  // Its worker is the project's pod: its viewer sees it.
  const auto [worker, token] = WaitForWorker(endpoint);
  ASSERT_FALSE(worker.empty());
  const ApiReply pod = api().Get("/v1/pods/" + worker, viewer.token);
  ASSERT_EQ(pod.status, 200) << pod.Describe();
  EXPECT_EQ(Str(pod.json, "project_id"), project);
  EXPECT_EQ(Str(pod.json, "owner_id"), alice_.id);

  const ApiReply kept = api().Send("DELETE", "/v1/projects/ml", alice_.token);
  EXPECT_TRUE(IsApiError(kept, 409, "FAILED_PRECONDITION"));
  EXPECT_EQ(api().Send("DELETE", "/v1/endpoints/" + endpoint, bob_.token).status, 200);
}

TEST_F(ApiEndpointsTest, BadEndpointBodiesAreA400NamingTheField) {
  const auto refused = [&](std::string_view body, std::string_view field) {
    const ApiReply reply = api().Send("POST", "/v1/endpoints", alice_.token, body);
    EXPECT_TRUE(IsApiError(reply, 400, "INVALID_ARGUMENT")) << body;
    EXPECT_NE(reply.error_message().find(field), std::string::npos)
        << body << ": " << reply.error_message();
  };
  refused(R"({"name": "e", "image": "busybox", "max_workers": 0})", "max_workers");
  refused(R"({"name": "e", "image": "busybox", "scaler": "fast"})", "scaler");
  refused(R"({"name": "e", "image": "busybox", "colour": "red"})", "colour");
  refused(R"({"name": "e", "image": "busybox", "idle_timeout_s": "5"})", "idle_timeout_s");
  refused(R"({"name": "e"})", "template");
  refused(R"({"image": "busybox"})", "name");
  const ApiReply unknown_gpu =
      api().Send("POST", "/v1/endpoints", alice_.token,
                 R"({"name": "e", "image": "busybox", "gpu_type": "nonsense-gpu"})");
  EXPECT_TRUE(IsApiError(unknown_gpu, 404, "NOT_FOUND"));  // as for a pod
  EXPECT_NE(unknown_gpu.error_message().find("gpu_type"), std::string::npos);
  EXPECT_EQ(Array(api().Get("/v1/endpoints", alice_.token).json, "endpoints").size(), 0u);
}

TEST_F(ApiEndpointsTest, RunPodsJobApiAndWorkerProtocolEndToEnd) {
  const std::string endpoint = CreateEndpoint();
  const std::string v2 = "/v2/" + endpoint;
  const ApiReply run =
      api().PostJson(v2 + "/run", alice_.token, json::object{{"input", {{"prompt", "hello"}}}});
  ASSERT_EQ(run.status, 200) << run.Describe();
  const std::string job = Str(run.json, "id");
  EXPECT_EQ(Str(run.json, "status"), "IN_QUEUE");
  const ApiReply queued = api().Get(v2 + "/status/" + job, alice_.token);
  EXPECT_EQ(Str(queued.json, "status"), "IN_QUEUE");
  EXPECT_GE(Int(queued.json, "delayTime"), 0);
  EXPECT_TRUE(IsApiError(api().Get(v2 + "/status/" + job, bob_.token), 404));

  const auto [worker, token] = WaitForWorker(endpoint);
  ASSERT_FALSE(token.empty());
  EXPECT_TRUE(IsApiError(WorkerSend("GET", v2 + "/job-take/" + worker, "slw_wrong"), 401));
  // As runpod-python asks: $ID replaced by the worker, "&job_in_progress=0" appended.
  const ApiReply taken =
      WorkerSend("GET", v2 + "/job-take/" + worker + "?wait_s=1&job_in_progress=0", token);
  ASSERT_EQ(taken.status, 200) << taken.Describe();
  EXPECT_EQ(Str(taken.json, "id"), job);
  EXPECT_EQ(json::serialize(taken.object().at("input")), R"({"prompt":"hello"})");
  const ApiReply health = api().Get(v2 + "/health", alice_.token);
  ASSERT_EQ(health.status, 200) << health.Describe();
  EXPECT_EQ(Int(health.object().at("jobs"), "inProgress"), 1);
  EXPECT_EQ(Int(health.object().at("jobs"), "inQueue"), 0);
  // While it runs one (runpod-python says so), it gets no second.
  EXPECT_EQ(
      WorkerSend("GET", v2 + "/job-take/" + worker + "?wait_s=0&job_in_progress=1", token).status,
      204);
  const ApiReply done = WorkerSend("POST", v2 + "/job-done/" + worker + "/" + job, token,
                                   R"({"output": {"text": "hello back"}})");
  ASSERT_EQ(done.status, 200) << done.Describe();
  const ApiReply completed = api().Get(v2 + "/status/" + job, alice_.token);
  EXPECT_EQ(Str(completed.json, "status"), "COMPLETED");
  EXPECT_EQ(json::serialize(completed.object().at("output")), R"({"text":"hello back"})");
  EXPECT_GE(Int(completed.json, "executionTime"), 0);
  const ApiReply stream = api().Get(v2 + "/stream/" + job, alice_.token);
  EXPECT_EQ(Str(stream.json, "status"), "COMPLETED");
  EXPECT_EQ(Array(stream.json, "stream").size(), 1u);
  // A second result for it is refused.
  EXPECT_TRUE(IsApiError(
      WorkerSend("POST", v2 + "/job-done/" + worker + "/" + job, token, R"({"output": 1})"), 409));

  // runsync: the worker long-polls and answers while the client waits.
  std::thread worker_loop([&, worker = worker, token = token] {
    const ApiReply next = WorkerSend("GET", v2 + "/job-take/" + worker + "?wait_s=20", token);
    ASSERT_EQ(next.status, 200) << next.Describe();
    WorkerSend("POST", v2 + "/job-done/" + worker + "/" + Str(next.json, "id"), token,
               R"({"output": "inline"})");
  });
  const ApiReply sync =
      api().PostJson(v2 + "/runsync?wait=20000", alice_.token, json::object{{"input", 1}});
  worker_loop.join();
  ASSERT_EQ(sync.status, 200) << sync.Describe();
  EXPECT_EQ(Str(sync.json, "status"), "COMPLETED");
  EXPECT_EQ(Str(sync.json, "output"), "inline");

  // A worker's error fails the job; /retry queues it again; cancel and purge-queue.
  const std::string failing =
      Str(api().PostJson(v2 + "/run", alice_.token, json::object{{"input", 2}}).json, "id");
  ASSERT_EQ(WorkerSend("GET", v2 + "/job-take/" + worker, token).status, 200);
  ASSERT_EQ(WorkerSend("POST", v2 + "/job-done/" + worker + "/" + failing, token,
                       R"({"error": "out of memory"})")
                .status,
            200);
  const ApiReply failed = api().Get(v2 + "/status/" + failing, alice_.token);
  EXPECT_EQ(Str(failed.json, "status"), "FAILED");
  EXPECT_EQ(Str(failed.json, "error"), "out of memory");
  EXPECT_EQ(Str(api().Post(v2 + "/retry/" + failing, alice_.token).json, "status"), "IN_QUEUE");
  EXPECT_EQ(Str(api().Post(v2 + "/cancel/" + failing, alice_.token).json, "status"), "CANCELLED");
  for (int i = 0; i < 3; ++i) api().PostJson(v2 + "/run", alice_.token, json::object{{"input", i}});
  const ApiReply purged = api().Post(v2 + "/purge-queue", alice_.token);
  ASSERT_EQ(purged.status, 200) << purged.Describe();
  EXPECT_EQ(Int(purged.json, "removed"), 3);
  EXPECT_EQ(Int(api().Get(v2 + "/health", alice_.token).object().at("jobs"), "inQueue"), 0);

  // Prometheus: per endpoint, by id.
  const std::string metrics = api().Get("/metrics").text;
  EXPECT_NE(
      metrics.find("suanli_endpoint_jobs{endpoint=\"" + endpoint + "\",status=\"COMPLETED\"} 2"),
      std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("suanli_endpoint_workers{endpoint=\"" + endpoint + "\",state=\""),
            std::string::npos);
  EXPECT_NE(metrics.find("suanli_endpoint_queue_wait_seconds{endpoint=\"" + endpoint + "\"}"),
            std::string::npos);
}

TEST_F(ApiEndpointsTest, AFinishedJobsWebhookIsPostedSignedWithTheEndpointsSecret) {
  core::Mutex mutex;
  std::vector<net::HttpRequest> received;
  net::HttpServerOptions options;
  options.port = 0;
  auto receiver =
      net::HttpServer::Start(options, [&](net::HttpRequest&& request, net::Responder respond) {
        {
          core::MutexLock lock(mutex);
          received.push_back(std::move(request));
        }
        respond(net::HttpResponse{
            .status = 200, .content_type = "text/plain", .body = "", .headers = {}});
      });
  ASSERT_TRUE(receiver.ok());
  const std::string hook = "http://127.0.0.1:" + std::to_string((*receiver)->port()) + "/done";
  const std::string endpoint = CreateEndpoint();
  const std::string v2 = "/v2/" + endpoint;
  EXPECT_TRUE(
      IsApiError(api().PostJson(v2 + "/run", alice_.token,
                                json::object{{"input", 1}, {"webhook", "https://example.com/x"}}),
                 400));
  // An internal address (the test server allows only loopback) is refused when the job is made.
  const ApiReply internal = api().PostJson(
      v2 + "/run", alice_.token, json::object{{"input", 1}, {"webhook", "http://10.0.0.5/x"}});
  EXPECT_TRUE(IsApiError(internal, 400, "INVALID_ARGUMENT"));
  EXPECT_NE(internal.error_message().find("--webhook-allow"), std::string::npos) << internal.text;
  const ApiReply run = api().PostJson(v2 + "/run", alice_.token,
                                      json::object{{"input", {{"n", 7}}}, {"webhook", hook}});
  ASSERT_EQ(run.status, 200) << run.Describe();
  const std::string job = Str(run.json, "id");
  const auto [worker, token] = WaitForWorker(endpoint);
  ASSERT_EQ(WorkerSend("GET", v2 + "/job-take/" + worker, token).status, 200);
  ASSERT_EQ(
      WorkerSend("POST", v2 + "/job-done/" + worker + "/" + job, token, R"({"output": {"n": 8}})")
          .status,
      200);
  for (int i = 0; i < 200; ++i) {
    {
      core::MutexLock lock(mutex);
      if (!received.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  const std::string secret =
      Str(api().Get("/v1/endpoints/" + endpoint, alice_.token).json, "webhook_secret");
  ASSERT_EQ(secret.size(), 64u);
  core::MutexLock lock(mutex);
  ASSERT_EQ(received.size(), 1u);
  const net::HttpRequest& call = received.front();
  EXPECT_EQ(call.method, "POST");
  EXPECT_EQ(call.path, "/done");
  EXPECT_EQ(call.Header("x-suanli-signature"), WebhookSignature(secret, call.body));
  const json::value body = json::parse(call.body);
  EXPECT_EQ(Str(body, "id"), job);
  EXPECT_EQ(Str(body, "status"), "COMPLETED");
  EXPECT_EQ(json::serialize(body.at("output")), R"({"n":8})");
}

TEST_F(ApiEndpointsTest, JobBodiesAreCheckedAndTooLargeOnesAre413) {
  const std::string endpoint = CreateEndpoint();
  const std::string v2 = "/v2/" + endpoint;
  EXPECT_TRUE(IsApiError(api().Post(v2 + "/run", alice_.token, R"({"prompt": "x"})"), 400,
                         "INVALID_ARGUMENT"));
  EXPECT_TRUE(IsApiError(api().Post(v2 + "/run", alice_.token, "{}"), 400));
  EXPECT_TRUE(IsApiError(
      api().Post(v2 + "/run", alice_.token, R"({"input": 1, "policy": {"ttl": "long"}})"), 400));
  EXPECT_TRUE(IsApiError(api().Post("/v2/ep_nope/run", alice_.token, R"({"input": 1})"), 404));
  EXPECT_TRUE(IsApiError(api().Post(v2 + "/run", "", R"({"input": 1})"), 401));
  EXPECT_EQ(Int(api().Get(v2 + "/health", alice_.token).object().at("jobs"), "inQueue"), 0);
}

TEST_F(ApiEndpointsTest, StreamShowsThePartialOutputsPostedSinceTheLastRead) {
  const std::string endpoint = CreateEndpoint();
  const std::string v2 = "/v2/" + endpoint;
  const std::string job =
      Str(api().PostJson(v2 + "/run", alice_.token, json::object{{"input", 1}}).json, "id");
  const auto [worker, token] = WaitForWorker(endpoint);
  ASSERT_FALSE(token.empty());
  const ApiReply pod = api().Get("/v1/pods/" + worker, alice_.token);
  EXPECT_NE(Str(pod.object().at("env"), "RUNPOD_WEBHOOK_POST_STREAM")
                .find(v2 + "/job-stream/$RUNPOD_POD_ID/$ID"),
            std::string::npos);
  const std::string stream_url = v2 + "/job-stream/" + worker + "/" + job;
  EXPECT_TRUE(IsApiError(WorkerSend("POST", stream_url, token, R"({"output": "early"})"), 409))
      << "not its job yet";
  ASSERT_EQ(WorkerSend("GET", v2 + "/job-take/" + worker, token).status, 200);
  EXPECT_EQ(Array(api().Get(v2 + "/stream/" + job, alice_.token).json, "stream").size(), 0u);
  // As runpod-python posts them: "&isStream=true" appended to the URL.
  ASSERT_EQ(WorkerSend("POST", stream_url + "&isStream=true", token, R"({"output": "to"})").status,
            200);
  ASSERT_EQ(WorkerSend("POST", stream_url, token, R"({"output": {"k": 2}})").status, 200);
  const ApiReply first = api().Get(v2 + "/stream/" + job, alice_.token);
  EXPECT_EQ(Str(first.json, "status"), "IN_PROGRESS");
  EXPECT_EQ(json::serialize(first.object().at("stream")),
            R"([{"output":"to"},{"output":{"k":2}}])");
  EXPECT_EQ(Array(api().Get(v2 + "/stream/" + job, alice_.token).json, "stream").size(), 0u)
      << "read once";
  ASSERT_EQ(WorkerSend("POST", stream_url, token, R"({"output": "ken"})").status, 200);
  EXPECT_TRUE(IsApiError(WorkerSend("POST", stream_url, token, R"({"partial": 1})"), 400));
  EXPECT_TRUE(IsApiError(WorkerSend("POST", stream_url, "slw_wrong", R"({"output": 1})"), 401));
  EXPECT_TRUE(IsApiError(api().Get(v2 + "/stream/" + job, bob_.token), 404));
  ASSERT_EQ(WorkerSend("POST", v2 + "/job-done/" + worker + "/" + job + "&isStream=false", token,
                       R"({"output": "token"})")
                .status,
            200);
  const ApiReply last = api().Get(v2 + "/stream/" + job, alice_.token);
  EXPECT_EQ(Str(last.json, "status"), "COMPLETED");
  EXPECT_EQ(json::serialize(last.object().at("stream")), R"([{"output":"ken"}])")
      << "what was not read yet; the whole output is /status's";
  EXPECT_TRUE(IsApiError(WorkerSend("POST", stream_url, token, R"({"output": "late"})"), 409));
}

// A body of exactly `bytes`: {"input": "xxx..."}.
std::string BodyOf(size_t bytes) {
  const std::string frame = R"({"input": ""})";
  return R"({"input": ")" + std::string(bytes - frame.size(), 'x') + R"("})";
}

TEST_F(ApiEndpointsTest, RunTakes10MiBRunsync20MiBAndOtherRoutesOnlyTheServersMaxBody) {
  const std::string endpoint = CreateEndpoint();
  const std::string v2 = "/v2/" + endpoint;
  const ApiReply run = api().Post(v2 + "/run", alice_.token, BodyOf(kRunBodyLimit));
  EXPECT_EQ(run.status, 200) << run.Describe();
  const ApiReply over = api().Post(v2 + "/run", alice_.token, BodyOf(kRunBodyLimit + 1));
  EXPECT_TRUE(IsApiError(over, 413, "PAYLOAD_TOO_LARGE"));
  EXPECT_NE(over.error_message().find("10 MiB"), std::string::npos) << over.error_message();
  // runsync takes twice as much (?wait=0: the answer comes at once, the job stays queued).
  const ApiReply sync = api().Post(v2 + "/runsync?wait=0", alice_.token, BodyOf(kRunBodyLimit + 1));
  EXPECT_EQ(sync.status, 200) << sync.Describe();
  EXPECT_EQ(api().Post(v2 + "/runsync?wait=0", alice_.token, BodyOf(kRunSyncBodyLimit)).status,
            200);
  const ApiReply sync_over =
      api().Post(v2 + "/runsync?wait=0", alice_.token, BodyOf(kRunSyncBodyLimit + 1));
  EXPECT_TRUE(IsApiError(sync_over, 413, "PAYLOAD_TOO_LARGE"));
  EXPECT_NE(sync_over.error_message().find("20 MiB"), std::string::npos)
      << sync_over.error_message();
  // Every other route keeps the server's limit (here kMaxBody), the workers' results too.
  EXPECT_TRUE(IsApiError(api().Post("/v1/endpoints", alice_.token, BodyOf(kMaxBody + 1)), 413));
  EXPECT_TRUE(IsApiError(api().Post(v2 + "/purge-queue", alice_.token, BodyOf(kMaxBody + 1)), 413));
  EXPECT_TRUE(IsApiError(
      api().Post(v2 + "/job-done/pod_x/job_y", alice_.token, BodyOf(kMaxBody + 1)), 413));
  EXPECT_TRUE(IsApiError(api().Post(v2 + "/run/x", alice_.token, BodyOf(kMaxBody + 1)), 413));
  EXPECT_EQ(Int(api().Get(v2 + "/health", alice_.token).object().at("jobs"), "inQueue"), 3);
}

}  // namespace
}  // namespace suanli::server
