// Edit distance for "did you mean": the number of single-character insertions, deletions,
// substitutions and swaps of two neighbours ("4900" for "4090") that turn one name into another.
//
// Written here because names are a few characters long and no Debian C++ library offers it without
// pulling in far more.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace suanli::core {

// The number of single-character insertions, deletions, substitutions and swaps of two neighbours
// ("4900" for "4090") that turn one name into another. Written here because names are a few
// characters long and no Debian C++ library offers it without pulling in far more.
size_t EditDistance(std::string_view a, std::string_view b);

// For "did you mean": the things whose closest key is a plausible typo of `query` (within a third
// of its length, and at least two edits), closest first (and among equally close, those with the
// query's very letters, a swap, first), at most `most`. `keys` pairs each known
// key with the index, below `count`, of the thing it names (a thing may have several keys: its name
// and aliases).
std::vector<size_t> ClosestMatches(std::string_view query,
                                   const std::vector<std::pair<std::string_view, size_t>>& keys,
                                   size_t count, size_t most = 3);

// "a, b or c" with last_separator " or "; "a" alone; "" for none.
std::string JoinChoices(const std::vector<std::string>& names, std::string_view last_separator);

}  // namespace suanli::core
