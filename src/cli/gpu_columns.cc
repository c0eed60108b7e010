#include "cli/gpu_columns.h"

#include <fmt/format.h>

#include <cmath>

namespace suanli::cli {
namespace {

using catalog::GpuType;

std::string FigureOrDash(std::optional<double> value) {
  return value.has_value() ? FormatFigure(*value) : "—";
}

std::string Lowered(std::string_view text) {
  std::string lowered;
  for (char c : text) {
    if (c == '-') c = '_';
    lowered += (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  }
  return lowered;
}

// Each row: key, json, header, higher_is_better, in_gpus_table, value, text.
constexpr GpuColumn kColumns[] = {
    {"name", "name", "GPU", false, true, nullptr, [](const GpuType& g) { return g.name; }},
    {"vendor", "vendor", "VENDOR", false, false, nullptr,
     [](const GpuType& g) { return g.vendor; }},
    {"arch", "arch", "ARCH", false, true, nullptr, [](const GpuType& g) { return g.arch; }},
    {"year", "year", "YEAR", true, false,
     [](const GpuType& g) -> std::optional<double> { return g.year; },
     [](const GpuType& g) { return std::to_string(g.year); }},
    {"vram", "memory_gb", "VRAM GB", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.memory_gb; },
     [](const GpuType& g) { return FormatFigure(g.memory_gb); }},
    {"bandwidth", "bandwidth_gbs", "BW GB/s", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.bandwidth_gbs; },
     [](const GpuType& g) { return FormatFigure(g.bandwidth_gbs); }},
    {"bf16", "bf16_tflops", "BF16 TF", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.Tensor16Tflops(); },
     // '*': the GPU has no BF16 and this is its FP16 rate (the table's footnote says so).
     [](const GpuType& g) {
       return FormatFigure(g.Tensor16Tflops()) + (g.bf16_tflops ? "" : "*");
     }},
    {"fp32", "fp32_tflops", "FP32 TF", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.fp32_tflops; },
     [](const GpuType& g) { return FormatFigure(g.fp32_tflops); }},
    {"fp8", "fp8_tflops", "FP8 TF", true, false, [](const GpuType& g) { return g.fp8_tflops; },
     [](const GpuType& g) { return FigureOrDash(g.fp8_tflops); }},
    {"tdp", "tdp_w", "TDP W", false, true,
     [](const GpuType& g) -> std::optional<double> { return g.tdp_w; },
     [](const GpuType& g) { return std::to_string(g.tdp_w); }},
    {"rent", "rent_usd_per_hour", "RENT $/H", false, true,
     [](const GpuType& g) -> std::optional<double> { return g.price.rent_per_hour.ToDollars(); },
     [](const GpuType& g) { return g.price.rent_per_hour.ToString(); }},
    {"buy", "buy_usd", "BUY $", false, true,
     [](const GpuType& g) -> std::optional<double> { return g.price.buy.ToDollars(); },
     [](const GpuType& g) { return g.price.buy.ToString(); }},
    {"tflops_per_dollar", "tflops_per_dollar", "TF/$", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.TflopsPerDollar(); },
     [](const GpuType& g) { return FormatFigure(g.TflopsPerDollar()); }},
    {"gbs_per_dollar", "gbs_per_dollar", "GB/s/$", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.BandwidthPerDollar(); },
     [](const GpuType& g) { return FormatFigure(g.BandwidthPerDollar()); }},
    {"vram_per_dollar", "vram_gb_per_dollar", "GB/$", true, true,
     [](const GpuType& g) -> std::optional<double> { return g.MemoryPerDollar(); },
     [](const GpuType& g) { return FormatFigure(g.MemoryPerDollar()); }},
};

}  // namespace

std::span<const GpuColumn> GpuColumns() { return kColumns; }

const GpuColumn* FindGpuColumn(std::string_view name) {
  const std::string wanted = Lowered(name);
  for (const GpuColumn& column : kColumns) {
    if (wanted == column.key || wanted == column.json) return &column;
  }
  // Words people use for the same thing.
  static constexpr std::pair<std::string_view, std::string_view> kSynonyms[] = {
      {"memory", "vram"}, {"price", "rent"}, {"power", "tdp"}, {"bw", "bandwidth"}};
  for (const auto& [synonym, key] : kSynonyms) {
    if (wanted == synonym) return FindGpuColumn(key);
  }
  return nullptr;
}

std::string GpuColumnKeys() {
  std::string keys;
  for (const GpuColumn& column : kColumns) {
    if (!keys.empty()) keys += ", ";
    keys += column.key;
  }
  return keys;
}

std::string FormatFigure(double value) {
  // Three significant digits at most, as datasheets print them, and no trailing zeros: 1008, 82.6,
  // 24, 0.74.
  const double magnitude = std::fabs(value);
  std::string text = fmt::format("{:.{}f}", value, magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2);
  if (text.find('.') != std::string::npos) {
    while (text.back() == '0') text.pop_back();
    if (text.back() == '.') text.pop_back();
  }
  return text;
}

}  // namespace suanli::cli
