#include "agent/reconcile.h"

#include <gtest/gtest.h>

#include <chrono>

namespace suanli::agent {
namespace {

using core::PodState;
using Kind = Action::Kind;
using std::chrono::seconds;

const core::TimePoint kNow = core::TimePoint(std::chrono::hours(500'000));

DesiredPod PodWanted(std::string id, core::DesiredState desired = core::DesiredState::kRunning,
                     PodState state = PodState::kStarting) {
  DesiredPod pod;
  pod.pod.id = std::move(id);
  pod.pod.desired = desired;
  pod.pod.state = state;
  pod.pod.generation = 3;
  pod.pod.ports = {{8080, "http"}, {22, "tcp"}};
  return pod;
}

ContainerInfo Container(std::string id, std::string pod_id, bool running, int restarts = 0) {
  ContainerInfo container;
  container.id = std::move(id);
  container.labels = {{std::string(kPodLabel), std::move(pod_id)},
                      {std::string(kRestartsLabel), std::to_string(restarts)}};
  container.running = running;
  container.status = running ? "running" : "exited";
  container.started_at = kNow - seconds(100);
  if (!running) container.finished_at = kNow - seconds(10);
  container.ports = {{8080, 31000, "tcp"}, {22, 31001, "tcp"}};
  return container;
}

std::string Describe(const std::vector<Action>& actions) {
  std::string text;
  for (const Action& action : actions) {
    static constexpr const char* kNames[] = {"create", "start",         "stop",
                                             "remove", "remove-volume", "report"};
    text += std::string(kNames[static_cast<int>(action.kind)]) + " " + action.pod_id;
    if (action.kind == Kind::kReport) text += " " + std::string(core::PodStateName(action.state));
    text += ";";
  }
  return text;
}

TEST(ExpandVariablesTest, ReplacesKnownNamesAndLeavesTheRest) {
  const std::map<std::string, std::string> variables{{"JUPYTER_TOKEN", "t0k"}, {"EMPTY", ""}};
  EXPECT_EQ(ExpandVariables("--token=${JUPYTER_TOKEN}", variables), "--token=t0k");
  EXPECT_EQ(ExpandVariables("${JUPYTER_TOKEN}${JUPYTER_TOKEN}", variables), "t0kt0k");
  EXPECT_EQ(ExpandVariables("a${EMPTY}b", variables), "ab");
  EXPECT_EQ(ExpandVariables("$HOME ${UNKNOWN} ${JUPYTER_TOKEN", variables),
            "$HOME ${UNKNOWN} ${JUPYTER_TOKEN");
  EXPECT_EQ(ExpandVariables("", variables), "");
}

TEST(PlanTest, CreatesAMissingContainerOnce) {
  EXPECT_EQ(Describe(Plan({PodWanted("p1")}, {}, {}, kNow)), "create p1;");
}

TEST(PlanTest, ReportsARunningContainerWithItsStartTimeAndPorts) {
  const std::vector<Action> actions =
      Plan({PodWanted("p1")}, {Container("c1", "p1", true)}, {}, kNow);
  ASSERT_EQ(Describe(actions), "report p1 running;");
  EXPECT_EQ(actions[0].at, kNow - seconds(100)) << "the engine's start time, not the agent's";
  EXPECT_EQ(actions[0].container_id, "c1");
  ASSERT_EQ(actions[0].port_mappings.size(), 2U);
  EXPECT_EQ(actions[0].port_mappings[0].protocol, "http") << "the pod's protocol, not the engine's";
  EXPECT_EQ(actions[0].port_mappings[0].host_port, 31000);
}

TEST(PlanTest, SaysNothingTwice) {
  const std::map<std::string, Reported> reported{{"p1", {PodState::kRunning, "c1", 3}}};
  EXPECT_EQ(Describe(Plan({PodWanted("p1")}, {Container("c1", "p1", true)}, reported, kNow)), "");
}

TEST(PlanTest, AContainerThatExitedByItselfIsReportedAtItsExitTimeAndNotRestarted) {
  ContainerInfo exited = Container("c1", "p1", false);
  exited.exit_code = 3;
  const std::map<std::string, Reported> reported{{"p1", {PodState::kRunning, "c1", 3}}};
  const std::vector<Action> actions = Plan({PodWanted("p1")}, {exited}, reported, kNow);
  ASSERT_EQ(Describe(actions), "report p1 exited;");
  EXPECT_EQ(actions[0].at, kNow - seconds(10));
  EXPECT_EQ(actions[0].exit_code, 3);
  // Once reported, the stale desired view (still "running") must not restart it.
  const std::map<std::string, Reported> after{{"p1", {PodState::kExited, "c1", 3}}};
  EXPECT_EQ(Describe(Plan({PodWanted("p1")}, {exited}, after, kNow)), "");
}

TEST(PlanTest, AStartAfterAnExitGetsAFreshContainer) {
  DesiredPod started_again = PodWanted("p1");
  started_again.pod.generation = 5;  // exit (4), then start (5)
  const std::map<std::string, Reported> reported{{"p1", {PodState::kExited, "c1", 3}}};
  EXPECT_EQ(Describe(Plan({started_again}, {Container("c1", "p1", false)}, reported, kNow)),
            "remove p1;");
  EXPECT_EQ(Describe(Plan({started_again}, {}, reported, kNow)), "create p1;");
}

TEST(PlanTest, ARestartReplacesTheContainerOfTheOlderRun) {
  DesiredPod restarted = PodWanted("p1", core::DesiredState::kRunning, PodState::kRunning);
  restarted.pod.restarts = 1;
  const std::map<std::string, Reported> reported{{"p1", {PodState::kRunning, "c1", 3}}};
  EXPECT_EQ(Describe(Plan({restarted}, {Container("c1", "p1", true, 0)}, reported, kNow)),
            "remove p1;");
  // The new container is reported although the state stays "running": its id and ports changed.
  EXPECT_EQ(Describe(Plan({restarted}, {Container("c2", "p1", true, 1)}, reported, kNow)),
            "report p1 running;");
}

TEST(PlanTest, ACreatedContainerIsStartedAndAStartErrorIsAFailure) {
  ContainerInfo created = Container("c1", "p1", false);
  created.started_at.reset();
  created.finished_at.reset();
  EXPECT_EQ(Describe(Plan({PodWanted("p1")}, {created}, {}, kNow)), "start p1;");
  created.error = "OCI runtime error: no such file";
  const std::vector<Action> actions = Plan({PodWanted("p1")}, {created}, {}, kNow);
  ASSERT_EQ(Describe(actions), "report p1 failed;");
  EXPECT_EQ(actions[0].message, created.error);
}

TEST(PlanTest, StoppingStopsThenReportsTheExitTimeThenRemovesTheContainer) {
  const DesiredPod stop = PodWanted("p1", core::DesiredState::kStopped, PodState::kRunning);
  std::map<std::string, Reported> reported{{"p1", {PodState::kRunning, "c1", 3}}};
  EXPECT_EQ(Describe(Plan({stop}, {Container("c1", "p1", true)}, reported, kNow)), "stop p1;");
  const std::vector<Action> report = Plan({stop}, {Container("c1", "p1", false)}, reported, kNow);
  ASSERT_EQ(Describe(report), "report p1 stopped;");
  EXPECT_EQ(report[0].at, kNow - seconds(10)) << "billing ends when the container did";
  reported["p1"] = {PodState::kStopped, "c1", 3};
  EXPECT_EQ(Describe(Plan({stop}, {Container("c1", "p1", false)}, reported, kNow)), "remove p1;");
  EXPECT_EQ(Describe(Plan({stop}, {}, reported, kNow)), "");
}

TEST(PlanTest, TerminatingRemovesTheVolumeBeforeSayingTerminated) {
  const DesiredPod gone = PodWanted("p1", core::DesiredState::kTerminated, PodState::kStopped);
  EXPECT_EQ(Describe(Plan({gone}, {Container("c1", "p1", false)}, {}, kNow)), "remove p1;");
  EXPECT_EQ(Describe(Plan({gone}, {}, {}, kNow)), "remove-volume p1;report p1 terminated;");
  const std::map<std::string, Reported> reported{{"p1", {PodState::kTerminated, "", 3}}};
  EXPECT_EQ(Describe(Plan({gone}, {}, reported, kNow)), "");
}

TEST(PlanTest, AfterTerminatedNothingIsSaidAgainThoughTheViewLags) {
  const DesiredPod lagging = PodWanted("p1", core::DesiredState::kTerminated, PodState::kRunning);
  std::map<std::string, Reported> reported{{"p1", {PodState::kStopped, "c1", 3}}};
  EXPECT_EQ(Describe(Plan({lagging}, {}, reported, kNow)), "remove-volume p1;report p1 terminated;")
      << "stopped was said once; the server's view still says running";
  reported["p1"] = {PodState::kTerminated, "", 3};
  EXPECT_EQ(Describe(Plan({lagging}, {}, reported, kNow)), "");
}

TEST(PlanTest, TerminatingARunningPodEndsItsBillingAtTheStopFirst) {
  const DesiredPod gone = PodWanted("p1", core::DesiredState::kTerminated, PodState::kRunning);
  EXPECT_EQ(Describe(Plan({gone}, {Container("c1", "p1", true)}, {}, kNow)), "stop p1;");
  EXPECT_EQ(Describe(Plan({gone}, {Container("c1", "p1", false)}, {}, kNow)), "report p1 stopped;");
}

TEST(PlanTest, OrphansAreStoppedReportedIfTheServerThoughtThemRunningAndRemoved) {
  std::map<std::string, Reported> reported{{"gone", {PodState::kRunning, "c9", 3}}};
  EXPECT_EQ(Describe(Plan({}, {Container("c9", "gone", true)}, reported, kNow)), "stop gone;");
  EXPECT_EQ(Describe(Plan({}, {Container("c9", "gone", false)}, reported, kNow)),
            "report gone stopped;");
  reported["gone"] = {PodState::kStopped, "c9", 3};
  EXPECT_EQ(Describe(Plan({}, {Container("c9", "gone", false)}, reported, kNow)), "remove gone;");
}

TEST(PlanTest, OtherPodsAreUntouchedByOnePodsActions) {
  const std::map<std::string, Reported> reported{{"p2", {PodState::kRunning, "c2", 3}}};
  EXPECT_EQ(Describe(Plan({PodWanted("p1"), PodWanted("p2")}, {Container("c2", "p2", true)},
                          reported, kNow)),
            "create p1;");
}

}  // namespace
}  // namespace suanli::agent
