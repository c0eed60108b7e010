#include "core/pod_state.h"

#include <algorithm>
#include <array>
#include <string>

namespace suanli::core {
namespace {

constexpr std::array<std::string_view, 8> kStateNames = {
    "pending", "starting", "running", "stopping", "stopped", "exited", "failed", "terminated"};
constexpr std::array<std::string_view, 4> kActionNames = {"stop", "start", "restart", "terminate"};

// Why an action is refused, by state: what a person should do instead.
std::string Refusal(PodState state, PodAction action) {
  const std::string what = "cannot " + std::string(PodActionName(action)) + " a pod that is " +
                           std::string(PodStateName(state));
  switch (state) {
    case PodState::kTerminated:
      return what + "; it is gone, create a new one";
    case PodState::kStopping:
      return what + "; wait until it is stopped";
    case PodState::kPending:
    case PodState::kStarting:
      return what + "; stop it, or wait until it is running";
    case PodState::kRunning:
      return what + "; it is already running (restart restarts it)";
    default:
      // Down (stopped, exited, failed): stop and restart are what is left. Stopping a pod that
      // is already down would be done already; a restart is a start here.
      if (action == PodAction::kStop) {
        return what + "; it is already " + std::string(PodStateName(state)) +
               ", nothing to stop (start it to run it again, or terminate it to delete it)";
      }
      return what + "; it is not running: start it instead";
  }
}

}  // namespace

std::string_view PodStateName(PodState state) { return kStateNames[static_cast<size_t>(state)]; }
std::string_view PodActionName(PodAction action) {
  return kActionNames[static_cast<size_t>(action)];
}

Result<PodState> ParsePodState(std::string_view name) {
  const auto it = std::find(kStateNames.begin(), kStateNames.end(), name);
  if (it == kStateNames.end())
    return InvalidArgumentError("unknown pod state '" + std::string(name) + "'");
  return static_cast<PodState>(it - kStateNames.begin());
}

Result<PodAction> ParsePodAction(std::string_view name) {
  const auto it = std::find(kActionNames.begin(), kActionNames.end(), name);
  if (it == kActionNames.end()) {
    return InvalidArgumentError("unknown action '" + std::string(name) +
                                "'; choose stop, start, restart or terminate");
  }
  return static_cast<PodAction>(it - kActionNames.begin());
}

std::span<const PodAction> AllowedActions(PodState state) {
  using enum PodAction;
  static constexpr PodAction kWhileStarting[] = {kStop, kTerminate};
  static constexpr PodAction kWhileRunning[] = {kStop, kRestart, kTerminate};
  static constexpr PodAction kWhileStopping[] = {kTerminate};
  static constexpr PodAction kWhileDown[] = {kStart, kTerminate};
  switch (state) {
    case PodState::kPending:
    case PodState::kStarting:
      return kWhileStarting;
    case PodState::kRunning:
      return kWhileRunning;
    case PodState::kStopping:
      return kWhileStopping;
    case PodState::kStopped:
    case PodState::kExited:
    case PodState::kFailed:
      return kWhileDown;
    case PodState::kTerminated:
      return {};
  }
  return {};
}

Status CheckAction(PodState state, PodAction action) {
  const std::span<const PodAction> allowed = AllowedActions(state);
  if (std::find(allowed.begin(), allowed.end(), action) != allowed.end()) return Status::Ok();
  return FailedPreconditionError(Refusal(state, action));
}

bool HoldsGpus(PodState state) {
  return state == PodState::kStarting || state == PodState::kRunning ||
         state == PodState::kStopping;
}

bool IsDown(PodState state) {
  return state == PodState::kStopped || state == PodState::kExited || state == PodState::kFailed ||
         state == PodState::kTerminated;
}

}  // namespace suanli::core
