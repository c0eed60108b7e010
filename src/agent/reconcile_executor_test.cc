#include "agent/reconcile_executor.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using core::PodState;
using testing::AgentFixture;

// The index of `call` in `calls`, or -1.
int IndexOf(const std::vector<std::string>& calls, const std::string& call) {
  const auto it = std::find(calls.begin(), calls.end(), call);
  return it == calls.end() ? -1 : static_cast<int>(it - calls.begin());
}

class ReconcileExecutorTest : public ::testing::Test {
 protected:
  ReconcileExecutorTest() { fixture_.Register(); }
  void TearDown() override { fixture_.context().WaitForJobs(); }

  // One reconcile loop's pass: the background jobs it started run to their end.
  void Pass() {
    executor_.ReconcileOnce();
    fixture_.context().WaitForJobs();
  }
  // A pod running as container c1, its running reported.
  void RunPod(const core::Pod& pod) {
    fixture_.engine().AddImage(pod.image);
    fixture_.Desire({pod});
    Pass();
    ASSERT_FALSE(fixture_.Reports().empty());
    ASSERT_EQ(fixture_.Reports().back().report.state, PodState::kRunning);
  }

  AgentFixture fixture_;
  StatusReporter reporter_{fixture_.context()};
  ImagePuller puller_{fixture_.context(), reporter_};
  VolumeMover mover_{fixture_.context(), reporter_};
  DiskGuard disk_guard_{fixture_.context()};
  GpuInventory gpus_;
  ReconcileExecutor executor_{fixture_.context(), reporter_, puller_,         mover_,
                              disk_guard_,        gpus_,     GpuAccess::kNone};
};

TEST_F(ReconcileExecutorTest, AMissingImageIsPulledOnceBeforeTheContainerIsCreatedAndStarted) {
  fixture_.engine().HoldPulls();
  fixture_.Desire({AgentFixture::MakePod("pod_a", "busybox")});
  // Every pass's create finds no image; one pull runs in the background meanwhile.
  executor_.ReconcileOnce();
  EXPECT_TRUE(fixture_.context().JobRunning("busybox"));
  EXPECT_EQ(fixture_.engine().CallCount("Start "), 0);
  fixture_.engine().ReleasePulls();
  fixture_.context().WaitForJobs();
  EXPECT_EQ(fixture_.engine().CallCount("Pull "), 1);
  EXPECT_EQ(fixture_.engine().CallCount("Start "), 0);

  Pass();  // the image is in: create, start, report running
  const std::vector<std::string> changes = fixture_.engine().changes();
  EXPECT_GT(IndexOf(changes, "Start c1"), IndexOf(changes, "Pull busybox"));
  EXPECT_EQ(fixture_.engine().CallCount("Pull "), 1);
  const std::vector<testing::QueuedReport> reports = fixture_.Reports();
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].report.state, PodState::kRunning);
  EXPECT_EQ(reports[0].report.container_id, "c1");
  EXPECT_TRUE(reports[0].report.ready.value_or(false));  // no ports: ready as soon as it runs
}

TEST_F(ReconcileExecutorTest, ThePodsContainerCarriesItsNodeAndPodLabelsOnItsOwnersNetwork) {
  RunPod(AgentFixture::MakePod("pod_a"));
  const std::optional<ContainerSpec> spec = fixture_.engine().SpecOf("c1");
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->labels.at(std::string(kPodLabel)), "pod_a");
  EXPECT_EQ(spec->labels.at(std::string(kNodeLabel)), "node_test");
  EXPECT_EQ(spec->network, OwnerNetworkName("usr_owner"));
  EXPECT_TRUE(fixture_.engine().networks().contains(OwnerNetworkName("usr_owner")));
}

TEST_F(ReconcileExecutorTest, NothingHappensBeforeTheNodeIsRegistered) {
  AgentFixture unregistered;
  StatusReporter reporter(unregistered.context());
  ImagePuller puller(unregistered.context(), reporter);
  VolumeMover mover(unregistered.context(), reporter);
  DiskGuard disk_guard(unregistered.context());
  ReconcileExecutor executor(unregistered.context(), reporter, puller, mover, disk_guard, gpus_,
                             GpuAccess::kNone);
  unregistered.engine().AddImage("busybox");
  unregistered.Desire({AgentFixture::MakePod("pod_a")});
  executor.ReconcileOnce();
  EXPECT_TRUE(unregistered.engine().changes().empty());
  EXPECT_TRUE(unregistered.Reports().empty());
}

TEST_F(ReconcileExecutorTest, AnExitIsReportedWithItsCodeTimeAndLastLogs) {
  RunPod(AgentFixture::MakePod("pod_a"));
  fixture_.clock().Advance(std::chrono::seconds(90));
  fixture_.engine().SetLogs("c1", "2026-12-01T00:01:29.000000000Z training done\n");
  fixture_.engine().ExitContainer("c1", 3);
  Pass();

  const testing::QueuedReport exited = fixture_.Reports().back();
  EXPECT_EQ(exited.report.state, PodState::kExited);
  EXPECT_EQ(exited.report.exit_code, 3);
  EXPECT_EQ(exited.report.at, AgentFixture::kStart + std::chrono::seconds(90));
  ASSERT_TRUE(exited.report.logs.has_value());
  EXPECT_NE(exited.report.logs->find("training done"), std::string::npos);
  // An exited pod that should run is not restarted behind the server's back.
  EXPECT_EQ(fixture_.engine().CallCount("Start "), 1);
}

