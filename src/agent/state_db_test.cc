#include "agent/state_db.h"

#include <gtest/gtest.h>

#include "testing/temp_dir.h"

namespace suanli::agent {
namespace {

using suanli::testing::TempDir;

std::string Body(int64_t seq) { return "{\"seq\":" + std::to_string(seq) + "}"; }

TEST(StateDbTest, SeqsRisePerPodAndSurviveAReopen) {
  TempDir dir;
  {
    auto state = StateDb::Open(dir.path() / "agent");
    ASSERT_TRUE(state.ok()) << state.status().ToString();
    EXPECT_EQ((*state)->Enqueue("p1", Body)->seq, 1);
    EXPECT_EQ((*state)->Enqueue("p1", Body)->seq, 2);
    EXPECT_EQ((*state)->Enqueue("p2", Body)->seq, 1);
    ASSERT_TRUE((*state)->Set("node_token", "sln_x").ok());
  }
  auto reopened = StateDb::Open(dir.path() / "agent");
  ASSERT_TRUE(reopened.ok());
  auto third = (*reopened)->Enqueue("p1", Body);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third->seq, 3) << "a restarted agent must not reuse a seq the server has seen";
  EXPECT_EQ(third->body, "{\"seq\":3}");
  EXPECT_EQ((*reopened)->Get("node_token")->value_or(""), "sln_x");
  EXPECT_FALSE((*reopened)->Get("missing")->has_value());
}

TEST(StateDbTest, TheOutboxKeepsOrderUntilAcknowledged) {
  TempDir dir;
  auto state = StateDb::Open(dir.path());
  ASSERT_TRUE(state.ok());
  const int64_t first = (*state)->Enqueue("p1", Body)->id;
  (*state)->Enqueue("p2", Body).value();
  (*state)->Enqueue("p1", Body).value();
  auto pending = (*state)->Pending(10);
  ASSERT_TRUE(pending.ok());
  ASSERT_EQ(pending->size(), 3U);
  EXPECT_EQ((*pending)[0].pod_id, "p1");
  EXPECT_EQ((*pending)[1].pod_id, "p2");
  EXPECT_EQ((*pending)[2].seq, 2);
  ASSERT_TRUE((*state)->Acknowledge(first).ok());
  EXPECT_EQ(*(*state)->PendingCount(), 2);
  EXPECT_EQ((*state)->Pending(1)->front().pod_id, "p2");
}

TEST(StateDbTest, ASecondAgentOnTheSameDirectoryIsRefused) {
  TempDir dir;
  auto first = StateDb::Open(dir.path());
  ASSERT_TRUE(first.ok());
  auto second = StateDb::Open(dir.path());
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), core::StatusCode::kFailedPrecondition);
  EXPECT_NE(second.status().message().find("another agent"), std::string::npos);
}

}  // namespace
}  // namespace suanli::agent
