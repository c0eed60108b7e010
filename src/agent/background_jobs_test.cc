// agent::BackgroundJobs (volume_move.h): long relayed work answered 202 while it runs, its result
// once, and never two runs of one job at a time.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <string>
#include <thread>

#include "agent/volume_move.h"

namespace suanli::agent {
namespace {

using wire::RelayAnswer;

// Asks for job `key` until it has ended (at most 10 s); its answer.
RelayAnswer AskUntilDone(BackgroundJobs& jobs, const std::string& key,
                         const std::function<RelayAnswer()>& work) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  RelayAnswer answer = jobs.RunOrAsk(key, work);
  while (answer.status == 202 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    answer = jobs.RunOrAsk(key, work);
  }
  return answer;
}

TEST(BackgroundJobsTest, AJobRunsOnceAnswers202WhileItRunsAndItsResultOnce) {
  BackgroundJobs jobs;
  std::atomic<int> runs{0};
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  const auto work = [&runs, released] {
    ++runs;
    released.wait();
    return RelayAnswer{200, {{"X-Run", std::to_string(runs.load())}}, "made"};
  };
  EXPECT_EQ(jobs.RunOrAsk("snapshot snap_1", work).status, 202);
  EXPECT_EQ(jobs.RunOrAsk("snapshot snap_1", work).status, 202);  // asked again: still at work
  EXPECT_EQ(jobs.RunOrAsk("snapshot snap_2",
                          [] {
                            return RelayAnswer{204, {}, ""};
                          })
                .status,
            202);  // another job runs beside it
  release.set_value();
  const RelayAnswer made = AskUntilDone(jobs, "snapshot snap_1", work);
  EXPECT_EQ(made.status, 200);
  EXPECT_EQ(made.body, "made");
  EXPECT_EQ(AskUntilDone(jobs, "snapshot snap_2", [] { return RelayAnswer{}; }).status, 204);
  EXPECT_EQ(runs.load(), 1);
  // Its result was handed over: asking again starts it anew (the server asks only until it has
  // the result, or when the agent lost it).
  EXPECT_EQ(AskUntilDone(jobs, "snapshot snap_1", work).status, 200);
  EXPECT_EQ(runs.load(), 2);
}

TEST(BackgroundJobsTest, DestroyingItWaitsForTheJobThatRuns) {
  std::atomic<bool> finished{false};
  {
    BackgroundJobs jobs;
    EXPECT_EQ(jobs.RunOrAsk("restore suanli-vol_1",
                            [&finished] {
                              std::this_thread::sleep_for(std::chrono::milliseconds(50));
                              finished = true;
                              return RelayAnswer{204, {}, ""};
                            })
                  .status,
              202);
  }
  EXPECT_TRUE(finished.load());
}

}  // namespace
}  // namespace suanli::agent
