#include "advisor/efficiency.h"

namespace suanli::advisor {

const EngineEfficiency& Efficiency::For(Engine engine) const {
  switch (engine) {
    case Engine::kPytorch:
      return pytorch;
    case Engine::kVllm:
      return vllm;
    case Engine::kTensorRtLlm:
      return tensorrt_llm;
    case Engine::kSglang:
      return sglang;
    case Engine::kLlamaCpp:
      return llama_cpp;
    case Engine::kExllama:
      return exllama;
    case Engine::kMlc:
      return mlc;
  }
  return pytorch;
}

const Efficiency& FittedEfficiency() {
  // Fitted by `bench/advisor_accuracy --fit` on the calibration rows that are not held out (see
  // docs/advisor.md for the error on both sets); the struct's defaults were the starting point.
  static const Efficiency kFitted = [] {
    Efficiency e;
    e.train_decoder = 0.9;
    e.train_encoder = 0.5189;
    e.lora = 0.2819;
    e.qlora = 0.1307;
    e.small_hidden = 748.7;
    e.vision = 0.8301;
    e.vision_activation_passes = 25.6;
    e.vision_l2_reference_mb = 157.3;
    e.diffusion_bytes_per_flop = 0.004272;
    e.diffusion_pre_ampere = 0.4838;
    e.diffusion_step_overhead_s = 0.02273;
    e.activation_factor = 1.414;
    e.tensor_tflops_per_watt = 1.153;
    e.fp8_training_gain = 1.25;
    e.bnb_layer_overhead_s = 0.000675;
    e.pytorch.prefill = 0.4;
    e.pytorch.decode_bandwidth = 0.75;
    e.pytorch.decode_layer_overhead_s = 0.0001624;
    e.pytorch.decode_overhead_s = 0.02;
    e.vllm.prefill = 0.4336;
    e.vllm.decode_bandwidth = 0.8;
    e.vllm.decode_layer_overhead_s = 6.778e-05;
    e.vllm.decode_overhead_s = 0.003026;
    e.tensorrt_llm.prefill = 0.7127;
    e.tensorrt_llm.decode_bandwidth = 0.75;
    e.tensorrt_llm.decode_layer_overhead_s = 5.175e-05;
    e.tensorrt_llm.decode_overhead_s = 0.008757;
    e.sglang.prefill = 0.674;
    e.sglang.decode_bandwidth = 0.95;
    e.sglang.decode_layer_overhead_s = 0.0001996;
    e.sglang.decode_overhead_s = 0.01106;
    e.llama_cpp.prefill = 0.3932;
    e.llama_cpp.decode_bandwidth = 0.8467;
    e.llama_cpp.decode_layer_overhead_s = 0;
    e.llama_cpp.decode_overhead_s = 0.00231;
    e.exllama.prefill = 0.45;
    e.exllama.decode_bandwidth = 0.7882;
    e.exllama.decode_layer_overhead_s = 4e-06;
    e.exllama.decode_overhead_s = 0.0009631;
    e.mlc.prefill = 0.45;
    e.mlc.decode_bandwidth = 0.9;
    e.mlc.decode_layer_overhead_s = 0;
    e.mlc.decode_overhead_s = 0.0006239;
    return e;
  }();
  return kFitted;
}

}  // namespace suanli::advisor
