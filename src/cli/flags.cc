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

}  // namespace

CLI::Validator NonNegativeNumber(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        std::optional<double> value = ParseFinite(text);
        if (!value.has_value() || *value < 0 || *value > max) {
          return "'" + text + "' must be a number from 0 to " + fmt::format("{:g}", max) +
                 ", such as 24";
        }
        return "";
      },
      "NUMBER>=0");
}

CLI::Validator PositiveNumber(double max) {
  return CLI::Validator(
      [max](std::string& text) -> std::string {
        std::optional<double> value = ParseFinite(text);
        if (!value.has_value() || *value <= 0 || *value > max) {
          return "'" + text + "' must be a number above 0 and at most " + fmt::format("{:g}", max) +
                 ", such as 1.5";
        }
        return "";
      },
      "NUMBER>0");
}

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
