#include "agent/disk_quota.h"

#include <sys/stat.h>

#include <system_error>

namespace suanli::agent {
namespace {

constexpr int64_t kGb = int64_t{1} << 30;

// "1.2 GB", to a tenth.
std::string GbText(int64_t bytes) {
  const int64_t tenths = (bytes * 10 + kGb / 2) / kGb;
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " GB";
}

}  // namespace

int64_t DirectoryBytes(const std::filesystem::path& directory) {
  namespace fs = std::filesystem;
  int64_t total = 0;
  std::error_code ec;
  for (fs::recursive_directory_iterator
           it(directory, fs::directory_options::skip_permission_denied, ec),
       end;
       !ec && it != end; it.increment(ec)) {
    struct stat info {};
    // lstat: a link counts its own few bytes, never its target's (which may be outside).
    if (::lstat(it->path().c_str(), &info) != 0) continue;
    total += static_cast<int64_t>(info.st_blocks) * 512;
  }
  return total;
}

std::string OverDiskSize(const core::Pod& pod, const DiskUse& use) {
  if (pod.volume_gb > 0 && use.volume_bytes > pod.volume_gb * kGb) {
    return "wrote " + GbText(use.volume_bytes) + " to its " + std::to_string(pod.volume_gb) +
           " GB volume (" + pod.volume_mount_path +
           "), so it was stopped; start it and delete files, or deploy it again with a larger "
           "--volume-gb";
  }
  for (const core::VolumeMount& mount : pod.volumes) {
    const auto bytes = use.mounted_bytes.find(mount.volume_id);
    if (mount.read_only || mount.size_gb <= 0 || bytes == use.mounted_bytes.end() ||
        bytes->second <= mount.size_gb * kGb) {
      continue;
    }
    return "wrote " + GbText(bytes->second) + " to volume " + mount.volume_id + " (" +
           mount.mount_path + "), past its " + std::to_string(mount.size_gb) +
           " GB, so it was stopped; make the volume larger (suanli volumes resize " +
           mount.volume_id + " --size N) and start the pod again";
  }
  if (pod.container_disk_gb > 0 && use.container_bytes > pod.container_disk_gb * kGb) {
    return "wrote " + GbText(use.container_bytes) + " to its " +
           std::to_string(pod.container_disk_gb) + " GB container disk, so it was stopped; keep " +
           "large files on its volume" +
           (pod.volume_mount_path.empty() ? "" : " (" + pod.volume_mount_path + ")") +
           ", or deploy it again with a larger --disk-gb";
  }
  return "";
}

}  // namespace suanli::agent
