#include "server/node_waiters.h"

#include <gtest/gtest.h>

namespace suanli::server {
namespace {

using std::chrono::seconds;

TEST(NodeWaitersTest, AChangeMakesEveryPollOfThatNodeDueOnceAndNoOther) {
  NodeWaiters waiters;
  const core::TimePoint deadline(seconds(100));
  std::vector<std::string> answered;
  waiters.Add("n1", deadline, [&] { answered.push_back("n1 a"); });
  waiters.Add("n1", deadline, [&] { answered.push_back("n1 b"); });
  waiters.Add("n2", deadline, [&] { answered.push_back("n2"); });
  waiters.Wake("n1");
  EXPECT_TRUE(answered.empty()) << "callbacks run only when the owner takes them";
  for (auto& notify : waiters.TakeDue()) notify();
  EXPECT_EQ(answered, (std::vector<std::string>{"n1 a", "n1 b"}));
  waiters.Wake("n1");
  EXPECT_TRUE(waiters.TakeDue().empty()) << "a poll is answered once";
}

TEST(NodeWaitersTest, ADeadlineMakesItsPollDueAtItNotBefore) {
  NodeWaiters waiters;
  int early = 0;
  int late = 0;
  waiters.Add("n1", core::TimePoint(seconds(10)), [&] { ++early; });
  waiters.Add("n1", core::TimePoint(seconds(20)), [&] { ++late; });
  waiters.Expire(core::TimePoint(seconds(9)));
  EXPECT_TRUE(waiters.TakeDue().empty());
  waiters.Expire(core::TimePoint(seconds(10)));
  for (auto& notify : waiters.TakeDue()) notify();
  EXPECT_EQ(early, 1);
  EXPECT_EQ(late, 0);
  waiters.Wake("n1");
  for (auto& notify : waiters.TakeDue()) notify();
  EXPECT_EQ(late, 1) << "the later poll still waited for a change";
}

}  // namespace
}  // namespace suanli::server