TEST_F(ReconcileExecutorTest, APodDesiredStoppedRunsItsPreStopThenStopsReportsAndRemoves) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.pre_stop_command = "sync";
  RunPod(pod);
  pod.desired = core::DesiredState::kStopped;
  pod.state = PodState::kRunning;
  pod.generation = 2;
  fixture_.Desire({pod});
  fixture_.clock().Advance(std::chrono::seconds(30));
  Pass();

  const std::vector<std::string> changes = fixture_.engine().changes();
  const int exec = IndexOf(changes, "Exec c1 sh -c sync");
  const int stop = IndexOf(changes, "Stop c1");
  const int remove = IndexOf(changes, "Remove c1");
  ASSERT_NE(exec, -1);
  EXPECT_LT(exec, stop);
  EXPECT_LT(stop, remove);
  const testing::QueuedReport stopped = fixture_.Reports().back();
  EXPECT_EQ(stopped.report.state, PodState::kStopped);
  EXPECT_EQ(stopped.report.at, AgentFixture::kStart + std::chrono::seconds(30));
  // The volume stays while the pod is only stopped.
  EXPECT_EQ(IndexOf(changes, "RemoveVolume suanli-pod_a"), -1);
}

TEST_F(ReconcileExecutorTest, ATerminatedPodLosesItsVolumeAndIsReportedTerminated) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.volume_gb = 1;
  pod.volume_mount_path = "/workspace";
  RunPod(pod);
  pod.desired = core::DesiredState::kTerminated;
  pod.state = PodState::kRunning;
  pod.generation = 2;
  fixture_.Desire({pod});
  Pass();

  EXPECT_NE(IndexOf(fixture_.engine().changes(), "RemoveVolume suanli-pod_a"), -1);
  EXPECT_FALSE(fixture_.engine().volumes().contains("suanli-pod_a"));
  EXPECT_EQ(fixture_.Reports().back().report.state, PodState::kTerminated);
}

TEST_F(ReconcileExecutorTest, AnEngineThatDoesNotAnswerIsNotedOnceAndPodsAreLeftAsTheyAre) {
  RunPod(AgentFixture::MakePod("pod_a"));
  const size_t reports = fixture_.Reports().size();
  fixture_.engine().SetDown(true);
  Pass();
  Pass();
  fixture_.engine().SetDown(false);
  Pass();

  EXPECT_EQ(fixture_.Reports().size(), reports);  // nothing was said about the pod
  EXPECT_EQ(fixture_.engine().CallCount("Stop "), 0);
  EXPECT_EQ(fixture_.engine().CallCount("Create "), 1);
  const std::string log = fixture_.log();
  const size_t down = log.find("the container engine is unavailable");
  ASSERT_NE(down, std::string::npos);
  EXPECT_EQ(log.find("the container engine is unavailable", down + 1), std::string::npos);
  EXPECT_NE(log.find("answers again", down), std::string::npos);
}

TEST_F(ReconcileExecutorTest, AContainerThatWillNotStartFailsThePod) {
  fixture_.engine().AddImage("busybox");
  fixture_.engine().FailNext("Start", core::InternalError("OCI runtime error: no such file"));
  fixture_.Desire({AgentFixture::MakePod("pod_a")});
  Pass();

  const std::vector<testing::QueuedReport> reports = fixture_.Reports();
  ASSERT_FALSE(reports.empty());
  EXPECT_EQ(reports[0].report.state, PodState::kFailed);
  EXPECT_EQ(reports[0].report.container_id, "c1");
  EXPECT_EQ(reports[0].report.message,
            "the container would not start: OCI runtime error: no such file");
  EXPECT_NE(IndexOf(fixture_.engine().changes(), "Remove c1"), -1);  // its container goes
}

TEST_F(ReconcileExecutorTest, ContainersOfAnotherNodeSharingTheEngineAreNotTouched) {
  fixture_.engine().AddImage("busybox");
  ContainerSpec theirs;
  theirs.name = "suanli-pod_theirs";
  theirs.image = "busybox";
  theirs.labels = {{std::string(kPodLabel), "pod_theirs"}, {std::string(kNodeLabel), "node_other"}};
  ASSERT_TRUE(fixture_.engine().Create(theirs).ok());
  ASSERT_TRUE(fixture_.engine().Start("suanli-pod_theirs").ok());
  fixture_.Desire({});
  Pass();

  EXPECT_EQ(fixture_.engine().CallCount("Stop "), 0);
  EXPECT_EQ(fixture_.engine().CallCount("Remove "), 0);
  EXPECT_TRUE(fixture_.engine().Inspect("suanli-pod_theirs")->running);
}

TEST_F(ReconcileExecutorTest, AnOrphanOfThisNodeIsStoppedAndRemoved) {
  RunPod(AgentFixture::MakePod("pod_a"));
  fixture_.Desire({});  // the server no longer wants it here
  Pass();
  EXPECT_NE(IndexOf(fixture_.engine().changes(), "Stop c1"), -1);
  EXPECT_NE(IndexOf(fixture_.engine().changes(), "Remove c1"), -1);
  EXPECT_FALSE(fixture_.engine().Inspect("c1").ok());
}

TEST_F(ReconcileExecutorTest, ADiskStopIsToldAsTheReasonOfTheExit) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.container_disk_gb = 1;
  RunPod(pod);
  fixture_.engine().SetWritableLayerBytes("c1", int64_t{3} << 30);
  disk_guard_.Check();
  Pass();

  const testing::QueuedReport exited = fixture_.Reports().back();
  EXPECT_EQ(exited.report.state, PodState::kExited);
  EXPECT_NE(exited.report.message.find("to its 1 GB container disk, so it was stopped"),
            std::string::npos)
      << exited.report.message;
}

}  // namespace
}  // namespace suanli::agent
