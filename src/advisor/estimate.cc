#include "advisor/estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/check.h"

namespace suanli::advisor {
namespace {

constexpr double kContextBytes =
    0.5e9;  // CUDA context + cuBLAS/cuDNN workspaces (PyTorch: 0.3-2 GiB)
constexpr double kEngineMemoryShare = 0.90;  // vLLM's default gpu_memory_utilization
constexpr double kTightFit = 0.05;           // spare memory, as a share of the card, worth a note

bool HasTf32(const catalog::GpuType& gpu) {
  for (const char* arch : {"Ampere", "Ada", "Hopper", "Blackwell", "CDNA3"}) {
    if (gpu.arch == arch) return true;
  }
  return false;
}

struct Peak {
  double flops = 0;    // per second, dense
  bool tensor = true;  // on tensor cores; false for plain FP32 on CUDA cores
  std::string note;
  std::string unsupported;  // non-empty: this GPU cannot run the precision
};

// GeForce cards run FP16 matmuls with FP32 accumulation at half the rate of FP16 accumulation; the
// catalog's fp16 figure is the FP32-accumulate one. llama.cpp accumulates in FP16.
bool IsGeForce(const catalog::GpuType& gpu) {
  return gpu.vendor == "NVIDIA" && gpu.form_factor.find("consumer") != std::string::npos;
}

Peak ComputePeak(const catalog::GpuType& gpu, Precision precision) {
  constexpr double kTera = 1e12;
  Peak peak;
  switch (precision) {
    case Precision::kFp32:
      peak.flops = gpu.fp32_tflops * kTera;
      peak.tensor = false;
      break;
    case Precision::kTf32:
      if (HasTf32(gpu)) {
        peak.flops = gpu.Tensor16Tflops() / 2 * kTera;
      } else {
        peak.flops = gpu.fp32_tflops * kTera;
        peak.tensor = false;
        peak.note = "no TF32 on " + gpu.arch + ": estimated at the FP32 rate";
      }
      break;
    case Precision::kBf16:
      peak.flops = gpu.Tensor16Tflops() * kTera;
      if (!gpu.bf16_tflops)
        peak.note = "no BF16 on " + gpu.arch + ": estimated in FP16 (use --precision fp16)";
      break;
    case Precision::kFp16:
      peak.flops = gpu.fp16_tflops * kTera;
      break;
    case Precision::kInt8:
      if (gpu.int8_tops) {
        peak.flops = *gpu.int8_tops * kTera;
      } else {
        // Volta has no INT8 tensor cores; TensorRT then builds its FP16 kernels, which are faster
        // than DP4A on the CUDA cores.
        peak.flops = gpu.fp16_tflops * kTera;
        peak.note = "no INT8 tensor cores on " + gpu.arch +
                    ": estimated at the FP16 tensor rate (TensorRT falls back to FP16 kernels)";
      }
      break;
    case Precision::kFp8:
      if (gpu.fp8_tflops) {
        peak.flops = *gpu.fp8_tflops * kTera;
      } else {
        peak.unsupported =
            "the " + gpu.name + " (" + gpu.arch + ") has no FP8 tensor cores; use --precision bf16";
      }
      break;
  }
  return peak;
}

double BytesPerWeight(const Workload& w) {
  if (w.quant) return w.quant->bits_per_weight / 8;
  switch (w.precision) {
    case Precision::kFp32:
    case Precision::kTf32:
      return 4;
    case Precision::kFp8:
    case Precision::kInt8:
      return 1;
    default:
      return 2;
  }
}

// 8-bit tensor cores run twice the 16-bit rate: the power cap and activation traffic scale with it.
bool EightBit(Precision precision) {
  return precision == Precision::kFp8 || precision == Precision::kInt8;
}

// SmoothQuant-style INT8 keeps the KV cache in 16 bits (an INT8 cache is a separate option); FP8
// engines store it in FP8.
double KvBytesPerElement(const Workload& w) {
  if (w.precision == Precision::kFp8) return 1;
  if (w.precision == Precision::kFp32 || w.precision == Precision::kTf32) return 4;
  return 2;
}

int HeadDim(const ModelSpec& m) {
  return m.head_dim > 0 ? m.head_dim : (m.heads > 0 ? m.hidden / m.heads : 0);
}
double AttentionWidth(const ModelSpec& m) { return static_cast<double>(m.heads) * HeadDim(m); }
double KvWidth(const ModelSpec& m) {
  return static_cast<double>(m.kv_heads > 0 ? m.kv_heads : m.heads) * HeadDim(m);
}
double ActiveParams(const ModelSpec& m) { return m.active_params > 0 ? m.active_params : m.params; }

// Parameters a token multiplies with: the input embedding is a lookup, not a matmul (a tied
// embedding counts once, as the output head; encoders fine-tuned here have no output head over the
// vocabulary).
double MatmulParams(const ModelSpec& m) {
  if (m.kind == ModelKind::kVision || m.kind == ModelKind::kDiffusion || m.vocab <= 0)
    return ActiveParams(m);
  double lookup = static_cast<double>(m.vocab) * m.hidden;
  if (m.kind == ModelKind::kDecoderLm && m.tied_embeddings) lookup = 0;
  return std::max(ActiveParams(m) - lookup, 0.1 * ActiveParams(m));
}

// Bytes of K and V one token adds to the cache, over all layers (GQA-aware).
double KvBytesPerToken(const ModelSpec& m, const Workload& w) {
  return 2.0 * m.layers * KvWidth(m) * KvBytesPerElement(w);
}

// Forward FLOPs of one token that attends to `context` earlier tokens: 2 per weight it uses, plus
// QK^T and attention x V over the context.
double ForwardFlopsPerToken(const ModelSpec& m, double context) {
  return 2 * MatmulParams(m) + 4.0 * m.layers * context * AttentionWidth(m);
}

// Korthikanti et al. 2022 activation bytes per layer for one sequence of `seq` tokens, 16-bit:
// layer input and norms, Q, K, V (GQA-sized), attention output, MLP input and intermediates (three
// for gated MLPs), MoE tokens routed to k experts; without FlashAttention also the s x s scores,
// softmax and dropout mask of every head (5 a s^2 bytes).
double ActivationBytesPerLayer(const ModelSpec& m, double seq, bool flash_attention) {
  const double h = m.hidden;
  const double experts = m.experts_per_token > 0 ? m.experts_per_token : 1;
  const double mlp = 2 * h + (m.gated_mlp ? 6.0 : 4.0) * m.ffn * experts;
  const double attention = 10 * h + 4 * KvWidth(m);
  const double scores = flash_attention ? 0 : 5.0 * m.heads * seq * seq;
  return seq * (attention + mlp) + scores;
}

// Adapter parameters of LoRA with rank 16 on every linear layer of every block.
double LoraParams(const ModelSpec& m) {
  constexpr double kRank = 16;
  const double h = m.hidden;
  const double f = m.ffn;
  const double per_layer =
      2 * (h + AttentionWidth(m)) + 2 * (h + KvWidth(m)) + (m.gated_mlp ? 3 : 2) * (h + f);
  return m.layers * kRank * per_layer;
}

// FlashAttention (and PyTorch's flash SDPA kernel) needs Ampere or later; ROCm builds cover CDNA.
bool HasFlashAttention(const catalog::GpuType& gpu) {
  return gpu.arch != "Volta" && gpu.arch != "Turing" && gpu.arch != "Pascal";
}

bool HasFastInterconnect(const catalog::GpuType& gpu) {
  return gpu.interconnect.find("NVLink") != std::string::npos ||
         gpu.interconnect.find("Infinity Fabric") != std::string::npos;
}

// Throughput kept when `count` GPUs train one transformer with FSDP/ZeRO-3 (its per-layer
// all-gathers and reduce-scatters; fitted rows of 8-GPU FSDP runs keep it). Data-parallel vision
// training and tensor-parallel inference count their collectives' bytes instead
// (DataParallelStepSeconds, DecodeStepSeconds, PrefillTokensPerSecond).
double ScalingEfficiency(const catalog::GpuType& gpu, int count) {
  if (count <= 1) return 1.0;
  return std::pow(HasFastInterconnect(gpu) ? 0.95 : 0.85, std::log2(static_cast<double>(count)));
}

// Bytes per second a GPU's share of a ring all-reduce moves: NVLink (bridges included) or PCIe 4.0
// x16 as NCCL reaches it through the host (about 16 of its 32 GB/s).
double CollectiveBytesPerSecond(const catalog::GpuType& gpu) {
  return HasFastInterconnect(gpu) ? 100e9 : 16e9;
}

// One data-parallel (DDP) training step on `count` GPUs, from its time on one (`step_s`): the
// gradients (`bytes`) are all-reduced in buckets while the backward pass runs (two thirds of the
// step); a ring moves 2 (count - 1) / count of them through each GPU's link, and only what does
// not fit under the backward pass adds to the step.
double DataParallelStepSeconds(const catalog::GpuType& gpu, int count, double step_s,
                               double bytes) {
  if (count <= 1) return step_s;
  const double comm_s = 2.0 * (count - 1) / count * bytes / CollectiveBytesPerSecond(gpu);
  return step_s + std::max(0.0, comm_s - 2.0 / 3 * step_s);
}

// Amounts beyond a trillion dollars are not estimates anyone acts on; saturating keeps Money's
// integer arithmetic defined (and the JSON finite) for absurd inputs.
core::Money MoneyFromDollars(double dollars) {
  constexpr double kLimit = 1e12;
  if (!(dollars > -kLimit)) dollars = -kLimit;  // NaN too
  if (dollars > kLimit) dollars = kLimit;
  return core::Money::FromMicros(static_cast<int64_t>(std::llround(dollars * 1e6)));
}

class Estimator {
 public:
  Estimator(const Workload& w, const catalog::GpuType& gpu, int count, const Efficiency& eff)
      : w_(w), m_(w.model), gpu_(gpu), count_(count), eff_(eff) {
    e_.gpu = &gpu;
    e_.count = count;
    e_.batch = w.batch;
    e_.memory_capacity = gpu.MemoryBytes();  // binary GB or NVML's total, not 1e9
    peak_ = ComputePeak(gpu, w.precision);   // quantised weights are dequantised to this precision
    if (w.engine == Engine::kLlamaCpp && IsGeForce(gpu) && w.precision != Precision::kFp32) {
      peak_.flops *= 2;
    }
    if (peak_.tensor) {
      // Only an 8-bit rate that is really there doubles the cap (not Volta's FP16 fallback).
      // A TF32 FLOP costs about the energy of two 16-bit ones (datasheets give it half the 16-bit
      // rate at the same power), an 8-bit one about half.
      const bool eight_bit = EightBit(w.precision) && peak_.note.empty();
      const double energy = eight_bit ? 0.5 : (w.precision == Precision::kTf32 ? 2 : 1);
      const double per_watt = eff.tensor_tflops_per_watt / energy;
      peak_.flops = std::min(peak_.flops, gpu.tdp_w * per_watt * 1e12);
    }
    if (!peak_.note.empty()) e_.notes.push_back(peak_.note);
    e_.bf16_training_in_fp16 =
        IsTraining(w.task) && w.precision == Precision::kBf16 && !gpu.bf16_tflops;
    bandwidth_ = gpu.bandwidth_gbs * 1e9;
    if (gpu.vendor == "AMD") {
      peak_.flops *= eff.amd_compute;
      bandwidth_ *= eff.amd_bandwidth;
      e_.notes.push_back("AMD: ROCm kernels reach less of the peak than CUDA's (not calibrated)");
    }
  }

