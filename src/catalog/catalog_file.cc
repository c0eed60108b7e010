#include "catalog/catalog_file.h"

#include <yaml-cpp/yaml.h>

#include <charconv>
#include <cmath>
#include <deque>
#include <optional>
#include <set>
#include <vector>

namespace suanli::catalog {
namespace {

std::string At(const DataFile& file, const YAML::Node& node) {
  // yaml-cpp counts lines from 0; editors count from 1.
  return file.name + ":" + std::to_string(node.Mark().line + 1);
}

// Reads the fields of one YAML mapping. The first problem is latched (as LevelDB latches a
// background error) so a parser reads every field in a row and checks status() once; later reads
// return defaults.
class EntryReader {
 public:
  EntryReader(const DataFile& file, const YAML::Node& entry, std::string label)
      : file_(file), entry_(entry), label_(std::move(label)) {
    if (!entry_.IsMap()) Fail(entry_, "expected a mapping of field: value");
  }

  const core::Status& status() const { return status_; }

  // The label names the entry in later errors, e.g. once its `name` field is known.
  void set_label(std::string label) { label_ = std::move(label); }

  std::optional<std::string> OptionalString(const std::string& key) {
    const YAML::Node* node = Field(key);
    if (node == nullptr) return std::nullopt;
    if (node->IsNull()) {
      Fail(*node, "field '" + key + "' has no value; give one or leave the field out");
      return std::nullopt;
    }
    if (!node->IsScalar()) {
      Fail(*node, "field '" + key + "' must be text");
      return std::nullopt;
    }
    return node->Scalar();
  }

  std::string String(const std::string& key) {
    std::optional<std::string> value = OptionalString(key);
    if (!value.has_value() || value->empty()) {
      if (value.has_value() || Field(key) == nullptr) Missing(key);
      return "";
    }
    return *value;
  }

  std::optional<double> OptionalPositiveNumber(const std::string& key) {
    std::optional<std::string> text = OptionalString(key);
    if (!text.has_value()) return std::nullopt;
    double value = 0;
    const char* end = text->data() + text->size();
    auto [stop, error] = std::from_chars(text->data(), end, value);
    if (error != std::errc() || stop != end || !std::isfinite(value) || value <= 0) {
      Fail(*Field(key), "field '" + key + "' must be a positive number, not '" + *text + "'");
      return std::nullopt;
    }
    return value;
  }

  double PositiveNumber(const std::string& key) {
    std::optional<double> value = OptionalPositiveNumber(key);
    if (!value.has_value() && Field(key) == nullptr) Missing(key);
    return value.value_or(0);
  }

  std::optional<int> OptionalPositiveInteger(const std::string& key) {
    const std::optional<double> value = OptionalPositiveNumber(key);
    if (!value.has_value()) return std::nullopt;
    if (*value != std::floor(*value) || *value > 1e9) {
      Fail(*Field(key), "field '" + key + "' must be a whole number");
      return std::nullopt;
    }
    return static_cast<int>(*value);
  }

  int PositiveInteger(const std::string& key) {
    const std::optional<int> value = OptionalPositiveInteger(key);
    if (!value.has_value() && Field(key) == nullptr) Missing(key);
    return value.value_or(0);
  }

  std::optional<core::Money> OptionalPositiveMoney(const std::string& key) {
    std::optional<std::string> text = OptionalString(key);
    if (!text.has_value()) return std::nullopt;
    core::Result<core::Money> money = core::Money::ParseDollars(*text);
    if (!money.ok() || money->micros() <= 0) {
      Fail(*Field(key), "field '" + key +
                            "' must be a positive amount of dollars such as 0.74, not '" + *text +
                            "'");
      return std::nullopt;
    }
    return *money;
  }

  std::vector<std::string> StringList(const std::string& key) {
    std::vector<std::string> values;
    const YAML::Node* node = Field(key);
    if (node == nullptr || node->IsNull()) return values;
    if (!node->IsSequence()) {
      Fail(*node, "field '" + key + "' must be a list such as [\"4090\", \"RTX4090\"]");
      return values;
    }
    for (const YAML::Node& item : *node) {
      if (!item.IsScalar() || item.Scalar().empty()) {
        Fail(item, "field '" + key + "' must hold only non-empty names");
        return values;
      }
      values.push_back(item.Scalar());
    }
    return values;
  }

  // Fails on a field no read asked for: a typo such as "memroy_gb" must not pass silently.
  void RejectUnknownFields(std::initializer_list<std::string_view> known) {
    if (!status_.ok()) return;
    for (const auto& field : entry_) {
      const std::string key = field.first.Scalar();
      if (std::find(known.begin(), known.end(), key) == known.end()) {
        std::string list;
        for (std::string_view name : known) list += (list.empty() ? "" : ", ") + std::string(name);
        Fail(field.first, "unknown field '" + key + "' (known fields: " + list + ")");
        return;
      }
    }
  }

