// The node agent: one per GPU host. It registers the host's GPUs with the control plane, dials out
// (the server never connects to a node), keeps a heartbeat, and reconciles the pods the server
// wants on this node with the containers the engine runs (reconcile.h), reporting every state
// change through a durable outbox (state_db.h).
//
// What it promises: a pod's container is never started twice; containers keep running when the
// server or the agent goes away, and are adopted (by label) when the agent comes back; state
// changes seen while the server is unreachable are reported, with the engine's own times, once it
// is back, so usage is exact to the second; a dead container engine is reported and waited out.
//
// Threads: one long-polls the desired pods, one beats the heart, one reconciles, one drains the
// outbox, one serves the relay (relay.h), and one per image being pulled, joined once its pull
// ends. Each has its own HTTP client.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "core/clock.h"
#include "core/status.h"

namespace suanli::agent {

inline constexpr int64_t kDefaultPidsLimit = 4096;  // ample for dataloader workers and compilers

struct AgentOptions {
  std::string server_url;  // "http://10.0.0.2:7070"
  std::string join_token;  // slj_...; needed only until the node is registered
  std::filesystem::path state_dir = "/var/lib/suanli-agent";
  std::string name;           // the node's name; default: the host name
  std::string simulate_gpus;  // "4xRTX 4090": report GPUs that do not exist (marked simulated)
  std::string engine_socket;  // "unix:///run/podman/podman.sock"; default: FindEngineSocket()
  std::string gpu_access = "auto";  // auto (CDI on Podman, DeviceRequests on Docker), cdi, nvidia
  // The host address pod ports are published on; empty: all. Loopback by default: the agent's
  // relay (the server's authenticated proxy) and probes reach them there, and nothing else does
  // unless the operator says so (renters who SSH in from elsewhere need 0.0.0.0 or a public one).
  std::string publish_address = "127.0.0.1";
  // "owner": each owner's pods on a network of their own, unreachable from other owners' pods;
  // "engine": every pod on the engine's default network (one tenant, or an engine without
  // network support).
  std::string pod_network = "owner";
  // Processes (threads count) a pod's container may hold, so that a fork bomb in one pod cannot
  // exhaust the host's PIDs for every other pod and the agent. 0: the engine's default (Podman
  // 2048, Docker none).
  int64_t pids_limit = kDefaultPidsLimit;
  // "remap": each pod's root is an unprivileged host id (ContainerSpec::remap_user_namespace);
  // "off": root in a pod is root on the host, held in by capabilities and no-new-privileges only.
  // Off by default: files an existing volume holds belong to the host's root, which a remapped
  // pod sees as nobody and cannot write (turn it on for a node before its pods make volumes).
  std::string user_namespace = "off";
  // The address renters reach this host's pod ports at (SSH); empty: the server uses the address
  // the agent's requests come from, which is wrong behind NAT or a proxy.
  std::string public_address;
  // The node's labels (`--label KEY=VALUE`), which pods' node_selector match.
  std::map<std::string, std::string> labels;
  // A directory every node of the shared backend mounts (an NFS export): volumes created shared
  // live there, each in a subdirectory, and need no move. The node gets the label
  // core::kSharedVolumesLabel. "": none.
  std::filesystem::path shared_volume_dir;
  // suanli-gpu-probe, which measures each GPU's bandwidth and tensor rates once (gpu_probe.h):
  // "auto" finds it as FindGpuProbe() does and says nothing where it is absent; "off" never runs
  // it; anything else is its path.
  std::string gpu_probe = "auto";
  std::chrono::milliseconds heartbeat_interval{5'000};
  std::chrono::milliseconds resync_interval{2'000};  // how often containers are re-inspected
  std::chrono::seconds long_poll{10};
  std::chrono::seconds stop_grace{10};  // SIGTERM to SIGKILL when a pod stops
  // How often each running pod's disk use is measured against the sizes it asked for (a pod past
  // one is stopped, disk_quota.h); 0: never.
  std::chrono::seconds disk_check_interval{60};
  // The longest a pod's pre-stop command may run before its container is stopped anyway.
  std::chrono::seconds pre_stop_timeout{120};
};

class Agent {
 public:
  // Opens the state directory, discovers GPUs and starts the threads. Registration and the first
  // fetch of desired pods happen in the background (retried while the server is unreachable), so a
  // host reboots into a working agent even when the server is down. Errors: a bad option, a
  // state directory in use, an unknown simulated GPU type.
  static core::Result<std::unique_ptr<Agent>> Start(const AgentOptions& options,
                                                    const catalog::Catalog& catalog,
                                                    core::Clock& clock, std::ostream& log);
  virtual ~Agent() = default;

  // Stops the threads and leaves every container as it is. Idempotent.
  virtual void Stop() = 0;
  // Why the agent gave up (its node was removed and no join token can register it again), or OK.
  virtual core::Status failure() const = 0;
  // The node id once registered, else empty.
  virtual std::string node_id() const = 0;
};

// Whether the agent state in `state_dir` holds its node's credential, so that it starts without a
// join token. False for a folder with no state, or one an agent stopped before registering (its
// database is made first): `suanli up` then gives its agent a join token again.
core::Result<bool> IsRegistered(const std::filesystem::path& state_dir);

// `suanli agent`: runs until SIGTERM or SIGINT, leaving pods running.
core::Status RunAgentUntilSignalled(const AgentOptions& options, const catalog::Catalog& catalog,
                                    std::ostream& log);

}  // namespace suanli::agent
