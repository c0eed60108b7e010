// CLI11 validators for flags whose bad values must fail with a clear message, not a silent default.
#pragma once

#include <CLI/CLI.hpp>

namespace suanli::cli {

// A finite number >= 0 ("24", "0.5"); refuses "abc", "-1", "nan", "inf".
CLI::Validator NonNegativeNumber();

// A finite number > 0.
CLI::Validator PositiveNumber();

}  // namespace suanli::cli
