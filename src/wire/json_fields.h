// JsonFields: reads the fields of one JSON object strictly; the one way suanli reads JSON it did
// not write itself (requests, agent reports, the server's answers to agents and the CLI).
//
// Each getter checks the type and range of one field and latches the first error with the field's
// name ("gpu_count: must be an integer from 1 to 64, got -1"). Finish() also refuses fields nobody
// asked for ("unknown field 'gpu'; known fields: ..."), so a typo is an error, not a silent
// default; a reader of messages from a newer peer (an agent reading its server) passes
// UnknownFields::kIgnore instead, so that a field added later does not break it.
#pragma once

#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/clock.h"
#include "core/money.h"
#include "core/status.h"

namespace suanli::wire {

// Parses `text` as one JSON object; INVALID_ARGUMENT with the parser's reason otherwise. `what`
// names the text in the message ("the request body"). Empty text is an empty object.
core::Result<boost::json::object> ParseJsonObject(std::string_view text,
                                                  std::string_view what = "the request body");

enum class UnknownFields { kRefuse, kIgnore };

struct TextRule {
  bool required = false;
  size_t max_length = 256;  // bytes
};

template <typename T>
struct RangeRule {
  T min;
  T max;
  bool required = false;
};

struct FieldRule {
  bool required = false;
};

struct MicrosRule {
  bool required = false;
  bool allow_negative = false;
};

class JsonFields {
 public:
  explicit JsonFields(const boost::json::object& object,
                      UnknownFields unknown = UnknownFields::kRefuse)
      : object_(object), unknown_(unknown) {}

  // Each getter leaves `out` unchanged when the field is absent (and not required) or invalid.
  void String(std::string_view key, std::string* out, TextRule rule = {});
  void Int(std::string_view key, int* out, RangeRule<int> rule);
  void Int64(std::string_view key, int64_t* out, RangeRule<int64_t> rule);
  // Absent stays nullopt; present is checked like Int.
  void OptionalInt(std::string_view key, std::optional<int>* out, RangeRule<int> rule);
  void Number(std::string_view key, double* out, RangeRule<double> rule);  // integer or not
  void Bool(std::string_view key, bool* out);
  void OptionalBool(std::string_view key, std::optional<bool>* out);
  // An RFC 3339 time ("2026-12-02T14:46:25.123Z").
  void Time(std::string_view key, core::TimePoint* out, FieldRule rule = {});
  void StringList(std::string_view key, std::vector<std::string>* out, size_t max_items = 64);
  void OptionalStringList(std::string_view key, std::optional<std::vector<std::string>>* out);
  void StringMap(std::string_view key, std::map<std::string, std::string>* out,
                 size_t max_items = 128);
  // Integer micro-dollars, >= 0 unless `allow_negative`.
  void Micros(std::string_view key, core::Money* out, MicrosRule rule = {});
  // The raw value, for what the getters do not cover; nullptr when absent.
  const boost::json::value* Raw(std::string_view key);
  // A nested object: calls `read` with a reader of its fields (the same UnknownFields rule);
  // errors name `key`. Whether it was there and read without error.
  bool Object(std::string_view key, const std::function<void(JsonFields&)>& read);
  // An array of at most `max_items` objects, each read as Object reads one. Absent: nothing is
  // called.
  void Objects(std::string_view key, size_t max_items,
               const std::function<void(JsonFields&)>& read);

  void Fail(std::string message);
  bool ok() const { return error_.ok(); }
  // The first error, or the first unknown field (with kRefuse).
  core::Status Finish();

 private:
  const boost::json::value* Get(std::string_view key, bool required);
  bool ReadObject(std::string_view key, const boost::json::value& value,
                  const std::function<void(JsonFields&)>& read);

  const boost::json::object& object_;
  const UnknownFields unknown_;
  std::set<std::string, std::less<>> known_;
  core::Status error_;
};

}  // namespace suanli::wire
