// The control plane's entities: users and their credentials, templates, pods and nodes.
//
// Plain values. The control plane owns them in memory and stores each as a JSON document
// (server/documents.h); the API shows them as wire/views.h writes them, minus secrets. Money is
// integer micro-dollars, times are UTC with millisecond precision (what the API shows is what
// billing uses).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/gpu_share.h"
#include "core/money.h"
#include "core/pod_state.h"

namespace suanli::core {

enum class Role { kUser, kAdmin };

// What happens when a user's monthly budget is reached: only an event and a notice, or also a
// stop of their interruptible pods, or of all their pods (volumes kept).
enum class BudgetAction { kNotify, kStopInterruptible, kStopAll };

// A member's part in a project, each allowed what the one before is and more: a viewer reads its
// pods; a member also creates, stops, starts and terminates them; the owner also adds and removes
// members and deletes the project.
enum class ProjectRole { kViewer, kMember, kOwner };

// A team's shared space: its pods are seen and run by its members, and bill its owner's balance
// (within the owner's quotas, spend cap and budget), as a RunPod team's pods bill the team.
struct Project {
  std::string id;    // "prj_..."
  std::string name;  // unique in the cloud
  std::string owner_id;
  std::map<std::string, ProjectRole> members;  // by user id; the owner is one, as kOwner
  TimePoint created_at;
  // Its own limits, inside its owner's (0: none): what its pods may cost per hour together (a
  // create or start past it is refused), and a monthly budget over its pods' charges, warned and
  // acted on as a user's (User::monthly_budget).
  Money spend_cap_per_hour{};
  Money monthly_budget{};
  BudgetAction budget_action = BudgetAction::kNotify;
  std::string budget_warned_month{};
  std::string budget_reached_month{};

  friend bool operator==(const Project&, const Project&) = default;
};

struct User {
  std::string id;  // "usr_..."
  std::string name;
  Role role = Role::kUser;
  Money balance;  // credits minus charges; may dip below zero by the seconds a stop takes
  Money spend_cap_per_hour;  // 0: no cap
  TimePoint created_at;
  std::vector<std::string> notices;  // what the system did to the user's pods and why, newest last
  // Quotas an admin set; 0: the cloud's default (server::ControlPlaneOptions). Answers about a
  // user carry the limits in force.
  int max_pods = 0;          // pods not terminated
  int max_pending_pods = 0;  // pods waiting for a GPU
  int max_endpoints = 0;     // serverless endpoints
  // A monthly budget (UTC calendar month; 0: none): a warning at 80 %, and at 100 % the action
  // its owner chose. The months ("2026-12") in which each was done, so a restart does neither
  // twice.
  Money monthly_budget{};
  BudgetAction budget_action = BudgetAction::kNotify;
  std::string budget_warned_month{};
  std::string budget_reached_month{};

  friend bool operator==(const User&, const User&) = default;
};

// Only the hash of a secret is kept; the secret itself is shown once, when it is created.
struct ApiToken {
  std::string id;  // "tok_..."
  std::string user_id;
  std::string name;
  std::string secret_hash;    // hex SHA-256
  std::string secret_prefix;  // the first characters, so a person can tell tokens apart
  TimePoint created_at;
  bool read_only = false;  // GET and HEAD only: a dashboard's or a monitor's
  // "": the whole account. Else a project's id: the token reaches that project's pods (and the
  // catalog) only, as the member its user is; a CI job's or a teammate's laptop's.
  std::string project_id{};

  friend bool operator==(const ApiToken&, const ApiToken&) = default;
};

struct SshKey {
  std::string id;  // "key_..."
  std::string user_id;
  std::string name;
  std::string public_key;   // one OpenSSH line: "ssh-ed25519 AAAA... comment"
  std::string fingerprint;  // "SHA256:..." as ssh-keygen -l prints it
  TimePoint created_at;

  friend bool operator==(const SshKey&, const SshKey&) = default;
};

struct PortSpec {
  int container_port = 0;
  std::string protocol;  // "tcp" or "http"

  friend bool operator==(const PortSpec&, const PortSpec&) = default;
};

struct Template {
  std::string id;        // "pytorch" for built-ins, "tpl_..." for the rest
  std::string owner_id;  // empty for built-ins
  bool is_public = false;
  std::string name;
  std::string description;
  std::string image;
  std::vector<std::string> command;  // empty: the image's own
  std::map<std::string, std::string> env;
  std::vector<PortSpec> ports;
  int container_disk_gb = 20;
  int volume_gb = 20;
  std::string volume_mount_path = "/workspace";
  TimePoint created_at;