  Estimate Run() {
    if (!peak_.unsupported.empty()) return Unsupported(peak_.unsupported);
    const bool amd = gpu_.vendor == "AMD";
    if (amd && (w_.engine == Engine::kTensorRtLlm || w_.engine == Engine::kExllama ||
                w_.engine == Engine::kMlc)) {
      return Unsupported(std::string(EngineName(w_.engine)) + " runs on NVIDIA GPUs only");
    }
    if (IsTraining(w_.task)) {
      IsTransformer(m_.kind) ? TrainTransformer() : TrainVision();
    } else if (m_.kind == ModelKind::kDiffusion) {
      GenerateImages();
    } else if (m_.kind == ModelKind::kVision || m_.kind == ModelKind::kEncoder) {
      ClassifyOrEncode();
    } else if (w_.task == Task::kServe) {
      Serve();
    } else {
      Generate();
    }
    e_.memory.overhead += kContextBytes;
    if (e_.fits && e_.reason.empty()) e_.fits = e_.memory.Total() <= e_.memory_capacity;
    // A fit with a few percent to spare holds only the workload as stated: say so, since a longer
    // prompt, a larger batch or a serving engine's reserve would not fit.
    const double spare = e_.memory_capacity - e_.memory.Total();
    if (e_.fits && spare < kTightFit * e_.memory_capacity) {
      e_.notes.push_back("fits with only " + Gb(spare) +
                         " GB to spare: a longer prompt, a larger batch or a serving engine's "
                         "memory reserve will not fit");
    }
    if (!e_.fits && e_.reason.empty()) {
      e_.reason = "needs " + Gb(e_.memory.Total()) + " GB per GPU; the " + gpu_.name + " has " +
                  Gb(e_.memory_capacity) + " GB";
    }
    return e_;
  }

