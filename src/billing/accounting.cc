#include "billing/accounting.h"

#include "billing/meter.h"

namespace suanli::billing {

using core::Money;

std::string MonthOf(core::TimePoint time) { return core::FormatTime(time).substr(0, 7); }

PodCharge ChargePod(const core::Pod& pod, core::TimePoint to, core::TimePoint at) {
  PodCharge charge;
  charge.gpu_billed_to = pod.gpu_billed_to;
  charge.storage_billed_to = pod.storage_billed_to;
  if (pod.running_since && to > pod.gpu_billed_to) {
    const Money amount =
        ChargeBetween(pod.gpu_price_per_hour, *pod.running_since, pod.gpu_billed_to, to);
    if (amount.micros() > 0) {
      charge.entries.push_back(core::LedgerEntry{
          0, pod.owner_id, pod.id, core::LedgerKind::kGpu, Money() - amount, pod.gpu_billed_to, to,
          at, core::MilliGpuText(int64_t{pod.gpu_count} * pod.gpu_milli) + "x " + pod.gpu_type});
      charge.total = charge.total + amount;
    }
    charge.gpu_billed_to = to;
  }
  if (pod.volume_gb > 0 && pod.ran && pod.state != core::PodState::kTerminated &&
      to > pod.storage_billed_to) {
    const Money amount = StorageChargeBetween(pod.storage_price_per_gb_month, pod.volume_gb,
                                              pod.created_at, pod.storage_billed_to, to);
    if (amount.micros() > 0) {
      charge.entries.push_back(core::LedgerEntry{
          0, pod.owner_id, pod.id, core::LedgerKind::kStorage, Money() - amount,
          pod.storage_billed_to, to, at, std::to_string(pod.volume_gb) + " GB volume"});
      charge.total = charge.total + amount;
    }
    charge.storage_billed_to = to;
  }
  return charge;
}

std::optional<core::LedgerEntry> RefundGpuPast(const core::Pod& pod, core::TimePoint end,
                                               core::TimePoint at) {
  if (!pod.running_since || end >= pod.gpu_billed_to) return std::nullopt;
  const Money amount =
      ChargeBetween(pod.gpu_price_per_hour, *pod.running_since, end, pod.gpu_billed_to);
  if (amount.micros() <= 0) return std::nullopt;
  return core::LedgerEntry{0,
                           pod.owner_id,
                           pod.id,
                           core::LedgerKind::kGpu,
                           amount,
                           pod.gpu_billed_to,
                           end,
                           at,
                           "refund: stopped at " + core::FormatTime(end) + ", reported later"};
}

void MonthSpend::Note(const std::string& payer_id, const core::LedgerEntry& entry) {
  if (entry.kind == core::LedgerKind::kCredit) return;
  const std::string month = MonthOf(entry.to);
  auto& [counted_month, spent] = spent_[payer_id];
  if (month < counted_month) return;  // a late slice of a month already over
  if (month != counted_month) {
    counted_month = month;
    spent = Money();
  }
  spent = spent - entry.amount;  // charges are negative, refunds positive
}

Money MonthSpend::SpentIn(const std::string& payer_id, std::string_view month) const {
  const auto counted = spent_.find(payer_id);
  if (counted == spent_.end() || counted->second.first != month) return Money();
  return counted->second.second;
}

BudgetStep StepBudget(Money monthly, Money spent, std::string_view month,
                      std::string_view warned_month, std::string_view reached_month) {
  BudgetStep step;
  if (monthly.micros() <= 0 || reached_month == month) return step;
  step.warn = spent.micros() * 5 >= monthly.micros() * 4 && warned_month != month;  // 80 %
  step.reach = spent.micros() >= monthly.micros();
  return step;
}

}  // namespace suanli::billing
