// Reading a whole file, as the CLI does for operator data files.
#pragma once

#include <string>

#include "core/status.h"

namespace suanli::cli {

// NOT_FOUND when `path` does not exist; INVALID_ARGUMENT when it is a directory or unreadable, or
// larger than `max_bytes` (a price file is a few kilobytes; a huge one is a mistake, not data).
core::Result<std::string> ReadFile(const std::string& path, size_t max_bytes = 16 << 20);

// Writes `text` as `path` atomically (a temporary file, synced, then renamed), mode 0600, in a
// directory made 0700 if need be (it holds a token or host keys: the user's alone, as ~/.ssh).
// INTERNAL with the path and errno's text when the disk refuses.
core::Status WritePrivateFile(const std::string& path, const std::string& text);

}  // namespace suanli::cli
