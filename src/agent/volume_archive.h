// Volume archives: a volume's files as one tar file with its SHA-256, made on the node that holds
// the volume and unpacked on the node it moves to (docs/architecture.md, "Moving a volume").
//
// Files on disk, never in memory: a volume may hold hundreds of gigabytes. The archive is pax
// (no size or name limits), holds the tree below the volume's directory (not the directory
// itself) with modes, owners, times and symlinks as they are (never followed). Written with
// libarchive, as tar.h is, and OpenSSL for the checksum.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/status.h"

namespace suanli::agent {

struct ArchiveInfo {
  int64_t size = 0;    // bytes of the archive file
  std::string sha256;  // hex, of the whole file

  friend bool operator==(const ArchiveInfo&, const ArchiveInfo&) = default;
};

// Archives the tree below `dir` into `archive` (written beside it first, then renamed, so a file
// at `archive` is always whole). NOT_FOUND when `dir` does not exist; UNAVAILABLE when the files
// cannot be read or written.
core::Result<ArchiveInfo> MakeVolumeArchive(const std::filesystem::path& dir,
                                            const std::filesystem::path& archive);

// Replaces what `dir` holds with the archive's tree, keeping modes, owners (when run as root) and
// times. An entry that is absolute, climbs with "..", or would be written through a symlink is
// refused (INVALID_ARGUMENT): the archive comes from another node, its contents from a user.
core::Status UnpackVolumeArchive(const std::filesystem::path& archive,
                                 const std::filesystem::path& dir);

// The SHA-256 (hex) and size of `file`.
core::Result<ArchiveInfo> DigestFile(const std::filesystem::path& file);

}  // namespace suanli::agent
