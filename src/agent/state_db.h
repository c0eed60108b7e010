// StateDb: what the agent must not forget across a restart or a long partition, in one SQLite file.
//
//  - its identity: the node id and token from registration, and the server it belongs to;
//  - per pod, the next report sequence number (the server ignores a seq it has seen, so seqs must
//    keep rising across agent restarts);
//  - the outbox: state reports not yet acknowledged by the server, in order. A report is written
//    here (fsync'd) before the agent acts on having made it, so a pod that exits while the server
//    is unreachable is billed to its real exit time once the link returns, even if the agent was
//    restarted in between.
//
// SQLite rather than a hand-written journal: atomic multi-row updates and crash safety come free,
// and the library is already a dependency (through store/sqlite.h, the wrapper the control plane's
// store uses too). Thread-safe (one connection under a mutex; the agent writes a few rows a second
// at most).
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/mutex.h"
#include "core/status.h"
#include "store/sqlite.h"

namespace suanli::agent {

struct PendingReport {
  int64_t id = 0;  // outbox order
  std::string pod_id;
  int64_t seq = 0;
  std::string body;  // the JSON to POST to /v1/agent/pods/{pod_id}/status
};

class StateDb {
 public:
  // Creates the directory (0700) and the file when missing. FAILED_PRECONDITION when another agent
  // holds the same directory.
  static core::Result<std::unique_ptr<StateDb>> Open(const std::filesystem::path& dir);
  ~StateDb();
  StateDb(const StateDb&) = delete;
  StateDb& operator=(const StateDb&) = delete;

  core::Result<std::optional<std::string>> Get(std::string_view key) EXCLUDES(mutex_);
  core::Status Set(std::string_view key, std::string_view value) EXCLUDES(mutex_);

  // Takes the pod's next seq and queues `make_body(seq)` in one transaction.
  core::Result<PendingReport> Enqueue(std::string_view pod_id,
                                      const std::function<std::string(int64_t seq)>& make_body)
      EXCLUDES(mutex_);
  core::Result<std::vector<PendingReport>> Pending(size_t limit) EXCLUDES(mutex_);
  core::Status Acknowledge(int64_t id) EXCLUDES(mutex_);
  core::Result<int64_t> PendingCount() EXCLUDES(mutex_);

 private:
  StateDb(store::Connection db, int lock_fd);
  core::Status Exec(const char* sql) REQUIRES(mutex_);
  core::Status Error(std::string_view what) const REQUIRES(mutex_);

  core::Mutex mutex_;
  store::Connection db_ GUARDED_BY(mutex_);
  const int lock_fd_;  // flock'd for the life of the StateDb: one agent per state directory
};

}  // namespace suanli::agent
