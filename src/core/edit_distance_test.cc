#include "core/edit_distance.h"

#include <gtest/gtest.h>

namespace suanli::core {
namespace {

TEST(EditDistanceTest, CountsInsertionsDeletionsSubstitutionsAndSwaps) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("rtx4090", "rtx4090"), 0u);
  EXPECT_EQ(EditDistance("rtx4900", "rtx4090"), 1u);  // a swap of neighbours is one edit
  EXPECT_EQ(EditDistance("rtx409", "rtx4090"), 1u);
  EXPECT_EQ(EditDistance("rtx4080", "rtx4090"), 1u);
  EXPECT_EQ(EditDistance("llama2", "lama2"), 1u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
}

}  // namespace
}  // namespace suanli::core
