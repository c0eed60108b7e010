#include "server/routes/request_fields.h"

#include <algorithm>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <cmath>
#include <string>

#include "advisor/hf_config.h"
#include "billing/auto_stop.h"
#include "wire/views.h"

namespace suanli::server {

namespace json = boost::json;
using core::Result;
using core::Status;

std::optional<int64_t> ParseInteger(std::string_view text, int64_t min, int64_t max) {
  int64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || value < min || value > max) {
    return std::nullopt;
  }
  return value;
}

std::optional<std::vector<VolumeRequest>> ReadVolumeRequests(JsonFields& fields) {
  if (fields.Raw("volumes") == nullptr) return std::nullopt;
  std::vector<VolumeRequest> volumes;
  fields.Objects("volumes", wire::kMaxPodVolumes, [&volumes](JsonFields& read) {
    VolumeRequest volume;
    read.String("name", &volume.volume, {.required = true, .max_length = 64});
    read.String("mount_path", &volume.mount_path, {.required = true, .max_length = 256});
    read.Bool("read_only", &volume.read_only);
    volumes.push_back(std::move(volume));
  });
  return volumes;
}

void ReadDuration(JsonFields& fields, std::string_view key, int64_t* seconds) {
  const boost::json::value* value = fields.Raw(key);
  if (value == nullptr || value->is_null()) return;
  core::Result<int64_t> parsed = core::InvalidArgumentError("");
  if (value->is_int64()) {
    parsed = billing::ParseDurationSeconds(std::to_string(value->as_int64()), key);
  } else if (value->is_string()) {
    parsed = billing::ParseDurationSeconds(value->as_string(), key);
  } else {
    return fields.Fail(std::string(key) +
                       ": must be seconds (3600) or a duration such as \"2h\" or \"30m\"");
  }
  if (!parsed.ok()) return fields.Fail(parsed.status().message());
  *seconds = *parsed;
}

void ReadGpuCount(JsonFields& fields, int* gpu_count, int* gpu_milli) {
  const json::value* value = fields.Raw("gpu_count");
  if (value == nullptr) return;
  const double count = value->is_int64()    ? static_cast<double>(value->get_int64())
                       : value->is_uint64() ? static_cast<double>(value->get_uint64())
                       : value->is_double() ? value->get_double()
                                            : -1;
  const double milli = count * core::kMilliGpu;
  if (count >= 1 && count <= 64 && count == std::floor(count)) {
    *gpu_count = static_cast<int>(count);
    *gpu_milli = core::kMilliGpu;
  } else if (count > 0 && count < 1 && std::abs(milli - std::round(milli)) < 1e-6 &&
             std::round(milli) >= 1) {
    *gpu_count = 1;
    *gpu_milli = static_cast<int>(std::round(milli));
  } else {
    fields.Fail(
        "gpu_count: must be a whole number of GPUs from 1 to 64 or a share of one GPU from 0.001 "
        "to 0.999 (0.5 is half a GPU), got " +
        json::serialize(*value));
  }
}

std::vector<core::PortSpec> ReadPorts(JsonFields& fields, bool* present) {
  std::optional<std::vector<std::string>> texts;
  fields.OptionalStringList("ports", &texts);
  *present = texts.has_value();
  std::vector<core::PortSpec> ports;
  if (!texts) return ports;
  for (const std::string& text : *texts) {
    Result<core::PortSpec> port = wire::ParsePort(text);
    if (!port.ok()) {
      fields.Fail("ports: " + port.status().message());
      break;
    }
    ports.push_back(*port);
  }
  return ports;
}