 private:
  static std::string Gb(double bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.1f", bytes / catalog::kBytesPerGb);
    return text;
  }

  Estimate Unsupported(std::string reason) {
    e_.supported = false;
    e_.fits = false;
    e_.reason = std::move(reason);
    return e_;
  }

  // The share of the peak a transformer's matmuls reach, given the tensor-core MFU of the kind of
  // work. Small matrices leave tensor cores idle (hidden / (hidden + small_hidden)). On CUDA cores
  // (FP32 without TF32: Volta, Turing) cuBLAS SGEMM keeps the FMA pipes fed at any of these sizes
  // and reaches its own, higher share of a peak 8-16x lower: the tensor-core MFU does not apply.
  double MatmulShare(double tensor_mfu) const {
    if (!peak_.tensor) return eff_.cuda_core_matmul;
    return tensor_mfu * m_.hidden / (m_.hidden + eff_.small_hidden);
  }

  void TrainTransformer() {
    const double n = m_.params;
    const double shard =
        count_;  // FSDP / ZeRO-3: parameters, gradients and optimizer split over GPUs
    const bool mixed = w_.precision != Precision::kFp32 && w_.precision != Precision::kTf32;
    const double seq = w_.seq;
    const double batch = w_.batch;
    double forward_multiple = 3;  // forward + backward (twice the forward)
    double mfu = m_.kind == ModelKind::kEncoder ? eff_.train_encoder : eff_.train_decoder;
    double state_bytes_per_step = 0;  // optimizer traffic, per GPU

    if (w_.task == Task::kLora || w_.task == Task::kQlora) {
      const double adapters = LoraParams(m_);
      e_.memory.weights = n * BytesPerWeight(w_) / shard + adapters * 2;
      e_.memory.gradients = adapters * 2;
      e_.memory.optimizer = adapters * 12;
      forward_multiple = 2;  // no weight gradients for the frozen base
      mfu = w_.task == Task::kLora ? eff_.lora : eff_.qlora;
      state_bytes_per_step = adapters * (2 + 2 + 2 * 12);
      if (w_.task == Task::kQlora)
        e_.notes.push_back("4-bit base weights, dequantised to 16-bit on every use");
    } else {
      const double weight_bytes = mixed ? 2 : 4;
      double optimizer_bytes = 0;
      switch (w_.optimizer) {
        case Optimizer::kAdamW:
          optimizer_bytes = mixed ? 12 : 8;
          break;  // fp32 master + m + v
        case Optimizer::kAdamW8bit:
          optimizer_bytes = mixed ? 6 : 2;
          break;  // master + 8-bit m, v
        case Optimizer::kSgd:
          optimizer_bytes = mixed ? 8 : 4;
          break;  // master + momentum
      }
      e_.memory.weights = n * weight_bytes / shard;
      e_.memory.gradients = n * weight_bytes / shard;
      e_.memory.optimizer = n * optimizer_bytes / shard;
      // The optimizer reads the gradients, reads and writes its states, writes the weights.
      state_bytes_per_step = (2 * weight_bytes + 2 * optimizer_bytes) * n / shard;
    }
    const double per_layer =
        ActivationBytesPerLayer(m_, seq, w_.flash_attention) * batch * (mixed ? 1 : 2);
    double activations =
        w_.recompute.value_or(false)
            ? m_.layers * 2.0 * seq * batch * m_.hidden * (mixed ? 1 : 2) + per_layer
            : m_.layers * per_layer;
    if (m_.kind == ModelKind::kDecoderLm)
      activations += seq * batch * m_.vocab * 6.0;  // logits + fp32 loss
    e_.memory.activations = activations * eff_.activation_factor;
    e_.memory.overhead = 0.05 * e_.memory.activations;
    if (w_.recompute.value_or(false)) forward_multiple += 1;
    if (count_ > 1)
      e_.notes.push_back("sharded over " + std::to_string(count_) + " GPUs (FSDP/ZeRO-3)");

    const double flops_per_token = forward_multiple * ForwardFlopsPerToken(m_, seq / 2);
    double peak = peak_.flops;
    if (w_.precision == Precision::kFp8)
      peak = peak / 2 * eff_.fp8_training_gain;  // FP8 peak is 2x BF16's
    const double compute_s = flops_per_token / (MatmulShare(mfu) * peak);
    // Between the matmuls run kernels bound by memory bandwidth, one after another with them (not
    // overlapped): norms, activation functions, dropout, residual adds, softmax over the s x s
    // scores where FlashAttention is not used, their gradients, and the optimizer step. Counted as
    // passes over the activations a step keeps, plus reading and writing the trained state once a
    // step. So a GeForce card with half a workstation card's tensor rate but more bandwidth (RTX
    // 3090 against RTX A6000) trains closer to its speed than the tensor rates say.
    const bool flash = w_.flash_attention && HasFlashAttention(gpu_);
    const double kept_per_token = ActivationBytesPerLayer(m_, seq, flash) * (mixed ? 1 : 2) *
                                  m_.layers / seq * forward_multiple / 3;
    const double traffic_per_token =
        eff_.train_activation_passes * kept_per_token + state_bytes_per_step / (seq * batch);
    const double memory_s = traffic_per_token / bandwidth_;
    const double per_gpu = 1 / (compute_s + memory_s);
    const double tokens_per_s = per_gpu * count_ * ScalingEfficiency(gpu_, count_);
    e_.throughput.train_tokens_per_s = tokens_per_s;
    e_.throughput.samples_per_s = tokens_per_s / seq;
    e_.throughput.steps_per_s = tokens_per_s / (seq * batch * count_);
    e_.bound = Bound::kCompute;
    e_.fits = true;

    double tokens = w_.work.tokens;
    if (tokens == 0) tokens = w_.work.samples * seq * w_.work.epochs;
    SetTime(tokens / tokens_per_s, tokens / 1e6, "1M tokens");
  }

