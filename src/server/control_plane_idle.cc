// Auto-stop: a running pod's signs of use (its node's heartbeat: GPU, CPU, SSH; the proxy: HTTP),
// and the rules of billing/auto_stop.h run on every tick: a warning event, then the stop. And
// auto-terminate: a pod left stopped past its terminate_after_stopped.
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <chrono>

#include "billing/auto_stop.h"
#include "server/control_plane.h"
#include "server/control_plane_internal.h"
#include "server/events.h"

namespace suanli::server {

namespace {

using billing::AutoStopAction;
using billing::DurationWords;

int64_t Seconds(core::Duration duration) {
  return std::chrono::duration_cast<std::chrono::seconds>(duration).count();
}

bool HasAutoStop(const core::Pod& pod) { return pod.stop_after_s > 0 || pod.idle_stop_after_s > 0; }

// What "idle" meant, for people.
std::string IdleMeaning(const billing::IdleThresholds& thresholds) {
  return "GPU below " + std::to_string(thresholds.gpu_percent) + "%, CPU below " +
         std::to_string(static_cast<int>(thresholds.cpu_percent)) +
         "% of a core, no SSH session and no HTTP through the proxy";
}

}  // namespace

ControlPlane::PodUse& ControlPlane::UseOf(const core::Pod& pod) {
  PodUse& use = pod_use_[pod.id];
  if (use.running_since != *pod.running_since) {  // a new run: a new window
    use = PodUse{};
    use.running_since = *pod.running_since;
    use.last_active = *pod.running_since;
    use.last_busy = "its start";
  }
  return use;
}

void ControlPlane::NoteActivity(const core::Node& node,
                                const std::vector<wire::PodActivity>& samples) {
  const core::TimePoint now = Now();
  const billing::IdleThresholds thresholds;
  for (const wire::PodActivity& sample : samples) {
    const auto pod = pods_.find(sample.pod_id);
    if (pod == pods_.end() || pod->second.node_id != node.id || !pod->second.running_since ||
        !HasAutoStop(pod->second)) {
      continue;
    }
    billing::ActivitySample activity;
    activity.cpu_percent = sample.cpu_percent;
    activity.ssh_sessions = sample.ssh_sessions;
    // The busiest of its GPUs; a simulated GPU (no reading) counts as 0 and says so.
    activity.gpu_simulated = true;
    for (int index : pod->second.gpu_indices) {
      for (const core::GpuHealth& reading : node.gpu_health) {
        if (reading.index != index || reading.utilization_percent < 0) continue;
        activity.gpu_simulated = false;
        activity.gpu_percent = std::max(activity.gpu_percent, reading.utilization_percent);
      }
    }
    PodUse& use = UseOf(pod->second);
    use.last_sample = activity;
    use.sampled = true;
    use.ssh_known = sample.ssh_known;
    std::string busy;
    if (billing::IsActive(activity, thresholds, &busy)) {
      use.last_active = now;
      use.last_busy = busy;
      use.idle_warned = false;
    }
  }
}

void ControlPlane::NoteProxyTraffic(std::string_view pod_id) {
  core::MutexLock lock(mutex_);
  const auto pod = pods_.find(std::string(pod_id));
  if (pod == pods_.end() || !pod->second.running_since || !HasAutoStop(pod->second)) return;
  PodUse& use = UseOf(pod->second);
  use.last_active = Now();
  use.last_busy = "http";
  use.idle_warned = false;
}

void ControlPlane::AutoStop(Change& change, core::TimePoint now) {
  const billing::IdleThresholds thresholds;
  std::set<std::string> running;
  for (const auto& [owner, pod_ids] : spend_.billable_by_owner()) {
    for (const std::string& id : pod_ids) {
      core::Pod& pod = pods_.at(id);
      if (!pod.running_since || !HasAutoStop(pod) || pod.desired != core::DesiredState::kRunning) {
        continue;
      }
      running.insert(id);
      PodUse& use = UseOf(pod);
      // A restarted server saw no activity before it started: the window starts then.
      const billing::AutoStopState state{use.running_since, std::max(use.last_active, started_at_),
                                         use.idle_warned, use.runtime_warned};
      const billing::AutoStopDecision decision = billing::DecideAutoStop(
          {std::chrono::seconds(pod.stop_after_s), std::chrono::seconds(pod.idle_stop_after_s)},
          state, now);
      if (decision.action == AutoStopAction::kNone) continue;
      const billing::ActivitySample& sample = use.last_sample;
      boost::json::object detail{{"idle_for_s", Seconds(decision.idle_for)},
                                 {"ran_for_s", Seconds(decision.ran_for)},
                                 {"stop_after_s", pod.stop_after_s},
                                 {"idle_stop_after_s", pod.idle_stop_after_s},
                                 {"last_active", core::FormatTime(state.last_active)},
                                 {"last_busy", use.last_busy},
                                 {"gpu_percent", sample.gpu_percent},
                                 {"gpu_simulated", sample.gpu_simulated},
                                 {"cpu_percent", sample.cpu_percent},
                                 {"ssh_sessions", sample.ssh_sessions},
                                 {"ssh_known", use.ssh_known},
                                 {"sampled", use.sampled},
                                 {"pre_stop_command", pod.pre_stop_command}};
      std::string kind, reason;
      switch (decision.action) {
        case AutoStopAction::kWarnIdle:
          use.idle_warned = true;
          kind = "pod.idle_warning";
          reason = "has been idle for " + DurationWords(Seconds(decision.idle_for)) + " (" +
                   IdleMeaning(thresholds) + "); it stops in " +
                   DurationWords(Seconds(decision.left)) + " unless it is used";
          break;
        case AutoStopAction::kStopIdle:
          kind = "pod.idle_stop";
          reason = "stopped: idle for " + DurationWords(Seconds(decision.idle_for)) + " (" +
                   IdleMeaning(thresholds) + "; its idle_stop_after is " +
                   DurationWords(pod.idle_stop_after_s) + ")";
          break;
        case AutoStopAction::kWarnRuntime:
          use.runtime_warned = true;
          kind = "pod.runtime_warning";
          reason = "has run for " + DurationWords(Seconds(decision.ran_for)) + "; it stops in " +
                   DurationWords(Seconds(decision.left)) + " (its stop_after is " +
                   DurationWords(pod.stop_after_s) + ")";
          break;
        case AutoStopAction::kStopRuntime:
          kind = "pod.runtime_stop";
          reason = "stopped: it ran for its stop_after of " + DurationWords(pod.stop_after_s);
          break;
        case AutoStopAction::kNone:
          break;
      }
      const bool stop = decision.action == AutoStopAction::kStopIdle ||
                        decision.action == AutoStopAction::kStopRuntime;
      if (stop) {
        if (!pod.pre_stop_command.empty()) reason += "; its pre-stop command runs first";
        SetDesired(change, pod, core::DesiredState::kStopped, reason);
      }
      Notify(change, users_.at(pod.owner_id), "pod " + pod.id + " " + reason);
      core::Event event = PodEvent(pod, kind, reason);
      event.detail = boost::json::serialize(detail);
      change.Emit(std::move(event));
    }
  }
  // Forget pods that no longer run with auto-stop.
  for (auto it = pod_use_.begin(); it != pod_use_.end();) {
    it = running.contains(it->first) ? std::next(it) : pod_use_.erase(it);
  }
}

void ControlPlane::AutoTerminate(Change& change, core::TimePoint now) {
  // Once a minute: the limit is hours or days, and this walks every pod.
  if (last_auto_terminate_ && now - *last_auto_terminate_ < std::chrono::minutes(1)) return;
  last_auto_terminate_ = now;
  std::vector<std::string> due;
  std::vector<std::string> warn;
  for (const auto& [id, pod] : pods_) {
    const bool left_stopped = pod.state == PodState::kStopped || pod.state == PodState::kExited ||
                              pod.state == PodState::kFailed;
    if (pod.terminate_after_stopped_s <= 0 || !left_stopped ||
        pod.desired == core::DesiredState::kTerminated) {
      continue;
    }
    const core::Duration limit = std::chrono::seconds(pod.terminate_after_stopped_s);
    // Its owner hears a day ahead (half the limit, when that is shorter), once per stop: time
    // to start it, or to copy what it holds, before it goes.
    const core::Duration notice = std::min<core::Duration>(std::chrono::hours(24), limit / 2);
    if (now - pod.state_since >= limit) {
      due.push_back(id);
    } else if (now - pod.state_since >= limit - notice) {
      const auto warned = terminate_warned_.find(id);
      if (warned == terminate_warned_.end() || warned->second != pod.state_since)
        warn.push_back(id);
    }
  }
  for (const std::string& id : warn) {
    const core::Pod& pod = pods_.at(id);
    terminate_warned_[id] = pod.state_since;
    const core::TimePoint at =
        pod.state_since + std::chrono::seconds(pod.terminate_after_stopped_s);
    NotifyPod(change, pod, "pod.terminate_warning",
              "will be terminated at " + FormatTime(at) + ", left " +
                  std::string(core::PodStateName(pod.state)) +
                  " for its terminate_after_stopped of " +
                  DurationWords(pod.terminate_after_stopped_s) + ": start it to keep it" +
                  VolumesKept(pod));
  }
  std::erase_if(terminate_warned_,
                [&](const auto& entry) REQUIRES(mutex_) { return !pods_.contains(entry.first); });
  for (const std::string& id : due) {
    core::Pod& pod = pods_.at(id);
    const std::string reason = "terminated: left " + std::string(core::PodStateName(pod.state)) +
                               " for its terminate_after_stopped of " +
                               DurationWords(pod.terminate_after_stopped_s);
    NotifyPod(change, pod, "pod.auto_terminate", reason);
    terminate_warned_.erase(id);
    SetDesired(change, pod, core::DesiredState::kTerminated, reason + VolumesKept(pod));
  }
}

}  // namespace suanli::server
