// The two append-only records that billing is made of.
//
// A Transition is a pod changing its actual state (as the agent reported it, at the time the agent
// saw it). A LedgerEntry moves money: a credit from an admin (positive) or a charge for GPU or
// storage seconds (negative). Every charge names the interval [from, to) it covers, so the ledger
// can be recomputed from the transitions alone (billing/meter.h slices intervals exactly).
#pragma once

#include <cstdint>
#include <string>

#include "core/clock.h"
#include "core/money.h"
#include "core/pod_state.h"

namespace suanli::core {

struct Transition {
  int64_t seq = 0;  // assigned by the control plane, strictly increasing, never reused
  std::string pod_id;
  std::string user_id;
  TimePoint at;  // when the state changed (the agent's observation, clamped by the server)
  PodState from = PodState::kPending;
  PodState to = PodState::kPending;
  std::string node_id;   // empty while unbound
  std::string gpu_type;  // canonical catalog name
  int gpu_count = 0;
  Money gpu_price_per_hour;  // for the whole pod, fixed when it enters `running`
  std::string reason;        // for people: "stopped by user", "balance reached zero", ...
};

enum class LedgerKind { kCredit, kGpu, kStorage };

struct LedgerEntry {
  int64_t seq = 0;  // assigned by the control plane, strictly increasing, never reused
  std::string user_id;
  std::string pod_id;  // empty for credits
  LedgerKind kind = LedgerKind::kCredit;
  Money amount;    // credits positive, charges negative
  TimePoint from;  // the interval a charge covers; from == to for credits
  TimePoint to;
  TimePoint at;  // when it was written
  std::string note;
};

}  // namespace suanli::core
