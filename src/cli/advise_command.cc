// suanli advise: memory, speed, time and cost of a workload on every GPU type, and which to pick.
#include <fmt/format.h>

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <memory>
#include <ostream>

#include "advisor/advice_json.h"
#include "advisor/advisor.h"
#include "advisor/hf_config.h"
#include "advisor/model_zoo.h"
#include "cli/command.h"
#include "cli/files.h"
#include "cli/flags.h"
#include "cli/text_table.h"

namespace suanli::cli {
namespace {

using advisor::Estimate;

struct AdviseFlags {
  std::string model;
  std::string hf_config;
  std::string task;
  std::string precision = "bf16";
  std::string quant;
  std::string engine;
  std::string optimizer = "adamw";
  int batch = 0;
  int seq = 0;
  int prompt_tokens = 0;
  int gen_tokens = 0;
  std::string image_size;
  int steps = 0;
  double tokens = 0;
  double samples = 0;
  int epochs = 1;
  double requests = 0;
  double images = 0;
  bool recompute = false;
  bool no_recompute = false;
  bool no_flash_attention = false;
  std::vector<std::string> gpus;
  std::string deadline;
  std::optional<double> budget_usd;
  double power_usd_per_kwh = 0.15;
  bool json = false;
  bool all = false;
  bool list_models = false;
};

// "512", "512x512" or "1024X768" (the longer side counts: the models here are square).
core::Result<int> ParseImageSize(const std::string& text) {
  int width = 0;
  int height = 0;
  const char* end = text.data() + text.size();
  auto [after_width, error] = std::from_chars(text.data(), end, width);
  if (error == std::errc() && after_width == end) height = width;
  if (error == std::errc() && after_width != end && (*after_width == 'x' || *after_width == 'X')) {
    auto [after_height, height_error] = std::from_chars(after_width + 1, end, height);
    if (height_error != std::errc() || after_height != end) height = 0;
  }
  if (width <= 0 || height <= 0 || width > 16384 || height > 16384) {
    return core::InvalidArgumentError("--image-size '" + text +
                                      "' must look like 512 or 1024x1024");
  }
  return std::max(width, height);
}

// "90", "90s", "45m", "2h", "3d" -> seconds.
core::Result<double> ParseDuration(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [unit, error] = std::from_chars(text.data(), end, value);
  double scale = 0;
  const std::string_view suffix(unit, static_cast<size_t>(end - unit));
  if (suffix.empty() || suffix == "s") scale = 1;
  if (suffix == "m" || suffix == "min") scale = 60;
  if (suffix == "h") scale = 3600;
  if (suffix == "d") scale = 86400;
  if (error != std::errc() || scale == 0 || !(value > 0)) {
    return core::InvalidArgumentError("--deadline '" + text +
                                      "' must look like 90s, 45m, 12h or 3d");
  }
  return value * scale;
}

core::Result<advisor::ModelSpec> LoadModel(const AdviseFlags& flags) {
  if (flags.model.empty() == flags.hf_config.empty()) {
    return core::InvalidArgumentError(
        "give exactly one of --model NAME (see --list-models) or --hf-config config.json");
  }
  if (!flags.hf_config.empty()) {
    core::Result<std::string> text = ReadFile(flags.hf_config, 1 << 20);
    if (!text.ok()) return text.status().WithContext("--hf-config");
    return advisor::ModelFromHfConfig(*text, flags.hf_config);
  }
  core::Result<advisor::ModelZoo> zoo = advisor::LoadBuiltInModelZoo();
  if (!zoo.ok()) return zoo.status();
  core::Result<const advisor::ModelSpec*> model = zoo->Find(flags.model);
  if (!model.ok()) return model.status();
  return **model;
}

core::Result<advisor::Workload> BuildWorkload(const AdviseFlags& flags) {
  advisor::Workload w;
  core::Result<advisor::ModelSpec> model = LoadModel(flags);
  if (!model.ok()) return model.status();
  w.model = std::move(*model);
  if (flags.task.empty()) {
    return core::InvalidArgumentError(
        "--task is required: train, finetune, lora, qlora, infer or serve");
  }
  core::Result<advisor::Task> task = advisor::ParseTask(flags.task);
  if (!task.ok()) return task.status();
  w.task = *task;
  core::Result<advisor::Precision> precision = advisor::ParsePrecision(flags.precision);
  if (!precision.ok()) return precision.status();
  w.precision = *precision;
  if (!flags.quant.empty()) {
    core::Result<advisor::Quantization> quant = advisor::ParseQuantization(flags.quant);
    if (!quant.ok()) return quant.status();
    w.quant = *quant;
  }
  if (!flags.engine.empty()) {
    core::Result<advisor::Engine> engine = advisor::ParseEngine(flags.engine);
    if (!engine.ok()) return engine.status();
    w.engine = *engine;
    w.engine_given = true;
  }
  core::Result<advisor::Optimizer> optimizer = advisor::ParseOptimizer(flags.optimizer);
  if (!optimizer.ok()) return optimizer.status();
  w.optimizer = *optimizer;
  w.batch = flags.batch;
  w.seq = flags.seq;
  w.prompt_tokens = flags.prompt_tokens;
  w.gen_tokens = flags.gen_tokens;
  w.steps = flags.steps;
  if (flags.recompute && flags.no_recompute) {
    return core::InvalidArgumentError("give --recompute or --no-recompute, not both");
  }
  if (flags.recompute || flags.no_recompute) w.recompute = flags.recompute;
  w.flash_attention = !flags.no_flash_attention;
  if (!flags.image_size.empty()) {
    core::Result<int> size = ParseImageSize(flags.image_size);
    if (!size.ok()) return size.status();
    w.image_size = *size;
  }
  const int kinds_of_work =
      (flags.tokens > 0) + (flags.samples > 0) + (flags.requests > 0) + (flags.images > 0);
  if (kinds_of_work > 1) {
    return core::InvalidArgumentError(
        "give one amount of work: --tokens, --samples (with --epochs), "
        "--requests or --images");
  }
  w.work.tokens = flags.tokens;
  w.work.samples = flags.samples;
  w.work.epochs = flags.epochs;
  w.work.requests = flags.requests;
  w.work.images = flags.images;
  SUANLI_RETURN_IF_ERROR(advisor::CompleteAndValidate(w));
  return w;
}

core::Result<advisor::AdviseOptions> BuildOptions(const AdviseFlags& flags,
                                                  const catalog::Catalog& catalog,
                                                  std::ostream& err) {
  advisor::AdviseOptions options;
  for (const std::string& spec : flags.gpus) {
    std::string name = spec;
    int count = 0;
    if (const size_t colon = spec.rfind(':'); colon != std::string::npos) {
      name = spec.substr(0, colon);
      const std::string count_text = spec.substr(colon + 1);
      auto [end, error] =
          std::from_chars(count_text.data(), count_text.data() + count_text.size(), count);
      if (error != std::errc() || end != count_text.data() + count_text.size() || count < 1 ||
          count > 64) {
        return core::InvalidArgumentError("--gpu '" + spec +
                                          "': the count after ':' must be 1 to 64");
      }
    }
    core::Result<catalog::GpuMatch> match = catalog.Find(name);
    if (!match.ok()) return match.status();
    if (std::string note = match->Note(name); !note.empty()) err << "note: " << note << "\n";
    options.gpus.push_back({match->gpu, count, 0});
  }
  if (!flags.deadline.empty()) {
    core::Result<double> deadline = ParseDuration(flags.deadline);
    if (!deadline.ok()) return deadline.status();
    options.deadline_s = *deadline;
  }
  if (flags.budget_usd) {  // at most $1e9 (the flag's bound), so the micro-dollars fit in int64
    options.budget = core::Money::FromMicros(static_cast<int64_t>(*flags.budget_usd * 1e6));
  }
  options.costs.power_usd_per_kwh = flags.power_usd_per_kwh;
  return options;
}

void PrintTable(const advisor::Advice& advice, bool all, std::ostream& out) {
  TextTable table;
  table.AddColumn("GPU", TextTable::Align::kLeft);
  table.AddColumn("FITS", TextTable::Align::kLeft);
  table.AddColumn("GB NEEDED/HELD", TextTable::Align::kRight);
  table.AddColumn("SPEED", TextTable::Align::kRight);
  table.AddColumn("BOUND", TextTable::Align::kLeft);
  table.AddColumn("TIME", TextTable::Align::kRight);
  table.AddColumn("COST", TextTable::Align::kRight);
  table.AddColumn("RENT $/H", TextTable::Align::kRight);
  table.AddColumn("BREAK-EVEN", TextTable::Align::kRight);
  size_t shown = 0;
  size_t hidden = 0;
  // Each assumption once, with the GPUs it applies to ("no BF16 on Turing: ..."): a person reading
  // the table must see it, not only a script reading --json.
  std::vector<std::pair<std::string, std::string>> notes;  // note, GPU names
  for (const Estimate& e : advice.estimates) {
    if (!all && (!e.fits || shown >= 15)) {
      ++hidden;
      continue;
    }
    ++shown;
    const std::string name =
        e.count == 1 ? e.gpu->name : fmt::format("{}x {}", e.count, e.gpu->name);
    for (const std::string& note : e.notes) {
      auto it = std::find_if(notes.begin(), notes.end(),
                             [&](const auto& entry) { return entry.first == note; });
      if (it == notes.end()) {
        notes.emplace_back(note, e.gpu->name);
      } else if (it->second.find(e.gpu->name) == std::string::npos) {
        it->second += ", " + e.gpu->name;
      }
    }
    const std::string fits = !e.supported ? "no: unsupported" : (e.fits ? "yes" : "no");
    table.AddRow({name, fits,
                  fmt::format("{:.1f}/{:.1f}", e.memory.Total() / catalog::kBytesPerGb,
                              e.memory_capacity / catalog::kBytesPerGb),
                  e.supported ? advisor::RateText(e) : "—",
                  e.bound == advisor::Bound::kMemory ? "memory" : "compute",
                  e.fits ? advisor::DurationText(e.time_s) : "—",
                  e.fits ? e.cost.ToRoundedString() : "—", e.rent_per_hour.ToString(),
                  e.break_even_hours ? fmt::format("{:.0f}h", *e.break_even_hours) : "—"});
  }
  out << table.Render();
  if (hidden > 0)
    out << hidden << " more (GPUs that do not fit, or beyond the first 15): --all shows them\n";
  out << "TIME and COST are for " << advisor::WorkText(advice.workload)
      << (advice.workload.work.assumed
              ? " (assumed: give --tokens, --samples, --requests or --images for yours).\n"
              : ".\n");
  out << "GB as datasheets count them (2^30 bytes); HELD is what NVML reports where it differs "
         "from the label (an H200 \"141 GB\" holds 140.4).\n";
  for (const auto& [note, gpus] : notes) out << "Note (" << gpus << "): " << note << "\n";
}

core::Status RunAdvise(const AdviseFlags& flags, CommandContext& context) {
  if (flags.list_models) {
    core::Result<advisor::ModelZoo> zoo = advisor::LoadBuiltInModelZoo();
    if (!zoo.ok()) return zoo.status();
    TextTable table;
    table.AddColumn("MODEL", TextTable::Align::kLeft);
    table.AddColumn("PARAMS", TextTable::Align::kRight);
    table.AddColumn("CONTEXT", TextTable::Align::kRight);
    for (const advisor::ModelSpec& model : zoo->models()) {
      table.AddRow({model.name, fmt::format("{:.2f}B", model.params / 1e9),
                    model.context > 0 ? std::to_string(model.context) : "—"});
    }
    context.out << table.Render();
    return core::Status::Ok();
  }
  core::Result<advisor::Workload> workload = BuildWorkload(flags);
  if (!workload.ok()) return workload.status();
  core::Result<catalog::Catalog> catalog = context.LoadCatalog();
  if (!catalog.ok()) return catalog.status();
  core::Result<advisor::AdviseOptions> options = BuildOptions(flags, *catalog, context.err);
  if (!options.ok()) return options.status();
  const advisor::Advice advice = advisor::Advise(*workload, *catalog, *options);

  if (flags.json) {
    context.out << boost::json::serialize(advisor::AdviceToJson(advice)) << "\n";
    return core::Status::Ok();
  }
  const advisor::Workload& w = advice.workload;
  context.out << fmt::format(
      "{} ({:.2f}B parameters), {} in {}{}, engine {}\n", w.model.name, w.model.params / 1e9,
      advisor::TaskName(w.task), advisor::PrecisionName(w.precision),
      w.quant ? " with " + w.quant->name + " weights" : "", advisor::EngineName(w.engine));
  PrintTable(advice, flags.all, context.out);
  context.out << "\nRecommendation: " << advice.recommendation.reason << "\n";
  return core::Status::Ok();
}

}  // namespace

CommandRun DefineAdviseCommand(CLI::App& command) {
  auto flags = std::make_shared<AdviseFlags>();
  command.add_option("--model", flags->model,
                     "A model of the zoo, e.g. llama-3-8b (see --list-models)");
  command.add_option("--hf-config", flags->hf_config,
                     "A Hugging Face config.json for any other model");
  command.add_option("--task", flags->task, "train, finetune, lora, qlora, infer or serve");
  command.add_option("--precision", flags->precision,
                     "fp32, tf32, bf16 (default), fp16, fp8, or int8 (inference)");
  command.add_option("--quant", flags->quant,
                     "Weight format: int8, int4, nf4, q4_0, q4_k_m, q8_0, ...");
  command.add_option("--engine", flags->engine,
                     "pytorch, vllm, tensorrt-llm, sglang, llama.cpp, exllama or mlc");
  command.add_option("--optimizer", flags->optimizer, "adamw (default), adamw8bit or sgd");
  command
      .add_option("--batch", flags->batch,
                  "Batch per GPU (serve: default is the largest that fits)")
      ->check(PositiveInteger());
  command.add_option("--seq", flags->seq, "Training sequence length, tokens")
      ->check(PositiveInteger());
  command.add_option("--prompt-tokens", flags->prompt_tokens, "Prompt length, tokens")
      ->check(PositiveInteger());
  command.add_option("--gen-tokens", flags->gen_tokens, "Generated tokens per request")
      ->check(PositiveInteger());
  command.add_option("--image-size", flags->image_size, "Image size, e.g. 512 or 1024x1024");
  command.add_option("--steps", flags->steps, "Diffusion denoising steps")
      ->check(PositiveInteger());
  command.add_option("--tokens", flags->tokens, "Work: tokens to train on or to generate")
      ->check(PositiveNumber());
  command.add_option("--samples", flags->samples, "Work: samples per epoch")
      ->check(PositiveNumber());
  command.add_option("--epochs", flags->epochs, "Work: epochs over --samples")
      ->check(PositiveInteger());
  command.add_option("--requests", flags->requests, "Work: requests to answer")
      ->check(PositiveNumber());
  command.add_option("--images", flags->images, "Work: images to generate")
      ->check(PositiveNumber());
  command.add_flag(
      "--recompute", flags->recompute,
      "Activation checkpointing: less memory, a third more compute (default for lora/qlora)");
  command.add_flag("--no-recompute", flags->no_recompute,
                   "Keep all activations (default for train/finetune)");
  command.add_flag("--no-flash-attention", flags->no_flash_attention,
                   "Training keeps every head's attention scores (memory grows with seq^2)");
  command.add_option("--gpu", flags->gpus,
                     "Only this GPU type, optionally with a count: a100:4 (repeatable)");
  command.add_option("--deadline", flags->deadline, "Finish within this time: 90m, 12h, 3d");
  command.add_option("--budget", flags->budget_usd, "Spend at most this many dollars")
      ->check(PositiveNumber(1e9));
  command
      .add_option("--power-price", flags->power_usd_per_kwh,
                  "Electricity for buy-vs-rent, $/kWh (default 0.15)")
      ->check(NonNegativeNumber(100));
  command.add_flag("--json", flags->json, "Print JSON instead of a table");
  command.add_flag("--all", flags->all, "Show every GPU, not only the first 15 that fit");
  command.add_flag("--list-models", flags->list_models, "List the model zoo");
  return [flags](CommandContext& context) { return RunAdvise(*flags, context); };
}

}  // namespace suanli::cli
