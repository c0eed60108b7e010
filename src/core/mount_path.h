// Where a pod's volume may be mounted inside its container.
//
// The path reaches the engine as part of a bind ("volume:/path"), so a ':' or ',' in it would add
// bind options (/data:ro made a read-only bind), and a volume mounted over a system directory
// (/, /etc, /proc, /usr/lib ...) hides or replaces what the image needs to run, or the kernel's
// views the runtime sets up. The server checks every pod and template; the agent checks again
// before it asks the engine.
#pragma once

#include <string_view>

#include "core/status.h"

namespace suanli::core {

inline constexpr size_t kMaxMountPathLength = 200;  // bytes

// OK for a clean absolute path ("/workspace", "/data/models") outside the system directories;
// INVALID_ARGUMENT naming `field` and what is wrong otherwise.
Status CheckMountPath(std::string_view path, std::string_view field = "volume_mount_path");

}  // namespace suanli::core
