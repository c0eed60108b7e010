#include "core/pod_state.h"

#include <gtest/gtest.h>

namespace suanli::core {
namespace {

TEST(PodStateTest, NamesRoundTrip) {
  for (PodState state :
       {PodState::kPending, PodState::kStarting, PodState::kRunning, PodState::kStopping,
        PodState::kStopped, PodState::kExited, PodState::kFailed, PodState::kTerminated}) {
    EXPECT_EQ(*ParsePodState(PodStateName(state)), state);
  }
  EXPECT_EQ(*ParsePodAction("restart"), PodAction::kRestart);
  EXPECT_EQ(ParsePodState("paused").status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParsePodAction("pause").status().code(), StatusCode::kInvalidArgument);
}

TEST(PodStateTest, EachStateAllowsWhatAPersonWouldExpect) {
  using enum PodAction;
  EXPECT_TRUE(CheckAction(PodState::kRunning, kStop).ok());
  EXPECT_TRUE(CheckAction(PodState::kRunning, kRestart).ok());
  EXPECT_TRUE(CheckAction(PodState::kStopped, kStart).ok());
  EXPECT_TRUE(CheckAction(PodState::kPending, kStop).ok());  // cancel before it gets a GPU
  EXPECT_TRUE(CheckAction(PodState::kExited, kStart).ok());
  EXPECT_TRUE(CheckAction(PodState::kFailed, kTerminate).ok());
  EXPECT_TRUE(AllowedActions(PodState::kTerminated).empty());
}

TEST(PodStateTest, AWrongActionIsAFailedPreconditionThatSaysWhatToDo) {
  const Status start_running = CheckAction(PodState::kRunning, PodAction::kStart);
  EXPECT_EQ(start_running.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(HttpStatusFor(start_running.code()), 409);
  EXPECT_EQ(start_running.message(),
            "cannot start a pod that is running; it is already running (restart restarts it)");
  EXPECT_EQ(CheckAction(PodState::kStopped, PodAction::kStop).message(),
            "cannot stop a pod that is stopped; it is already stopped, nothing to stop (start it "
            "to run it again, or terminate it to delete it)");
  EXPECT_NE(CheckAction(PodState::kExited, PodAction::kRestart).message().find("start it instead"),
            std::string::npos);
  EXPECT_NE(
      CheckAction(PodState::kTerminated, PodAction::kStart).message().find("create a new one"),
      std::string::npos);
  EXPECT_NE(CheckAction(PodState::kStopping, PodAction::kStart)
                .message()
                .find("wait until it is stopped"),
            std::string::npos);
}

TEST(PodStateTest, OnlyStartingRunningAndStoppingPodsHoldGpus) {
  EXPECT_FALSE(HoldsGpus(PodState::kPending));
  EXPECT_TRUE(HoldsGpus(PodState::kStarting));
  EXPECT_TRUE(HoldsGpus(PodState::kRunning));
  EXPECT_TRUE(HoldsGpus(PodState::kStopping));
  EXPECT_FALSE(HoldsGpus(PodState::kStopped));
  EXPECT_FALSE(HoldsGpus(PodState::kTerminated));
}

}  // namespace
}  // namespace suanli::core
