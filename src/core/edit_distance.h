// Edit distance for "did you mean": the number of single-character insertions, deletions,
// substitutions and swaps of two neighbours ("4900" for "4090") that turn one name into another.
//
// Written here because names are a few characters long and no Debian C++ library offers it without
// pulling in far more.
#pragma once

#include <cstddef>
#include <string_view>

namespace suanli::core {

size_t EditDistance(std::string_view a, std::string_view b);

}  // namespace suanli::core
