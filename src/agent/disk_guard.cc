#include "agent/disk_guard.h"

#include <utility>
#include <vector>

#include "agent/container_spec.h"
#include "agent/disk_quota.h"
#include "agent/reconcile.h"

namespace suanli::agent {

using core::Result;

void DiskGuard::Check() {
  std::vector<core::Pod> pods;
  for (const DesiredPod& entry : context_.Desired()) {
    if (entry.pod.desired == core::DesiredState::kRunning) pods.push_back(entry.pod);
  }
  Engine& engine = context_.engine();
  const std::string node = context_.node_id();
  for (const core::Pod& pod : pods) {
    Result<ContainerInfo> container = engine.Inspect(ContainerName(pod.id));
    if (!container.ok() || !container->running) continue;
    const auto on = container->labels.find(std::string(kNodeLabel));
    if (on == container->labels.end() || on->second != node) continue;
    DiskUse use;
    if (Result<int64_t> layer = engine.WritableLayerBytes(container->id); layer.ok()) {
      use.container_bytes = *layer;
    }
    if (pod.volume_gb > 0 && !pod.volume_mount_path.empty()) {
      if (Result<std::string> directory = engine.VolumeDirectory(VolumeName(pod.id));
          directory.ok()) {
        use.volume_bytes = DirectoryBytes(*directory);
      }
    }
    for (const core::VolumeMount& mount : pod.volumes) {
      if (mount.read_only || mount.size_gb <= 0) continue;
      if (mount.shared) {
        use.mounted_bytes[mount.volume_id] = DirectoryBytes(
            SharedVolumeDirectory(context_.options().shared_volume_dir.string(), mount.volume_id));
      } else if (Result<std::string> directory =
                     engine.VolumeDirectory(VolumeName(mount.volume_id));
                 directory.ok()) {
        use.mounted_bytes[mount.volume_id] = DirectoryBytes(*directory);
      }
    }
    std::string why = OverDiskSize(pod, use);
    if (why.empty()) continue;
    context_.Log(pod.id + " " + why);
    {
      core::MutexLock lock(context_.mutex());
      stops_[container->id] = std::move(why);
    }
    if (core::Status stopped = engine.Stop(container->id, context_.options().stop_grace);
        !stopped.ok()) {
      context_.NoteEngine(stopped);
    }
    context_.Poke();  // the reconcile loop reports the exit now, not in 2 s
  }
}

std::optional<std::string> DiskGuard::TakeStopReason(const std::string& container_id) {
  core::MutexLock lock(context_.mutex());
  const auto stop = stops_.find(container_id);
  if (stop == stops_.end()) return std::nullopt;
  std::string why = std::move(stop->second);
  stops_.erase(stop);
  return why;
}

}  // namespace suanli::agent
