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

TEST(ClosestMatchesTest, FindsTyposClosestFirstAndNothingFarAway) {
  const std::vector<std::pair<std::string_view, size_t>> keys = {
      {"rtx4090", 0}, {"4090", 0}, {"rtx3090", 1}, {"rtx4080", 2}, {"a100", 3}};
  EXPECT_EQ(ClosestMatches("rtx4900", keys, 4), (std::vector<size_t>{0, 1, 2}));
  EXPECT_EQ(ClosestMatches("rtx4900", keys, 4, 1), (std::vector<size_t>{0}));
  EXPECT_TRUE(ClosestMatches("potato", keys, 4).empty());
  // One edit from both; the swap ("4900" has 4090's digits) comes first whatever the order.
  const std::vector<std::pair<std::string_view, size_t>> numbers = {{"4000", 0}, {"4090", 1}};
  EXPECT_EQ(ClosestMatches("4900", numbers, 2), (std::vector<size_t>{1, 0}));
}

TEST(JoinChoicesTest, ListsNamesWithTheLastSeparator) {
  EXPECT_EQ(JoinChoices({}, " or "), "");
  EXPECT_EQ(JoinChoices({"RTX 4090"}, " or "), "RTX 4090");
  EXPECT_EQ(JoinChoices({"a", "b", "c"}, " or "), "a, b or c");
}

}  // namespace
}  // namespace suanli::core
