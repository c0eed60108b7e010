// Advise: a workload on every GPU type (or the ones asked about), and which one to pick and why.
//
// For each type the advisor finds the smallest GPU count (1, 2, 4, 8) whose memory holds the
// workload, estimates speed, time and cost there, and ranks the types that fit by cost for the job,
// honouring a deadline and a budget. The reason names the figure that decides (VRAM, bandwidth,
// tensor FLOPS, price) so a person can check it against the catalog.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "advisor/estimate.h"
#include "catalog/catalog.h"

namespace suanli::advisor {

struct GpuChoice {
  const catalog::GpuType* gpu = nullptr;
  int count = 0;  // 0: the smallest count that fits
  // With count 0: the most GPUs to try (a cluster's largest node of the type); 0: the options'.
  int max_count = 0;
};

struct AdviseOptions {
  std::vector<GpuChoice> gpus;  // empty: every catalog type
  std::optional<double> deadline_s;
  std::optional<core::Money> budget;
  CostInputs costs;
  int max_count = 8;  // one node's worth of GPUs
};

struct Recommendation {
  std::optional<size_t>
      index;           // into Advice::estimates (always 0 when set); none when nothing qualifies
  std::string reason;  // one or two sentences a person can check against the catalog
};

struct Advice {
  Workload workload;
  std::vector<Estimate> estimates;  // ranked: fitting and qualifying first, cheapest first
  Recommendation recommendation;
};

// The figure the ranking compares: tokens/s for LLMs, images/s or samples/s otherwise.
double PrimaryRate(const Estimate& estimate);

// For people: "1234 tokens/s" or "0.52 images/s"; "45 s", "12 min", "3.5 h", "2.1 days" ("—" when
// not finite); "RTX 4090" or "4x H100 SXM".
std::string RateText(const Estimate& estimate);
std::string DurationText(double seconds);
std::string GpusText(const Estimate& estimate);
// The work the time and cost are for: "100 requests of 512 prompt + 256 generated tokens", "1000
// images at 512x512, 30 steps each", "1B training tokens". REQUIRES: CompleteAndValidate(workload).
std::string WorkText(const Workload& workload);

// REQUIRES: CompleteAndValidate(workload) succeeded. Never fails: GPUs that cannot run the workload
// are in the estimates with fits = false and a reason.
Advice Advise(const Workload& workload, const catalog::Catalog& catalog,
              const AdviseOptions& options, const Efficiency& efficiency = FittedEfficiency());

}  // namespace suanli::advisor
