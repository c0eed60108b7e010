// Http-mode endpoints in the control plane: queued jobs handed out to ready workers up to their
// concurrency, answers taken as outputs, 5xx answers re-queued a bounded number of times, and
// cancel, timeout, worker death and restart with jobs pushed. The JobPusher and the relay that
// carry the requests are api_endpoint_push_test.cc's.
#include "server/endpoints_testing.h"

namespace suanli::server {
namespace {

class EndpointPushTest : public EndpointsTest {
 protected:
  std::string CreateHttpEndpoint(int concurrency = 2, int max_retries = 3) {
    EndpointSpec spec;
    spec.name = "web";
    spec.image = "busybox";
    spec.gpu_type = "4090";
    spec.max_workers = 1;
    spec.worker_mode = serverless::WorkerMode::kHttp;
    spec.http_port = 8080;
    spec.http_path = "/cgi-bin/job?x=1";
    spec.http_concurrency = concurrency;
    spec.max_retries = max_retries;
    auto endpoint = plane_->CreateEndpoint(alice_, spec);
    EXPECT_TRUE(endpoint.ok()) << endpoint.status().ToString();
    Durable(endpoint->sequence);
    return endpoint->value.endpoint.id;
  }

  // Submits a job, which starts the endpoint's one worker; reports it running and ready.
  std::string ReadyWorker(const std::string& endpoint, std::vector<std::string>* jobs) {
    jobs->push_back(Submit(endpoint, R"({"n":0})"));
    const std::vector<std::string> workers = Workers(endpoint);
    EXPECT_EQ(workers.size(), 1u);
    if (workers.empty()) return "";
    ReportWorker(workers.front(), PodState::kRunning, true);
    return workers.front();
  }

  std::vector<PushedJob> Take() { return plane_->TakePushJobs(); }

