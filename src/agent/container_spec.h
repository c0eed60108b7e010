// A pod's container, as the engine is asked to create it: a pure function of the pod the server
// wants, the host ports the agent picked for it, and what this host is (its node id, its GPUs, how
// they reach a container). No I/O, so every case is a unit test; the agent picks the free ports
// and talks to the engine (reconcile.h is the same split: a pure plan, a thin executor).
//
// What the container gets:
//  - its name and labels (reconcile.h: ContainerName, kPodLabel, kRestartsLabel, kNodeLabel);
//  - suanli's variables in its env: SUANLI_POD_ID, JUPYTER_TOKEN (when the pod has one),
//    PUBLIC_KEY (the owner's keys, one a line) and SUANLI_PORT_<container port> (the host port it
//    is published on). An entry of the pod's env with the same name wins;
//  - the pod's env, and its command, with ${NAME} expanded (ExpandVariables). The command is
//  exec'd,
//    not run by a shell, so its ${NAME} are ours to expand: suanli's variables and the pod's env
//    (a template's `--model ${MODEL}`). In the env only suanli's variables expand;
//  - its owner's network (OwnerNetworkName), unless the host puts every pod on the engine's own;
//  - limits: the pod's vCPUs and memory, the host's pids limit, its volume (none when volume_gb
//    is 0);
//  - its volumes of their own: named engine volumes, or those on the shared backend bound in from
//    their directory there (SharedVolumeDirectory);
//  - only the pod's GPUs: SUANLI_GPUS lists their indices; simulated GPUs have no devices, so the
//    container is told which it would have and that they are simulated (SUANLI_GPUS_SIMULATED=1,
//    NVIDIA_VISIBLE_DEVICES=void); real ones reach it as CDI ids (the indices) or, as device
//    requests, by NVML UUID.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "agent/engine.h"
#include "agent/gpus.h"
#include "agent/reconcile.h"

namespace suanli::agent {

// What the host contributes to every container it runs.
struct ContainerHost {
  std::string node_id;          // the kNodeLabel value: the agent manages only its own containers
  std::string publish_address;  // ContainerSpec::publish_address; empty: all
  std::span<const Gpu> gpus;    // this host's inventory, borrowed for the call
  GpuAccess gpu_access = GpuAccess::kNone;  // how real GPUs reach a container
  int64_t pids_limit = 0;                   // ContainerSpec::pids_limit
  // Each pod on its owner's network (OwnerNetworkName), or all on the engine's default one.
  bool owner_networks = true;
  bool remap_user_namespace = false;  // ContainerSpec::remap_user_namespace
  // The shared backend's directory (AgentOptions::shared_volume_dir): a volume there is its
  // subdirectory named as the engine volume would be; "": the host has none.
  std::string shared_volume_dir{};
};

// The container for `desired`. `host_ports[i]` is the host port for `desired.pod.ports[i]`
// (REQUIRES: one per port; a mismatch is the agent's bug and crashes).
ContainerSpec BuildContainerSpec(const DesiredPod& desired, std::span<const int> host_ports,
                                 const ContainerHost& host);

// Where the volume `volume_id` ("vol_...") lives on a host whose shared backend is `shared_dir`.
std::string SharedVolumeDirectory(const std::string& shared_dir, const std::string& volume_id);

// The owner's public keys, one a line, as PUBLIC_KEY and ~/.ssh/authorized_keys carry them; empty
// when the owner has none.
std::string AuthorizedKeys(const DesiredPod& desired);

}  // namespace suanli::agent
