// Serverless endpoints in the control plane: workers created as pods by the tick, jobs handed to
// them and answered, lost workers, timeouts, scale to zero, and jobs that survive a restart. On
// SQLite and on PostgreSQL; time moves only when a test says so.
#include "server/endpoints_testing.h"

namespace suanli::server {
namespace {

// What a restart must find again runs on both stores; the rest of the suite, rules that a store
// cannot change, on SQLite only.
class EndpointsTestRestart : public EndpointsTest {};
SUANLI_INSTANTIATE_ON_BOTH_STORES(EndpointsTestRestart);
SUANLI_INSTANTIATE_ON_SQLITE(EndpointsTest);

TEST_P(EndpointsTest, ABurstScalesFromZeroToMaxEveryJobCompletesThenItScalesToZero) {
  const std::string endpoint = CreateEndpoint();
  Tick();
  EXPECT_TRUE(Workers(endpoint).empty());  // nothing queued: nothing started
  std::vector<std::string> jobs;
  jobs.push_back(Submit(endpoint, R"({"n":0})"));
  ASSERT_EQ(Workers(endpoint).size(), 1u);  // the first at once, by the submission itself
  for (int i = 1; i < 12; ++i) {
    jobs.push_back(Submit(endpoint, "{\"n\":" + std::to_string(i) + "}"));
  }
  Tick();
  ASSERT_EQ(Workers(endpoint).size(), 1u);  // no more before the queue has waited 4 s
  clock_.Advance(seconds(4));
  Tick();
  const std::vector<std::string> workers = Workers(endpoint);
  ASSERT_EQ(workers.size(), 3u);  // the queue waited 4 s: up to max_workers
  for (const std::string& pod : workers) {
    const core::Pod worker = plane_->GetPod(alice_, pod)->value;
    EXPECT_EQ(worker.state, PodState::kStarting) << "scheduled like any pod";
    EXPECT_EQ(worker.env.at("RUNPOD_AI_API_KEY"), TokenOf(pod));
    EXPECT_NE(worker.env.at("RUNPOD_WEBHOOK_GET_JOB").find("/v2/" + endpoint + "/job-take/$ID?"),
              std::string::npos);
    ReportWorker(pod, PodState::kRunning);
  }
  int done = 0;
  while (done < 12) {
    for (const std::string& pod : workers) {
      std::optional<serverless::Job> job = Take(endpoint, pod);
      if (!job) continue;
      EXPECT_EQ(Info(endpoint).jobs[JobStatus::kInProgress], 1);
      clock_.Advance(std::chrono::milliseconds(100));
      ASSERT_TRUE(Finish(endpoint, pod, job->id, R"({"echo":)" + job->input + "}").ok());
      ++done;
    }
  }
  for (const std::string& id : jobs) {
    const serverless::Job job = Job(endpoint, id);
    EXPECT_EQ(job.status, JobStatus::kCompleted);
    EXPECT_NE(job.output.find(job.input), std::string::npos);
  }
  Tick();
  EXPECT_EQ(Workers(endpoint, "idle").size(), 3u);
  clock_.Advance(seconds(5));  // the idle timeout
  Tick();
  EXPECT_EQ(Workers(endpoint, "stopping").size(), 3u);
  for (const std::string& pod : workers) {
    EXPECT_EQ(plane_->GetPod(alice_, pod)->value.desired, core::DesiredState::kTerminated);
    ReportWorker(pod, PodState::kTerminated);
  }
  Tick();
  EXPECT_TRUE(Workers(endpoint).empty());
  // The worker seconds were billed to the endpoint's owner, like any pod's.
  int64_t charged = 0;
  const std::vector<core::LedgerEntry> ledger = plane_->Ledger(alice_, "").value();
  for (const core::LedgerEntry& entry : ledger) {
    if (entry.kind == core::LedgerKind::kGpu) charged -= entry.amount.micros();
  }
  EXPECT_GT(charged, 0);
}

TEST_P(EndpointsTest, AJobWhoseWorkerDiesIsRequeuedAndCompletesOnAnother) {
  const std::string endpoint = CreateEndpoint();
  const std::string job = Submit(endpoint);
  Tick();
  const std::string first = Workers(endpoint).at(0);
  ReportWorker(first, PodState::kRunning);
  ASSERT_TRUE(Take(endpoint, first).has_value());
  ReportWorker(first, PodState::kExited);  // its container was killed mid-job
  Tick();
  EXPECT_EQ(Job(endpoint, job).status, JobStatus::kInQueue);
  EXPECT_EQ(Job(endpoint, job).retries, 1);
  EXPECT_EQ(Info(endpoint).retried, 1);
  // The lost worker is asked to go; a new one is started for the queued job.
  std::vector<std::string> live = Workers(endpoint, "initializing");
  ASSERT_EQ(live.size(), 1u);
  ReportWorker(live[0], PodState::kRunning);
  std::optional<serverless::Job> again = Take(endpoint, live[0]);
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->id, job);
  ASSERT_TRUE(Finish(endpoint, live[0], job, "7").ok());
  EXPECT_EQ(Job(endpoint, job).status, JobStatus::kCompleted);
}

TEST_P(EndpointsTest, AJobFailsAfterMaxRetriesWithTheReason) {
  EndpointSpec spec;
  const std::string endpoint = CreateEndpoint();
  spec.max_retries = 0;
  ASSERT_TRUE(plane_->UpdateEndpoint(alice_, endpoint, spec).ok());
  const std::string job = Submit(endpoint);
  Tick();
  const std::string worker = Workers(endpoint).at(0);
  ReportWorker(worker, PodState::kRunning);
  ASSERT_TRUE(Take(endpoint, worker).has_value());
  ReportWorker(worker, PodState::kFailed);
  Tick();
  EXPECT_EQ(Job(endpoint, job).status, JobStatus::kFailed);
  EXPECT_NE(Job(endpoint, job).error.find("its pod is failed"), std::string::npos)
      << Job(endpoint, job).error;
}

TEST_P(EndpointsTest, CancelledAndTimedOutJobsRefuseTheWorkersLateResult) {
  const std::string endpoint = CreateEndpoint();
  const std::string queued = Submit(endpoint);
  ASSERT_TRUE(plane_->CancelJob(alice_, endpoint, queued).ok());
  EXPECT_EQ(Job(endpoint, queued).status, JobStatus::kCancelled);
  EXPECT_FALSE(plane_->CancelJob(alice_, endpoint, queued).ok());
  Tick();
  // Its submission started a worker at once (the endpoint had none); nothing more.
  EXPECT_EQ(Workers(endpoint).size(), 1u);

  const std::string slow = Submit(endpoint);
  Tick();
  const std::string worker = Workers(endpoint).at(0);
  ReportWorker(worker, PodState::kRunning);
  ASSERT_TRUE(Take(endpoint, worker).has_value());
  clock_.Advance(seconds(600));  // the endpoint's execution timeout
  Tick();
  EXPECT_EQ(Job(endpoint, slow).status, JobStatus::kTimedOut);
  EXPECT_EQ(plane_->GetPod(alice_, worker)->value.desired, core::DesiredState::kTerminated);
  // Its worker was stopped: the late result is refused.
  EXPECT_FALSE(plane_->FinishJob(endpoint, worker, TokenOf(worker), slow, "1", "").ok());
  // RunPod's /retry queues it again.
  ASSERT_TRUE(plane_->RetryJob(alice_, endpoint, slow).ok());
  EXPECT_EQ(Job(endpoint, slow).status, JobStatus::kInQueue);
}

TEST_P(EndpointsTestRestart, AJobAnsweredWithAnIdSurvivesARestartAndRunsAfterIt) {
  const std::string endpoint = CreateEndpoint();
  const std::string job = Submit(endpoint, R"({"prompt":"hi"})");
  Reopen();
  const Principal alice = alice_;
  EXPECT_EQ(Job(endpoint, job).status, JobStatus::kInQueue);
  EXPECT_EQ(Job(endpoint, job).input, R"({"prompt":"hi"})");
  Tick();
  const std::string worker = Workers(endpoint).at(0);
  ReportWorker(worker, PodState::kRunning);
  ASSERT_TRUE(Take(endpoint, worker).has_value());
  // A restart while it runs: the worker (a pod with its token) is known again and may answer.
  Reopen();
  EXPECT_EQ(Job(endpoint, job).status, JobStatus::kInProgress);
  ASSERT_TRUE(Finish(endpoint, worker, job, R"("done")").ok());
  EXPECT_EQ(Job(endpoint, job).output, R"("done")");
}

TEST_P(EndpointsTest, OthersCannotSeeOrUseAnEndpointAndWorkersNeedTheirToken) {
  const std::string endpoint = CreateEndpoint();
  auto bob = plane_->CreateUser(admin_, "bob", core::Role::kUser, core::Money::FromMicros(1));
  ASSERT_TRUE(bob.ok());
  const Principal bob_principal{bob->value.id, core::Role::kUser, "", ""};
  EXPECT_EQ(plane_->GetEndpoint(bob_principal, endpoint).status().code(),
            core::StatusCode::kNotFound);
  EXPECT_EQ(plane_->SubmitJob(bob_principal, endpoint, JobRequest{"1", "", {}, {}}).status().code(),
            core::StatusCode::kNotFound);
  EXPECT_TRUE(plane_->GetEndpoint(admin_, endpoint).ok());
  EXPECT_EQ(plane_->ListEndpoints(bob_principal)->value.size(), 0u);
  Submit(endpoint);
  Tick();
  const std::string worker = Workers(endpoint).at(0);
  EXPECT_EQ(plane_->TakeJob(endpoint, worker, "slw_wrong").status().code(),
            core::StatusCode::kUnauthenticated);
  EXPECT_EQ(plane_->TakeJob(endpoint, "pod_other", TokenOf(worker)).status().code(),
            core::StatusCode::kUnauthenticated);
}

TEST_P(EndpointsTestRestart, MinWorkersStartWithNoJobsAndDeleteStopsEverything) {
  const std::string endpoint = CreateEndpoint(/*min_workers=*/2, /*max_workers=*/3);
  Tick();
  EXPECT_EQ(Workers(endpoint).size(), 2u);
  const std::string job = Submit(endpoint);
  const std::vector<std::string> workers = Workers(endpoint);
  ASSERT_TRUE(plane_->DeleteEndpoint(alice_, endpoint).ok());
  for (const std::string& pod : workers) {
    EXPECT_EQ(plane_->GetPod(alice_, pod)->value.desired, core::DesiredState::kTerminated);
  }
  EXPECT_EQ(plane_->GetEndpoint(alice_, endpoint).status().code(), core::StatusCode::kNotFound);
  Reopen();
  EXPECT_EQ(plane_->GetEndpoint(alice_, endpoint).status().code(), core::StatusCode::kNotFound);
}

TEST_P(EndpointsTestRestart, AUsersEndpointsAreLimitedByAQuotaAnAdminSets) {
  EXPECT_EQ(plane_->GetUser(alice_, "me")->value.max_endpoints, 50);
  auto create = [&](const std::string& name) {
    EndpointSpec spec;
    spec.name = name;
    spec.image = "busybox";
    return plane_->CreateEndpoint(alice_, spec);
  };
  auto limited = plane_->SetQuota(admin_, "alice", QuotaChange{{}, {}, 2});
  ASSERT_TRUE(limited.ok()) << limited.status().ToString();
  EXPECT_EQ(limited->value.max_endpoints, 2);
  EXPECT_EQ(limited->value.max_pods, 100);  // the others as they were
  ASSERT_TRUE(create("one").ok());
  auto second = create("two");
  ASSERT_TRUE(second.ok());
  auto refused = create("three");
  EXPECT_EQ(refused.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_EQ(
      refused.status().message(),
      "you have 2 endpoints, your quota's limit (2); delete one (suanli endpoints rm), or ask "
      "an admin to raise it (suanli users set-quota alice --endpoints N)");
  EXPECT_EQ(core::HttpStatusFor(refused.status().code()), 429);
  EXPECT_EQ(plane_->SetQuota(admin_, "alice", QuotaChange{{}, {}, -1}).status().code(),
            core::StatusCode::kInvalidArgument);

  // A deleted endpoint no longer counts; the quota survives a restart; 0 is the default again.
  ASSERT_TRUE(plane_->DeleteEndpoint(alice_, second->value.endpoint.id).ok());
  auto third = create("three");
  ASSERT_TRUE(third.ok()) << third.status().ToString();
  Durable(third->sequence);
  Reopen();
  EXPECT_EQ(create("four").status().code(), core::StatusCode::kResourceExhausted);
  auto reset = plane_->SetQuota(admin_, "alice", QuotaChange{{}, {}, 0});
  ASSERT_TRUE(reset.ok());
  EXPECT_EQ(reset->value.max_endpoints, 50);
  EXPECT_TRUE(create("four").ok());
}

// Issue 16: `--volume` on endpoints. Every worker mounts the owner's volume (model weights, say):
// read-only, as many workers as the endpoint has; read-write only with one worker at most.
TEST_P(EndpointsTestRestart, EveryWorkerMountsTheEndpointsVolumeReadOnly) {
  auto weights = plane_->CreateVolume(alice_, {"weights", 20, ""});
  ASSERT_TRUE(weights.ok()) << weights.status().ToString();
  const std::string volume_id = weights->value.volume.id;
  EndpointSpec spec;
  spec.name = "llm";
  spec.image = "busybox";
  spec.min_workers = 2;
  spec.max_workers = 2;
  spec.volumes = std::vector<VolumeRequest>{{"weights", "/models", /*read_only=*/false}};
  auto refused = plane_->CreateEndpoint(alice_, spec);
  EXPECT_EQ(refused.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("read-write in each of up to 2 workers"),
            std::string::npos)
      << refused.status().message();
  spec.volumes = std::vector<VolumeRequest>{{"nothing-here", "/models", true}};
  EXPECT_EQ(plane_->CreateEndpoint(alice_, spec).status().code(), core::StatusCode::kNotFound);
  spec.volumes = std::vector<VolumeRequest>{{"weights", "/models", true}};
  auto created = plane_->CreateEndpoint(alice_, spec);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  Durable(created->sequence);
  const std::string endpoint = created->value.endpoint.id;
  EXPECT_EQ(created->value.endpoint.volumes,
            (std::vector<core::VolumeMount>{{volume_id, "/models", true}}));

  Tick();
  const std::vector<std::string> workers = Workers(endpoint);
  ASSERT_EQ(workers.size(), 2u);
  for (const std::string& worker : workers) {
    EXPECT_EQ(plane_->GetPod(alice_, worker)->value.volumes,
              (std::vector<core::VolumeMount>{{volume_id, "/models", true}}))
        << worker;
  }
  // The volume cannot go while the endpoint mounts it; the setting survives a restart; raising
  // the endpoint to more workers keeps the volume read-only.
  const auto in_use = plane_->DeleteVolume(alice_, "weights");
  EXPECT_EQ(in_use.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(in_use.status().message().find("endpoint llm"), std::string::npos)
      << in_use.status().message();
  Reopen();
  EXPECT_EQ(plane_->GetEndpoint(alice_, endpoint)->value.endpoint.volumes.size(), 1u);
  EndpointSpec one_writer;
  one_writer.max_workers = 1;
  one_writer.min_workers = 1;
  one_writer.volumes = std::vector<VolumeRequest>{{volume_id, "/models", false}};
  EXPECT_TRUE(plane_->UpdateEndpoint(alice_, endpoint, one_writer).ok());
  EndpointSpec more;
  more.max_workers = 3;
  EXPECT_EQ(plane_->UpdateEndpoint(alice_, endpoint, more).status().code(),
            core::StatusCode::kInvalidArgument);
}

TEST_P(EndpointsTest, BadSettingsAreRefusedByName) {
  EndpointSpec spec;
  spec.name = "x";
  spec.image = "busybox";
  spec.min_workers = 5;
  spec.max_workers = 3;
  auto refused = plane_->CreateEndpoint(alice_, spec);
  ASSERT_EQ(refused.status().code(), core::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find("min_workers"), std::string::npos);
  spec = EndpointSpec();
  spec.name = "x";
  EXPECT_NE(plane_->CreateEndpoint(alice_, spec).status().message().find("template"),
            std::string::npos);
  spec.template_id = "no-such-template";
  EXPECT_EQ(plane_->CreateEndpoint(alice_, spec).status().code(), core::StatusCode::kNotFound);
}

// Queued jobs are held in memory until a worker takes them: each owner's waiting input is
// bounded, purge-queue frees what the purged jobs held at once, and an owner who could not pay
// for a worker queues nothing.
TEST_P(EndpointsTest, AnOwnersWaitingInputIsBoundedAndPurgeFreesItAtOnce) {
  options_.max_waiting_job_bytes = 100;
  Reopen();
  const std::string endpoint = CreateEndpoint();
  const std::string sixty = "\"" + std::string(60, 'x') + "\"";  // 62 bytes
  const std::string first = Submit(endpoint, sixty);
  auto refused = plane_->SubmitJob(alice_, endpoint, JobRequest{sixty, "", {}, {}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), core::StatusCode::kResourceExhausted);
  EXPECT_NE(refused.status().message().find("(62 bytes wait now)"), std::string::npos)
      << refused.status().message();
  EXPECT_EQ(Info(endpoint).jobs.at(JobStatus::kInQueue), 1) << "the refused job is not kept";

  auto purged = plane_->PurgeQueue(alice_, endpoint);
  ASSERT_TRUE(purged.ok()) << purged.status().ToString();
  EXPECT_EQ(purged->value, 1);
  EXPECT_EQ(Job(endpoint, first).input, "")
      << "a purged job's input is freed, not kept for its TTL";
  Submit(endpoint, sixty);  // room again
  auto retried = plane_->RetryJob(alice_, endpoint, first);
  ASSERT_FALSE(retried.ok());
  EXPECT_NE(retried.status().message().find("submit it again"), std::string::npos)
      << retried.status().message();
}

TEST_P(EndpointsTest, AnOwnerWithNoBalanceQueuesNoJob) {
  auto bob = plane_->CreateUser(admin_, "bob", core::Role::kUser, core::Money());
  ASSERT_TRUE(bob.ok());
  Durable(bob->sequence);
  const Principal bob_caller{bob->value.id, core::Role::kUser, "", ""};
  EndpointSpec spec;
  spec.name = "echo";
  spec.image = "busybox";
  auto endpoint = plane_->CreateEndpoint(bob_caller, spec);
  ASSERT_TRUE(endpoint.ok()) << endpoint.status().ToString();
  const std::string id = endpoint->value.endpoint.id;
  auto job = plane_->SubmitJob(bob_caller, id, JobRequest{"{}", "", {}, {}});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(job.status().message().find("your balance is $0"), std::string::npos)
      << job.status().message();
  EXPECT_TRUE(plane_->GetEndpoint(bob_caller, id)->value.jobs.empty());
}

}  // namespace
}  // namespace suanli::server
