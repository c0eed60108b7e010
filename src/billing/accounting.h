// Accounting: a pod's charges and refunds as ledger entries, each payer's spend in the month, and
// what a monthly budget says at a tick.
//
// The control plane applies what these return (the entries to its ledger, the amounts to the
// balance and the pod's cost); the rules themselves live here, pure, and are tested with nothing
// but times: no store, no clock, no lock. MonthSpend is thread-compatible: its owner (the control
// plane) holds a lock around it.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/clock.h"
#include "core/domain.h"
#include "core/ledger_types.h"
#include "core/money.h"

namespace suanli::billing {

// "2026-12" for a time in December 2026 (UTC): the month budgets count in.
std::string MonthOf(core::TimePoint time);

// What the meter writes for `pod` up to `to`, at `at`: an entry for its GPUs while it runs and
// one for its volume once it has run (none for a zero amount), with seq 0 (the control plane
// numbers them). Each part is billed from where it was billed to, so slices add up to the whole.
struct PodCharge {
  std::vector<core::LedgerEntry> entries;
  core::Money total;                  // what the entries take, positive
  core::TimePoint gpu_billed_to;      // the pod's new gpu_billed_to
  core::TimePoint storage_billed_to;  // the pod's new storage_billed_to
};
PodCharge ChargePod(const core::Pod& pod, core::TimePoint to, core::TimePoint at);

// A pod's container stopped at `end`, reported after the meter had charged its GPUs past it: the
// difference back, as an entry whose interval runs backwards (from > to), so the run costs exactly
// its seconds. None when nothing was charged past `end`.
std::optional<core::LedgerEntry> RefundGpuPast(const core::Pod& pod, core::TimePoint end,
                                               core::TimePoint at);

// Each payer's (a user's or a project's) charges in the current month, counted as they are
// written.
class MonthSpend {
 public:
  // Counts a charge for `payer_id`; credits and late slices of a month already over count nothing.
  void Note(const std::string& payer_id, const core::LedgerEntry& entry);
  // What `payer_id` was charged in `month` ("2026-12"); zero for another month.
  core::Money SpentIn(const std::string& payer_id, std::string_view month) const;

 private:
  std::map<std::string, std::pair<std::string, core::Money>> spent_;  // payer -> month, spent
};

// What a monthly budget says at a tick, given what its payer spent this month: warn at 80 %
// (once a month), reach at 100 % (once a month).
struct BudgetStep {
  bool warn = false;
  bool reach = false;
};
BudgetStep StepBudget(core::Money monthly, core::Money spent, std::string_view month,
                      std::string_view warned_month, std::string_view reached_month);

}  // namespace suanli::billing
