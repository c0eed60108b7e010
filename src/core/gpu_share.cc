#include "core/gpu_share.h"

namespace suanli::core {

std::string MilliGpuText(int64_t milli) {
  std::string text = std::to_string(milli / kMilliGpu);
  if (const int64_t rest = milli % kMilliGpu; rest != 0) {
    std::string digits = std::to_string(kMilliGpu + rest).substr(1);
    while (digits.back() == '0') digits.pop_back();
    text += "." + digits;
  }
  return text;
}

}  // namespace suanli::core
