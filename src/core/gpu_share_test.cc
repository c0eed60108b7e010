#include "core/gpu_share.h"

#include <gtest/gtest.h>

namespace suanli::core {
namespace {

TEST(GpuShareTest, MilliGpusReadAsDecimalsWithoutTrailingZeros) {
  EXPECT_EQ(MilliGpuText(500), "0.5");
  EXPECT_EQ(MilliGpuText(250), "0.25");
  EXPECT_EQ(MilliGpuText(125), "0.125");
  EXPECT_EQ(MilliGpuText(1), "0.001");
  EXPECT_EQ(MilliGpuText(kMilliGpu), "1");
  EXPECT_EQ(MilliGpuText(8 * kMilliGpu), "8");
  EXPECT_EQ(MilliGpuText(2250), "2.25");
}

}  // namespace
}  // namespace suanli::core