  void TrainVision() {
    const double scale = PixelScale();
    const double flops = 3 * m_.forward_flops * scale;
    const bool mixed = w_.precision != Precision::kFp32 && w_.precision != Precision::kTf32;
    const double weight_bytes = mixed ? 2 : 4;
    e_.memory.weights = m_.params * weight_bytes;
    e_.memory.gradients = m_.params * weight_bytes;
    e_.memory.optimizer =
        m_.params * (w_.optimizer == Optimizer::kSgd ? (mixed ? 8 : 4) : (mixed ? 12 : 8));
    e_.memory.activations = m_.activation_bytes_per_sample * scale * w_.batch * (mixed ? 1 : 2);
    e_.memory.overhead = 0.05 * e_.memory.activations;
    VisionSpeed(flops, /*traffic_share=*/1.0, "1k images", m_.params * weight_bytes);
    e_.fits = true;
  }

  void ClassifyOrEncode() {
    if (m_.kind == ModelKind::kEncoder) {
      e_.memory.weights = m_.params * BytesPerWeight(w_);
      const double seq = w_.prompt_tokens;
      e_.memory.activations = ActivationBytesPerLayer(m_, seq, w_.flash_attention) * w_.batch *
                              2;  // two layers live at once
      const double flops = ForwardFlopsPerToken(m_, seq / 2) * seq;
      const double mfu = MatmulShare(eff_.pytorch.prefill);
      const double samples_per_s = mfu * peak_.flops / flops * count_;
      e_.throughput.samples_per_s = samples_per_s;
      e_.throughput.prefill_tokens_per_s = samples_per_s * seq;
      e_.bound = Bound::kCompute;
      e_.fits = true;
      const double samples = WorkSamples();
      SetTime(samples / samples_per_s, samples / 1e3, "1k samples");
      return;
    }
    e_.memory.weights = m_.params * BytesPerWeight(w_);
    e_.memory.activations = m_.activation_bytes_per_sample * PixelScale() * w_.batch * 0.15;
    VisionSpeed(m_.forward_flops * PixelScale(), /*traffic_share=*/1.0 / 3, "1k images",
                /*gradient_bytes=*/0);
    e_.fits = true;
  }

