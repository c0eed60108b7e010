#include "billing/auto_stop.h"

#include <gtest/gtest.h>

namespace suanli::billing {
namespace {

using std::chrono::minutes;
using std::chrono::seconds;

const core::TimePoint kStart = core::TimePoint(seconds(1'796'200'000));

TEST(AutoStopTest, AnyBusySignalMakesThePodActiveAndSaysWhich) {
  const IdleThresholds thresholds;
  std::string why;
  EXPECT_FALSE(IsActive({}, thresholds, &why));
  EXPECT_EQ(why, "");
  EXPECT_FALSE(IsActive({4, false, 9.9, 0}, thresholds, &why));  // just under both thresholds
  EXPECT_TRUE(IsActive({5, false, 0, 0}, thresholds, &why));
  EXPECT_EQ(why, "gpu 5%");
  EXPECT_TRUE(IsActive({0, true, 85.4, 2}, thresholds, &why));
  EXPECT_EQ(why, "cpu 85%, 2 ssh sessions");
  EXPECT_TRUE(IsActive({0, false, 0, 1}, thresholds, &why));
  EXPECT_EQ(why, "1 ssh session");
}

TEST(AutoStopTest, AnIdlePodIsWarnedAFifthOfTheWindowBeforeAndStoppedOnlyAfterTheWarning) {
  const AutoStopSettings settings{seconds(0), minutes(30)};
  AutoStopState state{kStart, kStart, false, false};
  EXPECT_EQ(DecideAutoStop(settings, state, kStart + minutes(23)).action, AutoStopAction::kNone);
  AutoStopDecision warn = DecideAutoStop(settings, state, kStart + minutes(25));
  EXPECT_EQ(warn.action, AutoStopAction::kWarnIdle);
  EXPECT_EQ(warn.left, minutes(5));
  EXPECT_EQ(warn.idle_for, minutes(25));
  // Long past the window without a warning (the server was down): warned first, stopped after.
  warn = DecideAutoStop(settings, state, kStart + minutes(90));
  EXPECT_EQ(warn.action, AutoStopAction::kWarnIdle);
  EXPECT_EQ(warn.left, seconds(0));
  state.idle_warned = true;
  EXPECT_EQ(DecideAutoStop(settings, state, kStart + minutes(29)).action, AutoStopAction::kNone);
  EXPECT_EQ(DecideAutoStop(settings, state, kStart + minutes(30)).action,
            AutoStopAction::kStopIdle);
  // Activity moves the window.
  state = {kStart, kStart + minutes(20), false, false};
  EXPECT_EQ(DecideAutoStop(settings, state, kStart + minutes(30)).action, AutoStopAction::kNone);
  // A short window warns a fifth before, not five minutes before.
  const AutoStopSettings short_window{seconds(0), seconds(100)};
  state = {kStart, kStart, false, false};
  EXPECT_EQ(DecideAutoStop(short_window, state, kStart + seconds(79)).action,
            AutoStopAction::kNone);
  EXPECT_EQ(DecideAutoStop(short_window, state, kStart + seconds(80)).action,
            AutoStopAction::kWarnIdle);
}

TEST(AutoStopTest, TheRuntimeLimitCountsFromTheRunsStartAndWinsOverIdleness) {
  const AutoStopSettings settings{minutes(60), minutes(10)};
  AutoStopState state{kStart, kStart, true, false};
  // Both due: the runtime rule speaks first.
  AutoStopDecision decision = DecideAutoStop(settings, state, kStart + minutes(56));
  EXPECT_EQ(decision.action, AutoStopAction::kWarnRuntime);
  EXPECT_EQ(decision.left, minutes(4));
  state.runtime_warned = true;
  state.last_active = kStart + minutes(58);  // busy: the idle rule has nothing to say
  EXPECT_EQ(DecideAutoStop(settings, state, kStart + minutes(59)).action, AutoStopAction::kNone);
  decision = DecideAutoStop(settings, state, kStart + minutes(60));
  EXPECT_EQ(decision.action, AutoStopAction::kStopRuntime);
  EXPECT_EQ(decision.ran_for, minutes(60));
  // No settings: never.
  EXPECT_EQ(DecideAutoStop({}, state, kStart + std::chrono::hours(1000)).action,
            AutoStopAction::kNone);
}

TEST(AutoStopTest, DurationsAreSecondsOrNumbersWithUnitsAndBadOnesSayHowToWriteThem) {
  EXPECT_EQ(*ParseDurationSeconds("3600", "stop_after"), 3600);
  EXPECT_EQ(*ParseDurationSeconds("90s", "stop_after"), 90);
  EXPECT_EQ(*ParseDurationSeconds("30m", "stop_after"), 1800);
  EXPECT_EQ(*ParseDurationSeconds("2h", "stop_after"), 7200);
  EXPECT_EQ(*ParseDurationSeconds("1d", "stop_after"), 86400);
  EXPECT_EQ(*ParseDurationSeconds("1h30m", "stop_after"), 5400);
  for (const char* bad : {"", "0", "0s", "h", "2x", "1h30", "-5", "1.5h", "367d", "99999999999"}) {
    const core::Result<int64_t> parsed = ParseDurationSeconds(bad, "idle_stop_after");
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), core::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find("idle_stop_after"), std::string::npos);
    EXPECT_NE(parsed.status().message().find("30m"), std::string::npos);
  }
  EXPECT_EQ(DurationWords(5400), "1h30m");
  EXPECT_EQ(DurationWords(90), "1m30s");
  EXPECT_EQ(DurationWords(7200), "2h");
}

}  // namespace
}  // namespace suanli::billing
