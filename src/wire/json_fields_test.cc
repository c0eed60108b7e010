#include "wire/json_fields.h"

#include <gtest/gtest.h>

#include <boost/json/parse.hpp>

namespace suanli::wire {
namespace {

boost::json::object Object(std::string_view text) { return boost::json::parse(text).as_object(); }

TEST(JsonFieldsTest, ReadsEachKindOfField) {
  const boost::json::object body = Object(
      R"({"name":"a","count":3,"big":9000000000,"share":0.5,"on":true,"at":"2026-12-02T14:46:25.123Z",
          "list":["x","y"],"map":{"k":"v"},"price_micros":1500000})");
  JsonFields fields(body);
  std::string name;
  int count = 0;
  int64_t big = 0;
  double share = 0;
  bool on = false;
  core::TimePoint at;
  std::vector<std::string> list;
  std::map<std::string, std::string> map;
  core::Money price;
  fields.String("name", &name, {.required = true});
  fields.Int("count", &count, {1, 10});
  fields.Int64("big", &big, {0, INT64_MAX});
  fields.Number("share", &share, {0, 1});
  fields.Bool("on", &on);
  fields.Time("at", &at);
  fields.StringList("list", &list);
  fields.StringMap("map", &map);
  fields.Micros("price_micros", &price);
  ASSERT_TRUE(fields.Finish().ok()) << fields.Finish().message();
  EXPECT_EQ(name, "a");
  EXPECT_EQ(count, 3);
  EXPECT_EQ(big, 9'000'000'000);
  EXPECT_EQ(share, 0.5);
  EXPECT_TRUE(on);
  EXPECT_EQ(core::FormatTime(at), "2026-12-02T14:46:25.123Z");
  EXPECT_EQ(list, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(map.at("k"), "v");
  EXPECT_EQ(price.micros(), 1'500'000);
}

// One limit for money on the wire and in the store: what a credit may make a balance is what the
// store reads back (a balance past the store's old limit once made every restart fail).
TEST(JsonFieldsTest, MoneyReadsUpToTheOneLimitForMoney) {
  const std::string limit = std::to_string(core::Money::kMaxMicros);
  const boost::json::object at_limit = Object(R"({"a":)" + limit + R"(,"b":-)" + limit + "}");
  JsonFields fields(at_limit);
  core::Money a, b;
  fields.Micros("a", &a);
  fields.Micros("b", &b, {.allow_negative = true});
  ASSERT_TRUE(fields.Finish().ok()) << fields.Finish().message();
  EXPECT_EQ(a.micros(), core::Money::kMaxMicros);
  EXPECT_EQ(b.micros(), -core::Money::kMaxMicros);
  const boost::json::object past =
      Object(R"({"a":)" + std::to_string(core::Money::kMaxMicros + 1) + "}");
  JsonFields too_much(past);
  too_much.Micros("a", &a, {.allow_negative = true});
  EXPECT_FALSE(too_much.Finish().ok());
}

TEST(JsonFieldsTest, TheFirstErrorNamesItsFieldAndWins) {
  const boost::json::object body = Object(R"({"count":-1,"name":7})");
  JsonFields fields(body);
  int count = 5;
  std::string name = "kept";
  fields.Int("count", &count, {1, 64});
  fields.String("name", &name);
  EXPECT_EQ(fields.Finish().message(), "count: must be an integer from 1 to 64, got -1");
  EXPECT_EQ(count, 5);  // unchanged when invalid
  EXPECT_EQ(name, "kept");
}

TEST(JsonFieldsTest, RefusesUnknownFieldsUnlessToldToIgnoreThem) {
  const boost::json::object body = Object(R"({"name":"a","gpu":"4090"})");
  std::string name;
  JsonFields strict(body);
  strict.String("name", &name);
  EXPECT_EQ(strict.Finish().message(), "unknown field 'gpu'; known fields: name");
  JsonFields lenient(body, UnknownFields::kIgnore);
  lenient.String("name", &name);
  EXPECT_TRUE(lenient.Finish().ok());
}

TEST(JsonFieldsTest, RequiredFieldsAndLengthLimits) {
  const boost::json::object body = Object(R"({"name":"abcdef"})");
  std::string name, other;
  JsonFields fields(body);
  fields.String("name", &name, {.max_length = 3});
  EXPECT_EQ(fields.Finish().message(), "name: is 6 characters long; at most 3 are allowed");
  JsonFields missing(body);
  missing.String("name", &name);
  missing.String("other", &other, {.required = true});
  EXPECT_EQ(missing.Finish().message(), "other: is required");
}

TEST(JsonFieldsTest, OptionalFieldsStayEmptyWhenAbsent) {
  const boost::json::object body = Object(R"({"ready":false})");
  std::optional<bool> ready;
  std::optional<int> exit_code;
  JsonFields fields(body);
  fields.OptionalBool("ready", &ready);
  fields.OptionalInt("exit_code", &exit_code, {-1, 255});
  ASSERT_TRUE(fields.Finish().ok());
  EXPECT_EQ(ready, false);
  EXPECT_FALSE(exit_code.has_value());
}

TEST(JsonFieldsTest, NestedObjectsAreCheckedLikeBodies) {
  const boost::json::object body = Object(R"({"items":[{"n":1},{"n":2,"x":0}]})");
  std::vector<int> seen;
  JsonFields fields(body);
  fields.Objects("items", 8, [&](JsonFields& item) {
    int n = 0;
    item.Int("n", &n, {0, 9});
    seen.push_back(n);
  });
  EXPECT_EQ(fields.Finish().message(), "items: unknown field 'x'; known fields: n");
  JsonFields too_many(body);
  too_many.Objects("items", 1, [](JsonFields&) {});
  EXPECT_EQ(too_many.Finish().message(), "items: must be an array of at most 1 objects");
}

TEST(JsonFieldsTest, BadTimesAndBadTextAreRefused) {
  const boost::json::object body = Object(R"({"at":"yesterday"})");
  JsonFields fields(body);
  core::TimePoint at;
  fields.Time("at", &at);
  EXPECT_FALSE(fields.Finish().ok());
  EXPECT_NE(fields.Finish().message().find("at: "), std::string::npos);
  EXPECT_EQ(ParseJsonObject("[1]").status().message(),
            "the request body must be a JSON object, not an array");
  EXPECT_NE(ParseJsonObject("{", "the answer").status().message().find("the answer is not valid"),
            std::string::npos);
  EXPECT_TRUE(ParseJsonObject("").ok());
}

TEST(JsonFieldsTest, ADuplicateKeyIsRefusedAndNamed) {
  EXPECT_EQ(ParseJsonObject(R"({"gpu_count":1,"gpu_count":8})").status().message(),
            "the request body has the key 'gpu_count' twice; send each field once");
  EXPECT_EQ(ParseJsonObject(R"({"a":{"b":1,"c":[{"d":1}],"b":2}})").status().message(),
            "the request body has the key 'a.b' twice; send each field once");
  // The same key in sibling objects, or as a value, is no duplicate.
  EXPECT_TRUE(ParseJsonObject(R"({"a":[{"k":1},{"k":2}],"b":{"k":"k"},"k":"a"})").ok());
}

}  // namespace
}  // namespace suanli::wire
