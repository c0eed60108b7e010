#include "serverless/scaler.h"

#include <gtest/gtest.h>

namespace suanli::serverless {
namespace {

using std::chrono::seconds;

const core::TimePoint kStart(seconds(1'800'000'000));

Endpoint QueueDelayEndpoint() {
  Endpoint endpoint;
  endpoint.min_workers = 0;
  endpoint.max_workers = 3;
  endpoint.idle_timeout = seconds(5);
  endpoint.scaler = ScalerKind::kQueueDelay;
  endpoint.scaler_value = 4;
  return endpoint;
}

WorkerView Worker(std::string id, WorkerState state, core::TimePoint idle_since = kStart) {
  return WorkerView{std::move(id), state, idle_since};
}

ScalerInput Queue(core::TimePoint now, int in_queue, core::TimePoint oldest, int in_progress = 0) {
  ScalerInput input;
  input.now = now;
  input.in_queue = in_queue;
  if (in_queue > 0) input.oldest_queued_at = oldest;
  input.in_progress = in_progress;
  return input;
}

TEST(ScalerTest, AnIdleEndpointWithNothingQueuedStaysAtZero) {
  EXPECT_EQ(DecideScale(QueueDelayEndpoint(), Queue(kStart, 0, kStart)), ScalerDecision{});
}

TEST(ScalerTest, ABurstStartsOneWorkerAtOnceThenUpToMaxOnceJobsHaveWaitedTheDelay) {
  const Endpoint endpoint = QueueDelayEndpoint();
  // 50 jobs on an endpoint at zero: one worker at once (nobody else would ever take them).
  ScalerInput input = Queue(kStart, 50, kStart);
  EXPECT_EQ(DecideScale(endpoint, input).add, 1);
  // It is starting; before the delay passes nothing more.
  input.workers = {Worker("w1", WorkerState::kStarting)};
  input.now = kStart + seconds(3);
  EXPECT_EQ(DecideScale(endpoint, input).add, 0);
  // The oldest job has waited 4 s: up to max_workers, never above.
  input.now = kStart + seconds(4);
  EXPECT_EQ(DecideScale(endpoint, input).add, 2);
  input.workers = {Worker("w1", WorkerState::kBusy), Worker("w2", WorkerState::kStarting),
                   Worker("w3", WorkerState::kStarting)};
  input.now = kStart + seconds(30);
  EXPECT_EQ(DecideScale(endpoint, input), ScalerDecision{});
}

TEST(ScalerTest, ATrickleIsServedByTheIdleWorkerWithoutScaling) {
  const Endpoint endpoint = QueueDelayEndpoint();
  ScalerInput input = Queue(kStart + seconds(10), 1, kStart);
  // The job has waited long, but an idle worker is about to take it.
  input.workers = {Worker("w1", WorkerState::kIdle, kStart)};
  EXPECT_EQ(DecideScale(endpoint, input), ScalerDecision{});
}

TEST(ScalerTest, IdleWorkersStopAfterTheIdleTimeoutDownToZero) {
  const Endpoint endpoint = QueueDelayEndpoint();
  ScalerInput input = Queue(kStart + seconds(4), 0, kStart);
  input.workers = {Worker("w1", WorkerState::kIdle, kStart),
                   Worker("w2", WorkerState::kIdle, kStart + seconds(1))};
  EXPECT_EQ(DecideScale(endpoint, input), ScalerDecision{});  // not idle 5 s yet
  input.now = kStart + seconds(5);
  EXPECT_EQ(DecideScale(endpoint, input).stop, std::vector<std::string>{"w1"});
  input.now = kStart + seconds(6);
  EXPECT_EQ(DecideScale(endpoint, input).stop, (std::vector<std::string>{"w1", "w2"}));
}

TEST(ScalerTest, NeverStopsABusyOrStartingWorker) {
  const Endpoint endpoint = QueueDelayEndpoint();
  ScalerInput input = Queue(kStart + seconds(600), 0, kStart, 1);
  input.workers = {Worker("busy", WorkerState::kBusy, kStart),
                   Worker("starting", WorkerState::kStarting, kStart)};
  EXPECT_TRUE(DecideScale(endpoint, input).stop.empty());
}

TEST(ScalerTest, MinWorkersAreKeptAndStartedWithNoJobs) {
  Endpoint endpoint = QueueDelayEndpoint();
  endpoint.min_workers = 2;
  ScalerInput input = Queue(kStart, 0, kStart);
  EXPECT_EQ(DecideScale(endpoint, input).add, 2);
  input.now = kStart + seconds(600);
  input.workers = {Worker("w1", WorkerState::kIdle, kStart), Worker("w2", WorkerState::kIdle),
                   Worker("w3", WorkerState::kIdle)};
  EXPECT_EQ(DecideScale(endpoint, input).stop.size(), 1u);
}

TEST(ScalerTest, TheWarmBufferKeepsIdleWorkersBeyondTheBusyOnes) {
  Endpoint endpoint = QueueDelayEndpoint();
  endpoint.warm_buffer = 1;
  ScalerInput input = Queue(kStart + seconds(600), 0, kStart, 1);
  input.workers = {Worker("w1", WorkerState::kBusy)};
  EXPECT_EQ(DecideScale(endpoint, input).add, 1);
  input.workers.push_back(Worker("w2", WorkerState::kIdle, kStart));
  EXPECT_EQ(DecideScale(endpoint, input), ScalerDecision{});  // w2 is the buffer: kept
}

TEST(ScalerTest, MaxReachedAddsNothingAndALoweredMaxStopsIdleWorkersAtOnce) {
  Endpoint endpoint = QueueDelayEndpoint();
  ScalerInput input = Queue(kStart + seconds(100), 20, kStart, 3);
  input.workers = {Worker("w1", WorkerState::kBusy), Worker("w2", WorkerState::kBusy),
                   Worker("w3", WorkerState::kBusy)};
  EXPECT_EQ(DecideScale(endpoint, input), ScalerDecision{});
  endpoint.max_workers = 1;
  input = Queue(kStart + seconds(1), 0, kStart);
  input.workers = {Worker("w1", WorkerState::kBusy), Worker("w2", WorkerState::kIdle, kStart),
                   Worker("w3", WorkerState::kIdle, kStart)};
  EXPECT_EQ(DecideScale(endpoint, input).stop, (std::vector<std::string>{"w2", "w3"}));
}

TEST(ScalerTest, AWorkerThatDiedIsReplacedWhileJobsWait) {
  // The dead worker is no longer listed; its job is back in the queue.
  const Endpoint endpoint = QueueDelayEndpoint();
  ScalerInput input = Queue(kStart + seconds(1), 1, kStart + seconds(1));
  EXPECT_EQ(DecideScale(endpoint, input).add, 1);
}

TEST(ScalerTest, RequestCountAsksForOneWorkerPerNJobs) {
  Endpoint endpoint = QueueDelayEndpoint();
  endpoint.scaler = ScalerKind::kRequestCount;
  endpoint.scaler_value = 4;
  endpoint.max_workers = 10;
  EXPECT_EQ(DecideScale(endpoint, Queue(kStart, 1, kStart)).add, 1);
  EXPECT_EQ(DecideScale(endpoint, Queue(kStart, 9, kStart)).add, 3);
  ScalerInput input = Queue(kStart, 3, kStart, 2);  // 5 jobs: 2 workers
  input.workers = {Worker("w1", WorkerState::kBusy)};
  EXPECT_EQ(DecideScale(endpoint, input).add, 1);
  EXPECT_EQ(DecideScale(endpoint, Queue(kStart, 400, kStart)).add, 10);
}

TEST(ScalerTest, IdleWorkersAreNotStoppedWhileJobsWait) {
  Endpoint endpoint = QueueDelayEndpoint();
  endpoint.scaler = ScalerKind::kRequestCount;
  endpoint.scaler_value = 100;
  ScalerInput input = Queue(kStart + seconds(60), 1, kStart + seconds(60));
  input.workers = {Worker("w1", WorkerState::kIdle, kStart),
                   Worker("w2", WorkerState::kIdle, kStart)};
  EXPECT_TRUE(DecideScale(endpoint, input).stop.empty());
}

}  // namespace
}  // namespace suanli::serverless
