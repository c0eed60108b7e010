#include "core/clock.h"

namespace suanli::core {

// The only read of the real time in suanli (STYLE.md, rule 6).
TimePoint SystemClock::Now() const { return std::chrono::system_clock::now(); }

}  // namespace suanli::core
