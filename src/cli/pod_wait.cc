#include "cli/pod_wait.h"

#include <fmt/format.h>

#include "cli/api_command.h"
#include "cli/api_views.h"

namespace suanli::cli {
namespace {

// True when a pod in `state` will not reach `want` without someone acting on it.
bool GaveUp(std::string_view state, std::string_view desired, std::string_view want) {
  if (state == want) return false;
  if (want == "ready") want = "running";
  if (state == "failed" || state == "terminated") return true;
  if (want == "running") return state == "exited" || (state == "stopped" && desired != "running");
  return false;
}

std::string Because(const boost::json::value& pod) {
  const std::string reason = JsonText(pod, "state_reason");
  return reason.empty() ? "" : ": " + reason;
}

}  // namespace

core::Result<boost::json::value> WaitForPodState(ApiClient& api, const ApiEnvironment& env,
                                                 std::string_view id, std::string_view want,
                                                 std::chrono::milliseconds timeout,
                                                 std::chrono::milliseconds interval) {
  const core::TimePoint deadline = env.clock->Now() + timeout;
  const std::string target = IdTarget("pods", id);
  while (true) {
    core::Result<boost::json::value> pod = api.Get(target);
    if (!pod.ok()) return pod.status();
    const std::string state = JsonText(*pod, "state");
    const boost::json::value* ready =
        pod->is_object() ? pod->as_object().if_contains("ready") : nullptr;
    const bool is_ready =
        state == "running" && ready != nullptr && ready->is_bool() && ready->as_bool();
    if (want == "ready" ? is_ready : state == want) return pod;
    if (GaveUp(state, JsonText(*pod, "desired_state"), want)) {
      return core::FailedPreconditionError(
          fmt::format("pod {} is {}, not {}{}", id, state, want, Because(*pod)));
    }
    if (env.clock->Now() >= deadline) {
      return core::UnavailableError(
          fmt::format("pod {} is still {}{} after {:g} s, not {}{}", id, state,
                      state == "running" && want == "ready" ? " (its ports do not answer yet)" : "",
                      std::chrono::duration<double>(timeout).count(), want, Because(*pod)));
    }
    env.sleep(interval);
  }
}

}  // namespace suanli::cli
