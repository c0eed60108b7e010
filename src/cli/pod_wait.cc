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

// `result`, after ending the line of a pull's bar left on screen.
core::Result<boost::json::value> Finished(core::Result<boost::json::value> result,
                                          const std::string& bar, std::ostream* progress) {
  if (!bar.empty() && progress != nullptr) *progress << "\n";
  return result;
}

}  // namespace

core::Result<boost::json::value> WaitForPodState(ApiClient& api, const ApiEnvironment& env,
                                                 std::string_view id, std::string_view want,
                                                 std::chrono::milliseconds timeout,
                                                 std::ostream* progress,
                                                 std::chrono::milliseconds interval) {
  const core::TimePoint deadline = env.clock->Now() + timeout;
  const std::string target = IdTarget("pods", id);
  std::string bar;  // the pull's bar as last drawn; "" when none is on screen
  auto show_pull = [&](const boost::json::value& pod) {
    if (progress == nullptr) return;
    const boost::json::value* pull = JsonField(pod, "pull");
    std::string now;
    if (pull != nullptr && pull->is_object()) {
      now = "pulling " + JsonText(pod, "image") + " " +
            PullBar(JsonInteger(*pull, "current_bytes"), JsonInteger(*pull, "total_bytes"));
    }
    if (now == bar) return;
    *progress << (now.empty() ? "\n" : "\r" + now) << std::flush;
    bar = now;
  };
  while (true) {
    core::Result<boost::json::value> pod = api.Get(target);
    if (!pod.ok()) return Finished(pod.status(), bar, progress);
    show_pull(*pod);
    const std::string state = JsonText(*pod, "state");
    const boost::json::value* ready =
        pod->is_object() ? pod->as_object().if_contains("ready") : nullptr;
    const bool is_ready =
        state == "running" && ready != nullptr && ready->is_bool() && ready->as_bool();
    if (want == "ready" ? is_ready : state == want) return Finished(pod, bar, progress);
    if (GaveUp(state, JsonText(*pod, "desired_state"), want)) {
      return Finished(core::FailedPreconditionError(
                          fmt::format("pod {} is {}, not {}{}", id, state, want, Because(*pod))),
                      bar, progress);
    }
    if (env.clock->Now() >= deadline && state == "pending") {
      // Still waiting for a GPU (or the vCPU, RAM or disk beside one): out of capacity.
      return Finished(
          core::ResourceExhaustedError(fmt::format(
              "pod {} is still pending after {:g} s{}; it stays queued (suanli pods "
              "wait {} or suanli pods rm {})",
              id, std::chrono::duration<double>(timeout).count(), Because(*pod), id, id)),
          bar, progress);
    }
    if (env.clock->Now() >= deadline) {
      return Finished(
          core::UnavailableError(fmt::format(
              "pod {} is still {}{} after {:g} s, not {}{}", id, state,
              state == "running" && want == "ready" ? " (its ports do not answer yet)" : "",
              std::chrono::duration<double>(timeout).count(), want, Because(*pod))),
          bar, progress);
    }
    env.sleep(interval);
  }
}

}  // namespace suanli::cli
