// SUANLI_CHECK: an invariant of our own code that must hold in every build, release included.
//
// A failed check is a bug in suanli, so the process stops loudly with the reason rather than go on
// with corrupt state (a double-billed second is worse than a crash). Never check what the outside
// world controls (requests, files, Docker or NVML answers): that is a Status.
#pragma once

#include <string_view>

namespace suanli::core {

// Not std::source_location: clang 14 (Debian 12's, which clang-tidy uses) cannot compile it.
[[noreturn]] void CheckFailed(std::string_view condition, std::string_view reason, const char* file,
                              int line);

}  // namespace suanli::core

#define SUANLI_CHECK(condition, reason)                                      \
  do {                                                                       \
    if (!(condition)) [[unlikely]]                                           \
      ::suanli::core::CheckFailed(#condition, (reason), __FILE__, __LINE__); \
  } while (false)
