// Efficiency: how far real software gets from a GPU's datasheet peaks, per kind of work.
//
// The advisor's speed model is a roofline: time is FLOPs over (peak x compute efficiency) plus or
// max'ed with bytes over (bandwidth x memory efficiency), plus a fixed overhead per step. The
// physics (FLOPs, bytes) comes from the model's shapes; these factors carry what physics cannot:
// kernel quality, framework overhead, launch latency. They are fitted on
// shared/data/calibration/measured_perf.csv by bench/advisor_accuracy (see docs/advisor.md), never
// on the rows held out to report the error.
#pragma once

#include "advisor/workload.h"

namespace suanli::advisor {

struct EngineEfficiency {
  double prefill;            // MFU of prompt processing
  double decode_bandwidth;   // fraction of peak memory bandwidth a decode step reaches
  double decode_overhead_s;  // fixed cost of one decode step (kernel launches, sampling, Python)
};

struct Efficiency {
  // Model-FLOPs utilisation of training steps, at a large hidden size.
  double train_decoder = 0.50;
  double train_encoder = 0.45;
  double lora = 0.40;
  double qlora = 0.25;  // plus dequantising 4-bit weights on every use
  // Small matrices leave tensor cores idle: MFU is scaled by hidden / (hidden + this).
  double small_hidden = 1024;

  // Vision training and inference: MFU, plus memory traffic per FLOP for the bandwidth-bound layers
  // (normalisation, activations) that alternate with the compute-bound convolutions.
  double vision = 0.40;
  double vision_bytes_per_flop = 0.02;

  // Diffusion: MFU of the UNet and the fixed cost of one denoising step.
  double diffusion = 0.45;
  double diffusion_step_overhead_s = 0.004;

  // Activation memory relative to the Korthikanti et al. count (fp32 norms, dropout masks,
  // allocator).
  double activation_factor = 1.35;

  EngineEfficiency pytorch{0.40, 0.55, 0.020};
  EngineEfficiency vllm{0.55, 0.80, 0.004};
  EngineEfficiency tensorrt_llm{0.65, 0.85, 0.003};
  EngineEfficiency sglang{0.55, 0.82, 0.004};
  EngineEfficiency llama_cpp{0.45, 0.75, 0.002};
  EngineEfficiency exllama{0.45, 0.85, 0.002};
  EngineEfficiency mlc{0.45, 0.90, 0.001};

  const EngineEfficiency& For(Engine engine) const;
};

// The factors the advisor ships with: the latest fit (efficiency.cc says when and on what).
const Efficiency& FittedEfficiency();

}  // namespace suanli::advisor
