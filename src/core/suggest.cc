#include "core/suggest.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

namespace suanli::core {

size_t EditDistance(std::string_view a, std::string_view b) {
  // Optimal string alignment: Levenshtein plus adjacent transpositions.
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min(
          {d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::vector<size_t> ClosestMatches(std::string_view query,
                                   const std::vector<std::pair<std::string_view, size_t>>& keys,
                                   size_t count, size_t most) {
  const size_t limit = std::max<size_t>(2, query.size() / 3);
  std::string sorted_query(query);
  std::sort(sorted_query.begin(), sorted_query.end());
  // Closest first; among equally close, a key with the query's very letters (a swap: "4900" for
  // "4090") before one with other letters ("4000").
  std::vector<std::tuple<size_t, bool, size_t>> rank(count, {SIZE_MAX, true, 0});
  for (const auto& [key, index] : keys) {
    std::string sorted_key(key);
    std::sort(sorted_key.begin(), sorted_key.end());
    rank[index] = std::min(rank[index],
                           std::tuple(EditDistance(query, key), sorted_key != sorted_query, index));
  }
  std::sort(rank.begin(), rank.end());
  std::vector<size_t> closest;
  for (const auto& [distance, other_letters, index] : rank) {
    if (distance > limit || closest.size() == most) break;
    closest.push_back(index);
  }
  return closest;
}

std::string JoinChoices(const std::vector<std::string>& names, std::string_view last_separator) {
  std::string text;
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) text += (i + 1 == names.size()) ? last_separator : std::string_view(", ");
    text += names[i];
  }
  return text;
}

}  // namespace suanli::core
