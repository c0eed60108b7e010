#include "serverless/scaler.h"

#include <algorithm>

namespace suanli::serverless {

ScalerDecision DecideScale(const Endpoint& endpoint, const ScalerInput& input) {
  int starting = 0;
  int idle = 0;
  int busy = 0;
  std::vector<const WorkerView*> idle_workers;
  for (const WorkerView& worker : input.workers) {
    switch (worker.state) {
      case WorkerState::kStarting:
        ++starting;
        break;
      case WorkerState::kIdle:
        ++idle;
        idle_workers.push_back(&worker);
        break;
      case WorkerState::kBusy:
        ++busy;
        break;
    }
  }
  const int live = starting + idle + busy;

  // The workers the jobs ask for, before the bounds.
  int demand = 0;
  if (endpoint.scaler == ScalerKind::kRequestCount) {
    const int jobs = input.in_queue + input.in_progress;
    demand = (jobs + endpoint.scaler_value - 1) / endpoint.scaler_value;
  } else {
    // Queued jobs no idle or starting worker will take.
    const int uncovered = std::max(0, input.in_queue - idle - starting);
    demand = busy + std::min(input.in_queue, idle + starting);
    if (uncovered > 0) {
      const bool waited_long =
          input.oldest_queued_at &&
          input.now - *input.oldest_queued_at >= std::chrono::seconds(endpoint.scaler_value);
      // With no worker at all nobody will ever take the job: waiting for the delay helps nothing.
      if (live == 0 || waited_long) demand += waited_long ? uncovered : 1;
    }
  }
  // The floor: never below min_workers, and a warm buffer of idle workers beyond the busy ones.
  const int floor = std::max(endpoint.min_workers, busy + endpoint.warm_buffer);
  const int wanted = std::min(endpoint.max_workers, std::max(demand, floor));

  ScalerDecision decision;
  decision.add = std::max(0, wanted - live);

  // Longest idle first.
  std::sort(idle_workers.begin(), idle_workers.end(),
            [](const WorkerView* a, const WorkerView* b) { return a->idle_since < b->idle_since; });
  int surplus = live - wanted;
  for (const WorkerView* worker : idle_workers) {
    if (surplus <= 0) break;
    // Over max_workers: at once. Otherwise only after the idle timeout, and never while jobs wait.
    const bool over_max = live - static_cast<int>(decision.stop.size()) > endpoint.max_workers;
    const bool timed_out = input.now - worker->idle_since >= endpoint.idle_timeout;
    if (over_max || (timed_out && input.in_queue == 0)) {
      decision.stop.push_back(worker->id);
      --surplus;
    }
  }
  return decision;
}

}  // namespace suanli::serverless
