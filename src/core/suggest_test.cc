#include "core/suggest.h"

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

TEST(JoinChoicesTest, ListsNamesWithTheLastSeparator) {
  EXPECT_EQ(JoinChoices({}, " or "), "");
  EXPECT_EQ(JoinChoices({"RTX 4090"}, " or "), "RTX 4090");
  EXPECT_EQ(JoinChoices({"a", "b", "c"}, " or "), "a, b or c");
}

}  // namespace
}  // namespace suanli::core