  void Answer(const PushedJob& job, int status, std::string_view type, std::string body) {
    Durable(plane_->AnswerPushedJob(job, status, type, std::move(body)));
  }
};

// What a restart must find again runs on both stores; the rest of the suite, rules that a store
// cannot change, on SQLite only.
class EndpointPushTestRestart : public EndpointPushTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(EndpointPushTestRestart);
SUANLI_INSTANTIATE_ON_SQLITE(EndpointPushTest);

TEST_P(EndpointPushTest, JobsGoToAReadyWorkerUpToItsConcurrencyAndItsAnswerIsTheOutput) {
  const std::string endpoint = CreateHttpEndpoint(/*concurrency=*/2);
  std::vector<std::string> jobs{Submit(endpoint, R"({"n":0})")};
  const std::vector<std::string> workers = Workers(endpoint);
  ASSERT_EQ(workers.size(), 1u);
  const core::Pod pod = plane_->GetPod(alice_, workers.front())->value;
  ASSERT_EQ(pod.ports.size(), 1u);  // published and probed
  EXPECT_EQ(pod.ports.front(), (core::PortSpec{8080, "http"}));
  jobs.push_back(Submit(endpoint, R"({"n":1})"));
  jobs.push_back(Submit(endpoint, R"({"n":2})"));
  EXPECT_TRUE(Take().empty()) << "a starting worker takes nothing";
  ReportWorker(workers.front(), PodState::kRunning, false);
  EXPECT_TRUE(Take().empty()) << "nor one whose port does not answer yet";
  ReportWorker(workers.front(), PodState::kRunning, true);
  const std::vector<PushedJob> pushed = Take();
  ASSERT_EQ(pushed.size(), 2u);
  EXPECT_EQ(pushed[0].job_id, jobs[0]);  // oldest first
  EXPECT_EQ(pushed[0].worker_id, workers.front());
  EXPECT_EQ(pushed[0].node_id, node_.node_id);
  EXPECT_EQ(pushed[0].port, 8080);
  EXPECT_EQ(pushed[0].path, "/cgi-bin/job?x=1");
  EXPECT_EQ(pushed[0].input, R"({"n":0})");
  EXPECT_TRUE(Take().empty()) << "the worker has no room for a third";
  EXPECT_EQ(Job(endpoint, jobs[0]).status, JobStatus::kInProgress);
  EXPECT_EQ(Job(endpoint, jobs[2]).status, JobStatus::kInQueue);
  EXPECT_EQ(Info(endpoint).workers.front().state, "running");

  Answer(pushed[0], 200, "application/json", R"({ "echo" : 0 })");
  EXPECT_EQ(Job(endpoint, jobs[0]).status, JobStatus::kCompleted);
  EXPECT_EQ(Job(endpoint, jobs[0]).output, R"({"echo":0})");
  const std::vector<PushedJob> third = Take();
  ASSERT_EQ(third.size(), 1u);
  EXPECT_EQ(third[0].job_id, jobs[2]);
  Answer(pushed[1], 200, "text/plain", "plain text\n");
  EXPECT_EQ(Job(endpoint, jobs[1]).output, R"("plain text\n")") << "not JSON: a string";
  Answer(third[0], 204, "text/plain", "");
  EXPECT_EQ(Job(endpoint, jobs[2]).status, JobStatus::kCompleted);
  EXPECT_EQ(Job(endpoint, jobs[2]).output, "");
  EXPECT_EQ(Info(endpoint).workers.front().state, "idle");
}

TEST_P(EndpointPushTest, A5xxAnswerRequeuesTheJobUntilItsRetriesAreSpentA4xxFailsIt) {
  const std::string endpoint = CreateHttpEndpoint(/*concurrency=*/1, /*max_retries=*/1);
  std::vector<std::string> jobs;
  ReadyWorker(endpoint, &jobs);
  std::vector<PushedJob> pushed = Take();
  ASSERT_EQ(pushed.size(), 1u);
  Answer(pushed[0], 503, "text/plain", "loading the model");
  EXPECT_EQ(Job(endpoint, jobs[0]).status, JobStatus::kInQueue);
  EXPECT_EQ(Job(endpoint, jobs[0]).retries, 1);
  EXPECT_TRUE(Take().empty()) << "a worker that failed waits 1 s before it gets another";
  clock_.Advance(seconds(1));
  pushed = Take();
  ASSERT_EQ(pushed.size(), 1u);
  Answer(pushed[0], 502, "application/json", R"({"error":{"code":"UNAVAILABLE"}})");
  const serverless::Job failed = Job(endpoint, jobs[0]);
  EXPECT_EQ(failed.status, JobStatus::kFailed);
  EXPECT_NE(failed.error.find("HTTP 502"), std::string::npos) << failed.error;
  EXPECT_EQ(Info(endpoint).retried, 1);

  jobs.push_back(Submit(endpoint, R"({"bad":true})"));
  EXPECT_TRUE(Take().empty()) << "twice in a row: 2 s";
  clock_.Advance(seconds(2));
  pushed = Take();
  ASSERT_EQ(pushed.size(), 1u);
  Answer(pushed[0], 422, "text/plain", "no such model");
  const serverless::Job refused = Job(endpoint, jobs[1]);
  EXPECT_EQ(refused.status, JobStatus::kFailed);
  EXPECT_EQ(refused.retries, 0) << "the worker's own answer: not retried";
  EXPECT_NE(refused.error.find("HTTP 422: no such model"), std::string::npos) << refused.error;
}

TEST_P(EndpointPushTest, CancelledAndTimedOutJobsFreeTheirRoomAndTheLateAnswerIsNotTaken) {
  const std::string endpoint = CreateHttpEndpoint(/*concurrency=*/2);
  std::vector<std::string> jobs;
  const std::string worker = ReadyWorker(endpoint, &jobs);
  auto short_job = plane_->SubmitJob(alice_, endpoint, JobRequest{R"({"n":1})", "", 5, {}});
  ASSERT_TRUE(short_job.ok()) << short_job.status().ToString();
  jobs.push_back(short_job->value.id);
  const std::vector<PushedJob> pushed = Take();
  ASSERT_EQ(pushed.size(), 2u);
  EXPECT_EQ(pushed[1].execution_timeout, seconds(5));
  ASSERT_TRUE(plane_->CancelJob(alice_, endpoint, jobs[0]).ok());
  clock_.Advance(seconds(5));  // the second job's execution timeout
  Tick();
  EXPECT_EQ(Job(endpoint, jobs[1]).status, JobStatus::kTimedOut);
  Answer(pushed[0], 200, "application/json", "1");
  Answer(pushed[1], 200, "application/json", "2");
  EXPECT_EQ(Job(endpoint, jobs[0]).status, JobStatus::kCancelled);
  EXPECT_EQ(Job(endpoint, jobs[1]).status, JobStatus::kTimedOut);
  EXPECT_EQ(Job(endpoint, jobs[1]).output, "");
  // Unlike a pull worker, it keeps serving: other requests to it were not disturbed.
  EXPECT_EQ(plane_->GetPod(alice_, worker)->value.desired, core::DesiredState::kRunning);
  jobs.push_back(Submit(endpoint, R"({"n":2})"));
  jobs.push_back(Submit(endpoint, R"({"n":3})"));
  EXPECT_EQ(Take().size(), 2u) << "the cancelled and timed-out jobs' room is free";
}

TEST_P(EndpointPushTest, AWorkerThatDiesHasItsPushedJobsRequeued) {
  const std::string endpoint = CreateHttpEndpoint(/*concurrency=*/2);
  std::vector<std::string> jobs;
  const std::string worker = ReadyWorker(endpoint, &jobs);
  jobs.push_back(Submit(endpoint, R"({"n":1})"));
  const std::vector<PushedJob> pushed = Take();
  ASSERT_EQ(pushed.size(), 2u);
  ReportWorker(worker, PodState::kExited);
  Tick();
  for (const std::string& id : jobs) {
    EXPECT_EQ(Job(endpoint, id).status, JobStatus::kInQueue);
    EXPECT_EQ(Job(endpoint, id).retries, 1);
  }
  Answer(pushed[0], 200, "application/json", "1");  // the dead worker's late answer
  EXPECT_EQ(Job(endpoint, jobs[0]).status, JobStatus::kInQueue);
}

TEST_P(EndpointPushTestRestart, JobsPushedWhenTheServerStopsAreQueuedAgainAfterItsRestart) {
  const std::string endpoint = CreateHttpEndpoint(/*concurrency=*/1);
  std::vector<std::string> jobs;
  const std::string worker = ReadyWorker(endpoint, &jobs);
  ASSERT_EQ(Take().size(), 1u);
  Tick();  // durable
  Reopen();
  const serverless::Job job = Job(endpoint, jobs[0]);
  EXPECT_EQ(job.status, JobStatus::kInQueue);
  EXPECT_EQ(job.retries, 1);
  const std::vector<PushedJob> again = Take();
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].worker_id, worker);
  Answer(again[0], 200, "application/json", "{}");
  EXPECT_EQ(Job(endpoint, jobs[0]).status, JobStatus::kCompleted);
}

TEST_P(EndpointPushTest, ItsWorkersCannotPullJobsAndBadHttpSettingsAreRefused) {
  const std::string endpoint = CreateHttpEndpoint();
  std::vector<std::string> jobs;
  const std::string worker = ReadyWorker(endpoint, &jobs);
  auto taken = plane_->TakeJob(endpoint, worker, TokenOf(worker));
  EXPECT_EQ(taken.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(taken.status().message().find("worker_mode http"), std::string::npos);

  EndpointSpec spec;
  spec.name = "web";
  spec.image = "busybox";
  spec.worker_mode = serverless::WorkerMode::kHttp;
  auto no_port = plane_->CreateEndpoint(alice_, spec);
  EXPECT_EQ(no_port.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(no_port.status().message().find("http_port"), std::string::npos);
  auto big = plane_->SubmitJob(
      alice_, endpoint,
      JobRequest{"\"" + std::string(kMaxPushedInputBytes, 'x') + "\"", "", {}, {}});
  EXPECT_EQ(big.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(big.status().message().find("MiB"), std::string::npos);
}

}  // namespace
}  // namespace suanli::server
