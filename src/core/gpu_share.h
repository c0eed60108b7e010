// GPU capacity in milli-GPUs: the unit of a pod's share of one device (0.5 GPU is 500), used by
// the scheduler, billing, the agent and the CLI alike.
#pragma once

#include <cstdint>
#include <string>

namespace suanli::core {

inline constexpr int kMilliGpu = 1000;  // one whole device

// As people read it, with no trailing zeros: 500 -> "0.5", 250 -> "0.25", 2000 -> "2".
std::string MilliGpuText(int64_t milli);

}  // namespace suanli::core
