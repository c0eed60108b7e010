#include "testing/fake_engine.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace suanli::testing {
namespace {

agent::ContainerSpec Spec(const std::string& name, const std::string& image = "busybox") {
  agent::ContainerSpec spec;
  spec.name = name;
  spec.image = image;
  spec.labels = {{"suanli.pod", name}};
  return spec;
}

TEST(FakeEngineTest, AContainerLivesAsTheEngineSaysAndEveryCallIsRecorded) {
  core::ManualClock clock(core::TimePoint(std::chrono::seconds(1000)));
  FakeEngine engine(clock);
  EXPECT_EQ(engine.Create(Spec("a")).status().code(), core::StatusCode::kNotFound);  // no image
  ASSERT_TRUE(engine.Pull("busybox", {}).ok());
  core::Result<std::string> id = engine.Create(Spec("a"));
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(engine.Create(Spec("a")).status().code(), core::StatusCode::kAlreadyExists);
  ASSERT_TRUE(engine.Start(*id).ok());
  EXPECT_EQ(engine.Inspect("a")->started_at, clock.Now());
  clock.Advance(std::chrono::seconds(5));
  engine.ExitContainer(*id, 2);
  core::Result<agent::ContainerInfo> exited = engine.Inspect(*id);
  EXPECT_FALSE(exited->running);
  EXPECT_EQ(exited->exit_code, 2);
  EXPECT_EQ(exited->finished_at, clock.Now());
  EXPECT_EQ(engine.ListLabelled("suanli.pod")->size(), 1u);
  ASSERT_TRUE(engine.Remove(*id).ok());
  EXPECT_EQ(engine.Remove(*id).code(), core::StatusCode::kNotFound);

  EXPECT_EQ(engine.changes(),
            (std::vector<std::string>{"Create a", "Pull busybox", "Create a", "Create a",
                                      "Start c1", "Remove c1", "Remove c1"}));
  EXPECT_EQ(engine.CallCount("Inspect "), 2);
}

TEST(FakeEngineTest, ScriptedFailuresAnswerOnceAndADownEngineAnswersNothing) {
  core::ManualClock clock;
  FakeEngine engine(clock);
  engine.ScriptPull("nosuch", core::NotFoundError("manifest unknown"));
  EXPECT_EQ(engine.Pull("nosuch", {}).code(), core::StatusCode::kNotFound);
  EXPECT_FALSE(*engine.ImagePresent("nosuch"));

  engine.AddImage("busybox");
  engine.FailNext("Create", core::InternalError("disk full"));
  EXPECT_EQ(engine.Create(Spec("a")).status().message(), "disk full");
  EXPECT_TRUE(engine.Create(Spec("a")).ok());

  engine.SetDown(true);
  EXPECT_EQ(engine.ListLabelled("suanli.pod").status().code(), core::StatusCode::kUnavailable);
  EXPECT_EQ(engine.Stop("a", std::chrono::seconds(1)).code(), core::StatusCode::kUnavailable);
  engine.SetDown(false);
  EXPECT_TRUE(engine.Start("a").ok());
}

TEST(FakeEngineTest, ANetworkOrVolumeInUseIsNotRemoved) {
  core::ManualClock clock;
  FakeEngine engine(clock);
  engine.AddImage("busybox");
  ASSERT_TRUE(engine.CreateIsolatedNetwork("net", {{"suanli.owner", "usr_a"}}).ok());
  agent::ContainerSpec spec = Spec("a");
  spec.network = "net";
  spec.volume_name = "vol";
  ASSERT_TRUE(engine.Create(spec).ok());
  EXPECT_EQ(engine.RemoveNetwork("net").code(), core::StatusCode::kFailedPrecondition);
  EXPECT_EQ(engine.RemoveVolume("vol").code(), core::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(engine.Remove("a").ok());
  EXPECT_TRUE(engine.RemoveNetwork("net").ok());
  EXPECT_TRUE(engine.RemoveVolume("vol").ok());
  EXPECT_TRUE(engine.networks().empty());
}

}  // namespace
}  // namespace suanli::testing
