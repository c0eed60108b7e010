// The figures of a GPU type that people sort, filter and compare by, shared by `gpus` and
// `compare`.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "catalog/gpu_type.h"

namespace suanli::cli {

struct GpuColumn {
  std::string_view key;     // what --sort takes, e.g. "vram"
  std::string_view json;    // the --json field, also accepted by --sort, e.g. "memory_gb"
  std::string_view header;  // table header, e.g. "VRAM GB"
  bool higher_is_better;    // sorts descending by default (VRAM, TFLOPS, value per dollar)
  bool in_gpus_table;       // shown by `suanli gpus` (the rest only by compare and --sort)
  // Numeric columns have a value; text columns (name, vendor, arch) have none.
  std::optional<double> (*value)(const catalog::GpuType& gpu);
  std::string (*text)(const catalog::GpuType& gpu);
};

std::span<const GpuColumn> GpuColumns();

// Finds a column by key or JSON field, ignoring case and '-'/'_'. nullptr when there is none.
const GpuColumn* FindGpuColumn(std::string_view name);

// "key1, key2, ..." for error messages.
std::string GpuColumnKeys();

// A figure as people read it: 1008, 82.6, 0.74, 9.35.
std::string FormatFigure(double value);

}  // namespace suanli::cli
