#include "agent/volume_mover.h"

#include <chrono>
#include <optional>
#include <string>

#include "agent/volume_move.h"
#include "core/clock.h"

namespace suanli::agent {

using core::Result;

bool VolumeMover::MovesDone(const core::Pod& pod) const {
  for (const core::VolumeMove& move : pod.moves) {
    Result<std::optional<std::string>> done = context_.state().Get("moved/" + move.id);
    if (!done.ok() || !done->has_value()) return false;
  }
  return true;
}

void VolumeMover::MoveFor(const core::Pod& pod) {
  (void)context_.StartJob("move:" + pod.id, [this, pod] { Move(pod); });
}

void VolumeMover::Move(const core::Pod& pod) {
  const AgentOptions& options = context_.options();
  for (const core::VolumeMove& move : pod.moves) {
    Result<std::optional<std::string>> moved_before = context_.state().Get("moved/" + move.id);
    if (moved_before.ok() && moved_before->has_value()) continue;
    context_.Log("moving volume " + move.volume + " of " + pod.id + " here from node " +
                 move.from_node_id);
    core::MonotonicTime last_report = core::MonotonicNow() - std::chrono::seconds(2);
    FetchOptions fetch;
    fetch.server_url = options.server_url;
    fetch.node_token = [this] { return context_.node_token(); };
    fetch.move_dir = options.state_dir / "moves";
    fetch.stopping = [this] { return context_.Stopping(); };
    fetch.progress = [&](const wire::MoveProgress& progress) {
      const core::MonotonicTime now = core::MonotonicNow();
      if (now - last_report < std::chrono::seconds(1)) return;
      last_report = now;
      {
        PodReportFields report(pod.id, core::PodState::kStarting, context_.clock().Now());
        report.message = "moving volume " + move.volume + ": " +
                         std::to_string(progress.bytes >> 20) + " of " +
                         std::to_string(progress.total_bytes >> 20) + " MiB";
        report.move = progress;
        reporter_.Queue(report);
      }
    };
    Result<wire::MoveProgress> moved =
        FetchVolume(context_.engine(), context_.clock(), fetch, move);
    if (!moved.ok()) {
      context_.Log("the move of " + move.volume + " for " + pod.id +
                   " stopped: " + moved.status().message());
      const core::StatusCode code = moved.status().code();
      if (code != core::StatusCode::kNotFound && code != core::StatusCode::kUnavailable) {
        PodReportFields report(pod.id, core::PodState::kFailed, context_.clock().Now());
        report.message = "its volume could not be moved here: " + moved.status().message();
        reporter_.Queue(report);
      }
      break;
    }
    if (core::Status noted = context_.state().Set("moved/" + move.id, "1"); !noted.ok()) {
      context_.Log("cannot note the move of " + move.volume + ": " + noted.message());
      break;
    }
    context_.Log("moved volume " + move.volume + " of " + pod.id + ": " +
                 std::to_string(moved->bytes) + " bytes in " + std::to_string(moved->elapsed_ms) +
                 " ms");
    {
      PodReportFields report(pod.id, core::PodState::kStarting, context_.clock().Now());
      report.message = "moved volume " + move.volume + " here";
      report.move = *moved;
      reporter_.Queue(report);
    }
  }
}

}  // namespace suanli::agent