  // A roofline: the slower of compute and the activations' memory traffic (normalisations and
  // element-wise layers between the convolutions). traffic_share: 1 for a training step, a third
  // for inference (the forward pass only).
  // gradient_bytes: all-reduced each step when training on several GPUs (0 for inference, whose
  // GPUs work independently).
  void VisionSpeed(double flops_per_sample, double traffic_share, const char* unit,
                   double gradient_bytes) {
    const double compute_s = flops_per_sample / (eff_.vision * peak_.flops);
    // FP32/TF32 activations are 4 bytes, twice the traffic of 16-bit ones.
    const bool wide = w_.precision == Precision::kFp32 || w_.precision == Precision::kTf32;
    // INT8 and FP8 engines (TensorRT) keep activations in 8 bits: half the 16-bit traffic.
    const double traffic = wide ? 2 : (EightBit(w_.precision) ? 0.5 : 1);
    const double bytes = eff_.vision_activation_passes * traffic_share *
                         m_.activation_bytes_per_sample * PixelScale() * traffic;
    // No gain from a large L2 (round 2 had one): a training step's activations at these batches
    // are gigabytes, and a layer's output is evicted from a 40-96 MB L2 before the next kernel
    // reads it.
    const double memory_s = bytes / bandwidth_;
    const double step_s = DataParallelStepSeconds(
        gpu_, count_, w_.batch * std::max(compute_s, memory_s), gradient_bytes);
    const double samples_per_s = count_ * w_.batch / step_s;
    e_.throughput.samples_per_s = samples_per_s;
    e_.throughput.images_per_s = samples_per_s;
    e_.throughput.steps_per_s = samples_per_s / (w_.batch * count_);
    e_.bound = memory_s > compute_s ? Bound::kMemory : Bound::kCompute;
    const double samples = WorkSamples();
    SetTime(samples / samples_per_s, samples / 1e3, unit);
  }

