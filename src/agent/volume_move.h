// Volume moves, the agents' two sides (docs/architecture.md, "Moving a volume"):
//
//  - the node that holds a volume answers relayed requests (wire::RelayRequest kVolumeArchive) for
//    ranges of its archive: made once per move from the volume's host directory
//    (volume_archive.h) and kept in the agent's move directory, with its size and SHA-256, so that
//    every request of a move, across restarts of either side, reads the same bytes;
//  - the node a pod moves to fetches those ranges through the server
//    (GET /v1/agent/moves/{id}/archive) into a part file in its move directory, which survives a
//    restart (a kill -9 included: the fetch goes on from the part file's size), checks the
//    SHA-256, then unpacks it into its own engine volume of the same name.
//
// Files: <move dir>/<move id>.tar and .info on the source; .part and .meta on the receiver.
//
// Snapshots (docs/architecture.md, "Snapshots") are archives of the same kind, kept in the agent's
// snapshot directory as <snapshot id>.tar and .info until the server asks for their removal.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "agent/engine.h"
#include "core/clock.h"
#include "core/domain.h"
#include "core/mutex.h"
#include "core/status.h"
#include "wire/agent_protocol.h"
#include "wire/relay_protocol.h"

namespace suanli::agent {

// The source's answer to a kVolumeArchive request: 200 with the bytes [offset, offset + length)
// of the move's archive (fewer at its end; none at its size) and its size and SHA-256 in
// wire::kArchiveSizeHeader and kArchiveSha256Header; 404 for a volume not on this node; 416 for
// an offset past the end; 400 for a malformed move id. Makes the archive on the first request of
// a move (one at a time on this node). Thread-safe.
wire::RelayAnswer ServeVolumeArchive(Engine& engine, const std::filesystem::path& move_dir,
                                     const wire::RelayRequest& work);

// A kRemoveVolume request: deletes the engine volume (only suanli's: "suanli-pod_..." or
// "suanli-vol_..."), its directory on the shared backend `shared_dir` (when the node has one) and
// the archives made of it. 204, or the engine's refusal.
wire::RelayAnswer RemoveVolumeHere(Engine& engine, const std::filesystem::path& move_dir,
                                   const std::filesystem::path& shared_dir,
                                   const wire::RelayRequest& work);

// Relayed work that takes minutes (a snapshot's archive, a restore) runs in the background: its
// request is answered 202 at once while it runs, and with its result when the server asks again
// after it ended. So no request waits minutes on the relay, and a job an agent lost to a kill -9
// starts again when the server asks next. Destroying this waits for the jobs that run (an agent
// that stops finishes the archive it is making). Thread-safe.
class BackgroundJobs {
 public:
  BackgroundJobs() = default;
  BackgroundJobs(const BackgroundJobs&) = delete;
  BackgroundJobs& operator=(const BackgroundJobs&) = delete;
  ~BackgroundJobs();

  // The answer of job `key` if it has ended (then forgotten); else 202, starting `work` as job
  // `key` unless it runs already.
  wire::RelayAnswer RunOrAsk(const std::string& key, std::function<wire::RelayAnswer()> work);

 private:
  struct Job {
    std::thread thread;
    bool done = false;
    wire::RelayAnswer answer;
  };
  core::Mutex mutex_;
  std::map<std::string, std::unique_ptr<Job>> jobs_ GUARDED_BY(mutex_);
};

// A kSnapshotVolume request: archives the engine volume work.volume as snapshot work.snapshot
// (once: a repeated request answers with the archive made first) and answers 200 with its size
// and SHA-256 in kArchiveSizeHeader and kArchiveSha256Header; 404 for a volume not on this node.
wire::RelayAnswer SnapshotVolumeHere(Engine& engine, const std::filesystem::path& snapshot_dir,
                                     const wire::RelayRequest& work);

// A kRestoreSnapshot request: checks the snapshot's archive against work.sha256, then replaces
// what engine volume work.volume holds (made if need be) with its files. 204; 404 for a snapshot
// not on this node; 409 when the archive's checksum does not match.
wire::RelayAnswer RestoreSnapshotHere(Engine& engine, const std::filesystem::path& snapshot_dir,
                                      const wire::RelayRequest& work);

// A kRemoveSnapshot request: deletes the snapshot's archive. 204, also when it was gone already.
wire::RelayAnswer RemoveSnapshotHere(const std::filesystem::path& snapshot_dir,
                                     const wire::RelayRequest& work);

struct FetchOptions {
  std::string server_url;
  std::function<std::string()> node_token;
  std::filesystem::path move_dir;
  std::function<bool()> stopping;
  // Called after each range, with the move's figures so far (done false).
  std::function<void(const wire::MoveProgress&)> progress;
  int64_t chunk_bytes = wire::kMaxVolumeChunkBytes;
  std::chrono::milliseconds retry_after{1000};  // after the source or the server did not answer
};

// Fetches `move` into the engine volume move.volume on this node and returns its final figures
// (done true). Retries a source or server that does not answer until `stopping()`; begins again
// from byte 0 when the archive's checksum does not match (at most 3 times, then INTERNAL).
// NOT_FOUND when the server no longer knows the move (the pod left this node); UNAVAILABLE when
// stopped. The part file is removed once the volume holds the data.
core::Result<wire::MoveProgress> FetchVolume(Engine& engine, core::Clock& clock,
                                             const FetchOptions& options,
                                             const core::VolumeMove& move);

}  // namespace suanli::agent
