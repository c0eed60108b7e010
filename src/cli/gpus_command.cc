// suanli gpus: the catalog as a table or JSON, filtered and sorted.
#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <cctype>
#include <memory>
#include <ostream>

#include "catalog/catalog_json.h"
#include "cli/command.h"
#include "cli/flags.h"
#include "cli/gpu_columns.h"
#include "cli/text_table.h"

namespace suanli::cli {
namespace {

using catalog::GpuType;

struct GpusFlags {
  bool json = false;
  std::optional<double> min_vram_gb;
  std::optional<double> max_rent_usd_per_hour;
  std::string vendor;
  std::string arch;
  std::string sort;
  bool reverse = false;
};

bool SameWord(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) ==
           std::tolower(static_cast<unsigned char>(y));
  });
}

// INVALID_ARGUMENT unless some GPU type has `value` as its `field` (vendor or arch), so a typo such
// as
// --vendor nvida is an error rather than an empty list.
core::Status CheckKnown(std::span<const GpuType> gpus, std::string_view flag,
                        const std::string& value, std::string GpuType::*field) {
  if (value.empty()) return core::Status::Ok();
  std::vector<std::string> known;
  for (const GpuType& gpu : gpus) {
    if (SameWord(gpu.*field, value)) return core::Status::Ok();
    if (std::find(known.begin(), known.end(), gpu.*field) == known.end())
      known.push_back(gpu.*field);
  }
  std::string list;
  for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
  return core::InvalidArgumentError("no GPU type has " + std::string(flag) + " '" + value +
                                    "'; choose from " + list);
}

core::Status RunGpus(const GpusFlags& flags, CommandContext& context) {
  const GpuColumn* sort_column = nullptr;
  if (!flags.sort.empty()) {
    sort_column = FindGpuColumn(flags.sort);
    if (sort_column == nullptr) {
      return core::InvalidArgumentError("unknown sort column '" + flags.sort + "'; choose from " +
                                        GpuColumnKeys());
    }
  }
  core::Result<catalog::Catalog> catalog = context.LoadCatalog();
  if (!catalog.ok()) return catalog.status();
  SUANLI_RETURN_IF_ERROR(CheckKnown(catalog->gpus(), "--vendor", flags.vendor, &GpuType::vendor));
  SUANLI_RETURN_IF_ERROR(CheckKnown(catalog->gpus(), "--arch", flags.arch, &GpuType::arch));

  std::vector<const GpuType*> shown;
  for (const GpuType& gpu : catalog->gpus()) {
    if (flags.min_vram_gb && gpu.memory_gb < *flags.min_vram_gb) continue;
    if (flags.max_rent_usd_per_hour &&
        gpu.price.rent_per_hour.ToDollars() > *flags.max_rent_usd_per_hour) {
      continue;
    }
    if (!flags.vendor.empty() && !SameWord(gpu.vendor, flags.vendor)) continue;
    if (!flags.arch.empty() && !SameWord(gpu.arch, flags.arch)) continue;
    shown.push_back(&gpu);
  }
  if (sort_column != nullptr) {
    const bool descending = sort_column->higher_is_better != flags.reverse;
    std::stable_sort(shown.begin(), shown.end(), [&](const GpuType* a, const GpuType* b) {
      if (sort_column->value == nullptr) {
        return descending ? sort_column->text(*b) < sort_column->text(*a)
                          : sort_column->text(*a) < sort_column->text(*b);
      }
      // A figure the GPU lacks (no FP8) sorts below every real one.
      const double x = sort_column->value(*a).value_or(-1.0);
      const double y = sort_column->value(*b).value_or(-1.0);
      return descending ? y < x : x < y;
    });
  } else if (flags.reverse) {
    std::reverse(shown.begin(), shown.end());
  }

  if (flags.json) {
    boost::json::array entries;
    for (const GpuType* gpu : shown) entries.emplace_back(catalog::GpuTypeToJson(*gpu));
    context.out << boost::json::serialize(entries) << "\n";
    return core::Status::Ok();
  }
  if (shown.empty()) {
    context.err << "no GPU type matches these filters (" << catalog->gpus().size()
                << " types in the catalog)\n";
    return core::Status::Ok();
  }
  TextTable table;
  for (const GpuColumn& column : GpuColumns()) {
    if (!column.in_gpus_table) continue;
    table.AddColumn(std::string(column.header),
                    column.value ? TextTable::Align::kRight : TextTable::Align::kLeft);
  }
  bool any_fp16_fallback = false;
  for (const GpuType* gpu : shown) {
    std::vector<std::string> cells;
    for (const GpuColumn& column : GpuColumns()) {
      if (column.in_gpus_table) cells.push_back(column.text(*gpu));
    }
    table.AddRow(std::move(cells));
    any_fp16_fallback |= !gpu->bf16_tflops.has_value();
  }
  context.out << table.Render();
  context.out << "TF/$, GB/s/$, GB/$: dense 16-bit tensor TFLOPS, GB/s and GB of VRAM per rented "
                 "dollar-hour.\n";
  if (any_fp16_fallback) context.out << "*: no BF16 on this GPU; its FP16 tensor rate is shown.\n";
  return core::Status::Ok();
}

}  // namespace

CommandRun DefineGpusCommand(CLI::App& command) {
  auto flags = std::make_shared<GpusFlags>();
  command.add_flag("--json", flags->json, "Print JSON (a list of GPU types) instead of a table");
  command
      .add_option("--min-vram", flags->min_vram_gb,
                  "Only GPUs with at least this much memory, in GB")
      ->check(NonNegativeNumber());
  command
      .add_option("--max-price", flags->max_rent_usd_per_hour,
                  "Only GPUs that rent for at most this many dollars per hour")
      ->check(PositiveNumber());
  command.add_option("--vendor", flags->vendor, "Only this vendor: NVIDIA or AMD");
  command.add_option("--arch", flags->arch, "Only this architecture, e.g. Ampere, Ada, Hopper");
  command.add_option("--sort", flags->sort,
                     "Sort by a column (" + GpuColumnKeys() +
                         "); figures where more is better sort largest first");
  command.add_flag("--reverse", flags->reverse, "Reverse the order");
  return [flags](CommandContext& context) { return RunGpus(*flags, context); };
}

}  // namespace suanli::cli
