#include "store/rows.h"

#include "core/check.h"

namespace suanli::store {
namespace {

// Indexed by core::LedgerKind.
constexpr std::array<std::string_view, 3> kLedgerKindNames = {"credit", "gpu", "storage"};

}  // namespace

std::string_view LedgerKindName(core::LedgerKind kind) {
  const auto index = static_cast<size_t>(kind);
  SUANLI_CHECK(index < kLedgerKindNames.size(), "a LedgerKind outside the enum");
  return kLedgerKindNames[index];
}

core::Result<core::LedgerKind> ReadLedgerKind(const std::string& name) {
  for (size_t index = 0; index < kLedgerKindNames.size(); ++index) {
    if (kLedgerKindNames[index] == name) return static_cast<core::LedgerKind>(index);
  }
  return core::InternalError("the store holds an unknown ledger kind '" + name + "'");
}

core::Result<core::PodState> ReadPodState(const std::string& name) {
  core::Result<core::PodState> state = core::ParsePodState(name);
  if (!state.ok()) {
    return core::InternalError("the store holds an unknown pod state '" + name + "'");
  }
  return state;
}

}  // namespace suanli::store
