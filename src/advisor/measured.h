// Advice from what this cloud's GPUs measure, not only what their datasheets say.
//
// The advisor's efficiencies (efficiency.h) were fitted against datasheet peaks on healthy cards,
// so a measured figure cannot replace the datasheet's as it is: suanli-gpu-probe's copy kernel and
// register-resident MMA loop reach a known part of the peak on a healthy card, not all of it. What
// a measurement says is how this card compares with a healthy one of its model; a card that
// measures less (a power cap, a PCIe board under an SXM name, a hot rack) is predicted that much
// slower. One measuring more than a healthy card is taken as healthy: the fitted model already
// assumes a card at its datasheet's clocks. docs/advisor.md, "Measured calibration".
#pragma once

#include <optional>
#include <span>
#include <string>

#include "catalog/gpu_type.h"
#include "core/domain.h"

namespace suanli::advisor {

// What the measured GPUs of one type give, the median of each figure over the GPUs that have it.
struct MeasuredFigures {
  int gpus = 0;
  double memory_bandwidth_gbps = 0;
  double fp16_tflops = 0;
  std::optional<double> bf16_tflops;
  std::optional<double> fp8_tflops;
};

// The medians of `measurements` (GPUs of one type); nullopt when there are none.
std::optional<MeasuredFigures> SummariseMeasurements(
    std::span<const core::GpuMeasurement> measurements);

// What suanli-gpu-probe measures on a healthy card of `gpu`'s model: its copy kernel moves about
// 90 % of the datasheet's bandwidth on every HBM and GDDR generation; its MMA loop (mma.sync) gives
// about 90 % of the datasheet's tensor rate up to Ada, and about 65 % on Hopper and the B200, whose
// full rate needs the asynchronous warpgroup instructions (wgmma, tcgen05) a GEMM library uses.
// Assumptions from published microbenchmarks until a lent GPU measures them (docs/agent.md).
double HealthyProbeBandwidthFraction();
double HealthyProbeTensorFraction(const catalog::GpuType& gpu);

struct Calibrated {
  catalog::GpuType gpu;        // the datasheet's, its bandwidth and compute rates scaled
  double bandwidth_scale = 1;  // measured over a healthy card's, at most 1
  double compute_scale = 1;    // the same for the 16-bit tensor rate (FP16, or BF16 where measured)
  std::string note;            // what was measured and what the estimate assumes, for a person
};

// `datasheet` as this cloud's GPUs of its type measure: bandwidth scaled by what the copy measured
// over a healthy card's; the FP16, BF16 and FP8 tensor rates each by their own measurement (FP16's
// where one is missing); FP32 and INT8 rates, which the probe does not measure but which run at
// the same clocks, by FP16's.
Calibrated CalibrateToMeasured(const catalog::GpuType& datasheet, const MeasuredFigures& measured);

}  // namespace suanli::advisor