  friend bool operator==(const Template&, const Template&) = default;
};

enum class DesiredState { kRunning, kStopped, kTerminated };

struct PortMapping {
  int container_port = 0;
  std::string protocol;
  int host_port = 0;

  friend bool operator==(const PortMapping&, const PortMapping&) = default;
};

// How far a starting pod's image pull has got, as its agent last reported (about once a second).
struct PullProgress {
  int64_t current_bytes = 0;
  int64_t total_bytes = 0;  // 0 while the engine has not said

  friend bool operator==(const PullProgress&, const PullProgress&) = default;
};

// A named volume (core::Volume) as a pod uses it.
struct VolumeMount {
  std::string volume_id;   // "vol_..."
  std::string mount_path;  // absolute, core::CheckMountPath's rule
  bool read_only = false;
  // On the shared backend (the volume's home is kAnyNode, which never changes).
  bool shared = false;
  // The volume's size now, as its node's agent is told it (not stored with the pod: a resize
  // changes it): a pod that writes past it through a read-write mount is stopped. 0: not held.
  int size_gb = 0;

  friend bool operator==(const VolumeMount&, const VolumeMount&) = default;
};

// Data that must reach the pod's node before its container starts: the engine volume `volume`
// ("suanli-pod_..." for the pod's own, "suanli-vol_..." for a named one) held by node
// `from_node_id`. The pod's new node fetches it (docs/architecture.md, "Moving a volume").
struct VolumeMove {
  std::string id;  // "mv_...": names the export on the source node, so a retry reuses it
  std::string volume;
  std::string from_node_id;
  TimePoint started_at;

  friend bool operator==(const VolumeMove&, const VolumeMove&) = default;
};

struct Pod {
  std::string id;          // "pod_..."
  std::string owner_id;    // whose balance it bills: the project's owner for a project's pod
  std::string project_id;  // "" for a pod of the owner's own
  std::string created_by;  // the user who created it ("" before projects: the owner)
  std::string name;
  std::string template_id;  // empty when created from an image
  std::string image;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::vector<PortSpec> ports;
  std::string gpu_type;  // canonical catalog name
  int gpu_count = 1;
  // Of each GPU, in thousandths: kMilliGpu for whole devices; below it (with gpu_count 1) a share
  // of one device that other pods' shares use too (0.5 GPU is 500).
  int gpu_milli = kMilliGpu;
  int vcpu = 0;
  int memory_gb = 0;
  int container_disk_gb = 0;
  int volume_gb = 0;
  std::string volume_mount_path;
  std::vector<VolumeMount> volumes;  // named volumes, besides its own
  std::vector<VolumeMove> moves;     // while it starts on a node that lacks its data
  bool interruptible = false;
  int priority = 0;
  std::map<std::string, std::string> node_selector;
  uint64_t sequence = 0;  // creation order, for first-come first-served scheduling
  // Auto-stop (billing/auto_stop.h), seconds, 0 for none: the longest a run may last, and how long
  // it may stay idle. The agent runs `pre_stop_command` (sh -c, in the container) before it stops
  // a running container for any reason; "" for none.
  int64_t stop_after_s = 0;
  int64_t idle_stop_after_s = 0;
  std::string pre_stop_command;
  // Terminated once it has been left stopped this long, its own volume deleted with it (its
  // owner said so at its creation); volumes of their own stay. Seconds; 0: never.
  int64_t terminate_after_stopped_s = 0;

  DesiredState desired = DesiredState::kRunning;
  PodState state = PodState::kPending;
  std::string state_reason;  // why it is pending, why it stopped, what failed
  TimePoint state_since;     // when `state` was entered
  int64_t generation = 1;    // bumped whenever what the agent must do changes
  int64_t report_seq = 0;    // the last agent report applied (repeats are ignored)

  int64_t restarts = 0;  // the agent restarts the container when this passes its own count