std::optional<advisor::Workload> ReadWorkload(JsonFields& fields, const advisor::ModelZoo& zoo) {
  const json::value* raw = fields.Raw("workload");
  if (raw == nullptr) return std::nullopt;
  if (!raw->is_object()) {
    fields.Fail(
        "workload: must be an object such as {\"model\": \"llama-3-8b\", \"task\": \"serve\"}");
    return std::nullopt;
  }
  JsonFields workload_fields(raw->as_object());
  std::string model, task, precision = "bf16", quant, engine;
  advisor::Workload workload;
  workload_fields.String("model", &model, {.max_length = 128});
  // A model the zoo lacks: its Hugging Face config.json, as a JSON object (the CLI's --hf-config).
  const json::value* hf_config = workload_fields.Raw("hf_config");
  if (hf_config != nullptr && !hf_config->is_object()) {
    workload_fields.Fail("hf_config: must be the object in a model's config.json");
  }
  if ((hf_config == nullptr) == model.empty()) {
    workload_fields.Fail(
        "give exactly one of model (a name from GET /v1/models) or hf_config (a Hugging Face "
        "config.json object)");
  }
  workload_fields.String("task", &task, {.required = true, .max_length = 16});
  workload_fields.String("precision", &precision, {.max_length = 16});
  workload_fields.String("quant", &quant, {.max_length = 16});
  workload_fields.String("engine", &engine, {.max_length = 16});
  workload_fields.Int("batch", &workload.batch, {0, 1 << 20});
  workload_fields.Int("seq", &workload.seq, {0, 1 << 22});
  workload_fields.Number("tokens", &workload.work.tokens, {0, 1e18});
  workload_fields.Number("samples", &workload.work.samples, {0, 1e15});
  workload_fields.Int("epochs", &workload.work.epochs, {1, 100'000});
  workload_fields.Number("requests", &workload.work.requests, {0, 1e15});
  workload_fields.Number("images", &workload.work.images, {0, 1e15});
  // As the CLI: an amount in two units would leave one of them silently unused.
  const int given = (workload.work.tokens > 0) + (workload.work.samples > 0) +
                    (workload.work.requests > 0) + (workload.work.images > 0);
  if (given > 1 && (workload.work.requests > 0 || workload.work.images > 0)) {
    workload_fields.Fail(
        "give one amount of work: tokens, samples (with epochs), requests or images");
  }
  Status status = workload_fields.Finish();
  auto parse = [&status](auto result, auto* out) {
    if (!status.ok()) return;
    if (!result.ok()) {
      status = result.status();
      return;
    }
    *out = *result;
  };
  advisor::ModelSpec from_config;
  const advisor::ModelSpec* spec = &from_config;
  if (hf_config == nullptr) {
    parse(zoo.Find(model), &spec);
  } else if (status.ok()) {
    parse(advisor::ModelFromHfConfig(json::serialize(*hf_config), "hf_config"), &from_config);
  }
  parse(advisor::ParseTask(task), &workload.task);
  parse(advisor::ParsePrecision(precision), &workload.precision);
  if (!quant.empty()) {
    advisor::Quantization parsed;
    parse(advisor::ParseQuantization(quant), &parsed);
    workload.quant = parsed;
  }
  if (!engine.empty()) {
    parse(advisor::ParseEngine(engine), &workload.engine);
    workload.engine_given = true;
  }
  if (status.ok()) {
    workload.model = *spec;
    status = advisor::CompleteAndValidate(workload);
  }
  if (!status.ok()) {
    fields.Fail("workload: " + InWorkloadFieldNames(status.message()));
    return std::nullopt;
  }
  return workload;
}

std::string InWorkloadFieldNames(std::string text) {
  static constexpr std::string_view kFields[] = {"tokens",    "samples", "epochs", "requests",
                                                 "images",    "batch",   "seq",    "quant",
                                                 "precision", "task",    "engine"};
  for (size_t at = text.find("--"); at != std::string::npos; at = text.find("--", at + 1)) {
    const size_t end = text.find_first_not_of("abcdefghijklmnopqrstuvwxyz-", at + 2);
    const std::string_view flag = std::string_view(text).substr(at + 2, end - (at + 2));
    if (std::find(std::begin(kFields), std::end(kFields), flag) != std::end(kFields)) {
      text.erase(at, 2);
    }
  }
  return text;
}

std::optional<core::BudgetAction> ReadBudgetAction(JsonFields& fields) {
  if (fields.Raw("action") == nullptr) return std::nullopt;
  std::string name;
  fields.String("action", &name, {.max_length = 32});
  std::optional<core::BudgetAction> action = wire::ParseBudgetAction(name);
  if (!action && fields.ok()) {
    fields.Fail("action: must be notify, stop_interruptible or stop_all, not '" + name + "'");
  }
  return action;
}

}  // namespace suanli::server
