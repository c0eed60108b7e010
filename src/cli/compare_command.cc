// suanli compare: GPU types side by side, each figure also as a ratio to the first GPU's.
#include <fmt/format.h>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <memory>
#include <ostream>

#include "catalog/catalog_json.h"
#include "cli/command.h"
#include "cli/gpu_columns.h"
#include "cli/text_table.h"

namespace suanli::cli {
namespace {

using catalog::GpuType;

struct CompareFlags {
  std::vector<std::string> names;
  bool json = false;
};

core::Status RunCompare(const CompareFlags& flags, CommandContext& context) {
  if (flags.names.size() < 2) {
    return core::InvalidArgumentError(
        "name at least two GPU types, e.g. 'suanli compare 4090 a100-80g'");
  }
  core::Result<catalog::Catalog> catalog = context.LoadCatalog();
  if (!catalog.ok()) return catalog.status();
  std::vector<const GpuType*> gpus;
  for (const std::string& name : flags.names) {
    core::Result<catalog::GpuMatch> match = catalog->Find(name);
    if (!match.ok()) return match.status();
    if (std::string note = match->Note(name); !note.empty())
      context.err << "note: " << note << "\n";
    gpus.push_back(match->gpu);
  }
  const GpuType& baseline = *gpus.front();

  if (flags.json) {
    boost::json::array entries;
    for (const GpuType* gpu : gpus) {
      boost::json::object entry = catalog::GpuTypeToJson(*gpu);
      boost::json::object ratios;
      for (const GpuColumn& column : GpuColumns()) {
        if (column.value == nullptr || column.key == "year") continue;
        std::optional<double> value = column.value(*gpu);
        std::optional<double> base = column.value(baseline);
        if (value && base && *base > 0) {
          ratios[column.json] = *value / *base;
        } else {
          ratios[column.json] = nullptr;
        }
      }
      entry["ratio_to_first"] = std::move(ratios);
      entries.emplace_back(std::move(entry));
    }
    context.out << boost::json::serialize(
                       boost::json::object{{"baseline", baseline.name}, {"gpus", entries}})
                << "\n";
    return core::Status::Ok();
  }

  TextTable table;
  table.AddColumn("", TextTable::Align::kLeft);
  for (const GpuType* gpu : gpus) table.AddColumn(gpu->name, TextTable::Align::kRight);
  for (const GpuColumn& column : GpuColumns()) {
    if (column.key == "name") continue;
    std::vector<std::string> cells = {std::string(column.header)};
    for (const GpuType* gpu : gpus) {
      std::string cell = column.text(*gpu);
      if (column.value != nullptr && column.key != "year" && gpu != &baseline) {
        std::optional<double> value = column.value(*gpu);
        std::optional<double> base = column.value(baseline);
        if (value && base && *base > 0) cell += fmt::format(" ({:.2f}×)", *value / *base);
      }
      cells.push_back(std::move(cell));
    }
    table.AddRow(std::move(cells));
  }
  context.out << table.Render();
  context.out << "(N×): the figure as a multiple of the " << baseline.name << "'s.\n";
  return core::Status::Ok();
}

}  // namespace

CommandRun DefineCompareCommand(CLI::App& command) {
  auto flags = std::make_shared<CompareFlags>();
  command.add_option("gpus", flags->names, "GPU names, e.g. 4090 a100-80g 'h100 sxm'")->required();
  command.add_flag("--json", flags->json, "Print JSON instead of a table");
  return [flags](CommandContext& context) { return RunCompare(*flags, context); };
}

}  // namespace suanli::cli
