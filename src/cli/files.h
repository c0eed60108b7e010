// Reading a whole file, as the CLI does for operator data files.
#pragma once

#include <string>

#include "core/status.h"

namespace suanli::cli {

// NOT_FOUND when `path` does not exist; INVALID_ARGUMENT when it is a directory or unreadable, or
// larger than `max_bytes` (a price file is a few kilobytes; a huge one is a mistake, not data).
core::Result<std::string> ReadFile(const std::string& path, size_t max_bytes = 16 << 20);

}  // namespace suanli::cli
