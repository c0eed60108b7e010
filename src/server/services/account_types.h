// What callers of the control plane send and get back about accounts and billing: quotas, usage
// rows and the GPUs available to rent.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "advisor/measured.h"
#include "core/money.h"

namespace suanli::server {

// A user's quotas as an admin sets them: each 0 for the default, absent to leave it as it is.
struct QuotaChange {
  std::optional<int> max_pods;
  std::optional<int> max_pending_pods;
  std::optional<int> max_endpoints;
};

struct UsageRow {
  std::string key;  // pod id (or volume id) or day ("2026-12-02")
  core::Money gpu;
  core::Money storage;
  int64_t gpu_seconds = 0;
  // The part of gpu + storage not yet in the ledger: what runs now since the meter's last slice,
  // which the balance already subtracts.
  core::Money unbilled;
};

struct Availability {
  std::string gpu_type;
  int total = 0;
  // GPUs nobody uses whose node still has the default vCPU and RAM beside them (2 vCPU and 8 GB
  // each: sched::UsableFreeGpus); `stranded`, those nobody uses that such a pod could not get.
  int free = 0;
  int stranded = 0;
  int largest_free_on_one_node = 0;
  int largest_on_one_node = 0;  // the most of this type one node has, free or not
  // Shares: what partly used devices have left in all, and the most one of them has (milli-GPUs).
  int64_t shared_free_milli = 0;
  int largest_share_free_milli = 0;
  core::Money price_per_hour;
  bool simulated = false;
  // What the type's GPUs measured (suanli-gpu-probe, in their agents' heartbeats), on any node,
  // schedulable or not; nullopt where none has been measured.
  std::optional<advisor::MeasuredFigures> measured;
};

}  // namespace suanli::server
