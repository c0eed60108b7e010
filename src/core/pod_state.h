// Pod states and the actions a person may take in each (PRODUCT.md's contract).
//
// The server owns a pod's desired state and the agent reports its actual state; both use these
// names. Like RunPod's v2 API, every pod lists the actions allowed now, and a wrong action is
// refused with the reason (FAILED_PRECONDITION, HTTP 409) rather than queued or ignored.
#pragma once

#include <span>
#include <string_view>

#include "core/status.h"

namespace suanli::core {

enum class PodState {
  kPending,
  kStarting,
  kRunning,
  kStopping,
  kStopped,
  kExited,
  kFailed,
  kTerminated
};
enum class PodAction { kStop, kStart, kRestart, kTerminate };
// Every state, in lifecycle order (for lists that show each, /metrics among them).
inline constexpr PodState kPodStates[] = {
    PodState::kPending, PodState::kStarting, PodState::kRunning, PodState::kStopping,
    PodState::kStopped, PodState::kExited,   PodState::kFailed,  PodState::kTerminated};

std::string_view PodStateName(PodState state);     // "pending", "running", ...
std::string_view PodActionName(PodAction action);  // "stop", "start", ...
Result<PodState> ParsePodState(std::string_view name);
Result<PodAction> ParsePodAction(std::string_view name);

// The actions allowed in `state`, in a stable order (for the API's `actions` field).
std::span<const PodAction> AllowedActions(PodState state);

// OK when `action` is allowed in `state`; FAILED_PRECONDITION saying why and what to do otherwise.
Status CheckAction(PodState state, PodAction action);

// True for the states in which no container runs: stopped, exited, failed, terminated.
bool IsDown(PodState state);

// True while the pod holds a GPU binding (from scheduling until the container is gone).
bool HoldsGpus(PodState state);

}  // namespace suanli::core
