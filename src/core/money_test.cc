#include "core/money.h"

#include <gtest/gtest.h>

namespace suanli::core {
namespace {

TEST(MoneyTest, ParsesDecimalDollarsExactly) {
  EXPECT_EQ(Money::ParseDollars("0.74")->micros(), 740'000);
  EXPECT_EQ(Money::ParseDollars("1599")->micros(), 1'599'000'000);
  EXPECT_EQ(Money::ParseDollars("2.000001")->micros(), 2'000'001);
  EXPECT_EQ(Money::ParseDollars("-3.5")->micros(), -3'500'000);
  EXPECT_EQ(Money::ParseDollars(".5")->micros(), 500'000);
}

TEST(MoneyTest, RefusesWhatIsNotAnAmount) {
  for (const char* text :
       {"", "-", "abc", "1.2.3", "1e3", "0.0000001", "1,599", "$5", ".", "99999999999999999999"}) {
    Result<Money> parsed = Money::ParseDollars(text);
    EXPECT_FALSE(parsed.ok()) << text;
    EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument) << text;
  }
}

TEST(MoneyTest, ParsesUpToTheOneLimitForMoney) {
  EXPECT_EQ(Money::ParseDollars("1000000000000")->micros(), Money::kMaxMicros);
  EXPECT_EQ(Money::ParseDollars("-1000000000000")->micros(), -Money::kMaxMicros);
  for (const char* text : {"1000000000000.000001", "1000000000001", "-1000000000000.5"}) {
    Result<Money> parsed = Money::ParseDollars(text);
    ASSERT_FALSE(parsed.ok()) << text;
    EXPECT_NE(parsed.status().message().find("limit of $1e12"), std::string::npos) << text;
  }
}

TEST(MoneyTest, PrintsDollarsForPeople) {
  EXPECT_EQ(Money::FromMicros(740'000).ToString(), "$0.74");
  EXPECT_EQ(Money::FromMicros(1'599'000'000).ToString(), "$1,599");
  EXPECT_EQ(Money::FromMicros(30'000'000'000).ToString(), "$30,000");
  EXPECT_EQ(Money::FromMicros(206).ToString(), "$0.000206");
  EXPECT_EQ(Money::FromMicros(-2'500'000).ToString(), "-$2.50");
  EXPECT_EQ(Money::FromMicros(0).ToString(), "$0.00");
  EXPECT_EQ(Money::FromMicros(1'000'000).ToString(), "$1.00");
  EXPECT_EQ(Money::FromMicros(329'000'000).ToString(), "$329");
  EXPECT_EQ(Money::FromMicros(1'599'500'000).ToString(), "$1,599.50");
}

TEST(MoneyTest, RoundsEstimatesToCentsOrFourDecimals) {
  EXPECT_EQ(Money::FromMicros(3'704'019).ToRoundedString(), "$3.70");
  EXPECT_EQ(Money::FromMicros(12'401'412).ToRoundedString(), "$12.40");
  EXPECT_EQ(Money::FromMicros(1'599'000'000).ToRoundedString(), "$1,599.00");
  EXPECT_EQ(Money::FromMicros(338'593).ToRoundedString(), "$0.3386");
  EXPECT_EQ(Money::FromMicros(5'000).ToRoundedString(), "$0.0050");
  EXPECT_EQ(Money::FromMicros(999'999).ToRoundedString(), "$1.0000");
}

TEST(MoneyTest, AddsAndComparesWithoutRounding) {
  Money sum;
  for (int i = 0; i < 3'600; ++i) sum = sum + Money::FromMicros(205);
  EXPECT_EQ(sum.micros(), 738'000);
  EXPECT_LT(Money::FromMicros(1), Money::FromMicros(2));
  EXPECT_EQ(sum - sum, Money());
}

TEST(MoneyTest, SumsSaturateInsteadOfWrapping) {
  const Money most = Money::FromMicros(INT64_MAX);
  const Money least = Money::FromMicros(INT64_MIN);
  EXPECT_EQ(most + Money::FromMicros(1), most);
  EXPECT_EQ(least + Money::FromMicros(-1), least);
  EXPECT_EQ(least - Money::FromMicros(1), least);
  EXPECT_EQ(most - Money::FromMicros(-1), most);
  EXPECT_EQ((most - Money::FromMicros(1)).micros(), INT64_MAX - 1);
}

TEST(MoneyTest, ABalanceStaysWithinItsLimitAndTheErrorNamesIt) {
  const Money limit = Money::FromMicros(Money::kMaxMicros);
  EXPECT_EQ(*Money::AddToBalance(limit - Money::FromMicros(5), Money::FromMicros(5)), limit);
  const Result<Money> over = Money::AddToBalance(limit, Money::FromMicros(1));
  ASSERT_EQ(over.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(over.status().message().find("beyond the limit of ±$1,000,000,000,000"),
            std::string::npos)
      << over.status().message();
  EXPECT_NE(over.status().message().find("to $0.00"), std::string::npos) << over.status().message();
  EXPECT_FALSE(Money::AddToBalance(Money() - limit, Money::FromMicros(-1)).ok());
  EXPECT_EQ(*Money::AddToBalance(Money() - limit, limit), Money());
}

}  // namespace
}  // namespace suanli::core
