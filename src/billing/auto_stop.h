// Auto-stop: when a running pod is stopped by its own settings rather than by its owner. Two rules,
// each with a warning before the stop:
//   - stop_after: the pod has run (this run, since it entered `running`) for that long;
//   - idle_stop_after: the pod has been idle for that long, where idle means every signal quiet
//     (IsActive): GPU utilisation, CPU, open SSH sessions, HTTP traffic through the proxy.
// The control plane keeps each running pod's last active time, and calls DecideAutoStop on every
// tick. Pure: no clock, no I/O; the caller gives the times.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

namespace suanli::billing {

// What a pod's node says about it, one heartbeat's sample.
struct ActivitySample {
  int gpu_percent = 0;  // the busiest of its GPUs; simulated GPUs report 0
  bool gpu_simulated = false;
  double cpu_percent = 0;  // of one CPU, since the node's previous sample
  int ssh_sessions = 0;    // established TCP connections to its SSH port
};

struct IdleThresholds {
  int gpu_percent = 5;      // busy at or above
  double cpu_percent = 10;  // busy at or above (of one CPU)
};

// Whether `sample` shows the pod in use, and what was busy ("gpu 40%", "cpu 85%", "1 ssh
// session"; several joined by ", ") in *why. Quiet on every signal: false.
bool IsActive(const ActivitySample& sample, const IdleThresholds& thresholds, std::string* why);

struct AutoStopSettings {
  core::Duration stop_after{0};       // 0: no limit
  core::Duration idle_stop_after{0};  // 0: never for idleness
};

struct AutoStopState {
  core::TimePoint running_since;  // this run's start
  core::TimePoint last_active;    // the last sign of use; running_since at the latest
  bool idle_warned = false;       // since last_active
  bool runtime_warned = false;    // this run
};

enum class AutoStopAction { kNone, kWarnIdle, kStopIdle, kWarnRuntime, kStopRuntime };

struct AutoStopDecision {
  AutoStopAction action = AutoStopAction::kNone;
  core::Duration idle_for{0};  // now - last_active
  core::Duration ran_for{0};   // now - running_since
  core::Duration left{0};      // for a warning: until the stop
};

// How long before a stop its warning comes: a fifth of the window, at most 5 minutes.
core::Duration WarningLead(core::Duration window);

// The one thing to do now for a pod with `settings` in `state`. A stop comes only after its
// warning was given (a warning and its stop are never the same tick), and the runtime rule wins
// when both are due.
AutoStopDecision DecideAutoStop(const AutoStopSettings& settings, const AutoStopState& state,
                                core::TimePoint now);

// "90", "90s", "30m", "2h", "1d", "1h30m" -> seconds (at least 1, at most 366 days).
// INVALID_ARGUMENT naming `field` and the accepted forms.
core::Result<int64_t> ParseDurationSeconds(std::string_view text, std::string_view field);

// 5400 -> "1h30m", 90 -> "1m30s", 7200 -> "2h": for messages.
std::string DurationWords(int64_t seconds);

}  // namespace suanli::billing