  void GenerateImages() {
    const double scale = PixelScale();
    const double batch = w_.batch;
    e_.memory.weights = m_.params * BytesPerWeight(w_);
    // Inference keeps one block's activations, not every layer's: at 512x512 a 64x64 latent's
    // feature map is 2.6 MB at 16 bits, and a block with SDPA attention (no s^2 scores) holds a
    // few dozen, ~50 MB a latent, two latents an image; the VAE decoder's last stages hold about
    // three 512x512 maps of 128-256 channels (0.4 GB). So ~0.5 GB an image, in proportion to its
    // pixels: published diffusers runs of SD 1.5 at batch 16 fit a 16 GB T4.
    const double pixels = w_.image_size > 0 ? (w_.image_size / 512.0) * (w_.image_size / 512.0) : 1;
    e_.memory.activations = batch * (0.1e9 + 0.4e9) * pixels;
    // Classifier-free guidance runs the network on two latents per image, unless the guidance was
    // distilled into the weights (FLUX.1); published "it/s" counts these steps, not latents.
    const double latents = (m_.guidance_distilled ? 1 : 2) * batch;
    const double latent_flops = m_.forward_flops * scale;
    // FlashAttention needs Ampere or later: on Volta and Turing the UNet's attention over 4096
    // latent pixels runs in slower kernels.
    const double mfu = eff_.vision * (HasFlashAttention(gpu_) ? 1 : eff_.diffusion_pre_ampere);
    const double step_compute = latents * latent_flops / (mfu * peak_.flops);
    // Group norms and element-wise layers between the convolutions move activations through
    // memory, as in vision models (8-bit engines move half as many bytes).
    const double traffic = EightBit(w_.precision) ? 0.5 : 1;
    const double step_memory =
        (latents * latent_flops * eff_.diffusion_bytes_per_flop * traffic + e_.memory.weights) /
        bandwidth_;  // and the weights, read once per step
    // Eager PyTorch launches a step's ~1,000 kernels one by one from Python: a small batch on a
    // fast GPU waits for the CPU (published batch-1 rates on an A100 and a 4090 are alike), so a
    // step takes at least the launch time.
    const double step_s = std::max(step_compute + step_memory, eff_.diffusion_step_overhead_s);
    const double decode_s = batch * m_.vae_decode_flops * scale / (eff_.vision * peak_.flops);
    const double image_s = (w_.steps * step_s + decode_s) / batch;
    e_.throughput.steps_per_s = count_ / step_s;
    e_.throughput.images_per_s = count_ / image_s;
    e_.bound = step_compute > step_memory ? Bound::kCompute : Bound::kMemory;
    e_.fits = true;
    const double images =
        w_.work.images > 0 ? w_.work.images : std::max(w_.work.requests, w_.work.samples);
    SetTime(images * image_s / count_, images / 1e3, "1k images");
  }

  // Bytes of weights one decode step reads: an MoE step at batch b touches only the experts its
  // tokens were routed to.
  double WeightBytesReadPerStep(double batch) const {
    // An untied input embedding is a lookup: a step reads one row of it per token, not all of it.
    const double lookup = m_.kind == ModelKind::kDecoderLm && !m_.tied_embeddings && m_.vocab > 0
                              ? static_cast<double>(m_.vocab) * m_.hidden
                              : 0;
    const double all = (m_.params - lookup) * BytesPerWeight(w_);
    if (m_.experts <= 0 || m_.experts_per_token <= 0) return all;
    const double k_over_e = static_cast<double>(m_.experts_per_token) / m_.experts;
    if (k_over_e >= 1) return all;  // every expert runs for every token: a dense model
    const double touched = 1 - std::pow(1 - k_over_e, batch);
    const double active = ActiveParams(m_);
    const double read =
        active - lookup + (m_.params - active) * (touched - k_over_e) / (1 - k_over_e);
    return read * BytesPerWeight(w_);
  }

