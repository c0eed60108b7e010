// The relay protocol: requests for a pod's node (its logs, HTTP to one of its ports) handed to the
// node's agent, and the agent's answers (docs/api.md, "The relay"; server/relay.h carries them).
//
//   server -> agent  GET  /v1/agent/requests       {"requests": [RelayRequest...]}
//   agent -> server  POST /v1/agent/requests/{id}  RelayAnswer
//
// Bodies travel base64-encoded (they are bytes, JSON strings are text). As in the agent protocol,
// the agent ignores fields it does not know and the server refuses them. Decode returns
// INVALID_ARGUMENT naming the first bad field; nothing throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "net/http.h"

namespace suanli::wire {

inline constexpr size_t kMaxRelayHeaders = 128;
inline constexpr size_t kMaxRelayBodyBase64 = size_t{4} << 20;  // bytes of base64: 3 MiB of body
inline constexpr size_t kMaxRelayRequestsPerPoll = 64;
// The most bytes of a volume's archive one relayed answer carries (base64 in a POST the server
// takes up to kMaxRelayBodyBase64 of).
inline constexpr int64_t kMaxVolumeChunkBytes = int64_t{2} << 20;
// Headers of a volume archive's chunk: the whole archive's size and SHA-256 (hex).
inline constexpr std::string_view kArchiveSizeHeader = "X-Suanli-Archive-Size";
inline constexpr std::string_view kArchiveSha256Header = "X-Suanli-Archive-Sha256";

// One request for an agent, as it is handed over.
struct RelayRequest {
  // kVolumeArchive: a range of the archive of an engine volume on this node, for a move to another
  // node (docs/architecture.md, "Moving a volume"); kRemoveVolume: delete such a volume here.
  // Snapshots (docs/architecture.md, "Snapshots"): kSnapshotVolume makes one of an engine volume
  // here, kRestoreSnapshot fills an engine volume here from one, kRemoveSnapshot deletes one.
  enum class Kind {
    kLogs,
    kHttp,
    kVolumeArchive,
    kRemoveVolume,
    kSnapshotVolume,
    kRestoreSnapshot,
    kRemoveSnapshot
  };

  std::string id;  // "rly_...", set by server::Relay::Submit
  std::string pod_id;
  Kind kind = Kind::kLogs;
  // kLogs:
  int tail = -1;      // the last N lines; -1: all
  std::string since;  // RFC 3339; empty: from the start
  bool timestamps = false;
  // kHttp:
  int port = 0;          // the container's port
  std::string method;    // "GET"
  std::string target;    // "/x?y=1", as the pod should see it
  net::Headers headers;  // without hop-by-hop ones and without Authorization
  std::string body;
  // How long the agent waits for the pod's answer, in milliseconds; 0: its own default (25 s).
  // A serverless job posted to its worker waits for its execution timeout.
  int timeout_ms = 0;
  // kVolumeArchive and kRemoveVolume:
  std::string volume;   // the engine volume, "suanli-pod_..." or "suanli-vol_..."
  std::string move_id;  // kVolumeArchive: names the archive, made once per move
  int64_t offset = 0;   // the archive's bytes from here
  int64_t length = 0;   // at most this many (at most kMaxVolumeChunkBytes)
  // kSnapshotVolume (with `volume`), kRestoreSnapshot (with `volume`, the one to fill, and
  // `sha256`, the archive's as the server recorded it) and kRemoveSnapshot:
  std::string snapshot;  // "snap_...": names the archive in the agent's snapshot directory
  std::string sha256;

  friend bool operator==(const RelayRequest&, const RelayRequest&) = default;
};

std::string EncodeRelayRequests(const std::vector<RelayRequest>& requests);
// A poll's requests as the agent read them.
struct RelayBatch {
  std::vector<RelayRequest> requests;
  // Those it could not read, each as (its id, "" when it had none; why): the agent answers each
  // with an error, and the batch's others are served.
  std::vector<std::pair<std::string, std::string>> unreadable;
};
// INVALID_ARGUMENT only when the batch itself is not one: not JSON, no "requests" array.
core::Result<RelayBatch> DecodeRelayRequests(std::string_view text);

// What the pod (or the agent, for logs and errors) answered.
struct RelayAnswer {
  int status = 200;
  net::Headers headers;  // each name an HTTP token, each value without CR, LF or NUL
  std::string body;

  friend bool operator==(const RelayAnswer&, const RelayAnswer&) = default;
};

std::string EncodeRelayAnswer(const RelayAnswer& answer);
core::Result<RelayAnswer> DecodeRelayAnswer(std::string_view text);

}  // namespace suanli::wire
