#include "advisor/measured.h"

#include <fmt/format.h>

#include <algorithm>
#include <vector>

namespace suanli::advisor {
namespace {

double Median(std::vector<double> values) {
  std::ranges::sort(values);
  const size_t middle = values.size() / 2;
  return values.size() % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

// The median of the figures that are present; nullopt when none is.
std::optional<double> MedianOf(std::span<const core::GpuMeasurement> measurements,
                               std::optional<double> core::GpuMeasurement::*figure) {
  std::vector<double> values;
  for (const core::GpuMeasurement& gpu : measurements) {
    if (gpu.*figure) values.push_back(*(gpu.*figure));
  }
  if (values.empty()) return std::nullopt;
  return Median(std::move(values));
}

// Measured over what a healthy card measures, at most 1; 1 where either is unknown.
double Scale(std::optional<double> measured, std::optional<double> datasheet, double fraction) {
  if (!measured || !datasheet || *datasheet <= 0) return 1;
  return std::min(1.0, *measured / (*datasheet * fraction));
}

std::string Percent(double scale) {
  return scale >= 1 ? "at least a healthy card's"
                    : fmt::format("{:.0f}% of a healthy card's", scale * 100);
}

}  // namespace

std::optional<MeasuredFigures> SummariseMeasurements(
    std::span<const core::GpuMeasurement> measurements) {
  if (measurements.empty()) return std::nullopt;
  std::vector<double> bandwidth;
  std::vector<double> fp16;
  for (const core::GpuMeasurement& gpu : measurements) {
    bandwidth.push_back(gpu.memory_bandwidth_gbps);
    fp16.push_back(gpu.fp16_tflops);
  }
  return MeasuredFigures{.gpus = static_cast<int>(measurements.size()),
                         .memory_bandwidth_gbps = Median(std::move(bandwidth)),
                         .fp16_tflops = Median(std::move(fp16)),
                         .bf16_tflops = MedianOf(measurements, &core::GpuMeasurement::bf16_tflops),
                         .fp8_tflops = MedianOf(measurements, &core::GpuMeasurement::fp8_tflops)};
}

double HealthyProbeBandwidthFraction() { return 0.90; }

double HealthyProbeTensorFraction(const catalog::GpuType& gpu) {
  // Hopper and the data-centre Blackwell (B200) reach their datasheet rate only through wgmma or
  // tcgen05; the GeForce Blackwell (RTX 5090, GB202) through mma.sync, as every earlier GPU.
  const bool asynchronous_mma =
      gpu.arch == "Hopper" || (gpu.arch == "Blackwell" && !gpu.name.starts_with("RTX"));
  return asynchronous_mma ? 0.65 : 0.90;
}

Calibrated CalibrateToMeasured(const catalog::GpuType& datasheet, const MeasuredFigures& measured) {
  const double tensor = HealthyProbeTensorFraction(datasheet);
  Calibrated out;
  out.gpu = datasheet;
  out.bandwidth_scale = Scale(measured.memory_bandwidth_gbps, datasheet.bandwidth_gbs,
                              HealthyProbeBandwidthFraction());
  const double fp16 = Scale(measured.fp16_tflops, datasheet.fp16_tflops, tensor);
  const double bf16 =
      measured.bf16_tflops ? Scale(measured.bf16_tflops, datasheet.bf16_tflops, tensor) : fp16;
  const double fp8 =
      measured.fp8_tflops ? Scale(measured.fp8_tflops, datasheet.fp8_tflops, tensor) : fp16;
  catalog::GpuType& gpu = out.gpu;
  gpu.bandwidth_gbs *= out.bandwidth_scale;
  gpu.fp16_tflops *= fp16;
  gpu.fp32_tflops *= fp16;
  if (gpu.bf16_tflops) *gpu.bf16_tflops *= bf16;
  if (gpu.fp8_tflops) *gpu.fp8_tflops *= fp8;
  if (gpu.int8_tops) *gpu.int8_tops *= fp16;
  out.compute_scale = datasheet.bf16_tflops ? bf16 : fp16;
  out.note = fmt::format(
      "speed from this cloud's measurements of {} {} GPU(s) (suanli-gpu-probe): memory {:.0f} "
      "GB/s, "
      "{}; 16-bit tensor {:.0f} TFLOPS, {}",
      measured.gpus, datasheet.name, measured.memory_bandwidth_gbps, Percent(out.bandwidth_scale),
      measured.bf16_tflops && datasheet.bf16_tflops ? *measured.bf16_tflops : measured.fp16_tflops,
      Percent(out.compute_scale));
  return out;
}

}  // namespace suanli::advisor
