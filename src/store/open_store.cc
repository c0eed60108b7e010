#include <cstdint>
#include <span>

#include "store/postgres.h"
#include "store/store.h"

namespace suanli::store {

core::Result<std::unique_ptr<Store>> OpenStore(std::string_view url,
                                               const std::filesystem::path& data_dir) {
  if (url.empty()) return OpenSqliteStore(data_dir / "suanli.db");
  if (url.starts_with("sqlite://")) return OpenSqliteStore(std::string(url.substr(9)));
  if (SupportsReplicas(url)) return OpenPostgresStore(std::string(url));
  return core::InvalidArgumentError("--store '" + pg::WithoutPassword(url) +
                                    "' is not a store; write sqlite://PATH or "
                                    "postgres://USER:PASSWORD@HOST:PORT/DATABASE");
}

bool SupportsReplicas(std::string_view url) {
  return url.starts_with("postgres://") || url.starts_with("postgresql://");
}

std::string RedactedUrl(std::string_view url) { return pg::WithoutPassword(url); }

core::Result<CopyCounts> CopyStore(Store& from, Store& to) {
  core::Result<Snapshot> target = to.Load();
  if (!target.ok()) return target.status();
  if (!target->documents.empty() || target->last_transition_seq != 0 ||
      target->last_ledger_seq != 0 || target->last_event_seq != 0 || target->last_audit_seq != 0) {
    return core::FailedPreconditionError(
        "the target store is not empty; copy into a new database (nothing was written)");
  }
  core::Result<Snapshot> source = from.Load();
  if (!source.ok()) return source.status();
  core::Result<std::vector<core::Transition>> transitions = from.Transitions({});
  if (!transitions.ok()) return transitions.status();
  core::Result<std::vector<core::LedgerEntry>> ledger = from.Ledger({});
  if (!ledger.ok()) return ledger.status();
  EventQuery every_event;
  every_event.limit = SIZE_MAX;
  core::Result<std::vector<core::Event>> events = from.Events(every_event);
  if (!events.ok()) return events.status();
  AuditQuery every_entry;
  every_entry.limit = SIZE_MAX;
  core::Result<std::vector<core::AuditEntry>> audit = from.Audit(every_entry);
  if (!audit.ok()) return audit.status();
  Batch all;
  all.puts = source->documents;
  all.transitions = *transitions;
  all.ledger = *ledger;
  all.events = *events;
  all.audit = *audit;
  SUANLI_RETURN_IF_ERROR(to.Commit(std::span(&all, 1)));

  core::Result<Snapshot> copied = to.Load();
  if (!copied.ok()) return copied.status();
  core::Result<std::vector<core::Transition>> copied_transitions = to.Transitions({});
  core::Result<std::vector<core::LedgerEntry>> copied_ledger = to.Ledger({});
  if (!copied_transitions.ok()) return copied_transitions.status();
  if (!copied_ledger.ok()) return copied_ledger.status();
  if (copied->documents.size() != source->documents.size() ||
      copied_transitions->size() != transitions->size() ||
      copied_ledger->size() != ledger->size() ||
      copied->last_transition_seq != source->last_transition_seq ||
      copied->last_ledger_seq != source->last_ledger_seq ||
      copied->last_event_seq != source->last_event_seq ||
      copied->last_audit_seq != source->last_audit_seq) {
    return core::InternalError("the copy does not match its source after the commit");
  }
  return CopyCounts{copied->documents.size(), copied_transitions->size(), copied_ledger->size(),
                    events->size(), audit->size()};
}

}  // namespace suanli::store
