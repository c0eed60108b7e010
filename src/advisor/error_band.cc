#include "advisor/error_band.h"

#include <algorithm>
#include <array>

namespace suanli::advisor {
namespace {

// bench/advisor_accuracy --leave-one-source-out, 2026-12-06, round 4 (docs/advisor.md). The ctest
// advisor_error_bands fails when a figure here is not what the bench measures now.
constexpr std::array<SpeedError, 7> kSpeedErrors = {{
    {"diffusion_inference", 12.0, 18},
    {"finetune_llm", 7.6, 10},
    {"llm_decode", 16.0, 54},
    {"llm_prefill", 22.9, 9},
    {"llm_serving_throughput", 13.5, 32},
    {"train_cnn", 15.4, 36},
    {"train_transformer", 13.6, 117},
}};

std::optional<SpeedError> Find(std::string_view kind) {
  const auto found = std::ranges::find(kSpeedErrors, kind, &SpeedError::kind);
  if (found == kSpeedErrors.end()) return std::nullopt;
  return *found;
}

}  // namespace

std::span<const SpeedError> SpeedErrors() { return kSpeedErrors; }

std::optional<SpeedError> SpeedErrorOf(const Workload& workload) {
  const ModelKind kind = workload.model.kind;
  const bool language = kind == ModelKind::kDecoderLm || kind == ModelKind::kEncoder;
  switch (workload.task) {
    case Task::kTrain:
      if (kind == ModelKind::kVision) return Find("train_cnn");
      return language ? Find("train_transformer") : std::nullopt;
    case Task::kFinetune:
    case Task::kLora:
    case Task::kQlora:
      return kind == ModelKind::kDecoderLm ? Find("finetune_llm") : std::nullopt;
    case Task::kServe:
      if (kind == ModelKind::kDiffusion) return Find("diffusion_inference");
      return kind == ModelKind::kDecoderLm ? Find("llm_serving_throughput") : std::nullopt;
    case Task::kInfer:
      if (kind == ModelKind::kDiffusion) return Find("diffusion_inference");
      // Generation's time is mostly its decode steps.
      return kind == ModelKind::kDecoderLm ? Find("llm_decode") : std::nullopt;
  }
  return std::nullopt;
}

}  // namespace suanli::advisor