  std::string node_id;       // empty while unbound
  std::string last_node_id;  // where it last ran: that node's agent may still report on it
  std::vector<int> gpu_indices;
  std::string container_id;
  std::vector<PortMapping> port_mappings;
  bool ready = false;                // running, and every port answers (the agent probes them)
  std::optional<PullProgress> pull;  // while starting and its image is being pulled
  // Given to the container as JUPYTER_TOKEN (and for ${JUPYTER_TOKEN} in the template's env and
  // command), so the owner can open Jupyter; shown to the owner (and admins, who run the hosts).
  std::string jupyter_token;
  // Opens the proxy to this pod's ports without an API token (a browser link:
  // /v1/pods/{id}/proxy/{port}/?suanli_link=...); its owner's only.
  std::string link_token;
  // A pod that publishes port 22 has an SSH host key of its own, kept across its restarts and
  // moves (net/ssh_host_key.h): the Ed25519 seed (32 bytes; its node's agent alone is given it)
  // and the public key as known_hosts gives it ("ssh-ed25519 AAAA...", shown to whoever sees the
  // pod). Both "" for other pods and for those made before.
  std::string ssh_host_key_seed;
  std::string ssh_host_key;

  Money gpu_price_per_hour;  // whole pod; fixed when the current run started
  Money storage_price_per_gb_month;
  TimePoint created_at;
  std::optional<TimePoint> running_since;  // start of the open billing interval
  TimePoint gpu_billed_to;                 // the open interval is charged up to here
  TimePoint storage_billed_to;             // the volume is charged up to here
  Money cost;                              // everything charged for this pod so far
  bool volume_confirmed_empty = false;     // terminate without --force is allowed
  // A container of it has run: its volume may hold data (terminate needs --force) and is billed.
  // Until then the pod has no volume worth keeping, and pays no storage.
  bool ran = false;
  // The end of its last container's output (stdout and stderr, each line prefixed with its time,
  // at most wire::kMaxReportedLogBytes), as its agent sent it when the container stopped, exited
  // or failed: readable once the container is gone. Not in the pod's view; GET .../logs serves it.
  std::string last_logs;

  friend bool operator==(const Pod&, const Pod&) = default;
};

// A volume as a resource of its own (suanli volumes): it outlives the pods that use it and follows
// them from node to node. Its data lives in the engine volume "suanli-<id>" on its home node (or
// on the shared backend, home kAnyNode, where every node that has the backend sees it and nothing
// moves).
inline constexpr std::string_view kAnyNode = "any";
// The node label of nodes whose agent has the shared backend (`suanli agent --shared-volumes
// PATH`), with the value kSharedVolumesLabelValue: a pod with a volume there goes only to such a
// node.
inline constexpr std::string_view kSharedVolumesLabel = "suanli.io/shared-volumes";
inline constexpr std::string_view kSharedVolumesLabelValue = "true";

// kRestoring: being filled from a snapshot (core::Snapshot) on its home node; no pod may attach
// it until that is done.
enum class VolumeState { kAvailable, kMoving, kRestoring };

struct Volume {
  std::string id;        // "vol_..."
  std::string owner_id;  // who pays: its creator, or its project's owner
  std::string name;      // unique among its owner's own volumes, or in its project
  // A project's volume ("": a person's): its members mount it in the project's pods (only there).
  std::string project_id{};
  int size_gb = 0;
  // The node that holds its data; "" before any pod used it (nothing to move), kAnyNode on the
  // shared backend.
  std::string home_node_id;
  VolumeState state = VolumeState::kAvailable;
  std::string moving_to_node_id;  // with kMoving
  std::string restored_from;      // the snapshot it was made from ("snap_..."), if any
  Money storage_price_per_gb_month;
  TimePoint created_at;
  TimePoint storage_billed_to;  // charged up to here
  Money cost;                   // everything charged for it so far

  friend bool operator==(const Volume&, const Volume&) = default;
};

// A point-in-time copy of a volume: a tar of its files with their SHA-256, kept by the node that
// held the volume when it was taken (docs/architecture.md, "Snapshots"). It outlives its volume
// and is restored into a new one. Billed per GB-month of its archive, once it is made.
enum class SnapshotState { kCreating, kReady, kFailed };

struct Snapshot {
  std::string id;  // "snap_..."
  std::string owner_id;
  std::string project_id{};  // its volume's project, if any: seen and used as the volume is
  std::string name;          // unique among its owner's snapshots
  std::string volume_id;
  std::string volume_name;  // as it was named then (the volume may be gone since)
  int volume_size_gb = 0;   // a volume restored from it needs at least this much
  std::string node_id;      // the node that holds its archive
  SnapshotState state = SnapshotState::kCreating;
  std::string state_reason;  // kFailed: what went wrong
  int64_t size_bytes = 0;    // of the archive, once made
  std::string sha256;        // of the archive, hex, once made
  Money storage_price_per_gb_month;
  TimePoint created_at;
  TimePoint storage_billed_to;  // charged up to here; from kReady on
  Money cost;                   // everything charged for it so far

