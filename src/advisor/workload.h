// Workload: the job a person asks the advisor about — a model, a task, a precision and an amount of
// work.
//
// ParseWorkload-style validation lives in the CLI and the API; Validate() here checks what no
// caller may get wrong (a sequence longer than the model's context, QLoRA without 4-bit weights).
// Counts are per GPU for training (the micro-batch each GPU holds) and per engine instance for
// inference.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "advisor/model.h"
#include "core/status.h"

namespace suanli::advisor {

enum class Task { kTrain, kFinetune, kLora, kQlora, kInfer, kServe };
// kInt8 is INT8 tensor-core inference (TensorRT, SmoothQuant W8A8): weights and activations in 8
// bits. Weight-only INT8 that computes in 16 bits is --quant int8.
enum class Precision { kFp32, kTf32, kBf16, kFp16, kFp8, kInt8 };
enum class Engine { kPytorch, kVllm, kTensorRtLlm, kSglang, kLlamaCpp, kExllama, kMlc };
enum class Optimizer { kAdamW, kAdamW8bit, kSgd };

// How the weights are stored when they are quantized; absent means "as the precision says".
struct Quantization {
  std::string name;        // "int8", "int4", "nf4", "q4_k_m", ...
  double bits_per_weight;  // real bits including scales: q4_0 is 4.5, q4_k_m about 4.85
  bool gguf;               // llama.cpp's formats
};

// INVALID_ARGUMENT listing the known names for anything unknown.
core::Result<Task> ParseTask(std::string_view name);
core::Result<Precision> ParsePrecision(std::string_view name);
core::Result<Engine> ParseEngine(std::string_view name);
core::Result<Optimizer> ParseOptimizer(std::string_view name);
core::Result<Quantization> ParseQuantization(std::string_view name);
std::string_view TaskName(Task task);
std::string_view PrecisionName(Precision precision);
std::string_view EngineName(Engine engine);
std::string_view OptimizerName(Optimizer optimizer);

bool IsTraining(Task task);  // train, finetune, lora, qlora: a backward pass and an optimizer

// The amount of work the time and cost are for. At most one kind is set by the person; Defaults()
// fills the rest and marks it assumed so the answer says so.
struct WorkAmount {
  double tokens = 0;   // training: tokens processed; serve/infer: output tokens
  double samples = 0;  // training: samples per epoch (images, sequences)
  int epochs = 1;
  double requests = 0;   // infer/serve LLMs: prompts answered
  double images = 0;     // diffusion: images generated
  bool assumed = false;  // true when the person gave none and a default was used
};

struct Workload {
  ModelSpec model;
  Task task = Task::kInfer;
  Precision precision = Precision::kBf16;
  std::optional<Quantization> quant;
  Engine engine = Engine::kPytorch;
  bool engine_given = false;
  Optimizer optimizer = Optimizer::kAdamW;
  int batch = 0;  // 0: the default for the task (serve: the largest that fits)
  int seq = 0;    // training sequence length, tokens; 0: default
  int prompt_tokens = 0;
  int gen_tokens = 0;
  int image_size = 0;  // pixels on a side (vision, diffusion); 0: the model's
  int steps = 0;       // diffusion denoising steps
  // Activation checkpointing; unset: on for LoRA and QLoRA (as PEFT and axolotl recipes run them),
  // off for full training.
  std::optional<bool> recompute;
  bool flash_attention =
      true;  // false: attention scores are materialised (Korthikanti's 5 a s^2 term)
  WorkAmount work;
};

// Fills defaults that depend on the model and task (sequence, batch, prompt and generation lengths,
// image size, steps, engine, work amount), then checks the workload. INVALID_ARGUMENT, saying which
// flag, for a sequence beyond the model's context, QLoRA with weights that are not 4-bit, a
// quantisation a training task cannot use, a GGUF format with an engine other than llama.cpp, an
// LLM-only flag on a vision model.
core::Status CompleteAndValidate(Workload& workload);

}  // namespace suanli::advisor
