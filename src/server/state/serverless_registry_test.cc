#include "server/state/serverless_registry.h"

#include <gtest/gtest.h>

#include <string>

namespace suanli::server {
namespace {

using serverless::Job;
using serverless::JobStatus;
using Queue = ServerlessRegistry::Queue;

const core::TimePoint kStart = core::TimePoint() + std::chrono::hours(1'000);

serverless::Endpoint NewEndpoint(std::string id, std::string owner = "alice") {
  serverless::Endpoint endpoint;
  endpoint.id = std::move(id);
  endpoint.owner_id = std::move(owner);
  endpoint.name = endpoint.id;
  return endpoint;
}

Job NewJob(ServerlessRegistry& registry, std::string id, std::string endpoint,
           std::string input = "{}", std::string owner = "alice") {
  Job job;
  job.id = std::move(id);
  job.endpoint_id = std::move(endpoint);
  job.owner_id = std::move(owner);
  job.input = std::move(input);
  job.created_at = kStart;
  job.sequence = registry.NextSequence();
  return job;
}

int64_t Count(const ServerlessRegistry& registry, const std::string& endpoint, JobStatus status) {
  return registry.CountsOf(endpoint)[static_cast<size_t>(status)];
}

// A job's life, each write followed by Reindex as Change::Dirty makes it: every index follows.
TEST(ServerlessRegistryTest, EachIndexFollowsAJobFromQueueToExpiry) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  Job& first = registry.AddJob(NewJob(registry, "job_1", "ep_a", "\"12345\""));
  registry.AddJob(NewJob(registry, "job_2", "ep_a", "\"1\""));
  EXPECT_EQ(registry.QueueOf("ep_a"), (Queue{{1, "job_1"}, {2, "job_2"}})) << "oldest first";
  EXPECT_EQ(registry.UnfinishedOf("ep_a").size(), 2u);
  EXPECT_EQ(Count(registry, "ep_a", JobStatus::kInQueue), 2);
  EXPECT_EQ(registry.WaitingInputBytes("alice"), 10u);

  ASSERT_TRUE(serverless::Start(first, "pod_w", kStart).ok());
  registry.Reindex("job_1");
  EXPECT_EQ(registry.QueueOf("ep_a"), (Queue{{2, "job_2"}})) << "a started job leaves the queue";
  EXPECT_EQ(registry.UnfinishedOf("ep_a").size(), 2u);
  EXPECT_EQ(Count(registry, "ep_a", JobStatus::kInProgress), 1);

  ASSERT_TRUE(serverless::Finish(first, "pod_w", "{}", "", kStart + std::chrono::seconds(3)).ok());
  registry.Reindex("job_1");
  EXPECT_EQ(registry.UnfinishedOf("ep_a"), ServerlessRegistry::Ids{"job_2"});
  ASSERT_EQ(registry.ExpiriesOf("ep_a").size(), 1u);
  EXPECT_EQ(registry.ExpiriesOf("ep_a").begin()->first, serverless::ExpiresAt(first));
  EXPECT_EQ(registry.WaitingInputBytes("alice"), 3u) << "a finished job's input waits no more";
  EXPECT_EQ(Count(registry, "ep_a", JobStatus::kCompleted), 1);
  EXPECT_EQ(registry.JobCount("ep_a"), 2);
  EXPECT_TRUE(registry.CheckIndexes().ok()) << registry.CheckIndexes().ToString();

  registry.RemoveJob("job_1");
  EXPECT_TRUE(registry.ExpiriesOf("ep_a").empty());
  EXPECT_EQ(registry.JobCount("ep_a"), 1);
  EXPECT_TRUE(registry.CheckIndexes().ok()) << registry.CheckIndexes().ToString();
}

TEST(ServerlessRegistryTest, ARetriedJobTakesItsNewPlaceAtTheBackOfTheQueue) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  Job& job = registry.AddJob(NewJob(registry, "job_1", "ep_a"));
  registry.AddJob(NewJob(registry, "job_2", "ep_a"));
  ASSERT_TRUE(serverless::Cancel(job, kStart).ok());
  registry.Reindex("job_1");
  ASSERT_TRUE(serverless::Requeue(job, registry.NextSequence()).ok());
  registry.Reindex("job_1");
  EXPECT_EQ(registry.QueueOf("ep_a"), (Queue{{2, "job_2"}, {3, "job_1"}}));
  EXPECT_TRUE(registry.CheckIndexes().ok()) << registry.CheckIndexes().ToString();
}

TEST(ServerlessRegistryTest, AWriteWithoutReindexIsFoundByTheCheck) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  Job& job = registry.AddJob(NewJob(registry, "job_1", "ep_a"));
  ASSERT_TRUE(serverless::Cancel(job, kStart).ok());
  const core::Status check = registry.CheckIndexes();
  EXPECT_FALSE(check.ok());
  EXPECT_NE(check.message().find("job_1"), std::string::npos) << check.message();
}

