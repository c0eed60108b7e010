#include "advisor/workload.h"

#include <algorithm>
#include <array>
#include <utility>

namespace suanli::advisor {
namespace {

template <typename T, size_t N>
core::Result<T> ParseName(std::string_view what, std::string_view name,
                          const std::array<std::pair<std::string_view, T>, N>& table) {
  std::string lowered;
  for (char c : name) lowered += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  std::string known;
  for (const auto& [key, value] : table) {
    if (key == lowered) return value;
    known += (known.empty() ? "" : ", ") + std::string(key);
  }
  return core::InvalidArgumentError("unknown " + std::string(what) + " '" + std::string(name) +
                                    "'; choose from " + known);
}

constexpr std::array<std::pair<std::string_view, Task>, 6> kTasks = {{{"train", Task::kTrain},
                                                                      {"finetune", Task::kFinetune},
                                                                      {"lora", Task::kLora},
                                                                      {"qlora", Task::kQlora},
                                                                      {"infer", Task::kInfer},
                                                                      {"serve", Task::kServe}}};
constexpr std::array<std::pair<std::string_view, Precision>, 6> kPrecisions = {
    {{"fp32", Precision::kFp32},
     {"tf32", Precision::kTf32},
     {"bf16", Precision::kBf16},
     {"fp16", Precision::kFp16},
     {"fp8", Precision::kFp8},
     {"int8", Precision::kInt8}}};
constexpr std::array<std::pair<std::string_view, Engine>, 7> kEngines = {
    {{"pytorch", Engine::kPytorch},
     {"vllm", Engine::kVllm},
     {"tensorrt-llm", Engine::kTensorRtLlm},
     {"sglang", Engine::kSglang},
     {"llama.cpp", Engine::kLlamaCpp},
     {"exllama", Engine::kExllama},
     {"mlc", Engine::kMlc}}};
constexpr std::array<std::pair<std::string_view, Optimizer>, 3> kOptimizers = {
    {{"adamw", Optimizer::kAdamW}, {"adamw8bit", Optimizer::kAdamW8bit}, {"sgd", Optimizer::kSgd}}};

// Bits per weight including the scales each format stores: llama.cpp's figures for GGUF (q4_0 is 18
// bytes per 32 weights), bitsandbytes' for nf4 (fp32 absmax per 64 weights), GPTQ/AWQ group-128 for
// int4; MXFP4 (OCP microscaling, gpt-oss's experts) is 4-bit E2M1 plus an 8-bit scale per 32.
struct QuantRow {
  std::string_view name;
  double bits;
  bool gguf;
};
constexpr QuantRow kQuantizations[] = {
    {"int8", 8.0, false},     {"int4", 4.25, false},  {"nf4", 4.5, false},
    {"nf4-dq", 4.127, false}, {"q8_0", 8.5, true},    {"q6_k", 6.56, true},
    {"q5_k_m", 5.69, true},   {"q5_0", 5.5, true},    {"q4_k_m", 4.85, true},
    {"q4_k_s", 4.58, true},   {"q4_0", 4.5, true},    {"q3_k_m", 3.91, true},
    {"q2_k", 2.96, true},     {"mxfp4", 4.25, false},
};

// The amounts of work that mean something for this model and task: images for a diffusion model,
// tokens or requests for an LLM answering prompts, and so on. A wrong one would silently cost $0.
core::Status CheckWorkKind(const Workload& w) {
  const WorkAmount& work = w.work;
  const bool training = IsTraining(w.task);
  std::string allowed;
  bool ok = true;
  switch (w.model.kind) {
    case ModelKind::kDiffusion:
      allowed = "--images or --requests";
      ok = work.tokens == 0 && work.samples == 0;
      break;
    case ModelKind::kVision:
      allowed = "--samples (with --epochs) or --images";
      ok = work.tokens == 0 && work.requests == 0;
      break;
    case ModelKind::kEncoder:
      allowed = training ? "--tokens or --samples (with --epochs)" : "--samples or --requests";
      ok = work.images == 0 && (training ? work.requests == 0 : work.tokens == 0);
      break;
    case ModelKind::kDecoderLm:
    case ModelKind::kEncoderDecoder:
      allowed =
          training ? "--tokens or --samples (with --epochs)" : "--tokens (generated) or --requests";
      ok = work.images == 0 && (training ? work.requests == 0 : work.samples == 0);
      break;
  }
  if (ok) return core::Status::Ok();
  const char* given = work.tokens > 0     ? "--tokens"
                      : work.samples > 0  ? "--samples"
                      : work.requests > 0 ? "--requests"
                                          : "--images";
  return core::InvalidArgumentError(std::string(given) + " does not apply to " +
                                    std::string(TaskName(w.task)) + " on " + w.model.name +
                                    "; give " + allowed);
}

void FillDefaults(Workload& w) {
  const ModelSpec& m = w.model;
  const bool training = IsTraining(w.task);
  if (!w.engine_given) {
    const bool gguf = w.quant.has_value() && w.quant->gguf;
    if (gguf) {
      w.engine = Engine::kLlamaCpp;
    } else if (w.task == Task::kServe && m.kind == ModelKind::kDecoderLm) {
      w.engine = Engine::kVllm;
    } else {
      w.engine = Engine::kPytorch;
    }
  }
  if (w.task == Task::kQlora && !w.quant.has_value()) w.quant = Quantization{"nf4", 4.5, false};
  if (!w.recompute.has_value()) w.recompute = w.task == Task::kLora || w.task == Task::kQlora;
  if (w.model.kind == ModelKind::kVision || w.model.kind == ModelKind::kDiffusion) {
    if (w.image_size == 0) w.image_size = m.resolution;
    if (w.model.kind == ModelKind::kDiffusion && w.steps == 0) w.steps = 30;
    if (w.batch == 0) w.batch = (m.kind == ModelKind::kVision) ? 64 : 1;
  } else {
    if (w.seq == 0) {
      const int usual = m.kind == ModelKind::kEncoder ? 384 : 2048;
      w.seq = m.context > 0 ? std::min(usual, m.context) : usual;
    }
    if (w.prompt_tokens == 0) w.prompt_tokens = std::min(512, std::max(1, m.context / 2));
    if (w.gen_tokens == 0) w.gen_tokens = std::min(256, std::max(1, m.context / 4));
    if (w.batch == 0 && !(w.task == Task::kServe && m.kind == ModelKind::kDecoderLm)) {
      w.batch =
          training ? (m.kind == ModelKind::kEncoder ? 32 : (w.task == Task::kTrain ? 8 : 4)) : 1;
    }
  }

  WorkAmount& work = w.work;
  if (work.tokens == 0 && work.samples == 0 && work.requests == 0 && work.images == 0) {
    work.assumed = true;
    if (m.kind == ModelKind::kDiffusion) {
      work.images = 1'000;
    } else if (m.kind == ModelKind::kVision) {
      work.samples = training ? 1'281'167 : 50'000;  // an ImageNet epoch; its validation set
    } else if (training) {
      work.tokens = (w.task == Task::kTrain) ? 1e9 : 1e8;
    } else {
      work.requests = (w.task == Task::kServe) ? 10'000 : 100;
    }
  }
}

}  // namespace

core::Result<Task> ParseTask(std::string_view name) { return ParseName("task", name, kTasks); }
core::Result<Precision> ParsePrecision(std::string_view name) {
  return ParseName("precision", name, kPrecisions);
}
core::Result<Engine> ParseEngine(std::string_view name) {
  return ParseName("engine", name, kEngines);
}
core::Result<Optimizer> ParseOptimizer(std::string_view name) {
  return ParseName("optimizer", name, kOptimizers);
}

core::Result<Quantization> ParseQuantization(std::string_view name) {
  std::string lowered;
  for (char c : name) lowered += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  std::string known;
  for (const QuantRow& row : kQuantizations) {
    if (row.name == lowered) return Quantization{std::string(row.name), row.bits, row.gguf};
    known += (known.empty() ? "" : ", ") + std::string(row.name);
  }
  return core::InvalidArgumentError("unknown quantisation '" + std::string(name) +
                                    "'; choose from " + known);
}

template <typename T, size_t N>
std::string_view NameOf(T value, const std::array<std::pair<std::string_view, T>, N>& table) {
  for (const auto& [key, entry] : table) {
    if (entry == value) return key;
  }
  return "?";
}

std::string_view TaskName(Task task) { return NameOf(task, kTasks); }
std::string_view PrecisionName(Precision precision) { return NameOf(precision, kPrecisions); }
std::string_view EngineName(Engine engine) { return NameOf(engine, kEngines); }
std::string_view OptimizerName(Optimizer optimizer) { return NameOf(optimizer, kOptimizers); }

bool IsTraining(Task task) {
  return task == Task::kTrain || task == Task::kFinetune || task == Task::kLora ||
         task == Task::kQlora;
}

core::Status CompleteAndValidate(Workload& w) {
  const ModelSpec& m = w.model;
  if (w.batch < 0 || w.seq < 0 || w.prompt_tokens < 0 || w.gen_tokens < 0 || w.steps < 0 ||
      w.image_size < 0 || w.work.tokens < 0 || w.work.samples < 0 || w.work.requests < 0 ||
      w.work.images < 0 || w.work.epochs <= 0) {
    return core::InvalidArgumentError(
        "counts must be positive (batch, seq, tokens, samples, epochs, ...)");
  }
  const bool training = IsTraining(w.task);
  if (training && w.precision == Precision::kInt8) {
    // INT8 has no gradients worth the name: frameworks train in 16 bits (or FP8 on Ada and
    // Hopper) and quantise afterwards.
    return core::InvalidArgumentError(
        "--precision int8 is for inference (TensorRT, SmoothQuant W8A8); train in bf16 or fp16, "
        "or fp8 on Ada and Hopper, and quantise the trained model for --task infer or serve");
  }
  if (w.precision == Precision::kInt8 &&
      (w.engine == Engine::kLlamaCpp || w.engine == Engine::kExllama || w.engine == Engine::kMlc)) {
    return core::InvalidArgumentError("--engine " + std::string(EngineName(w.engine)) +
                                      " has no INT8 tensor-core path; use --quant q8_0 or int8 "
                                      "(8-bit weights) or --engine tensorrt-llm or vllm");
  }
  if (training && w.engine_given && w.engine != Engine::kPytorch) {
    return core::InvalidArgumentError(
        "--engine " + std::string(EngineName(w.engine)) +
        " serves models and does not train them; use --engine pytorch");
  }
  if (w.quant.has_value()) {
    if (w.task == Task::kTrain || w.task == Task::kFinetune) {
      return core::InvalidArgumentError(
          "full training updates 16-bit weights and cannot use --quant " + w.quant->name +
          "; use --task qlora to train adapters on 4-bit weights");
    }
    if (w.task == Task::kLora) {
      return core::InvalidArgumentError("--task lora trains on 16-bit weights; for --quant " +
                                        w.quant->name + " use --task qlora");
    }
    if (w.task == Task::kQlora && (w.quant->gguf || w.quant->bits_per_weight > 4.6)) {
      return core::InvalidArgumentError("QLoRA needs 4-bit weights (nf4, nf4-dq or int4), not " +
                                        w.quant->name);
    }
    if (w.quant->gguf && w.engine_given && w.engine != Engine::kLlamaCpp) {
      return core::InvalidArgumentError(
          "GGUF formats such as " + w.quant->name +
          " run on llama.cpp; drop --engine or use --engine llama.cpp");
    }
    if (w.precision == Precision::kFp8 || w.precision == Precision::kInt8) {
      return core::InvalidArgumentError("--precision " + std::string(PrecisionName(w.precision)) +
                                        " already stores 8-bit weights; drop --quant " +
                                        w.quant->name + " or use --precision bf16");
    }
    if (!IsTransformer(m.kind)) {
      return core::InvalidArgumentError("--quant applies to language models; " + m.name +
                                        " is not one");
    }
  }
  if (w.engine_given && w.engine != Engine::kPytorch && m.kind != ModelKind::kDecoderLm) {
    return core::InvalidArgumentError("--engine " + std::string(EngineName(w.engine)) +
                                      " runs decoder LLMs; " + m.name +
                                      " runs on --engine pytorch");
  }
  if (w.task == Task::kQlora || w.task == Task::kLora) {
    if (!IsTransformer(m.kind) && m.kind != ModelKind::kDiffusion) {
      return core::InvalidArgumentError(
          "LoRA adapters apply to transformer and diffusion models, not " + m.name);
    }
  }
  if (!IsTransformer(m.kind) && (w.prompt_tokens > 0 || w.gen_tokens > 0 || w.seq > 0)) {
    return core::InvalidArgumentError(m.name +
                                      " does not take --seq, --prompt-tokens or --gen-tokens");
  }
  if (IsTransformer(m.kind) && (w.image_size > 0 || w.steps > 0)) {
    return core::InvalidArgumentError(m.name + " does not take --image-size or --steps");
  }
  if (m.kind == ModelKind::kEncoder && w.gen_tokens > 0) {
    return core::InvalidArgumentError(m.name +
                                      " is an encoder and generates no tokens; drop --gen-tokens");
  }
  if (m.kind == ModelKind::kDiffusion && training) {
    return core::InvalidArgumentError("training diffusion models is not modelled yet; " + m.name +
                                      " can be estimated for --task infer or serve");
  }
  if (IsTransformer(m.kind) && training && (w.prompt_tokens > 0 || w.gen_tokens > 0)) {
    return core::InvalidArgumentError(
        "--prompt-tokens and --gen-tokens are for infer and serve; "
        "training takes --seq");
  }
  if (IsTransformer(m.kind) && !training && w.seq > 0) {
    return core::InvalidArgumentError(
        "--seq is the training sequence; for infer and serve give "
        "--prompt-tokens and --gen-tokens");
  }
  if (w.work.epochs != 1 && w.work.samples == 0) {
    return core::InvalidArgumentError("--epochs counts passes over --samples; give --samples too");
  }
  SUANLI_RETURN_IF_ERROR(CheckWorkKind(w));
  FillDefaults(w);
  if (IsTransformer(m.kind) && m.context > 0) {
    if (training && w.seq > m.context) {
      return core::InvalidArgumentError("--seq " + std::to_string(w.seq) + " is longer than " +
                                        m.name + "'s context of " + std::to_string(m.context) +
                                        " tokens");
    }
    // In double: two int flags near INT_MAX must not wrap around and pass.
    const double tokens =
        static_cast<double>(w.prompt_tokens) + (m.kind == ModelKind::kEncoder ? 0 : w.gen_tokens);
    if (!training && tokens > m.context) {
      return core::InvalidArgumentError(
          "--prompt-tokens + --gen-tokens (" + std::to_string(static_cast<int64_t>(tokens)) +
          ") is longer than " + m.name + "'s context of " + std::to_string(m.context) + " tokens");
    }
  }
  return core::Status::Ok();
}

}  // namespace suanli::advisor
