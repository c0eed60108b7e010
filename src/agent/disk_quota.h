// A pod's disk sizes (its container disk and its volume, in GB as the renter asked for them) held
// by measuring what it wrote, the same on every engine: Docker's and Podman's `--storage-opt size`
// works only on overlay over XFS with project quotas (or devicemapper, btrfs, zfs), which few GPU
// hosts have, and named volumes have no size at all. The agent measures every running pod now and
// then (docs/agent.md) and stops one past a size, with the reason as its state's. Pure but for
// DirectoryBytes, which reads the file system.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "core/domain.h"

namespace suanli::agent {

struct DiskUse {
  int64_t container_bytes = 0;  // the container's writable layer (the engine's SizeRw)
  int64_t volume_bytes = 0;     // the files of the pod's own volume
  // The files of each volume of its owner's (suanli volumes) it mounts read-write, by volume id.
  std::map<std::string, int64_t> mounted_bytes;
};

// The bytes the files under `directory` take on disk (allocated blocks: a sparse file counts what
// it holds). Symbolic links are not followed; what cannot be read (a file removed meanwhile) is
// left out.
int64_t DirectoryBytes(const std::filesystem::path& directory);

// Why `pod` is past a size it asked for ("wrote 1.2 GB to its 1 GB volume (/workspace)..."), with
// what the renter can do; "" within them. A GB is 2^30 bytes here, as the pod's memory_gb: the
// generous reading of what was paid for.
std::string OverDiskSize(const core::Pod& pod, const DiskUse& use);

}  // namespace suanli::agent
