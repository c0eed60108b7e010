#include "core/money.h"

namespace suanli::core {

Result<Money> Money::ParseDollars(std::string_view text) {
  const std::string original(text);
  auto bad = [&original](std::string_view why) {
    return InvalidArgumentError("'" + original + "' is not an amount of dollars (" +
                                std::string(why) + "); write it like 0.74 or 1599");
  };
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  if (text.empty()) return bad("no digits");
  int64_t whole = 0;
  int64_t fraction = 0;
  int fraction_digits = 0;
  bool in_fraction = false;
  bool any_digit = false;
  for (char c : text) {
    if (c == '.') {
      if (in_fraction) return bad("two decimal points");
      in_fraction = true;
      continue;
    }
    if (c < '0' || c > '9') return bad("unexpected character");
    any_digit = true;
    const int digit = c - '0';
    if (in_fraction) {
      if (++fraction_digits > 6) return bad("more than 6 decimals");
      fraction = fraction * 10 + digit;
    } else {
      whole = whole * 10 + digit;
      if (whole > kMaxMicros / kMicrosPerDollar) return bad("beyond the limit of $1e12");
    }
  }
  if (!any_digit) return bad("no digits");
  for (int i = fraction_digits; i < 6; ++i) fraction *= 10;
  const int64_t micros = whole * kMicrosPerDollar + fraction;
  if (micros > kMaxMicros) return bad("beyond the limit of $1e12");
  return Money(negative ? -micros : micros);
}

Result<Money> Money::AddToBalance(Money balance, Money amount) {
  const Money sum = balance + amount;
  if (sum.micros_ > kMaxMicros || sum.micros_ < -kMaxMicros) {
    const Money limit(kMaxMicros);
    return FailedPreconditionError(
        "the balance would be " + sum.ToString() + ", beyond the limit of ±" + limit.ToString() +
        " a balance can hold; the balance is " + balance.ToString() + ", so give an amount from " +
        (Money(-kMaxMicros) - balance).ToString() + " to " + (limit - balance).ToString());
  }
  return sum;
}

std::string Money::ToRoundedString() const {
  const int64_t step = (micros_ >= kMicrosPerDollar || micros_ <= -kMicrosPerDollar) ? 10'000 : 100;
  const int64_t half = micros_ >= 0 ? step / 2 : -step / 2;
  const Money rounded((micros_ + half) / step * step);
  std::string text = rounded.ToString();
  // ToString trims trailing zeros; estimates read better with a fixed number of decimals.
  const size_t point = text.find('.');
  const size_t decimals = step == 10'000 ? 2 : 4;
  if (point == std::string::npos) return text + "." + std::string(decimals, '0');
  text.append(decimals - std::min(decimals, text.size() - point - 1), '0');
  return text;
}

std::string Money::ToString() const {
  const bool negative = micros_ < 0;
  const uint64_t magnitude =
      negative ? static_cast<uint64_t>(-(micros_ + 1)) + 1 : static_cast<uint64_t>(micros_);
  const uint64_t whole = magnitude / kMicrosPerDollar;
  uint64_t fraction = magnitude % kMicrosPerDollar;

  std::string whole_text = std::to_string(whole);
  std::string grouped;
  for (size_t i = 0; i < whole_text.size(); ++i) {
    if (i > 0 && (whole_text.size() - i) % 3 == 0) grouped += ',';
    grouped += whole_text[i];
  }
  std::string fraction_text;
  if (fraction != 0 || whole < 100) {
    fraction_text = std::to_string(fraction);
    fraction_text.insert(0, 6 - fraction_text.size(), '0');
    size_t keep = fraction_text.size();
    while (keep > 2 && fraction_text[keep - 1] == '0') --keep;
    fraction_text.resize(keep);
  }
  std::string text = negative ? "-$" : "$";
  text += grouped;
  if (!fraction_text.empty()) text += "." + fraction_text;
  return text;
}

}  // namespace suanli::core
