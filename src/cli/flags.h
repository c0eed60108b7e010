// CLI11 validators for flags whose bad values must fail with a clear message, not a silent default.
#pragma once

#include <CLI/CLI.hpp>

namespace suanli::cli {

// A finite number >= 0 and <= max ("24", "0.5"); refuses "abc", "-1", "nan", "inf".
CLI::Validator NonNegativeNumber(double max = 1e15);

// A finite number > 0 and <= max. The bound keeps absurd amounts ("1e300 tokens") out of the
// arithmetic: an answer about them would be noise.
CLI::Validator PositiveNumber(double max = 1e15);

// A whole number from 1 to max ("8"); refuses "1.5", "0", "-3".
CLI::Validator PositiveInteger(long max = 1 << 24);

}  // namespace suanli::cli
