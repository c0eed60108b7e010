// Scaler: how many workers an endpoint should have now, and which idle ones to stop.
//
// A pure decision from what the control plane sees at a tick: the queue (its length and the
// oldest job's wait), the jobs in progress, each worker's state and how long it has been idle, and
// the endpoint's bounds (endpoint.h). It never stops a worker that runs a job or is still starting
// (a busy worker is drained: it is stopped only once idle); it stops idle workers above the floor
// once they have been idle for the idle timeout, so an endpoint with min_workers 0 scales to zero;
// it never goes above max_workers, and stops idle workers at once when there are more than that
// (the bound was lowered).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"
#include "serverless/endpoint.h"

namespace suanli::serverless {

enum class WorkerState {
  kStarting,  // its pod is not running yet (pending, pulling, starting)
  kIdle,      // running, with no job
  kBusy,      // running a job
};

struct WorkerView {
  std::string id;  // the worker's pod id
  WorkerState state = WorkerState::kStarting;
  core::TimePoint idle_since;  // for kIdle: since when
};

struct ScalerInput {
  core::TimePoint now;
  int in_queue = 0;
  std::optional<core::TimePoint> oldest_queued_at;  // set when in_queue > 0
  int in_progress = 0;
  std::vector<WorkerView> workers;  // live ones: a worker being stopped is not listed
};

struct ScalerDecision {
  int add = 0;                    // new workers to start
  std::vector<std::string> stop;  // idle workers to stop, longest idle first

  friend bool operator==(const ScalerDecision&, const ScalerDecision&) = default;
};

ScalerDecision DecideScale(const Endpoint& endpoint, const ScalerInput& input);

}  // namespace suanli::serverless
