// Tar archives in memory, for the Docker Engine API's archive endpoint (PUT
// /containers/{id}/archive), which is how the agent puts files such as authorized_keys into a
// pod's volume without a shell in the container. Written with libarchive (Debian's libarchive-dev)
// rather than by hand: headers, checksums and padding are its job.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace suanli::agent {

struct TarEntry {
  std::string path;  // relative, e.g. ".ssh/authorized_keys"; a directory's ends without '/'
  bool directory = false;
  int mode = 0644;      // permission bits only
  std::string content;  // files only
  int uid = 0;
  int gid = 0;

  static TarEntry Directory(std::string path, int mode) {
    TarEntry entry;
    entry.path = std::move(path);
    entry.directory = true;
    entry.mode = mode;
    return entry;
  }
  static TarEntry File(std::string path, int mode, std::string content) {
    TarEntry entry;
    entry.path = std::move(path);
    entry.mode = mode;
    entry.content = std::move(content);
    return entry;
  }
};

// A ustar archive of `entries`, in order (a directory before what it holds). INVALID_ARGUMENT for
// an empty, absolute or ".." path; INTERNAL if libarchive fails.
core::Result<std::string> MakeTar(const std::vector<TarEntry>& entries);

// The entries of a ustar archive (for tests and for checking what an engine hands back).
core::Result<std::vector<TarEntry>> ReadTar(const std::string& archive);

}  // namespace suanli::agent
