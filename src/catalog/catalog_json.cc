#include "catalog/catalog_json.h"

#include <boost/json/array.hpp>

namespace suanli::catalog {
namespace {

template <typename T>
boost::json::value OrNull(const std::optional<T>& value) {
  if (value.has_value()) return *value;
  return nullptr;
}

}  // namespace

boost::json::object GpuTypeToJson(const GpuType& gpu) {
  boost::json::array aliases;
  for (const std::string& alias : gpu.aliases) aliases.emplace_back(alias);
  return {
      {"name", gpu.name},
      {"aliases", std::move(aliases)},
      {"vendor", gpu.vendor},
      {"arch", gpu.arch},
      {"chip", gpu.chip},
      {"year", gpu.year},
      {"memory_gb", gpu.memory_gb},
      {"memory_bytes", gpu.MemoryBytes()},
      {"memory_type", gpu.memory_type},
      {"bandwidth_gbs", gpu.bandwidth_gbs},
      {"fp32_tflops", gpu.fp32_tflops},
      {"fp16_tflops", gpu.fp16_tflops},
      // The contract gives every GPU a bf16 figure; Volta and Turing have no BF16, so theirs is the
      // FP16 rate that mixed precision uses there, and bf16_native says which it is.
      {"bf16_tflops", gpu.Tensor16Tflops()},
      {"bf16_native", gpu.bf16_tflops.has_value()},
      {"fp8_tflops", OrNull(gpu.fp8_tflops)},
      {"int8_tops", OrNull(gpu.int8_tops)},
      {"tensor_cores", OrNull(gpu.tensor_cores)},
      {"cuda_cores", OrNull(gpu.cuda_cores)},
      {"sm_count", OrNull(gpu.sm_count)},
      {"l2_cache_mb", OrNull(gpu.l2_cache_mb)},
      {"tdp_w", gpu.tdp_w},
      {"interconnect", gpu.interconnect},
      {"form_factor", gpu.form_factor},
      {"rent_usd_per_hour", gpu.price.rent_per_hour.ToDollars()},
      {"buy_usd", gpu.price.buy.ToDollars()},
      {"tflops_per_dollar", gpu.TflopsPerDollar()},
      {"gbs_per_dollar", gpu.BandwidthPerDollar()},
      {"vram_gb_per_dollar", gpu.MemoryPerDollar()},
      {"price",
       {{"rent_source", gpu.price.rent_source},
        {"rent_date", gpu.price.rent_date},
        {"buy_source", gpu.price.buy_source},
        {"buy_date", gpu.price.buy_date},
        {"note", gpu.price.note},
        {"from", gpu.price.origin}}},
      {"source", gpu.source},
      {"notes", gpu.notes},
  };
}

}  // namespace suanli::catalog
