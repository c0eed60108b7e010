// Estimate: what one workload needs and does on `count` GPUs of one type — memory, speed, time,
// cost.
//
// Memory is per GPU (what must fit in each card); throughput is the total over all `count` GPUs;
// money is for all of them. Pure: no I/O, deterministic, cheap (all catalog GPUs in well under a
// millisecond).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "advisor/efficiency.h"
#include "advisor/workload.h"
#include "catalog/gpu_type.h"
#include "core/money.h"

namespace suanli::advisor {

struct MemoryBreakdown {  // bytes per GPU
  double weights = 0;
  double gradients = 0;
  double optimizer = 0;
  double activations = 0;
  double kv_cache = 0;
  double overhead = 0;  // CUDA context, workspaces, allocator fragmentation
  double Total() const {
    return weights + gradients + optimizer + activations + kv_cache + overhead;
  }
};

struct Throughput {  // totals over all GPUs of the estimate; absent where it does not apply
  std::optional<double> prefill_tokens_per_s;
  std::optional<double> decode_tokens_per_s;
  std::optional<double> train_tokens_per_s;
  std::optional<double> samples_per_s;
  std::optional<double> images_per_s;
  std::optional<double> steps_per_s;
};

enum class Bound { kCompute, kMemory };

struct CostInputs {
  double power_usd_per_kwh = 0.15;
};

struct Estimate {
  const catalog::GpuType* gpu = nullptr;  // borrowed from the catalog
  int count = 1;
  int batch = 0;  // per GPU for training, per engine for inference (serve: the batch that fits)
  bool supported = true;  // false: this GPU cannot run the workload at all (reason says why)
  std::string reason;     // why unsupported or why it does not fit
  bool fits = false;
  MemoryBreakdown memory;
  double memory_capacity = 0;  // bytes per GPU
  Throughput throughput;
  Bound bound = Bound::kCompute;
  std::vector<std::string> notes;  // assumptions a person should know (FP16 instead of BF16, ...)
  // Training asked for in BF16 runs in FP16 here (Volta, Turing: no BF16), which needs loss scaling
  // and may overflow where BF16 would not: ranked after GPUs that run what was asked.
  bool bf16_training_in_fp16 = false;

  double time_s = 0;                       // for the workload's amount of work
  core::Money rent_per_hour;               // all `count` GPUs
  core::Money cost;                        // renting for time_s
  core::Money buy;                         // all `count` cards
  core::Money power_per_hour;              // running them, at CostInputs' power price
  std::optional<double> break_even_hours;  // of use, after which buying beats renting
  double cost_per_unit_usd = 0;
  std::string unit;       // "1M tokens", "1k images", "1k samples", "1k requests"
  double work_units = 0;  // the amount of work in `unit`s
};

// REQUIRES: CompleteAndValidate(workload) succeeded; count >= 1.
Estimate EstimateOn(const Workload& workload, const catalog::GpuType& gpu, int count,
                    const Efficiency& efficiency = FittedEfficiency(),
                    const CostInputs& costs = {});

}  // namespace suanli::advisor
