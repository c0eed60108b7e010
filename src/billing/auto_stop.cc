#include "billing/auto_stop.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace suanli::billing {

namespace {

using std::chrono::seconds;

constexpr int64_t kMaxSeconds = int64_t{366} * 24 * 3600;

}  // namespace

bool IsActive(const ActivitySample& sample, const IdleThresholds& thresholds, std::string* why) {
  std::string busy;
  auto add = [&busy](const std::string& what) { busy += (busy.empty() ? "" : ", ") + what; };
  if (sample.gpu_percent >= thresholds.gpu_percent) {
    add("gpu " + std::to_string(sample.gpu_percent) + "%");
  }
  if (sample.cpu_percent >= thresholds.cpu_percent) {
    add("cpu " + std::to_string(static_cast<int>(std::lround(sample.cpu_percent))) + "%");
  }
  if (sample.ssh_sessions > 0) {
    add(std::to_string(sample.ssh_sessions) + " ssh session" +
        (sample.ssh_sessions == 1 ? "" : "s"));
  }
  if (why != nullptr) *why = busy;
  return !busy.empty();
}

core::Duration WarningLead(core::Duration window) {
  return std::min<core::Duration>(window / 5, std::chrono::minutes(5));
}

AutoStopDecision DecideAutoStop(const AutoStopSettings& settings, const AutoStopState& state,
                                core::TimePoint now) {
  AutoStopDecision decision;
  decision.ran_for = now - state.running_since;
  decision.idle_for = now - std::max(state.last_active, state.running_since);
  const core::Duration zero{0};
  if (settings.stop_after > zero) {
    const core::Duration left = settings.stop_after - decision.ran_for;
    if (state.runtime_warned && left <= zero) {
      decision.action = AutoStopAction::kStopRuntime;
      return decision;
    }
    if (!state.runtime_warned && left <= WarningLead(settings.stop_after)) {
      decision.action = AutoStopAction::kWarnRuntime;
      decision.left = std::max(left, zero);
      return decision;
    }
  }
  if (settings.idle_stop_after > zero) {
    const core::Duration left = settings.idle_stop_after - decision.idle_for;
    if (state.idle_warned && left <= zero) {
      decision.action = AutoStopAction::kStopIdle;
      return decision;
    }
    if (!state.idle_warned && left <= WarningLead(settings.idle_stop_after)) {
      decision.action = AutoStopAction::kWarnIdle;
      decision.left = std::max(left, zero);
      return decision;
    }
  }
  return decision;
}

core::Result<int64_t> ParseDurationSeconds(std::string_view text, std::string_view field) {
  auto invalid = [&] {
    return core::InvalidArgumentError(
        std::string(field) + ": '" + std::string(text) +
        "' is not a duration; write seconds (3600) or a number with a unit: 90s, 30m, 2h, 1d, "
        "1h30m (at most 366d)");
  };
  if (text.empty()) return invalid();
  int64_t total = 0;
  size_t i = 0;
  bool any_unit = false;
  while (i < text.size()) {
    int64_t number = 0;
    const size_t start = i;
    while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
      number = number * 10 + (text[i] - '0');
      if (number > kMaxSeconds) return invalid();
      ++i;
    }
    if (i == start) return invalid();
    if (i == text.size()) {
      if (any_unit) return invalid();  // "1h30": a unit is needed after the first
      total += number;
      break;
    }
    int64_t unit = 0;
    switch (text[i]) {
      case 's':
        unit = 1;
        break;
      case 'm':
        unit = 60;
        break;
      case 'h':
        unit = 3600;
        break;
      case 'd':
        unit = 86400;
        break;
      default:
        return invalid();
    }
    ++i;
    any_unit = true;
    total += number * unit;
    if (total > kMaxSeconds) return invalid();
  }
  if (total < 1 || total > kMaxSeconds) return invalid();
  return total;
}

std::string DurationWords(int64_t total) {
  if (total <= 0) return "0s";
  const int64_t days = total / 86400, hours = total % 86400 / 3600, minutes = total % 3600 / 60,
                secs = total % 60;
  std::string out;
  if (days > 0) out += std::to_string(days) + "d";
  if (hours > 0) out += std::to_string(hours) + "h";
  if (minutes > 0) out += std::to_string(minutes) + "m";
  if (secs > 0) out += std::to_string(secs) + "s";
  return out;
}

}  // namespace suanli::billing