 private:
  const YAML::Node* Field(const std::string& key) {
    if (!status_.ok() || !entry_.IsMap()) return nullptr;
    for (const auto& field : entry_) {
      if (field.first.Scalar() == key) {
        fields_.push_back(field.second);
        return &fields_.back();
      }
    }
    return nullptr;
  }

  void Missing(const std::string& key) { Fail(entry_, "missing field '" + key + "'"); }

  void Fail(const YAML::Node& node, const std::string& what) {
    if (!status_.ok()) return;
    status_ = core::InvalidArgumentError(At(file_, node) + ": " + label_ + ": " + what);
  }

  const DataFile& file_;
  YAML::Node entry_;
  std::string label_;
  std::deque<YAML::Node> fields_;  // keeps the nodes Field() points into alive, at stable addresses
  core::Status status_;
};

core::Result<YAML::Node> ParseYaml(const DataFile& file) {
  try {
    YAML::Node root = YAML::Load(std::string(file.text));
    if (!root.IsMap()) {
      return core::InvalidArgumentError(file.name + ":1: expected a YAML mapping at the top level");
    }
    return root;
  } catch (const YAML::Exception& error) {
    return core::InvalidArgumentError(file.name + ":" + std::to_string(error.mark.line + 1) +
                                      ": not valid YAML: " + error.msg);
  }
}

core::Result<YAML::Node> TopLevelList(const DataFile& file, const YAML::Node& root,
                                      const std::string& key) {
  YAML::Node list = root[key];
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    return core::InvalidArgumentError(file.name + ":1: expected a non-empty list '" + key + ":'");
  }
  return list;
}

core::Result<Catalog> ParseGpus(const DataFile& file) {
  core::Result<YAML::Node> root = ParseYaml(file);
  if (!root.ok()) return root.status();
  core::Result<YAML::Node> entries = TopLevelList(file, *root, "gpus");
  if (!entries.ok()) return entries.status();

  std::vector<GpuType> gpus;
  for (size_t i = 0; i < entries->size(); ++i) {
    EntryReader reader(file, (*entries)[i], "gpus[" + std::to_string(i) + "]");
    GpuType gpu;
    gpu.name = reader.String("name");
    if (!gpu.name.empty()) reader.set_label(gpu.name);
    gpu.aliases = reader.StringList("aliases");
    gpu.vendor = reader.String("vendor");
    gpu.arch = reader.String("arch");
    gpu.chip = reader.OptionalString("chip").value_or("");
    gpu.year = reader.PositiveInteger("year");
    gpu.memory_gb = reader.PositiveNumber("memory_gb");
    gpu.memory_type = reader.String("memory_type");
    gpu.bandwidth_gbs = reader.PositiveNumber("bandwidth_gbs");
    gpu.fp32_tflops = reader.PositiveNumber("fp32_tflops");
    gpu.fp16_tflops = reader.PositiveNumber("fp16_tflops");
    gpu.bf16_tflops = reader.OptionalPositiveNumber("bf16_tflops");
    gpu.fp8_tflops = reader.OptionalPositiveNumber("fp8_tflops");
    gpu.int8_tops = reader.OptionalPositiveNumber("int8_tops");
    gpu.tensor_cores = reader.OptionalPositiveInteger("tensor_cores");
    gpu.cuda_cores = reader.OptionalPositiveInteger("cuda_cores");
    gpu.sm_count = reader.OptionalPositiveInteger("sm_count");
    gpu.l2_cache_mb = reader.OptionalPositiveNumber("l2_cache_mb");
    gpu.tdp_w = reader.PositiveInteger("tdp_w");
    gpu.interconnect = reader.String("interconnect");
    gpu.form_factor = reader.String("form_factor");
    gpu.source = reader.String("source");
    gpu.notes = reader.OptionalString("notes").value_or("");
    reader.RejectUnknownFields(
        {"name",       "aliases",      "vendor",        "arch",        "chip",        "year",
         "memory_gb",  "memory_type",  "bandwidth_gbs", "fp32_tflops", "fp16_tflops", "bf16_tflops",
         "fp8_tflops", "int8_tops",    "tensor_cores",  "cuda_cores",  "sm_count",    "l2_cache_mb",
         "tdp_w",      "interconnect", "form_factor",   "source",      "notes"});
    if (!reader.status().ok()) return reader.status();
    gpus.push_back(std::move(gpu));
  }

  std::vector<std::string> preferred;
  if (YAML::Node list = (*root)["preferred_when_ambiguous"]; list.IsDefined()) {
    if (!list.IsSequence()) {
      return core::InvalidArgumentError(At(file, list) +
                                        ": preferred_when_ambiguous must be a list of GPU names");
    }
    for (const YAML::Node& name : list) preferred.push_back(name.Scalar());
  }
  core::Result<Catalog> catalog = Catalog::Create(std::move(gpus), std::move(preferred));
  if (!catalog.ok()) return catalog.status().WithContext(file.name);
  return catalog;
}

enum class PriceCoverage { kEveryGpu, kAnySubset };

core::Status ApplyPrices(const DataFile& file, PriceCoverage coverage, Catalog& catalog) {
  core::Result<YAML::Node> root = ParseYaml(file);
  if (!root.ok()) return root.status();
  core::Result<YAML::Node> entries = TopLevelList(file, *root, "prices");
  if (!entries.ok()) return entries.status();

  std::set<std::string> priced;
  for (size_t i = 0; i < entries->size(); ++i) {
    const YAML::Node entry = (*entries)[i];
    EntryReader reader(file, entry, "prices[" + std::to_string(i) + "]");
    const std::string gpu_name = reader.String("gpu");
    if (!reader.status().ok()) return reader.status();
    core::Result<const GpuType*> gpu = catalog.FindExact(gpu_name);
    if (!gpu.ok())
      return core::InvalidArgumentError(At(file, entry) + ": " + gpu.status().message());
    reader.set_label((*gpu)->name);
    if (!priced.insert((*gpu)->name).second) {
      return core::InvalidArgumentError(At(file, entry) + ": " + (*gpu)->name +
                                        " is priced twice; keep one entry");
    }

    Price price = (*gpu)->price;
    const bool complete = coverage == PriceCoverage::kEveryGpu;
    const std::string operator_source = "operator price file " + file.name;
    if (std::optional<core::Money> rent = reader.OptionalPositiveMoney("rent_usd_per_hour")) {
      price.rent_per_hour = *rent;
      price.rent_source = complete ? reader.String("rent_source")
                                   : reader.OptionalString("rent_source").value_or(operator_source);
      price.rent_date =
          complete ? reader.String("rent_date") : reader.OptionalString("rent_date").value_or("");
    } else if (complete) {
      reader.PositiveNumber("rent_usd_per_hour");  // reports it missing
    }
    if (std::optional<core::Money> buy = reader.OptionalPositiveMoney("buy_usd")) {
      price.buy = *buy;
      price.buy_source = complete ? reader.String("buy_source")
                                  : reader.OptionalString("buy_source").value_or(operator_source);
      price.buy_date =
          complete ? reader.String("buy_date") : reader.OptionalString("buy_date").value_or("");
    } else if (complete) {
      reader.PositiveNumber("buy_usd");
    }
    price.note = reader.OptionalString("note").value_or(price.note);
    price.origin = file.name;
    reader.RejectUnknownFields({"gpu", "rent_usd_per_hour", "rent_source", "rent_date", "buy_usd",
                                "buy_source", "buy_date", "note"});
    if (!reader.status().ok()) return reader.status();
    catalog.SetPrice((*gpu)->name, std::move(price));
  }

  if (coverage == PriceCoverage::kEveryGpu) {
    for (const GpuType& gpu : catalog.gpus()) {
      if (!priced.contains(gpu.name)) {
        return core::InvalidArgumentError(file.name + ": no price for " + gpu.name +
                                          "; add an entry with gpu: " + gpu.name);
      }
    }
  }
  return core::Status::Ok();
}

}  // namespace

core::Result<Catalog> LoadCatalog(const DataFile& gpus, const DataFile& prices,
                                  const DataFile* price_override) try {
  core::Result<Catalog> catalog = ParseGpus(gpus);
  if (!catalog.ok()) return catalog;
  SUANLI_RETURN_IF_ERROR(ApplyPrices(prices, PriceCoverage::kEveryGpu, *catalog));
  if (price_override != nullptr) {
    SUANLI_RETURN_IF_ERROR(ApplyPrices(*price_override, PriceCoverage::kAnySubset, *catalog));
  }
  return catalog;
} catch (const YAML::Exception& error) {
  // The readers above check node kinds before use; this keeps any yaml-cpp surprise inside this
  // file.
  return core::InvalidArgumentError("catalog data: " + std::string(error.what()));
}

core::Result<Catalog> LoadBuiltInCatalog(const DataFile* price_override) {
  return LoadCatalog({"data/gpus.yaml", BuiltInGpusYaml()},
                     {"data/prices.yaml", BuiltInPricesYaml()}, price_override);
}

}  // namespace suanli::catalog
