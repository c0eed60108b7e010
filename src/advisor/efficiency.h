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
  double decode_overhead_s;  // fixed cost of one decode step (sampling, scheduling, Python)
  double decode_layer_overhead_s = 0;  // per layer of each decode step (kernel launches)
};

struct Efficiency {
  // Model-FLOPs utilisation of training steps, at a large hidden size.
  double train_decoder = 0.50;
  double train_encoder = 0.45;
  double lora = 0.40;
  double qlora = 0.25;  // plus dequantising 4-bit weights on every use
  // Small matrices leave tensor cores idle: MFU is scaled by hidden / (hidden + this).
  double small_hidden = 1024;
  // Matmuls on CUDA cores (FP32 on GPUs without TF32: Volta, Turing), as a share of the FP32 peak,
  // in place of the tensor-core MFU (training's above, an engine's prefill) and the small-hidden
  // factor: SGEMM feeds its FMA pipes from registers and shared memory, and a peak 8-16x below the
  // tensor cores' leaves no matrix of a transformer too small to fill it. The prior is cuBLAS
  // SGEMM's 80-90 % of the FMA peak on large matrices. Convolutions keep the vision MFU (cuDNN's
  // FP32 kernels: implicit GEMM, Winograd).
  double cuda_core_matmul = 0.8;
  // Memory traffic of a transformer training step's bandwidth-bound kernels (norms, activation
  // functions, dropout, residuals, softmax without FlashAttention, and their gradients), in passes
  // over the activations the step keeps. The prior is a count: forward writes each kept tensor and
  // its element-wise neighbours read it (2), backward reads it and writes and reads its gradient
  // (3), with recomputation or fused kernels shifting it by one or two.
  double train_activation_passes = 5;

  // Vision training and inference: MFU, plus the memory traffic of the bandwidth-bound layers
  // (normalisation, activations) that alternate with the compute-bound convolutions, counted in
  // passes over the activations a training step keeps (the zoo's activation_bytes_per_sample). The
  // default is a count, not a fit: a forward pass writes each convolution's output, batch norm
  // reads it twice (statistics, normalisation) and writes it, ReLU reads and writes it (6);
  // backward touches each about twice as often (12-14). Inference runs a third of them (forward
  // only).
  double vision = 0.40;
  double vision_activation_passes = 20;

  // Diffusion: a UNet's convolutions run the same cuDNN kernels as a vision model's, at the vision
  // MFU above. Its own: the activation traffic of its normalisation and element-wise layers per
  // FLOP (over the bare bandwidth: a 64x64 latent is a few MB), the share of the MFU that GPUs
  // without FlashAttention kernels (Volta, Turing) keep, and the CPU's time to launch one denoising
  // step's kernels, which a step cannot beat (eager PyTorch at batch 1 on a fast GPU waits for it).
  // The prior is a count for SD 1.5 at 512x512: its UNet's feature maps sum to ~0.6 GB a latent at
  // 16 bits (64x64x320 maps of 2.6 MB through five blocks with attention, then halving per level),
  // each written once and read about twice: ~1.8 GB over 0.84 TFLOP.
  double diffusion_bytes_per_flop = 0.002;
  double diffusion_pre_ampere = 0.7;
  double diffusion_step_overhead_s = 0.02;

  // ROCm on AMD Instinct reaches less of the datasheet peak than CUDA on NVIDIA (public GEMM and
  // bandwidth measurements of the MI300X). No calibration row covers AMD, so these are not fitted.
  double amd_compute = 0.7;
  double amd_bandwidth = 0.9;

  // Sustained tensor throughput is capped by the power a card may draw: datasheet peaks assume
  // boost clocks that a 72 W L4, a 300 W RTX 6000 Ada or a 700 W H100 cannot hold under a dense
  // matmul load. Dense 16-bit tensor TFLOPS per watt of TDP (FP8: twice as many).
  double tensor_tflops_per_watt = 1.0;

  // FP8 training is faster than BF16 by less than the 2x of the peaks: only the matmuls run in FP8,
  // around scaling and casting work that does not.
  double fp8_training_gain = 1.3;

  // bitsandbytes' nf4/int8 layers dequantise on every use: extra time per layer of a decode step.
  double bnb_layer_overhead_s = 0.0003;

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
