// GPU calibration: what suanli-gpu-probe (src/agent/gpu_probe/gpu_probe.cu) measured on this host's
// GPUs, and how the agent finds and runs it.
//
// Datasheets say what a GPU model can do; a given card may do less (a power cap, a PCIe board sold
// under an SXM name, a hot rack, a bad riser). The probe measures each GPU's memory bandwidth and
// dense tensor throughput in a few seconds; `suanli agent doctor --bench` shows them beside the
// catalog's figures. The probe is a separate program because it needs the CUDA toolkit to build
// and a GPU to run; suanli itself needs neither. docs/agent.md, "Measured calibration".
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "catalog/gpu_type.h"
#include "core/domain.h"
#include "core/status.h"

namespace suanli::agent {

// One GPU's measurements, one line of the probe's output.
struct MeasuredGpu {
  int index = 0;     // CUDA's index in PCI bus order, as NVML and nvidia-smi number
  std::string name;  // as the driver names it: "NVIDIA H100 80GB HBM3"
  // "GPU-8c1e55a2-...", as NVML reports it; "SIM-GPU-0-rtx-4090" for the agent's simulated GPUs
  // (--simulate-gpus), which only a simulated probe (tests) measures.
  std::string uuid;
  std::string compute_capability;  // "9.0"
  double memory_gb = 0;            // GiB (2^30 bytes) the GPU holds in all
  // Decimal GB/s (10^9 bytes) of a device-to-device copy, bytes read plus bytes written, as
  // datasheets count bandwidth.
  double memory_bandwidth_gbps = 0;
  double fp16_tflops = 0;             // dense FP16 tensor, FP32 accumulate
  std::optional<double> bf16_tflops;  // dense BF16 tensor; absent before compute capability 8.0
  std::optional<double> fp8_tflops;   // dense FP8 (e4m3) tensor; absent before 8.9
};

// Parses the probe's output: one JSON object per GPU, one per line; blank lines are skipped.
// INVALID_ARGUMENT, naming the line and the field, for a line that is not a JSON object, an unknown
// or missing field, a value of the wrong type or out of its range (bandwidth above 0 and at most
// 100000 GB/s, TFLOPS above 0 and at most 100000), two lines with one index or one UUID, or no GPU.
core::Result<std::vector<MeasuredGpu>> ParseGpuProbeOutput(std::string_view text);

inline constexpr std::string_view kGpuProbeName = "suanli-gpu-probe";
inline constexpr std::string_view kGpuProbeEnv = "SUANLI_GPU_PROBE";  // the probe's path

// Where the probe is: `env_value` (SUANLI_GPU_PROBE's value) when not empty, else
// suanli-gpu-probe in `beside` (the folder of the running suanli). NOT_FOUND, saying where it
// looked and how to build it, when that is not an executable file.
core::Result<std::filesystem::path> FindGpuProbe(std::string_view env_value,
                                                 const std::filesystem::path& beside);
// As above with the process's environment and the folder of /proc/self/exe.
core::Result<std::filesystem::path> FindGpuProbe();

struct GpuProbeOptions {
  // The whole run, every GPU included (a GPU takes a few seconds).
  std::chrono::seconds timeout{300};
  std::optional<int> device;  // one GPU by CUDA index; all when absent
  // Asked about once a second; true stops the probe (the agent is stopping).
  std::function<bool()> cancelled;
};

// Runs the probe at `path` and parses what it prints. FAILED_PRECONDITION when it finds no CUDA
// device (its exit status 2; the message is the probe's: "no CUDA device: ..."); UNAVAILABLE when
// it cannot start, fails (its message), or runs past the timeout (it is killed); INVALID_ARGUMENT
// when its output does not parse. Blocks the calling thread for up to the timeout.
core::Result<std::vector<MeasuredGpu>> RunGpuProbe(const std::filesystem::path& path,
                                                   const GpuProbeOptions& options = {});

// The probe's output format for `gpus` (ParseGpuProbeOutput reads it back): how the agent keeps
// its measurements across restarts.
std::string EncodeMeasuredGpus(const std::vector<MeasuredGpu>& gpus);

// The measurements of the GPUs `index_by_uuid` names, as the heartbeat carries them (by the node's
// GPU index); GPUs it does not name (a MIG parent, another host's) are left out.
std::vector<core::GpuMeasurement> ToNodeMeasurements(
    const std::vector<MeasuredGpu>& gpus, const std::map<std::string, int>& index_by_uuid);

// One line comparing `gpu`'s measurements with `datasheet`'s (nullptr: not in the catalog):
// "memory 2900.5 GB/s (87% of 3350); fp16 610.2 TFLOPS (62% of 989); ...".
std::string CompareWithDatasheet(const MeasuredGpu& gpu, const catalog::GpuType* datasheet);

}  // namespace suanli::agent
