// Money: an amount of US dollars as integer micro-dollars, never floating point.
//
// Prices, charges and balances add up exactly: 0.74 $/h is 740'000 micro-dollars per hour, and one
// second of it is 205.56 micro-dollars, rounded once where billing says so. Parsing goes from the
// decimal text, so "0.74" is exact; ToDouble() is only for ratios and display.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace suanli::core {

class Money {
 public:
  static constexpr int64_t kMicrosPerDollar = 1'000'000;
  // The one limit for money, either way: $1e12. Every amount the API takes, every balance, price
  // and cost the server keeps, and every amount the store reads back is within it (wire::JsonFields
  // ::Micros), so that nothing the server accepts can be refused when it reads it again. Far below
  // int64's 9.2e18 micro-dollars, so that a balance plus any one amount cannot wrap.
  static constexpr int64_t kMaxMicros = 1'000'000'000'000'000'000;

  constexpr Money() = default;
  static constexpr Money FromMicros(int64_t micros) { return Money(micros); }

  // Parses "12", "0.74", "-3.5", "1599.00" (at most 6 decimals; no exponent, no thousands
  // separators). INVALID_ARGUMENT for anything else or a value beyond ±kMaxMicros ($1e12).
  static Result<Money> ParseDollars(std::string_view text);

  constexpr int64_t micros() const { return micros_; }
  double ToDollars() const { return static_cast<double>(micros_) / kMicrosPerDollar; }

  // "$0.74", "$1.00", "$329", "$1,599.50", "$0.000206": every digit down to the micro-dollar that
  // is not a trailing zero, and always cents below $100.
  std::string ToString() const;

  // For estimates, where micro-dollars are noise: cents from $1 up ("$3.70"), four decimals below
  // ("$0.3386"), rounded half away from zero.
  std::string ToRoundedString() const;

  // Saturate at the int64 limits instead of wrapping (signed overflow is undefined, and a wrapped
  // sum turns a rich balance into a debt): sums that can meet a limit are checked before, as
  // AddToBalance does; saturation is the floor under the ones nobody expects to get near it.
  constexpr Money operator+(Money other) const {
    int64_t sum = 0;
    if (__builtin_add_overflow(micros_, other.micros_, &sum)) {
      return Money(other.micros_ > 0 ? INT64_MAX : INT64_MIN);
    }
    return Money(sum);
  }
  constexpr Money operator-(Money other) const {
    int64_t difference = 0;
    if (__builtin_sub_overflow(micros_, other.micros_, &difference)) {
      return Money(other.micros_ < 0 ? INT64_MAX : INT64_MIN);
    }
    return Money(difference);
  }
  // `balance` + `amount`; FAILED_PRECONDITION naming the limit when the sum would leave
  // ±kMaxMicros.
  static Result<Money> AddToBalance(Money balance, Money amount);
  constexpr auto operator<=>(const Money&) const = default;

 private:
  constexpr explicit Money(int64_t micros) : micros_(micros) {}
  int64_t micros_ = 0;
};

}  // namespace suanli::core
