// The agent's side of the relay (server/relay.h): it long-polls the server for requests users made
// to this node's pods (their logs, HTTP to one of their ports), does each here, and posts the
// answer back. The server never connects to a node; this is how it reaches one behind NAT.
//
// Each request runs on its own short-lived thread, so a slow pod does not hold up the others; at
// most `max_in_flight` run at once, and the agent asks for no more than it has room for (the rest
// wait on the server, which answers them 504 if they wait too long).
//
// Limits, because an answer travels back in one POST under the server's 1 MiB body limit: logs are
// cut to their last kMaxRelayedLogBytes (at a line start; the answer then carries
// `X-Suanli-Logs-Truncated: true`), and an HTTP answer with a body over kMaxRelayedBodyBytes is
// replaced by a 502 that says so.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>

#include "agent/engine.h"

namespace suanli::agent {

inline constexpr size_t kMaxRelayedLogBytes = 512 * 1024;
inline constexpr size_t kMaxRelayedBodyBytes = 700 * 1024;

struct RelayOptions {
  std::string server_url;                 // "http://10.0.0.2:7070"
  std::string pod_address = "127.0.0.1";  // where published pod ports answer on this host
  std::chrono::seconds poll_wait{5};      // the long poll's wait; bounds how long Stop takes
  std::chrono::milliseconds pod_timeout{25'000};  // for one HTTP exchange with a pod
  int max_in_flight = 8;
  // Where archives of this node's volumes are made for moves to other nodes (one per move, kept
  // until the volume is removed here, or for a day).
  std::filesystem::path move_dir;
  // Where this node keeps the snapshots of its volumes (until the server removes them).
  std::filesystem::path snapshot_dir;
  std::filesystem::path shared_volume_dir;  // AgentOptions::shared_volume_dir
};

// Serves relayed requests until `stopping()` returns true, then waits for the requests in flight
// and returns: within `poll_wait` (5 s) of `stopping()` turning true, plus whatever the requests
// in flight still need (each is bounded by pod_timeout, or by the engine for logs).
// `node_token()` is the node's current token; while it is empty (not registered yet) nothing is
// polled. `log` gets a line when the server stops or starts answering, not one per retry; it is
// called from several threads.
void ServeRelay(const RelayOptions& options, const std::function<std::string()>& node_token,
                Engine& engine, const std::function<bool()>& stopping,
                const std::function<void(const std::string&)>& log);

// "2026-03-01T10:00:00.123456789Z" for the RFC 3339 time that starts each line of `logs` (the
// engine's, in whatever zone and precision it writes): fixed width UTC, so clients can compare
// times as text. Lines without a readable time are left as they are. Exposed for its test.
std::string NormalizeLogTimestamps(std::string_view logs);

}  // namespace suanli::agent
