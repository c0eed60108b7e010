// What both stores write the same way: times as nanoseconds since the epoch, ledger kinds and pod
// states as their names, and the list of collections. Internal to src/store.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/ledger_types.h"
#include "core/status.h"
#include "store/store.h"

namespace suanli::store {

inline constexpr std::array kCollections = {
    Collection::kUsers,     Collection::kApiTokens, Collection::kSshKeys,    Collection::kTemplates,
    Collection::kPods,      Collection::kNodes,     Collection::kJoinTokens, Collection::kSettings,
    Collection::kEndpoints, Collection::kJobs,      Collection::kWebhooks,   Collection::kVolumes,
    Collection::kSnapshots, Collection::kProjects};

inline int64_t ToNanos(core::TimePoint time) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(time.time_since_epoch()).count();
}

inline core::TimePoint FromNanos(int64_t nanos) {
  return core::TimePoint(
      std::chrono::duration_cast<core::Duration>(std::chrono::nanoseconds(nanos)));
}

// "credit", "gpu", "storage": the ledger's `kind` column.
std::string_view LedgerKindName(core::LedgerKind kind);

// INTERNAL for a name this suanli does not know (the store was written by another).
core::Result<core::LedgerKind> ReadLedgerKind(const std::string& name);
core::Result<core::PodState> ReadPodState(const std::string& name);

}  // namespace suanli::store
