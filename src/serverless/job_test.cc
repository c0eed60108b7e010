#include "serverless/job.h"

#include <gtest/gtest.h>

namespace suanli::serverless {
namespace {

using std::chrono::seconds;

const core::TimePoint kStart(seconds(1'800'000'000));

Job QueuedJob() {
  Job job;
  job.id = "job_1";
  job.input = R"({"n":1})";
  job.created_at = kStart;
  job.execution_timeout = seconds(600);
  job.ttl = seconds(3'600);
  return job;
}

TEST(JobTest, NamesRoundTripAsRunPodWritesThem) {
  for (JobStatus status : {JobStatus::kInQueue, JobStatus::kInProgress, JobStatus::kCompleted,
                           JobStatus::kFailed, JobStatus::kCancelled, JobStatus::kTimedOut}) {
    EXPECT_EQ(ParseJobStatus(JobStatusName(status)), status);
  }
  EXPECT_EQ(JobStatusName(JobStatus::kInQueue), "IN_QUEUE");
  EXPECT_EQ(ParseJobStatus("done"), std::nullopt);
}

TEST(JobTest, CompletesWithItsOutputAndTimes) {
  Job job = QueuedJob();
  ASSERT_TRUE(Start(job, "w1", kStart + seconds(2)).ok());
  EXPECT_EQ(job.status, JobStatus::kInProgress);
  EXPECT_FALSE(Start(job, "w2", kStart + seconds(2)).ok());  // taken once
  EXPECT_EQ(ExecutionMillis(job, kStart + seconds(3)), 1'000);
  ASSERT_TRUE(Finish(job, "w1", R"({"y":2})", "", kStart + seconds(5)).ok());
  EXPECT_EQ(job.status, JobStatus::kCompleted);
  EXPECT_EQ(job.output, R"({"y":2})");
  EXPECT_EQ(DelayMillis(job, kStart + seconds(99)), 2'000);
  EXPECT_EQ(ExecutionMillis(job, kStart + seconds(99)), 3'000);
}

TEST(JobTest, AnErrorFromTheWorkerFailsTheJob) {
  Job job = QueuedJob();
  ASSERT_TRUE(Start(job, "w1", kStart).ok());
  ASSERT_TRUE(Finish(job, "w1", "", "boom", kStart + seconds(1)).ok());
  EXPECT_EQ(job.status, JobStatus::kFailed);
  EXPECT_EQ(job.error, "boom");
}

TEST(JobTest, AResultFromAnotherWorkerOrForACancelledJobIsRefused) {
  Job job = QueuedJob();
  ASSERT_TRUE(Start(job, "w1", kStart).ok());
  EXPECT_EQ(Finish(job, "w2", "1", "", kStart).code(), core::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(Cancel(job, kStart + seconds(1)).ok());
  EXPECT_EQ(job.status, JobStatus::kCancelled);
  EXPECT_FALSE(Finish(job, "w1", "1", "", kStart + seconds(2)).ok());
  EXPECT_FALSE(Cancel(job, kStart + seconds(2)).ok());  // already final
}

TEST(JobTest, WorkerDeathRequeuesUpToMaxRetriesThenFails) {
  Job job = QueuedJob();
  for (int attempt = 0; attempt < 2; ++attempt) {
    ASSERT_TRUE(Start(job, "w" + std::to_string(attempt), kStart).ok());
    EXPECT_TRUE(WorkerLost(job, 2, "its container exited", kStart));
    EXPECT_EQ(job.status, JobStatus::kInQueue);
  }
  ASSERT_TRUE(Start(job, "w9", kStart).ok());
  EXPECT_FALSE(WorkerLost(job, 2, "its container exited", kStart + seconds(1)));
  EXPECT_EQ(job.status, JobStatus::kFailed);
  EXPECT_NE(job.error.find("its container exited"), std::string::npos);
  EXPECT_EQ(job.retries, 2);
}

TEST(JobTest, ARunningJobTimesOutAfterTheExecutionTimeout) {
  Job job = QueuedJob();
  ASSERT_TRUE(Start(job, "w1", kStart + seconds(10)).ok());
  EXPECT_FALSE(CheckTimeouts(job, kStart + seconds(609)));
  EXPECT_TRUE(CheckTimeouts(job, kStart + seconds(610)));
  EXPECT_EQ(job.status, JobStatus::kTimedOut);
  EXPECT_FALSE(CheckTimeouts(job, kStart + seconds(611)));
}

TEST(JobTest, AQueuedJobTimesOutAtItsTtlAndIsRemovedAfterTheResultIsKeptAMinute) {
  Job job = QueuedJob();
  EXPECT_FALSE(CheckTimeouts(job, kStart + seconds(3'599)));
  EXPECT_TRUE(CheckTimeouts(job, kStart + seconds(3'600)));
  EXPECT_EQ(job.status, JobStatus::kTimedOut);
  EXPECT_FALSE(Expired(job, kStart + seconds(3'659)));
  EXPECT_TRUE(Expired(job, kStart + seconds(3'660)));
}

TEST(JobTest, RetryQueuesAFailedJobAgainWithItsOutputCleared) {
  Job job = QueuedJob();
  EXPECT_FALSE(Requeue(job, 5).ok());  // queued: nothing to retry
  ASSERT_TRUE(Start(job, "w1", kStart).ok());
  ASSERT_TRUE(Finish(job, "w1", "", "boom", kStart).ok());
  ASSERT_TRUE(Requeue(job, 5).ok());
  EXPECT_EQ(job.status, JobStatus::kInQueue);
  EXPECT_EQ(job.error, "");
  EXPECT_EQ(job.sequence, 5u);
  EXPECT_FALSE(job.finished_at.has_value());
}

TEST(JobTest, ExpiresAtIsTheFirstMomentItIsExpired) {
  Job job;
  job.created_at = core::TimePoint(std::chrono::seconds(1'000));
  job.ttl = std::chrono::seconds(100);
  ASSERT_TRUE(Start(job, "w", job.created_at).ok());
  ASSERT_TRUE(Finish(job, "w", "1", "", job.created_at + std::chrono::seconds(10)).ok());
  EXPECT_EQ(ExpiresAt(job), job.created_at + job.ttl);
  EXPECT_TRUE(Expired(job, ExpiresAt(job)));
  EXPECT_FALSE(Expired(job, ExpiresAt(job) - std::chrono::milliseconds(1)));
  job.finished_at = job.created_at + std::chrono::seconds(90);  // kept 60 s after it finished
  EXPECT_EQ(ExpiresAt(job), *job.finished_at + kMinResultRetention);
  EXPECT_TRUE(Expired(job, ExpiresAt(job)));
  EXPECT_FALSE(Expired(job, ExpiresAt(job) - std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace suanli::serverless
