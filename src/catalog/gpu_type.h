// GpuType: one kind of GPU a person can rent or buy, with its datasheet figures and typical prices.
//
// Figures are per GPU, dense (no 2:4 sparsity), tensor rates with FP32 accumulate. Values are plain
// data filled by the catalog file parser; Catalog owns them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/money.h"

namespace suanli::catalog {

struct Price {
  core::Money rent_per_hour;  // on demand, one GPU for one hour
  std::string rent_source;    // where the rent price was seen
  std::string rent_date;      // when, as YYYY-MM or YYYY-MM-DD
  core::Money buy;            // one card
  std::string buy_source;
  std::string buy_date;
  std::string note;
  std::string origin;  // the file these prices came from: the built-in data or an operator's file
};

// The gigabyte a person reads everywhere suanli shows memory (tables, reasons, --json memory_gb):
// binary, 2^30 bytes, as datasheets and memory_gb count VRAM, so a "48 GB" card shows 48.
inline constexpr double kBytesPerGb = 1024.0 * 1024.0 * 1024.0;

struct GpuType {
  std::string name;  // canonical, e.g. "A100 80GB SXM"
  std::vector<std::string> aliases;
  std::string vendor;  // "NVIDIA", "AMD"
  std::string arch;    // family: "Ampere", "Hopper", "CDNA3"
  std::string chip;    // die, e.g. "GA100"; may be empty
  int year = 0;
  // The datasheet's figure. Vendors count VRAM in binary gigabytes (JEDEC: 2^30 bytes), so an
  // "RTX A6000 48 GB" holds 48 x 2^30 = 51.5e9 bytes.
  double memory_gb = 0;
  // What NVML reports as the total (nvidia-smi memory.total), MiB, where it has been seen: HBM
  // cards expose a little less than their label (H200 "141 GB": 143771 MiB = 150.76e9 bytes, not
  // 141 GiB).
  std::optional<double> memory_mib;
  std::string memory_type;  // "HBM3", "GDDR6X"
  double bandwidth_gbs = 0;
  double fp32_tflops = 0;             // non-tensor FP32
  double fp16_tflops = 0;             // dense FP16 tensor, FP32 accumulate
  std::optional<double> bf16_tflops;  // dense BF16 tensor; none on Volta and Turing
  std::optional<double> fp8_tflops;   // dense FP8 tensor; none before Ada/Hopper/CDNA3
  std::optional<double> int8_tops;    // dense INT8 tensor
  // Unpublished for some GPUs (B200).
  std::optional<int> tensor_cores;  // matrix cores on AMD
  std::optional<int> cuda_cores;    // stream processors on AMD
  std::optional<int> sm_count;      // compute units on AMD
  std::optional<double> l2_cache_mb;
  int tdp_w = 0;
  std::string interconnect;  // "NVLink 4 (900 GB/s)", "PCIe only"
  std::string form_factor;
  std::string source;  // datasheet URL
  std::string notes;
  Price price;

  // Bytes a program can address on one card: NVML's total where known, else the label in binary GB.
  double MemoryBytes() const {
    return memory_mib ? *memory_mib * 1024 * 1024 : memory_gb * kBytesPerGb;
  }

  // The 16-bit tensor rate mixed-precision training gets: BF16 where the GPU has it, else FP16.
  double Tensor16Tflops() const { return bf16_tflops.value_or(fp16_tflops); }

  // What one rented dollar per hour buys; the rent price is always positive.
  double TflopsPerDollar() const { return Tensor16Tflops() / price.rent_per_hour.ToDollars(); }
  double BandwidthPerDollar() const { return bandwidth_gbs / price.rent_per_hour.ToDollars(); }
  double MemoryPerDollar() const { return memory_gb / price.rent_per_hour.ToDollars(); }
};

}  // namespace suanli::catalog
