#include "core/suggest.h"

#include <algorithm>
#include <cstdint>
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
  std::vector<std::pair<size_t, size_t>> distance_and_index(count, {SIZE_MAX, 0});
  for (const auto& [key, index] : keys) {
    distance_and_index[index] =
        std::min(distance_and_index[index], std::pair(EditDistance(query, key), index));
  }
  std::sort(distance_and_index.begin(), distance_and_index.end());
  std::vector<size_t> closest;
  for (const auto& [distance, index] : distance_and_index) {
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
