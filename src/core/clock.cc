#include "core/clock.h"

#include <cstdio>
#include <ctime>
#include <string>

namespace suanli::core {

// The only read of the real time in suanli (STYLE.md, rule 6).
TimePoint SystemClock::Now() const { return std::chrono::system_clock::now(); }
MonotonicTime MonotonicNow() { return std::chrono::steady_clock::now(); }

TimePoint TruncateToMillis(TimePoint time) {
  return TimePoint(std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()));
}

std::string FormatTime(TimePoint time) {
  const int64_t millis =
      std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
  int64_t seconds = millis / 1000;
  int64_t fraction = millis % 1000;
  if (fraction < 0) {
    fraction += 1000;
    seconds -= 1;
  }
  const auto as_time_t = static_cast<std::time_t>(seconds);
  std::tm parts{};
  gmtime_r(&as_time_t, &parts);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", parts.tm_year + 1900,
                parts.tm_mon + 1, parts.tm_mday, parts.tm_hour, parts.tm_min, parts.tm_sec,
                static_cast<int>(fraction));
  return text;
}

namespace {
constexpr int kMinYear = 1970;
constexpr int kMaxYear = 2200;
}  // namespace

Result<TimePoint> ParseTime(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS[.fff]Z, UTC only: the API writes no other form.
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  int consumed = 0;
  const std::string copy(text);
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%n", &year, &month, &day, &hour, &minute,
                  &second, &consumed) != 6 ||
      month < 1 || month > 12 || day < 1 || day > 31 || hour < 0 || hour > 23 || minute < 0 ||
      minute > 59 || second < 0 || second > 60) {
    return InvalidArgumentError("'" + copy + "' is not a UTC time like 2026-12-02T14:46:25.123Z");
  }
  // A TimePoint counts nanoseconds in 64 bits: it ends in 2262 (found by fuzzing: a year of 9026
  // overflowed the conversion).
  if (year < kMinYear || year > kMaxYear) {
    return InvalidArgumentError("'" + copy + "': the year must be " + std::to_string(kMinYear) +
                                " to " + std::to_string(kMaxYear));
  }
  std::string_view rest = text.substr(static_cast<size_t>(consumed));
  int64_t millis = 0;
  if (rest.starts_with('.')) {
    rest.remove_prefix(1);
    int digits = 0;
    while (!rest.empty() && rest.front() >= '0' && rest.front() <= '9') {
      if (digits < 3) millis = millis * 10 + (rest.front() - '0');
      ++digits;
      rest.remove_prefix(1);
    }
    if (digits == 0) return InvalidArgumentError("'" + copy + "': digits must follow '.'");
    for (int i = digits; i < 3; ++i) millis *= 10;
  }
  if (rest != "Z") {
    return InvalidArgumentError("'" + copy + "' must end in Z (UTC), e.g. " +
                                "2026-12-02T14:46:25.123Z");
  }
  std::tm parts{};
  parts.tm_year = year - 1900;
  parts.tm_mon = month - 1;
  parts.tm_mday = day;
  parts.tm_hour = hour;
  parts.tm_min = minute;
  parts.tm_sec = second;
  const int64_t seconds = timegm(&parts);
  return TimePoint(std::chrono::milliseconds(seconds * 1000 + millis));
}

}  // namespace suanli::core
