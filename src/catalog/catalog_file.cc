#include "catalog/catalog_file.h"

#include <optional>
#include <set>
#include <vector>

#include "catalog/data_file.h"

namespace suanli::catalog {
namespace {

core::Result<Catalog> ParseGpus(const DataFile& file) {
  core::Result<YAML::Node> root = ParseYamlFile(file);
  if (!root.ok()) return root.status();
  core::Result<YAML::Node> entries = TopLevelList(file, *root, "gpus");
  if (!entries.ok()) return entries.status();

  std::vector<GpuType> gpus;
  for (size_t i = 0; i < entries->size(); ++i) {
    YamlEntry reader(file, (*entries)[i], "gpus[" + std::to_string(i) + "]");
    GpuType gpu;
    gpu.name = reader.String("name");
    if (!gpu.name.empty()) reader.set_label(gpu.name);
    gpu.aliases = reader.StringList("aliases");
    gpu.vendor = reader.String("vendor");
    gpu.arch = reader.String("arch");
    gpu.chip = reader.OptionalString("chip").value_or("");
    gpu.year = reader.PositiveInteger("year");
    gpu.memory_gb = reader.PositiveNumber("memory_gb");
    gpu.memory_mib = reader.OptionalPositiveNumber("memory_mib");
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
    reader.RejectUnknownFields({"name",          "aliases",     "vendor",       "arch",
                                "chip",          "year",        "memory_gb",    "memory_type",
                                "bandwidth_gbs", "fp32_tflops", "fp16_tflops",  "bf16_tflops",
                                "fp8_tflops",    "int8_tops",   "tensor_cores", "cuda_cores",
                                "sm_count",      "l2_cache_mb", "tdp_w",        "interconnect",
                                "form_factor",   "source",      "notes",        "memory_mib"});
    if (!reader.status().ok()) return reader.status();
    gpus.push_back(std::move(gpu));
  }

  std::vector<std::string> preferred;
  if (YAML::Node list = (*root)["preferred_when_ambiguous"]; list.IsDefined()) {
    if (!list.IsSequence()) {
      return core::InvalidArgumentError(Where(file, list) +
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
  core::Result<YAML::Node> root = ParseYamlFile(file);
  if (!root.ok()) return root.status();
  core::Result<YAML::Node> entries = TopLevelList(file, *root, "prices");
  if (!entries.ok()) return entries.status();

  std::set<std::string> priced;
  for (size_t i = 0; i < entries->size(); ++i) {
    const YAML::Node entry = (*entries)[i];
    YamlEntry reader(file, entry, "prices[" + std::to_string(i) + "]");
    const std::string gpu_name = reader.String("gpu");
    if (!reader.status().ok()) return reader.status();
    core::Result<const GpuType*> gpu = catalog.FindExact(gpu_name);
    if (!gpu.ok())
      return core::InvalidArgumentError(Where(file, entry) + ": " + gpu.status().message());
    reader.set_label((*gpu)->name);
    if (!priced.insert((*gpu)->name).second) {
      return core::InvalidArgumentError(Where(file, entry) + ": " + (*gpu)->name +
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
