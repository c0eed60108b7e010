#include "agent/disk_guard.h"

#include <gtest/gtest.h>

#include <string>

#include "agent/reconcile.h"
#include "testing/agent_fixture.h"

namespace suanli::agent {
namespace {

using testing::AgentFixture;

constexpr int64_t kGb = int64_t{1} << 30;

class DiskGuardTest : public ::testing::Test {
 protected:
  DiskGuardTest() { fixture_.Register(); }

  // The pod's container, running, as its agent (`node`) created it.
  std::string RunContainer(const core::Pod& pod, const std::string& node = "node_test") {
    fixture_.engine().AddImage(pod.image);
    ContainerSpec spec;
    spec.name = ContainerName(pod.id);
    spec.image = pod.image;
    spec.labels = {{std::string(kPodLabel), pod.id}, {std::string(kNodeLabel), node}};
    core::Result<std::string> id = fixture_.engine().Create(spec);
    EXPECT_TRUE(id.ok());
    EXPECT_TRUE(fixture_.engine().Start(*id).ok());
    return *id;
  }

  bool Stopped(const std::string& id) { return !fixture_.engine().Inspect(id)->running; }

  std::optional<std::string> TakeReason(const std::string& id) { return guard_.TakeStopReason(id); }

  AgentFixture fixture_;
  DiskGuard guard_{fixture_.context()};
};

TEST_F(DiskGuardTest, APodPastItsContainerDiskIsStoppedWithTheReasonKeptOnce) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.container_disk_gb = 10;
  fixture_.Desire({pod});
  const std::string id = RunContainer(pod);
  fixture_.engine().SetWritableLayerBytes(id, 11 * kGb);
  guard_.Check();

  EXPECT_TRUE(Stopped(id));
  const std::optional<std::string> why = TakeReason(id);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("wrote 11.0 GB to its 10 GB container disk"), std::string::npos) << *why;
  EXPECT_FALSE(TakeReason(id).has_value());  // told once
}

TEST_F(DiskGuardTest, APodWithinItsSizesRunsOn) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.container_disk_gb = 10;
  fixture_.Desire({pod});
  const std::string id = RunContainer(pod);
  fixture_.engine().SetWritableLayerBytes(id, 9 * kGb);
  guard_.Check();
  EXPECT_FALSE(Stopped(id));
  EXPECT_EQ(fixture_.engine().CallCount("Stop "), 0);
  EXPECT_FALSE(TakeReason(id).has_value());
}

TEST_F(DiskGuardTest, APodOfAnotherNodeOrNotDesiredRunningIsNotMeasured) {
  core::Pod theirs = AgentFixture::MakePod("pod_theirs");
  theirs.container_disk_gb = 1;
  core::Pod stopping = AgentFixture::MakePod("pod_stopping");
  stopping.container_disk_gb = 1;
  stopping.desired = core::DesiredState::kStopped;
  fixture_.Desire({theirs, stopping});
  const std::string their_id = RunContainer(theirs, "node_other");
  const std::string stopping_id = RunContainer(stopping);
  fixture_.engine().SetWritableLayerBytes(their_id, 5 * kGb);
  fixture_.engine().SetWritableLayerBytes(stopping_id, 5 * kGb);
  guard_.Check();
  EXPECT_EQ(fixture_.engine().CallCount("Stop "), 0);
  EXPECT_EQ(fixture_.engine().CallCount("WritableLayerBytes " + stopping_id), 0);
}

TEST_F(DiskGuardTest, AVolumePastItsSizeIsMeasuredInItsHostDirectory) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.volume_gb = 1;
  pod.volume_mount_path = "/workspace";
  fixture_.Desire({pod});
  const std::string id = RunContainer(pod);
  // An empty directory: within its size. The measuring itself is disk_quota_test's.
  fixture_.engine().SetVolumeDirectory(VolumeName("pod_a"), fixture_.temp().path().string());
  guard_.Check();
  EXPECT_EQ(fixture_.engine().CallCount("VolumeDirectory " + VolumeName("pod_a")), 1);
  EXPECT_FALSE(Stopped(id));
}

TEST_F(DiskGuardTest, AVolumeOfTheOwnersIsMeasuredWhereMountedReadWriteOnly) {
  core::Pod pod = AgentFixture::MakePod("pod_a");
  pod.volumes = {
      {.volume_id = "vol_data", .mount_path = "/data", .size_gb = 1},
      {.volume_id = "vol_models", .mount_path = "/models", .read_only = true, .size_gb = 1}};
  fixture_.Desire({pod});
  const std::string id = RunContainer(pod);
  fixture_.engine().SetVolumeDirectory(VolumeName("vol_data"), fixture_.temp().path().string());
  guard_.Check();
  EXPECT_EQ(fixture_.engine().CallCount("VolumeDirectory " + VolumeName("vol_data")), 1);
  EXPECT_EQ(fixture_.engine().CallCount("VolumeDirectory " + VolumeName("vol_models")), 0)
      << "a read-only mount is another pod's to fill";
  EXPECT_FALSE(Stopped(id)) << "an empty volume is within its size";
}

}  // namespace
}  // namespace suanli::agent