TEST(ServerlessRegistryTest, TheInputWaitingIsCountedPerOwnerAcrossEndpoints) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  registry.AddEndpoint(NewEndpoint("ep_b"));
  registry.AddEndpoint(NewEndpoint("ep_c", "bob"));
  registry.AddJob(NewJob(registry, "job_1", "ep_a", std::string(100, 'x')));
  registry.AddJob(NewJob(registry, "job_2", "ep_b", std::string(50, 'x')));
  registry.AddJob(NewJob(registry, "job_3", "ep_c", std::string(7, 'x'), "bob"));
  EXPECT_EQ(registry.WaitingInputBytes("alice"), 150u);
  EXPECT_EQ(registry.WaitingInputBytes("bob"), 7u);
  // Freeing a queued job's input (as purge-queue does) frees its count with the memory.
  Job& purged = *registry.FindJob("job_1");
  ASSERT_TRUE(serverless::Cancel(purged, kStart).ok());
  purged.input.clear();
  registry.Reindex("job_1");
  EXPECT_EQ(registry.WaitingInputBytes("alice"), 50u);
  EXPECT_EQ(registry.OwnedBy("alice"), 2u);
  EXPECT_TRUE(registry.CheckIndexes().ok()) << registry.CheckIndexes().ToString();
}

TEST(ServerlessRegistryTest, RemovingAnEndpointRemovesItsJobsAndTheirIndexes) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  registry.AddEndpoint(NewEndpoint("ep_b"));
  registry.AddJob(NewJob(registry, "job_1", "ep_a", "\"abc\""));
  registry.AddJob(NewJob(registry, "job_2", "ep_b"));
  EXPECT_EQ(registry.RemoveEndpoint("ep_a"), std::vector<std::string>{"job_1"});
  EXPECT_EQ(registry.FindEndpoint("ep_a"), nullptr);
  EXPECT_EQ(registry.FindJob("job_1"), nullptr);
  EXPECT_TRUE(registry.QueueOf("ep_a").empty());
  EXPECT_EQ(registry.WaitingInputBytes("alice"), 2u);
  EXPECT_NE(registry.FindJobOf("ep_b", "job_2"), nullptr);
  EXPECT_EQ(registry.FindJobOf("ep_a", "job_2"), nullptr) << "a job is found under its endpoint";
  EXPECT_TRUE(registry.CheckIndexes().ok()) << registry.CheckIndexes().ToString();
}

TEST(ServerlessRegistryTest, AWorkerIsFoundByItsOwnTokenOnlyAndNotWhileStopping) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  WorkerRuntime& worker = registry.RuntimeOf("ep_a").workers["pod_w"];
  worker.token_hash = "hash-of-token";
  EXPECT_TRUE(registry.FindWorker("ep_a", "pod_w", "hash-of-token").ok());
  EXPECT_EQ(registry.FindWorker("ep_a", "pod_w", "other").status().code(),
            core::StatusCode::kUnauthenticated);
  EXPECT_EQ(registry.FindWorker("ep_b", "pod_w", "hash-of-token").status().code(),
            core::StatusCode::kUnauthenticated);
  EXPECT_EQ(registry.FindWorker("ep_a", "pod_w", "").status().code(),
            core::StatusCode::kUnauthenticated);
  EXPECT_TRUE(registry.RuntimeOf("ep_a").HasLiveWorker());
  worker.stopping = true;
  EXPECT_EQ(registry.FindWorker("ep_a", "pod_w", "hash-of-token").status().code(),
            core::StatusCode::kNotFound);
  EXPECT_FALSE(registry.RuntimeOf("ep_a").HasLiveWorker());
}

