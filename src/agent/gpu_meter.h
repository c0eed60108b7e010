// GpuMeter: what suanli-gpu-probe measured on this host's GPUs (gpu_probe.h), for the heartbeat.
// Kept in the state database from an earlier start while it covers every GPU the host has now,
// else measured once, while no pod of this node runs (a pod would slow the probe, and the probe the
// pod); a host whose pods never stop keeps its datasheet figures until it starts with none.
//
// Threads: Measure runs once on a thread of the agent's (agent.cc) unless --gpu-probe off.
// Thread-safety: any thread; measurements_ is GUARDED_BY the agent's mutex (agent_context.h).
#pragma once

#include <functional>
#include <vector>

#include "agent/agent_context.h"
#include "agent/gpu_probe.h"
#include "agent/gpus.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "core/status.h"

namespace suanli::agent {

// The state database's key for suanli-gpu-probe's last output on this host.
inline constexpr std::string_view kMeasuredGpusKey = "gpu_measurements";

class GpuMeter {
 public:
  // Runs the probe found as options().gpu_probe says; what it measured, or why not.
  using ProbeRunner = std::function<core::Result<std::vector<MeasuredGpu>>()>;

  // `on_measured` is called (without the agent's mutex) once figures are known, so the next
  // heartbeat carries them at once. `run_probe` replaces the real probe in tests; empty: the real
  // one. Borrows `context` and `gpus`.
  GpuMeter(AgentContext& context, const GpuInventory& gpus, std::function<void()> on_measured,
           ProbeRunner run_probe = {});
  GpuMeter(const GpuMeter&) = delete;
  GpuMeter& operator=(const GpuMeter&) = delete;

  // Measures (or loads what was measured) as above, and logs what came of it.
  void Measure() EXCLUDES(context_.mutex());
  // The figures for the heartbeat; empty until measured.
  std::vector<core::GpuMeasurement> Measurements() const EXCLUDES(context_.mutex());

 private:
  core::Result<std::vector<MeasuredGpu>> RunProbe() EXCLUDES(context_.mutex());

  AgentContext& context_;
  const GpuInventory& gpus_;
  const std::function<void()> on_measured_;
  const ProbeRunner run_probe_;
  std::vector<core::GpuMeasurement> measurements_ GUARDED_BY(context_.mutex());
};

}  // namespace suanli::agent
