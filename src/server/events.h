// The event stream's entries as the control plane writes them: one builder per kind, so that each
// kind's message and detail are spelled once. The kinds, their objects and who sees them are
// listed in docs/api.md ("Events"); the control plane assigns the seq and the time.
#pragma once

#include <string>
#include <string_view>

#include "core/domain.h"
#include "core/event.h"
#include "core/ledger_types.h"
#include "core/money.h"

namespace suanli::server {

// "pod.state": a pod changed its state, with the reason (every transition makes one).
core::Event PodStateEvent(const core::Transition& transition);

// An event about `pod` for its owner: `kind` ("pod.preempted", "pod.balance_stop", ...) and the
// reason as the owner's notice says it.
core::Event PodEvent(const core::Pod& pod, std::string_view kind, std::string message);

// A move of a pod's volume to its new node (docs/api.md, "Moving a volume"): "volume.move_started",
// "volume.move_progress" and "volume.moved", about the pod, for its owner. `seconds` since the
// move began; `bytes` of the archive so far, of `total_bytes` (0 while unknown).
struct MoveFigures {
  std::string move_id;
  std::string volume;  // the engine volume
  std::string from_node_id;
  std::string to_node_id;
  int64_t bytes = 0;
  int64_t total_bytes = 0;
  double seconds = 0;
  int restarts = 0;
  std::string sha256;
};
core::Event MoveEvent(const core::Pod& pod, std::string_view kind, std::string message,
                      const MoveFigures& figures);

// "balance.low": `user`'s balance runs out in less than `runway` at `rate` per hour.
core::Event LowBalanceEvent(const core::User& user, core::Money balance, core::Money rate,
                            int64_t runway_s);

// "node.unreachable" and "node.drained" (admins only: no owner).
core::Event NodeEvent(const core::Node& node, std::string_view kind, std::string message);

// "volume.restore_started", "volume.restored", "volume.restore_failed": about `volume`, its
// owner's; detail: the volume and the snapshot it is restored from.
core::Event VolumeEvent(const core::Volume& volume, std::string_view kind, std::string message);

// "volume.snapshot_started", "volume.snapshot_ready", "volume.snapshot_failed",
// "volume.snapshot_deleted": about `snapshot`, its owner's; detail: its volume, node, size and
// SHA-256.
core::Event SnapshotEvent(const core::Snapshot& snapshot, std::string_view kind,
                          std::string message);

}  // namespace suanli::server