  // GPUs that work on one token at the same time: tensor parallelism splits every layer over all of
  // them; llama.cpp splits the layers between them (a pipeline), so a token visits one after
  // another.
  int ParallelGpus() const { return w_.engine == Engine::kLlamaCpp ? 1 : count_; }

  // One decode step for `batch` sequences whose mean context is `context`, split over count_ GPUs
  // by tensor parallelism. Sets the bound.
  double DecodeStepSeconds(double batch, double context) {
    const EngineEfficiency& engine = eff_.For(w_.engine);
    const double bytes =
        (WeightBytesReadPerStep(batch) + batch * context * KvBytesPerToken(m_, w_)) /
        ParallelGpus();
    const double memory_s = bytes / (engine.decode_bandwidth * bandwidth_);
    const double compute_s =
        batch * ForwardFlopsPerToken(m_, context) / ParallelGpus() / (engine.prefill * peak_.flops);
    // Tensor parallelism all-reduces each layer's attention and MLP outputs (batch x hidden 16-bit
    // values, two per layer): a latency per all-reduce, plus its bytes through the link, which at
    // a serving batch over PCIe takes longer than reading the weights.
    const int tp = ParallelGpus();
    const double all_reduce_bytes = 2.0 * (tp - 1) / tp * batch * m_.hidden * 2;
    const double collectives_s = tp > 1 ? 2.0 * m_.layers *
                                              ((HasFastInterconnect(gpu_) ? 8e-6 : 25e-6) +
                                               all_reduce_bytes / CollectiveBytesPerSecond(gpu_))
                                        : 0;
    e_.bound = memory_s >= compute_s ? Bound::kMemory : Bound::kCompute;
    double layer_overhead_s = engine.decode_layer_overhead_s;
    if (w_.quant && !w_.quant->gguf && w_.engine == Engine::kPytorch)
      layer_overhead_s += eff_.bnb_layer_overhead_s;
    return std::max(memory_s, compute_s) + engine.decode_overhead_s + m_.layers * layer_overhead_s +
           collectives_s;
  }

  double PrefillTokensPerSecond(double prompt) const {
    const EngineEfficiency& engine = eff_.For(w_.engine);
    const int tp = ParallelGpus();
    const double compute_s =
        ForwardFlopsPerToken(m_, prompt / 2) / (MatmulShare(engine.prefill) * peak_.flops * tp);
    // Tensor parallelism all-reduces two hidden-sized 16-bit vectors per token and layer.
    const double collectives_s = tp > 1 ? 2.0 * m_.layers * 2.0 * (tp - 1) / tp * m_.hidden * 2 /
                                              CollectiveBytesPerSecond(gpu_)
                                        : 0;
    return 1 / (compute_s + collectives_s);
  }

  void InferenceMemory(double batch) {
    e_.memory.weights = m_.params * BytesPerWeight(w_) / count_;
    e_.memory.kv_cache =
        batch * (w_.prompt_tokens + w_.gen_tokens) * KvBytesPerToken(m_, w_) / count_;
    // One layer's intermediates for the prompt tokens processed at once (serving engines cap a step
    // at 2048 tokens; plain PyTorch takes the whole batch), and the last position's logits.
    double chunk = static_cast<double>(w_.prompt_tokens) * batch;
    if (w_.engine != Engine::kPytorch) chunk = std::min(chunk, 2048.0);
    e_.memory.activations =
        chunk * (4.0 * m_.hidden + 3.0 * m_.ffn) * 2 / count_ + batch * m_.vocab * 4.0;
  }

  void Generate() {
    const double batch = w_.batch;
    InferenceMemory(batch);
    const double prompt = w_.prompt_tokens;
    const double gen = w_.gen_tokens;
    const double prefill_tps = PrefillTokensPerSecond(prompt);
    const double step_s = DecodeStepSeconds(batch, prompt + gen / 2);
    e_.throughput.prefill_tokens_per_s = prefill_tps;
    e_.throughput.decode_tokens_per_s = batch / step_s;
    e_.fits = true;
    const double round_s = batch * prompt / prefill_tps + gen * step_s;  // one batch of requests
    const double requests = w_.work.requests > 0 ? w_.work.requests : w_.work.tokens / gen;
    SetTime(std::ceil(requests / batch) * round_s, requests * gen / 1e6, "1M tokens");
  }

