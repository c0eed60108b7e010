#include "cli/flags.h"

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

CLI::Validator NonNegativeNumber() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::optional<double> value = ParseFinite(text);
        if (!value.has_value() || *value < 0)
          return "'" + text + "' must be a number of 0 or more, such as 24";
        return "";
      },
      "NUMBER>=0");
}

CLI::Validator PositiveNumber() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        std::optional<double> value = ParseFinite(text);
        if (!value.has_value() || *value <= 0)
          return "'" + text + "' must be a number above 0, such as 1.5";
        return "";
      },
      "NUMBER>0");
}

}  // namespace suanli::cli
