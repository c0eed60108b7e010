#include "agent/gpu_meter.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "agent/reconcile.h"

namespace suanli::agent {

using core::Result;

GpuMeter::GpuMeter(AgentContext& context, const GpuInventory& gpus,
                   std::function<void()> on_measured, ProbeRunner run_probe)
    : context_(context),
      gpus_(gpus),
      on_measured_(std::move(on_measured)),
      run_probe_(std::move(run_probe)) {}

std::vector<core::GpuMeasurement> GpuMeter::Measurements() const {
  core::MutexLock lock(context_.mutex());
  return measurements_;
}

void GpuMeter::Measure() {
  std::map<std::string, int> index_by_uuid;
  for (const Gpu& gpu : gpus_.gpus) {
    if (gpu.mig_profile.empty() && !gpu.type.empty()) index_by_uuid[gpu.uuid] = gpu.index;
  }
  if (index_by_uuid.empty()) return;
  StateDb& state = context_.state();
  std::vector<MeasuredGpu> measured;
  if (Result<std::optional<std::string>> kept = state.Get(kMeasuredGpusKey);
      kept.ok() && kept->has_value()) {
    if (Result<std::vector<MeasuredGpu>> parsed = ParseGpuProbeOutput(**kept);
        parsed.ok() && ToNodeMeasurements(*parsed, index_by_uuid).size() == index_by_uuid.size()) {
      measured = std::move(parsed).value();
    }
  }
  if (measured.empty()) {
    Result<std::vector<MeasuredGpu>> fresh = run_probe_ ? run_probe_() : RunProbe();
    if (!fresh.ok()) {
      // Where nobody asked for the probe and none is here, there is nothing to say.
      if (context_.options().gpu_probe != "auto" ||
          fresh.status().code() != core::StatusCode::kNotFound) {
        context_.Log("GPUs not measured, so the advisor uses their datasheets: " +
                     fresh.status().message());
      }
      return;
    }
    measured = std::move(fresh).value();
    (void)state.Set(kMeasuredGpusKey, EncodeMeasuredGpus(measured));
  }
  std::vector<core::GpuMeasurement> figures = ToNodeMeasurements(measured, index_by_uuid);
  if (figures.empty()) {
    context_.Log("the GPU probe measured none of this node's GPUs (other UUIDs than " +
                 index_by_uuid.begin()->first + "...), so the advisor uses their datasheets");
    return;
  }
  std::string said;
  for (const core::GpuMeasurement& gpu : figures) {
    said += fmt::format("; GPU {}: memory {:.0f} GB/s, fp16 {:.0f} TFLOPS", gpu.index,
                        gpu.memory_bandwidth_gbps, gpu.fp16_tflops);
  }
  context_.Log("measured " + std::to_string(figures.size()) +
               " GPU(s), reported with each heartbeat" + said);
  {
    core::MutexLock lock(context_.mutex());
    measurements_ = std::move(figures);
  }
  // The advisor uses them from the next heartbeat: send it now.
  if (on_measured_) on_measured_();
}

Result<std::vector<MeasuredGpu>> GpuMeter::RunProbe() {
  const AgentOptions& options = context_.options();
  Result<std::filesystem::path> probe =
      options.gpu_probe == "auto" ? FindGpuProbe() : FindGpuProbe(options.gpu_probe, {});
  if (!probe.ok()) return probe.status();
  // Whether pods run is the engine's to say: wait for it (it may start after the agent).
  Engine& engine = context_.engine();
  Result<std::vector<ContainerInfo>> containers = engine.ListLabelled(kPodLabel);
  while (!containers.ok()) {
    context_.Sleep(std::chrono::seconds(5));
    if (context_.Stopping()) {
      return core::UnavailableError("the agent stopped before the engine answered");
    }
    containers = engine.ListLabelled(kPodLabel);
  }
  // This node's pods only (an engine may serve other agents too); one not yet registered has
  // none.
  Result<std::optional<std::string>> saved_id = context_.state().Get("node_id");
  const std::string own = saved_id.ok() ? saved_id->value_or("") : "";
  const bool busy = std::ranges::any_of(*containers, [&own](const ContainerInfo& container) {
    const auto node = container.labels.find(std::string(kNodeLabel));
    return container.running && !own.empty() && node != container.labels.end() &&
           node->second == own;
  });
  if (busy) {
    return core::FailedPreconditionError(
        "pods are running here; it measures at the next start with none running");
  }
  context_.Log("measuring this host's GPUs with " + probe->string() + " (a few seconds a GPU)");
  GpuProbeOptions probe_options;
  probe_options.cancelled = [this] { return context_.Stopping(); };
  return RunGpuProbe(*probe, probe_options);
}

}  // namespace suanli::agent