  friend bool operator==(const Snapshot&, const Snapshot&) = default;
};

enum class NodeState { kReady, kUnreachable };

struct GpuDevice {
  int index = 0;
  std::string uuid;
  std::string type;  // canonical catalog name
  double memory_gb = 0;
  bool simulated = false;
  // GPUs with the same link group talk over NVLink or through one PCIe switch: a multi-GPU pod
  // gets its GPUs from as few groups as the node allows.
  int link_group = 0;
  // A MIG slice of a GPU ("3g.40gb") is a device of its own with less than a GPU's capacity:
  // shares go on it, whole-GPU pods never.
  int capacity_milli = kMilliGpu;
  std::string mig_profile;

  friend bool operator==(const GpuDevice&, const GpuDevice&) = default;
};

// One reading of a GPU's health as its node's agent last sent it (NVML: agent/gpus.h). A negative
// figure is one the GPU does not report (GeForce cards have no ECC counters).
struct GpuHealth {
  int index = 0;
  int utilization_percent = -1;  // of the last sample period (1/6 s to 1 s)
  double memory_used_gb = -1;    // GiB
  int temperature_c = -1;
  double power_w = -1;
  int64_t ecc_uncorrected_errors = -1;  // volatile count: since the driver loaded
  int64_t xid_errors = -1;              // critical XID events since the agent started
  int last_xid = 0;                     // the latest XID seen, 0 for none (999: NVML's "unknown")
  std::string problem;  // "" unless a reading failed unexpectedly, e.g. "GPU is lost"

  friend bool operator==(const GpuHealth&, const GpuHealth&) = default;
};

// What suanli-gpu-probe measured on one GPU of a node (agent/gpu_probe.h): the advisor predicts
// from these rather than the datasheet's figures where they are lower (advisor/measured.h).
struct GpuMeasurement {
  int index = 0;                     // the node's GpuDevice::index
  double memory_bandwidth_gbps = 0;  // decimal GB/s of a device-to-device copy, read plus written
  double fp16_tflops = 0;            // dense FP16 tensor, FP32 accumulate
  std::optional<double> bf16_tflops;
  std::optional<double> fp8_tflops;

  friend bool operator==(const GpuMeasurement&, const GpuMeasurement&) = default;
};

struct Node {
  std::string id;  // "node_..."
  std::string name;
  std::string token_hash;  // the agent's credential, hex SHA-256
  NodeState state = NodeState::kReady;
  bool cordoned = false;  // no new pods
  bool draining = false;  // cordoned, and its pods are being stopped
  std::map<std::string, std::string> labels;
  std::vector<GpuDevice> gpus;
  int vcpu = 0;
  int memory_gb = 0;
  int disk_gb = 0;
  std::string agent_version;
  // Where renters reach its pods' published ports (SSH): the agent's --public-address, or the
  // address its requests come from.
  std::string address;
  // Why the server drained it on its own (it lost GPUs); "" when an admin did, or it is not.
  std::string drain_reason;
  std::vector<GpuHealth> gpu_health;  // the last heartbeat's; kept in memory only, never stored
  // The probe's figures from the last heartbeat (measured once when the agent starts); kept in
  // memory only, as gpu_health.
  std::vector<GpuMeasurement> gpu_measurements;
  int64_t generation = 0;  // bumped whenever the desired state of any of its pods changes
  TimePoint registered_at;
  TimePoint last_heartbeat;

  friend bool operator==(const Node&, const Node&) = default;
};

struct JoinToken {
  std::string id;  // "join_..."
  std::string secret_hash;
  std::string secret_prefix;
  std::string note;
  TimePoint created_at;
  TimePoint expires_at;

  friend bool operator==(const JoinToken&, const JoinToken&) = default;
};

}  // namespace suanli::core
