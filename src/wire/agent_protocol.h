// The agent protocol: the messages between a node's agent and the control plane (docs/api.md,
// "The agent protocol"), each encoded and decoded here and nowhere else.
//
//   agent -> server  POST /v1/agent/register   NodeReport (with its name)  -> Registration
//                    POST /v1/agent/heartbeat  NodeReport                  -> the node's view
//                    POST /v1/agent/pods/{id}/status  PodReport
//   server -> agent  GET  /v1/agent/pods       DesiredPods
//
// The server decodes what agents send strictly (an unknown field is refused: an agent and its
// server are upgraded together, and a typo must not pass as a default); an agent decodes what its
// server sends ignoring fields it does not know, so a newer server does not break an older agent.
// Every Decode returns INVALID_ARGUMENT naming the first bad field; none throws.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/domain.h"
#include "core/status.h"

namespace suanli::wire {

// Limits, the same on both sides.
inline constexpr size_t kMaxNodeGpus = 64;
inline constexpr int kMaxGpuIndex = 63;
inline constexpr size_t kMaxNodeNameLength = 64;
inline constexpr size_t kMaxAgentVersionLength = 64;
inline constexpr size_t kMaxAddressLength = 253;  // a DNS name
inline constexpr size_t kMaxNodeLabels = 64;
inline constexpr size_t kMaxGpuTextLength = 128;  // a GPU's UUID and type name
inline constexpr size_t kMaxProblemLength = 256;
inline constexpr size_t kMaxContainerIdLength = 128;
inline constexpr size_t kMaxReportMessageLength = 1024;  // bytes; Encode shortens longer ones
inline constexpr size_t kMaxPortMappings = 64;
inline constexpr size_t kMaxTokenLength = 256;
inline constexpr size_t kMaxDesiredPods = 4096;
inline constexpr size_t kMaxPodVolumes = 16;  // named volumes of one pod
// The end of a stopped container's output that a report carries (PodReport::logs); the server
// keeps it with the pod, so it is small.
inline constexpr size_t kMaxReportedLogBytes = 64 * 1024;

// What an agent says about its host, at registration and in each heartbeat.
// What a node sees of a running pod's use, for the idle rule (billing/auto_stop.h). GPU use comes
// from gpu_health by the pod's GPU indices.
struct PodActivity {
  std::string pod_id;
  double cpu_percent = 0;  // of one CPU, since the agent's previous sample
  int ssh_sessions = 0;    // established TCP connections to the host port of its 22/tcp
  bool ssh_known = true;   // false: the pod publishes no SSH port, or /proc/net/tcp is unreadable

  friend bool operator==(const PodActivity&, const PodActivity&) = default;
};

struct NodeReport {
  std::string name;  // at registration only
  std::vector<core::GpuDevice> gpus;
  int vcpu = 0;
  int memory_gb = 0;
  int disk_gb = 0;
  std::string agent_version;
  std::map<std::string, std::string> labels;
  std::string address;  // the agent's --public-address; "" lets the server use the peer's
  std::vector<core::GpuHealth> gpu_health;  // NVML's readings (real GPUs only)
  std::vector<PodActivity> pod_activity;    // heartbeats only: its running pods' use
  // What suanli-gpu-probe measured on its GPUs (one entry per measured GPU; none before the probe
  // has run, where it is missing or off, or on simulated GPUs).
  std::vector<core::GpuMeasurement> gpu_measurements;

  friend bool operator==(const NodeReport&, const NodeReport&) = default;
};

enum class NodeReportFor { kRegistration, kHeartbeat };  // a registration must name the node

std::string EncodeNodeReport(const NodeReport& report);
core::Result<NodeReport> DecodeNodeReport(std::string_view text, NodeReportFor purpose);

// The server's answer to a registration: the node's id and its secret token, shown once.
struct Registration {
  std::string node_id;
  std::string node_token;

  friend bool operator==(const Registration&, const Registration&) = default;
};

// {"node": the node's view, "token": ...}.
std::string EncodeRegistration(const core::Node& node, std::string_view token);
core::Result<Registration> DecodeRegistration(std::string_view text);

// How far a volume move has got (core::VolumeMove), as the pod's new node reports it while the
// pod starts: about once a second while bytes arrive, and once when it is done.
struct MoveProgress {
  std::string move_id;
  int64_t bytes = 0;        // of the archive, fetched so far
  int64_t total_bytes = 0;  // the archive's size; 0 while unknown
  int64_t elapsed_ms = 0;   // since this node began it (across its own restarts)
  int restarts = 0;         // times the fetch began again from byte 0 (a bad checksum)
  bool done = false;        // fetched, its checksum checked, unpacked into the volume
  std::string sha256;       // the archive's, hex; with done

  friend bool operator==(const MoveProgress&, const MoveProgress&) = default;
};

// An agent's report of a pod's actual state. `seq` increases per pod; a report at or below the
// last applied one is a repeat and changes nothing.
struct PodReport {
  int64_t seq = 0;
  core::PodState state = core::PodState::kStarting;  // never kPending
  core::TimePoint at;  // when the agent saw it (milliseconds on the wire)
  std::string container_id;
  std::vector<core::PortMapping> port_mappings;
  std::string message;
  std::optional<int> exit_code;
  std::optional<bool> ready;  // the pod's ports answer; only meaningful with state running
  std::optional<core::PullProgress> pull;  // with state starting: the image pull so far
  // With state stopped, exited or failed: the last of the container's output, each line prefixed
  // with its time (fixed-width RFC 3339, relay.h's NormalizeLogTimestamps), at most
  // kMaxReportedLogBytes, starting at a line (the agent cuts it); base64 on the wire.
  std::optional<std::string> logs;
  std::optional<MoveProgress> move;  // with state starting: a move of its volume

  friend bool operator==(const PodReport&, const PodReport&) = default;
};

// From logs as PodReport::logs holds them (each line "<fixed-width RFC 3339 time> <text>"): the
// lines at or after `since`, then the last `tail` of them (-1: all), with their times only when
// `timestamps`; as GET /v1/pods/{id}/logs answers for a container that is gone.
std::string SelectLogLines(std::string_view logs, int tail, std::optional<core::TimePoint> since,
                           bool timestamps);

std::string EncodePodReport(const PodReport& report);
core::Result<PodReport> DecodePodReport(std::string_view text);

// One pod its node must run (or stop, or remove), as the agent needs it.
struct DesiredPod {
  core::Pod pod;                      // the fields DecodeDesiredPods reads (see there)
  std::vector<std::string> ssh_keys;  // the owner's public keys
};

// What an agent must run: its node's pods, with the generation they were computed at.
struct DesiredPods {
  int64_t generation = 0;
  std::vector<DesiredPod> pods;
};

// Each pod as its node's agent sees its view (wire/views.h, with the Jupyter token), plus its
// owner's `ssh_keys`.
std::string EncodeDesiredPods(const DesiredPods& desired, core::TimePoint now);
// Reads of each pod: id, name, owner_id, image, command, env, ports, gpu_type, gpu_count,
// gpu_milli, gpu_indices, vcpu, memory_gb, container_disk_gb, volume_gb, volume_mount_path,
// desired_state, state, generation, restarts, node_id, jupyter_token; the rest keep their defaults.
core::Result<DesiredPods> DecodeDesiredPods(std::string_view text);

}  // namespace suanli::wire