  int EngineMaxBatch() const {
    switch (w_.engine) {
      case Engine::kTensorRtLlm:
        return 2048;
      case Engine::kVllm:
      case Engine::kSglang:
        return 256;
      case Engine::kPytorch:
        return 64;
      default:
        return 16;  // llama.cpp, ExLlama, MLC: a few parallel sequences at most
    }
  }

  void Serve() {
    const double prompt = w_.prompt_tokens;
    const double gen = w_.gen_tokens;
    const double per_sequence = (prompt + gen) * KvBytesPerToken(m_, w_) / count_;
    double batch = w_.batch;
    if (batch == 0) {
      InferenceMemory(1);
      const double reserved = e_.memory_capacity * kEngineMemoryShare - e_.memory.weights -
                              e_.memory.activations - kContextBytes;
      batch = std::min<double>(EngineMaxBatch(), std::floor(reserved / per_sequence));
      if (batch < 1) {
        e_.fits = false;
        e_.memory.kv_cache = per_sequence;
        e_.reason = "the weights leave no room for the KV cache of one " +
                    std::to_string(w_.prompt_tokens + w_.gen_tokens) + "-token sequence";
        return;
      }
    }
    e_.batch = static_cast<int>(batch);
    InferenceMemory(batch);
    const double prefill_tps = PrefillTokensPerSecond(prompt);
    const double step_s = DecodeStepSeconds(batch, prompt + gen / 2);
    // A round: the batch's prompts, then its tokens one step at a time (continuous batching
    // averages to the same mix).
    const double round_s = batch * prompt / prefill_tps + gen * step_s;
    const double output_tps = batch * gen / round_s;
    e_.throughput.prefill_tokens_per_s = prefill_tps;
    e_.throughput.decode_tokens_per_s = output_tps;
    e_.fits = true;
    const double tokens = w_.work.tokens > 0 ? w_.work.tokens : w_.work.requests * gen;
    SetTime(tokens / output_tps, tokens / 1e6, "1M tokens");
  }

  double PixelScale() const {
    if (m_.resolution <= 0 || w_.image_size <= 0) return 1;
    const double ratio = static_cast<double>(w_.image_size) / m_.resolution;
    return ratio * ratio;
  }

  double WorkSamples() const {
    if (w_.work.samples > 0) return w_.work.samples * w_.work.epochs;
    if (w_.work.requests > 0) return w_.work.requests;
    if (w_.work.images > 0) return w_.work.images;
    return w_.work.tokens / std::max(1, w_.prompt_tokens);
  }

  void SetTime(double seconds, double units, std::string unit) {
    e_.time_s = seconds;
    e_.work_units = units;
    e_.unit = std::move(unit);
  }

  const Workload& w_;
  const ModelSpec& m_;
  const catalog::GpuType& gpu_;
  const int count_;
  const Efficiency& eff_;
  Peak peak_;
  double bandwidth_ = 0;
  Estimate e_;
};

void AddCosts(Estimate& e, const catalog::GpuType& gpu, const CostInputs& costs) {
  const double count = e.count;
  e.rent_per_hour = core::Money::FromMicros(gpu.price.rent_per_hour.micros() * e.count);
  e.buy = core::Money::FromMicros(gpu.price.buy.micros() * e.count);
  const double power_usd_per_hour = gpu.tdp_w * count / 1000.0 * costs.power_usd_per_kwh;
  e.power_per_hour = MoneyFromDollars(power_usd_per_hour);
  const double margin = e.rent_per_hour.ToDollars() - power_usd_per_hour;
  if (margin > 0) e.break_even_hours = e.buy.ToDollars() / margin;
  if (e.fits && e.time_s > 0 && std::isfinite(e.time_s)) {
    e.cost = MoneyFromDollars(e.rent_per_hour.ToDollars() * e.time_s / 3600);
    if (e.work_units > 0) e.cost_per_unit_usd = e.cost.ToDollars() / e.work_units;
  }
}

}  // namespace

Estimate EstimateOn(const Workload& workload, const catalog::GpuType& gpu, int count,
                    const Efficiency& efficiency, const CostInputs& costs) {
  SUANLI_CHECK(count >= 1, "an estimate needs at least one GPU");
  Estimate estimate = Estimator(workload, gpu, count, efficiency).Run();
  AddCosts(estimate, gpu, costs);
  return estimate;
}

}  // namespace suanli::advisor
