#include "agent/container_spec.h"

#include <algorithm>
#include <map>
#include <utility>

#include "core/check.h"

namespace suanli::agent {
namespace {

// A share of one device: the pod is told its part, and CUDA MPS is told to hold it to that part
// where the host runs an MPS control daemon (docs/agent.md: MPS applies the limits per client
// process; without the daemon the variables are inert and the share is an agreement the
// scheduler keeps, as on a simulated GPU). The device's memory is split in the same proportion. A
// MIG slice is a device of `capacity_milli`: the pod's part of the GPU is its part of the slice.
void AddShareLimits(int gpu_milli, int capacity_milli, double memory_gb, ContainerSpec& spec) {
  spec.env.emplace_back("SUANLI_GPU_SHARE", core::MilliGpuText(gpu_milli));
  const double of_device = std::min(1.0, static_cast<double>(gpu_milli) / capacity_milli);
  const int64_t memory_mib = static_cast<int64_t>(memory_gb * 1024 * of_device);
  spec.env.emplace_back("SUANLI_GPU_MEMORY_MIB", std::to_string(memory_mib));
  spec.env.emplace_back("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                        std::to_string(std::max(1, static_cast<int>(of_device * 100))));
  // Device 0 of the container: the one device a share has.
  spec.env.emplace_back("CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",
                        "0=" + std::to_string(memory_mib) + "M");
}

// Only the pod's GPUs reach it. The server hands out indices this node reported, so each is in the
// inventory; one that is not still appears in SUANLI_GPUS and as a CDI id (which the engine then
// refuses), and is left out of the device requests, which go by UUID.
void AddGpus(const core::Pod& pod, const ContainerHost& host, ContainerSpec& spec) {
  std::vector<std::string> uuids;
  std::vector<std::string> cdi_names;
  std::string indices;
  bool simulated = false;
  double memory_gb = 0;
  int capacity_milli = core::kMilliGpu;
  std::string mig_profile;
  for (int index : pod.gpu_indices) {
    // The CDI name of a GPU is NVML's index unless it is a MIG slice ("0:1").
    std::string cdi_name = std::to_string(index);
    for (const Gpu& gpu : host.gpus) {
      if (gpu.index != index) continue;
      uuids.push_back(gpu.uuid);
      if (!gpu.cdi_name.empty()) cdi_name = gpu.cdi_name;
      simulated = simulated || gpu.simulated;
      memory_gb = gpu.memory_gb;
      capacity_milli = gpu.capacity_milli;
      mig_profile = gpu.mig_profile;
    }
    cdi_names.push_back(std::move(cdi_name));
    indices += (indices.empty() ? "" : ",") + std::to_string(index);
  }
  if (uuids.empty()) return;
  spec.env.emplace_back("SUANLI_GPUS", indices);
  if (!mig_profile.empty()) spec.env.emplace_back("SUANLI_GPU_MIG_PROFILE", mig_profile);
  if (pod.gpu_milli < core::kMilliGpu) {
    AddShareLimits(pod.gpu_milli, capacity_milli, memory_gb, spec);
  }
  if (simulated) {
    // So that software which reads the variables behaves, and knows.
    spec.env.emplace_back("SUANLI_GPUS_SIMULATED", "1");
    spec.env.emplace_back("NVIDIA_VISIBLE_DEVICES", "void");
    return;
  }
  spec.gpu_access = host.gpu_access;
  if (host.gpu_access == GpuAccess::kCdi) {
    spec.gpu_ids = std::move(cdi_names);
  } else {
    spec.gpu_ids = std::move(uuids);
  }
}

}  // namespace

std::string SharedVolumeDirectory(const std::string& shared_dir, const std::string& volume_id) {
  // Trailing slashes off, so that the bind's source is a clean path.
  std::string_view base = shared_dir;
  while (base.size() > 1 && base.back() == '/') base.remove_suffix(1);
  return std::string(base) + "/" + VolumeName(volume_id);
}

std::string AuthorizedKeys(const DesiredPod& desired) {
  std::string keys;
  for (const std::string& key : desired.ssh_keys) keys += key + "\n";
  return keys;
}

ContainerSpec BuildContainerSpec(const DesiredPod& desired, std::span<const int> host_ports,
                                 const ContainerHost& host) {
  const core::Pod& pod = desired.pod;
  SUANLI_CHECK(host_ports.size() == pod.ports.size(),
               "BuildContainerSpec needs one host port per pod port");
  ContainerSpec spec;
  spec.name = ContainerName(pod.id);
  spec.image = pod.image;
  spec.command = pod.command;
  spec.labels = {{std::string(kPodLabel), pod.id},
                 {std::string(kRestartsLabel), std::to_string(pod.restarts)},
                 {std::string(kNodeLabel), host.node_id}};
  // suanli's variables: in the container's env, and usable as ${NAME} in the pod's env and command
  // (templates pass JUPYTER_TOKEN to Jupyter that way).
  std::map<std::string, std::string> variables{{"SUANLI_POD_ID", pod.id}};
  if (!pod.jupyter_token.empty()) variables["JUPYTER_TOKEN"] = pod.jupyter_token;
  if (std::string keys = AuthorizedKeys(desired); !keys.empty()) {
    variables["PUBLIC_KEY"] = std::move(keys);
  }
  for (size_t i = 0; i < pod.ports.size(); ++i) {
    const int container_port = pod.ports[i].container_port;
    // The engine knows only tcp; an "http" port is a tcp port that the probe speaks HTTP to.
    spec.ports.push_back({container_port, host_ports[i], "tcp"});
    variables["SUANLI_PORT_" + std::to_string(container_port)] = std::to_string(host_ports[i]);
  }
  std::map<std::string, std::string> command_variables = variables;
  for (const auto& [key, value] : pod.env) {
    spec.env.emplace_back(key, ExpandVariables(value, variables));
    command_variables[key] = spec.env.back().second;
  }
  for (const auto& [key, value] : variables) {
    if (!pod.env.contains(key)) spec.env.emplace_back(key, value);
  }
  for (std::string& argument : spec.command) {
    argument = ExpandVariables(argument, command_variables);
  }
  spec.publish_address = host.publish_address;
  if (host.owner_networks) spec.network = OwnerNetworkName(pod.owner_id);
  spec.nano_cpus = static_cast<int64_t>(pod.vcpu) * 1'000'000'000;
  spec.memory_bytes = static_cast<int64_t>(pod.memory_gb) << 30;
  spec.pids_limit = host.pids_limit;
  spec.remap_user_namespace = host.remap_user_namespace;
  if (pod.volume_gb > 0 && !pod.volume_mount_path.empty()) {
    spec.volume_name = VolumeName(pod.id);
    spec.volume_mount_path = pod.volume_mount_path;
  }
  for (const core::VolumeMount& mount : pod.volumes) {
    spec.more_volumes.push_back(
        {VolumeName(mount.volume_id), mount.mount_path, mount.read_only,
         mount.shared ? SharedVolumeDirectory(host.shared_volume_dir, mount.volume_id) : ""});
  }
  AddGpus(pod, host, spec);
  return spec;
}

}  // namespace suanli::agent
