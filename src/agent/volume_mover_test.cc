#include "agent/volume_mover.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using core::PodState;
using testing::AgentFixture;

core::Pod MovedPod(const std::string& volume) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.moves.push_back({"mv_1", volume, "node_from", AgentFixture::kStart});
  pod.moves.push_back({"mv_2", "suanli-vol_b", "node_from", AgentFixture::kStart});
  return pod;
}

class VolumeMoverTest : public ::testing::Test {
 protected:
  VolumeMoverTest() { fixture_.Register(); }
  void TearDown() override { fixture_.context().WaitForJobs(); }

  AgentFixture fixture_;
  StatusReporter reporter_{fixture_.context()};
  VolumeMover mover_{fixture_.context(), reporter_};
};

TEST_F(VolumeMoverTest, APodsMovesAreDoneOnlyOnceEachIsNotedInTheStateDatabase) {
  const core::Pod pod = MovedPod("suanli-pod_a");
  EXPECT_FALSE(mover_.MovesDone(pod));
  ASSERT_TRUE(fixture_.state().Set("moved/mv_1", "1").ok());
  EXPECT_FALSE(mover_.MovesDone(pod));
  ASSERT_TRUE(fixture_.state().Set("moved/mv_2", "1").ok());
  EXPECT_TRUE(mover_.MovesDone(pod));
  EXPECT_TRUE(mover_.MovesDone(AgentFixture::MakePod("pod_b")));  // no moves at all
}

TEST_F(VolumeMoverTest, MovesNotedBeforeARestartAreNotFetchedAgain) {
  ASSERT_TRUE(fixture_.state().Set("moved/mv_1", "1").ok());
  ASSERT_TRUE(fixture_.state().Set("moved/mv_2", "1").ok());
  mover_.MoveFor(MovedPod("suanli-pod_a"));
  fixture_.context().WaitForJobs();
  EXPECT_TRUE(fixture_.Reports().empty());
  EXPECT_TRUE(fixture_.engine().calls().empty());
  EXPECT_EQ(fixture_.log().find("moving volume"), std::string::npos);
}

TEST_F(VolumeMoverTest, AMoveThatCannotBeDoneFailsThePodAndIsNotNoted) {
  mover_.MoveFor(MovedPod("not-a-suanli-volume"));
  fixture_.context().WaitForJobs();
  const std::vector<testing::QueuedReport> reports = fixture_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].report.state, PodState::kFailed);
  EXPECT_NE(reports[0].report.message.find("its volume could not be moved here"),
            std::string::npos);
  EXPECT_FALSE(fixture_.state().Get("moved/mv_1")->has_value());
  // The moves after a failed one wait for the next try.
  EXPECT_EQ(fixture_.log().find("moving volume suanli-vol_b"), std::string::npos);
}

TEST_F(VolumeMoverTest, AMoveCutShortByTheAgentsStopIsNoFailure) {
  ASSERT_TRUE(fixture_.context().BeginStop());
  mover_.MoveFor(MovedPod("suanli-pod_a"));
  fixture_.context().WaitForJobs();
  EXPECT_TRUE(fixture_.Reports().empty());
  EXPECT_FALSE(fixture_.state().Get("moved/mv_1")->has_value());
  EXPECT_NE(fixture_.log().find("the agent is stopping"), std::string::npos);
}

}  // namespace
}  // namespace suanli::agent