TEST(ServerlessRegistryTest, StreamedOutputsWaitUntilReadAndAreBounded) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_a"));
  const Job& job = registry.AddJob(NewJob(registry, "job_1", "ep_a"));
  EXPECT_FALSE(registry.TakeStream(job).has_value()) << "never streamed";
  ASSERT_TRUE(registry.AppendStream(job, "1").ok());
  ASSERT_TRUE(registry.AppendStream(job, "2").ok());
  EXPECT_EQ(registry.TakeStream(job), (std::vector<std::string>{"1", "2"}));
  EXPECT_EQ(registry.TakeStream(job), std::vector<std::string>{}) << "streamed, all read";
  const core::Status too_big =
      registry.AppendStream(job, std::string(kMaxUnreadStreamBytes + 1, 'x'));
  EXPECT_EQ(too_big.code(), core::StatusCode::kResourceExhausted);
  registry.RemoveJob("job_1");
  EXPECT_TRUE(registry.RuntimeOf("ep_a").streams.empty()) << "a stream goes with its job";
}

TEST(ServerlessRegistryTest, LoadingPutsEachJobInItsQueueOrOnItsWorker) {
  ServerlessRegistry registry;
  registry.AddEndpoint(NewEndpoint("ep_pull"));
  serverless::Endpoint http = NewEndpoint("ep_http");
  http.worker_mode = serverless::WorkerMode::kHttp;
  registry.AddEndpoint(http);
  registry.RuntimeOf("ep_pull").workers["pod_known"].token_hash = "h";

  auto stored = [](std::string id, std::string endpoint, JobStatus status, std::string worker,
                   uint64_t sequence) {
    Job job;
    job.id = std::move(id);
    job.endpoint_id = std::move(endpoint);
    job.owner_id = "alice";
    job.status = status;
    job.worker_id = std::move(worker);
    job.sequence = sequence;
    job.created_at = kStart;
    if (status == JobStatus::kInProgress) job.started_at = kStart;
    return job;
  };
  registry.LoadJobs({stored("job_queued", "ep_pull", JobStatus::kInQueue, "", 7),
                     stored("job_known", "ep_pull", JobStatus::kInProgress, "pod_known", 3),
                     stored("job_lost", "ep_pull", JobStatus::kInProgress, "pod_gone", 4),
                     stored("job_posted", "ep_http", JobStatus::kInProgress, "pod_h", 5),
                     stored("job_orphan", "ep_gone", JobStatus::kInQueue, "", 40)},
                    kStart);
  EXPECT_EQ(registry.QueueOf("ep_pull"), (Queue{{7, "job_queued"}}));
  EXPECT_EQ(registry.RuntimeOf("ep_pull").workers.at("pod_known").job_id, "job_known");
  const WorkerRuntime& lost = registry.RuntimeOf("ep_pull").workers.at("pod_gone");
  EXPECT_TRUE(lost.stopping) << "an unknown worker is lost at once, so the tick re-queues its job";
  EXPECT_EQ(lost.job_id, "job_lost");
  EXPECT_EQ(registry.QueueOf("ep_http"), (Queue{{5, "job_posted"}}))
      << "a job posted to an http worker ended with the server: queued again, in its place";
  EXPECT_EQ(registry.FindJob("job_orphan"), nullptr) << "a job of no endpoint is dropped";
  EXPECT_EQ(registry.NextSequence(), 41u) << "sequences go on after every one stored";
  EXPECT_TRUE(registry.CheckIndexes().ok()) << registry.CheckIndexes().ToString();
}

}  // namespace
}  // namespace suanli::server
