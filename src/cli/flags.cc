#include "cli/flags.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <optional>

namespace suanli::cli {
namespace {

std::optional<double> ParseFinite(const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, value);
  if (error != std::errc() || stop != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A finite number within bounds; `zero_allowed` decides whether the lower bound 0 is included.
CLI::Validator FiniteNumber(bool zero_allowed, double max) {
  return CLI::Validator(
      [zero_allowed, max](std::string& text) -> std::string {
        std::optional<double> value = ParseFinite(text);
        const bool low = value.has_value() && (zero_allowed ? *value >= 0 : *value > 0);
        if (!low || *value > max) {
          return "'" + text + "' must be a number " +
                 (zero_allowed ? "from 0 to " : "above 0 and at most ") + fmt::format("{:g}", max) +
                 (zero_allowed ? ", such as 24" : ", such as 1.5");
        }
        return "";
      },
      zero_allowed ? "NUMBER>=0" : "NUMBER>0");
}

}  // namespace

CLI::Validator NonNegativeNumber(double max) { return FiniteNumber(true, max); }

CLI::Validator PositiveNumber(double max) { return FiniteNumber(false, max); }

CLI::Validator PositiveInteger(long max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        long value = 0;
        const char* end = text.data() + text.size();
        auto [stop, error] = std::from_chars(text.data(), end, value);
        if (error != std::errc() || stop != end || value < 1 || value > max) {
          return "'" + text + "' must be a whole number from 1 to " + std::to_string(max) +
                 ", such as 8";
        }
        return "";
      },
      "INTEGER>0");
}

}  // namespace suanli::cli
