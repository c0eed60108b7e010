#include "agent/status_reporter.h"

#include <gtest/gtest.h>

#include <vector>

#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using core::PodState;
using testing::AgentFixture;

class StatusReporterTest : public ::testing::Test {
 protected:
  AgentFixture fixture_;
  StatusReporter reporter_{fixture_.context()};
};

TEST_F(StatusReporterTest, AReportIsInTheOutboxWhenQueueReturnsAndIsNotedWithItsGeneration) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.generation = 3;
  fixture_.Desire({pod});
  PodReportFields report("pod_a", PodState::kRunning, fixture_.clock().Now());
  report.container_id = "c1";
  report.port_mappings = {{22, "tcp", 20022}};
  reporter_.Queue(report);

  const std::vector<testing::QueuedReport> queued = fixture_.Reports();
  ASSERT_EQ(queued.size(), 1u);
  EXPECT_EQ(queued[0].pod_id, "pod_a");
  EXPECT_EQ(queued[0].report.seq, 1);
  EXPECT_EQ(queued[0].report.state, PodState::kRunning);
  EXPECT_EQ(queued[0].report.container_id, "c1");
  EXPECT_EQ(queued[0].report.at, AgentFixture::kStart);
  EXPECT_FALSE(queued[0].report.ready.value_or(false));
  const std::map<std::string, Reported> reported = reporter_.LastReported();
  ASSERT_TRUE(reported.contains("pod_a"));
  EXPECT_EQ(reported.at("pod_a").state, PodState::kRunning);
  EXPECT_EQ(reported.at("pod_a").container_id, "c1");
  EXPECT_EQ(reported.at("pod_a").generation, 3);
  // Running, not ready: its ports are probed.
  ASSERT_TRUE(reporter_.Unready().contains("pod_a"));
  EXPECT_EQ(reporter_.Unready().at("pod_a").ports, report.port_mappings);

  PodReportFields ready("pod_a", PodState::kRunning, fixture_.clock().Now());
  ready.container_id = "c1";
  ready.ready = true;
  reporter_.Queue(ready);
  EXPECT_TRUE(reporter_.Unready().empty());
  ASSERT_EQ(fixture_.Reports().size(), 2u);
  EXPECT_EQ(fixture_.Reports()[1].report.seq, 2);
  EXPECT_TRUE(fixture_.Reports()[1].report.ready.value_or(false));
}

TEST_F(StatusReporterTest, ProgressWhileStartingIsSentButNotNotedAsTheLastReport) {
  PodReportFields exited("pod_a", PodState::kExited, fixture_.clock().Now());
  exited.container_id = "c1";
  exited.exit_code = 3;
  reporter_.Queue(exited);
  PodReportFields pulling("pod_a", PodState::kStarting, fixture_.clock().Now());
  pulling.message = "pulling image busybox";
  pulling.pull = core::PullProgress{10, 100};
  reporter_.Queue(pulling);

  ASSERT_EQ(fixture_.Reports().size(), 2u);
  EXPECT_EQ(fixture_.Reports()[1].report.state, PodState::kStarting);
  ASSERT_TRUE(fixture_.Reports()[1].report.pull.has_value());
  EXPECT_EQ(fixture_.Reports()[1].report.pull->total_bytes, 100);
  // The plan still sees the exit, which a kStarting progress report must not hide.
  EXPECT_EQ(reporter_.LastReported().at("pod_a").state, PodState::kExited);
  EXPECT_TRUE(reporter_.Unready().empty());
}

TEST_F(StatusReporterTest, SendGoesInOrderAndKeepsWhatTheServerCouldNotTakeNow) {
  for (const char* pod : {"pod_a", "pod_b", "pod_c"}) {
    reporter_.Queue(PodReportFields(pod, PodState::kStopped, fixture_.clock().Now()));
  }
  std::vector<std::string> sent;
  // The server takes the first and is then unreachable.
  EXPECT_EQ(reporter_.Send([&](const PendingReport& report) {
    if (!sent.empty()) return ReportOutcome::kRetry;
    sent.push_back(report.pod_id);
    return ReportOutcome::kSent;
  }),
            -1);
  EXPECT_EQ(sent, std::vector<std::string>{"pod_a"});
  ASSERT_EQ(fixture_.Reports().size(), 2u);
  EXPECT_EQ(fixture_.Reports()[0].pod_id, "pod_b");

  // Back: the rest go, in order, and the outbox is empty.
  EXPECT_EQ(reporter_.Send([&](const PendingReport& report) {
    sent.push_back(report.pod_id);
    return ReportOutcome::kSent;
  }),
            2);
  EXPECT_EQ(sent, (std::vector<std::string>{"pod_a", "pod_b", "pod_c"}));
  EXPECT_TRUE(fixture_.Reports().empty());
  EXPECT_EQ(reporter_.Send([](const PendingReport&) { return ReportOutcome::kSent; }), 0);
}

}  // namespace
}  // namespace suanli::agent
