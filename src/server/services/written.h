// Written: what the control plane answers a change with: the value, and when it may be
// acknowledged.
#pragma once

#include <cstdint>

namespace suanli::server {

// A change accepted in memory, and the commit sequence after which it may be acknowledged.
template <typename T>
struct Written {
  T value;
  uint64_t sequence = 0;
};

}  // namespace suanli::server
