// Waiting for a pod to reach a state, as `suanli pods wait` and `pods create --wait` do.
#pragma once

#include <boost/json/value.hpp>
#include <chrono>
#include <ostream>
#include <string_view>

#include "cli/api_client.h"
#include "core/status.h"

namespace suanli::cli {

// Polls GET /v1/pods/ID every `interval` (sleeping with env.sleep, timing with env.clock) until
// the pod's state is `want` ("ready": running with every port answering), and returns the pod.
// FAILED_PRECONDITION with the pod's state_reason when it reaches a state it will not leave on its
// own for `want` (failed or terminated; exited, or stopped by request, while waiting for running);
// when `timeout` passes first, RESOURCE_EXHAUSTED (exit 6) if the pod is still pending (waiting for
// capacity), else UNAVAILABLE; the API's error when a poll fails. With `progress`, an
// image pull shows there as a bar (PullBar), redrawn in place while it changes.
core::Result<boost::json::value> WaitForPodState(
    ApiClient& api, const ApiEnvironment& env, std::string_view id, std::string_view want,
    std::chrono::milliseconds timeout, std::ostream* progress = nullptr,
    std::chrono::milliseconds interval = std::chrono::milliseconds(500));

}  // namespace suanli::cli
