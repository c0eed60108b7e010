#include "agent/image_puller.h"

#include <gtest/gtest.h>

#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using core::PodState;
using testing::AgentFixture;

class ImagePullerTest : public ::testing::Test {
 protected:
  void TearDown() override { fixture_.context().WaitForJobs(); }

  AgentFixture fixture_;
  StatusReporter reporter_{fixture_.context()};
  ImagePuller puller_{fixture_.context(), reporter_};
};

TEST_F(ImagePullerTest, OnePullOfAnImageAtATimeThenTheImageIsThere) {
  fixture_.engine().HoldPulls();
  const core::Pod a = AgentFixture::MakePod("pod_a", "busybox");
  const core::Pod b = AgentFixture::MakePod("pod_b", "busybox");
  puller_.PullFor(a);
  puller_.PullFor(b);  // same image: waits for the pull that runs
  puller_.PullFor(a);
  EXPECT_TRUE(fixture_.context().JobRunning("busybox"));
  fixture_.engine().ReleasePulls();
  fixture_.context().WaitForJobs();

  EXPECT_EQ(fixture_.engine().CallCount("Pull "), 1);
  EXPECT_TRUE(*fixture_.engine().ImagePresent("busybox"));
  EXPECT_TRUE(fixture_.Reports().empty());  // no progress was sent by this engine
  EXPECT_NE(fixture_.log().find("pulled busybox"), std::string::npos);
}

TEST_F(ImagePullerTest, ProgressIsReportedOnThePodAsStarting) {
  fixture_.engine().ScriptPull("pytorch", core::Status::Ok(),
                               {{"Downloading", 50 << 20, 200 << 20}});
  puller_.PullFor(AgentFixture::MakePod("pod_a", "pytorch"));
  fixture_.context().WaitForJobs();

  const std::vector<testing::QueuedReport> reports = fixture_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].pod_id, "pod_a");
  EXPECT_EQ(reports[0].report.state, PodState::kStarting);
  EXPECT_EQ(reports[0].report.message, "pulling image pytorch: 25% of 200 MiB");
  ASSERT_TRUE(reports[0].report.pull.has_value());
  EXPECT_EQ(reports[0].report.pull->current_bytes, 50 << 20);
  EXPECT_EQ(reports[0].report.pull->total_bytes, 200 << 20);
}

TEST_F(ImagePullerTest, AFailedPullFailsThePodOnceAndALaterStartPullsAgain) {
  fixture_.engine().ScriptPull("nosuch", core::NotFoundError("manifest unknown"));
  const core::Pod pod = AgentFixture::MakePod("pod_a", "nosuch");
  puller_.PullFor(pod);
  fixture_.context().WaitForJobs();
  EXPECT_TRUE(fixture_.Reports().empty());  // told when the reconcile loop asks for it again

  puller_.PullFor(pod);
  std::vector<testing::QueuedReport> reports = fixture_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].report.state, PodState::kFailed);
  EXPECT_EQ(reports[0].report.message, "cannot pull image nosuch: manifest unknown");
  EXPECT_EQ(fixture_.engine().CallCount("Pull "), 1);

  // The failure was told: the next start tries the registry again.
  puller_.PullFor(pod);
  fixture_.context().WaitForJobs();
  EXPECT_EQ(fixture_.engine().CallCount("Pull "), 2);
  EXPECT_EQ(fixture_.Reports().size(), 1u);
}

TEST_F(ImagePullerTest, AnEngineDownDuringThePullIsThePodsFailureToo) {
  fixture_.engine().SetDown(true);
  const core::Pod pod = AgentFixture::MakePod("pod_a", "busybox");
  puller_.PullFor(pod);
  fixture_.context().WaitForJobs();
  puller_.PullFor(pod);
  const std::vector<testing::QueuedReport> reports = fixture_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].report.state, PodState::kFailed);
  EXPECT_NE(reports[0].report.message.find("the fake engine is down"), std::string::npos);
}

}  // namespace
}  // namespace suanli::agent
