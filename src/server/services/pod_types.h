// What callers of the control plane send and get back about pods, templates and the agents'
// desired pods: its pod service's requests and answers (control_plane.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "advisor/workload.h"
#include "core/domain.h"
#include "core/money.h"
#include "wire/agent_protocol.h"

namespace suanli::server {

// A named volume as a pod asks for it: by the volume's id or name, where, and whether read-only.
struct VolumeRequest {
  std::string volume;  // "vol_..." or its name
  std::string mount_path;
  bool read_only = false;
};

struct PodSpec {
  std::string name;
  // A project (id or name) the caller is a member or the owner of: the pod is the project's, seen
  // by its members, and bills the project's owner. "": the caller's own.
  std::string project;
  std::string template_id;
  std::string image;
  std::optional<std::vector<std::string>> command;
  std::map<std::string, std::string> env;
  std::optional<std::vector<core::PortSpec>> ports;
  std::string gpu_type;  // any catalog name or alias; "" or "cheapest": the cheapest type free now
  int gpu_count = 1;
  int gpu_milli = core::kMilliGpu;  // of each GPU; below it a share of one (gpu_count 1)
  // With gpu_type "" or "cheapest": the advisor picks the type and count that run this workload
  // at the lowest cost among the types with free GPUs now.
  std::optional<advisor::Workload> workload;
  std::optional<int> vcpu;
  std::optional<int> memory_gb;
  std::optional<int> container_disk_gb;
  std::optional<int> volume_gb;
  std::optional<std::string> volume_mount_path;
  bool interruptible = false;
  std::map<std::string, std::string> node_selector;
  // Auto-stop, seconds (0: none), and the command run in the container before any stop.
  int64_t stop_after_s = 0;
  int64_t idle_stop_after_s = 0;
  std::string pre_stop_command;
  // Terminate the pod once it has been left stopped this long (seconds; 0: never). A pod with a
  // volume of its own (volume_gb) needs terminate_deletes_volume too: its data goes with it.
  int64_t terminate_after_stopped_s = 0;
  bool terminate_deletes_volume = false;
  // Volumes of their own (suanli volumes), besides the pod's own volume (volume_gb).
  std::vector<VolumeRequest> volumes;
  // Accept a request that no node here could ever meet (a type or a size none has), to wait for
  // such a node on purpose; without it, such a request is refused (FAILED_PRECONDITION).
  bool queue = false;
};

struct TemplateSpec {
  std::string name;
  std::string description;
  std::string image;
  std::vector<std::string> command;
  std::map<std::string, std::string> env;
  std::vector<core::PortSpec> ports;
  int container_disk_gb = 20;
  int volume_gb = 20;
  std::string volume_mount_path = "/workspace";
  bool is_public = false;
};

// What agents report (wire/agent_protocol.h holds the protocol's messages and limits).
using wire::NodeReport;
using wire::PodReport;

// What an agent must run: its node's pods, with the generation they were computed at.
struct DesiredPods {
  int64_t generation = 0;
  std::vector<core::Pod> pods;
  // By KeyHolder: the public keys that may SSH into the holder's pods.
  std::map<std::string, std::vector<std::string>> ssh_keys;
};

// Whose SSH keys go into a pod: its project's (every member's and the owner's, not viewers'), or
// its owner's.
inline const std::string& KeyHolder(const core::Pod& pod) {
  return pod.project_id.empty() ? pod.owner_id : pod.project_id;
}

// Where a person's pod runs, for the requests relayed to its node's agent (logs, the HTTP proxy).
struct PodPlacement {
  core::Pod pod;                // as GetPod shows it
  std::string node_name;        // empty while the pod is on no node
  bool node_reachable = false;  // the node's heartbeat is current
};

// A pod as ControlPlane::VisitPods shows it: `revision` changes whenever the pod is written (a
// cached view of it is current while it does not); `cost` includes what accrued since the last
// charge.
struct PodListEntry {
  const core::Pod& pod;
  uint64_t revision;
  const std::string& node_address;
  core::Money cost;
};

// A page of a pod list, in id order: the pods whose id sorts after `after` ("" from the first),
// at most `limit` of them.
struct PodPage {
  std::string after;
  size_t limit = SIZE_MAX;
  std::string project;  // "": every pod the caller sees; else only this project's (id or name)
};

struct PodPageEnd {
  uint64_t sequence = 0;   // the store sequence to wait for
  std::string next_after;  // the last id shown when more pods follow; "" at the end
};

}  // namespace suanli::server
