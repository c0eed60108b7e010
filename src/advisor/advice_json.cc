#include "advisor/advice_json.h"

#include <boost/json/array.hpp>
#include <cmath>
#include <optional>

#include "advisor/error_band.h"

namespace suanli::advisor {
namespace {

constexpr double kGb = catalog::kBytesPerGb;  // as the catalog's memory_gb

std::string_view KindName(ModelKind kind) {
  switch (kind) {
    case ModelKind::kDecoderLm:
      return "decoder_lm";
    case ModelKind::kEncoder:
      return "encoder";
    case ModelKind::kEncoderDecoder:
      return "encoder_decoder";
    case ModelKind::kVision:
      return "vision";
    case ModelKind::kDiffusion:
      return "diffusion";
  }
  return "?";
}

// JSON has no NaN or infinity; an estimate that produced one says null rather than break the
// document.
boost::json::value Finite(double value) {
  if (std::isfinite(value)) return value;
  return nullptr;
}

void PutIfSet(boost::json::object& object, std::string_view key,
              const std::optional<double>& value) {
  if (value) object[key] = Finite(*value);
}

boost::json::object WorkloadToJson(const Workload& w) {
  boost::json::object work;
  if (w.work.tokens > 0) work["tokens"] = w.work.tokens;
  if (w.work.samples > 0) {
    work["samples"] = w.work.samples;
    work["epochs"] = w.work.epochs;
  }
  if (w.work.requests > 0) work["requests"] = w.work.requests;
  if (w.work.images > 0) work["images"] = w.work.images;
  work["assumed"] = w.work.assumed;
  boost::json::object json = {
      {"model", w.model.name},
      {"kind", KindName(w.model.kind)},
      {"params", w.model.params},
      {"task", TaskName(w.task)},
      {"precision", PrecisionName(w.precision)},
      {"quant", w.quant ? boost::json::value(w.quant->name) : boost::json::value(nullptr)},
      {"bits_per_weight", w.quant ? w.quant->bits_per_weight : 0.0},
      {"engine", EngineName(w.engine)},
      {"work", std::move(work)},
  };
  if (w.batch > 0) json["batch"] = w.batch;
  if (w.model.kind == ModelKind::kVision || w.model.kind == ModelKind::kDiffusion) {
    json["image_size"] = w.image_size;
    if (w.model.kind == ModelKind::kDiffusion) json["steps"] = w.steps;
  } else if (IsTraining(w.task)) {
    json["seq"] = w.seq;
    json["recompute"] = w.recompute.value_or(false);
    json["flash_attention"] = w.flash_attention;
  } else {
    json["prompt_tokens"] = w.prompt_tokens;
    json["gen_tokens"] = w.gen_tokens;
  }
  if (IsTraining(w.task)) json["optimizer"] = OptimizerName(w.optimizer);
  return json;
}

}  // namespace

boost::json::object ModelToJson(const ModelSpec& model) {
  boost::json::array aliases;
  for (const std::string& alias : model.aliases) aliases.emplace_back(alias);
  return {{"name", model.name},
          {"aliases", std::move(aliases)},
          {"kind", KindName(model.kind)},
          {"params_b", model.params / 1e9}};
}

boost::json::object EstimateToJson(const Estimate& e) {
  boost::json::object throughput;
  PutIfSet(throughput, "prefill_tokens_per_s", e.throughput.prefill_tokens_per_s);
  PutIfSet(throughput, "decode_tokens_per_s", e.throughput.decode_tokens_per_s);
  PutIfSet(throughput, "train_tokens_per_s", e.throughput.train_tokens_per_s);
  PutIfSet(throughput, "samples_per_s", e.throughput.samples_per_s);
  PutIfSet(throughput, "images_per_s", e.throughput.images_per_s);
  PutIfSet(throughput, "steps_per_s", e.throughput.steps_per_s);
  boost::json::array notes;
  for (const std::string& note : e.notes) notes.emplace_back(note);
  return {
      {"gpu", e.gpu->name},
      {"count", e.count},
      {"batch", e.batch},
      {"supported", e.supported},
      {"fits", e.fits},
      {"reason", e.reason},
      {"memory_gb",
       {{"total", Finite(e.memory.Total() / kGb)},
        {"weights", Finite(e.memory.weights / kGb)},
        {"gradients", Finite(e.memory.gradients / kGb)},
        {"optimizer", Finite(e.memory.optimizer / kGb)},
        {"activations", Finite(e.memory.activations / kGb)},
        {"kv_cache", Finite(e.memory.kv_cache / kGb)},
        {"overhead", Finite(e.memory.overhead / kGb)},
        {"available", Finite(e.memory_capacity / kGb)}}},
      {"throughput", std::move(throughput)},
      {"bound", e.bound == Bound::kMemory ? "memory" : "compute"},
      {"time_s", Finite(e.time_s)},
      {"rent_usd_per_hour", e.rent_per_hour.ToDollars()},
      {"cost_usd", e.cost.ToDollars()},
      {"buy_usd", e.buy.ToDollars()},
      {"power_usd_per_hour", e.power_per_hour.ToDollars()},
      {"break_even_hours",
       e.break_even_hours ? Finite(*e.break_even_hours) : boost::json::value(nullptr)},
      {"cost_per_unit", {{"unit", e.unit}, {"usd", Finite(e.cost_per_unit_usd)}}},
      {"notes", std::move(notes)},
  };
}

boost::json::object AdviceToJson(const Advice& advice) {
  boost::json::array estimates;
  for (const Estimate& estimate : advice.estimates)
    estimates.emplace_back(EstimateToJson(estimate));
  boost::json::object recommendation = {{"reason", advice.recommendation.reason}};
  if (advice.recommendation.index) {
    const Estimate& pick = advice.estimates[*advice.recommendation.index];
    recommendation["gpu"] = pick.gpu->name;
    recommendation["count"] = pick.count;
    recommendation["time_s"] = Finite(pick.time_s);
    recommendation["cost_usd"] = pick.cost.ToDollars();
  } else {
    recommendation["gpu"] = nullptr;
  }
  boost::json::value speed_error = nullptr;
  if (const std::optional<SpeedError> band = SpeedErrorOf(advice.workload)) {
    speed_error = boost::json::object{{"kind", band->kind},
                                      {"median_percent", band->median_percent},
                                      {"rows", band->rows},
                                      {"basis", "leave_one_source_out"}};
  }
  return {{"workload", WorkloadToJson(advice.workload)},
          {"estimates", std::move(estimates)},
          {"recommendation", std::move(recommendation)},
          {"speed_error", std::move(speed_error)}};
}

}  // namespace suanli::advisor
