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
  // Starting values from the literature (estimators.md); bench/advisor_accuracy --fit replaces
  // them.
  static const Efficiency kFitted;
  return kFitted;
}

}  // namespace suanli::advisor
