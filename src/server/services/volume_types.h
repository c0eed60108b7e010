// What callers of the control plane send and get back about volumes of their own and their
// snapshots.
#pragma once

#include <string>

#include "core/domain.h"
#include "wire/views.h"

namespace suanli::server {

// A volume as its owner creates it: empty, or restored from one of their snapshots (by id or
// name; size_gb 0 then takes the snapshot's volume's size).
struct VolumeSpec {
  std::string name;
  int size_gb = 0;
  std::string from_snapshot;
  bool shared = false;  // on the shared backend (home kAnyNode) rather than on the first pod's node
  // A project (id or name) the caller is a member of: the volume is the project's, mounted by its
  // pods and billed to its owner. "": the caller's own.
  std::string project{};
};

// A snapshot as its owner asks for it: of their volume `volume` (id or name), named `name` (""
// for "<volume>-<UTC time>").
struct SnapshotSpec {
  std::string volume;
  std::string name;
};

// A volume as shown: itself and who uses it (wire::VolumeView).
struct VolumeInfo {
  core::Volume volume;
  wire::VolumeUse use;
};

}  // namespace suanli::server
