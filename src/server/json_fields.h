// JsonFields: reads the fields of one JSON object from a client strictly.
//
// Each getter checks the type and range of one field and latches the first error with the field's
// name ("gpu_count: must be an integer from 1 to 64, got -1"); Finish() also refuses fields
// nobody asked for ("unknown field 'gpu'; known fields: ..."), so a typo is an error, not a silent
// default. Not for documents the server wrote itself (those are read leniently).
#pragma once

#include <boost/json/value.hpp>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"
#include "core/status.h"

namespace suanli::server {

// Parses `body` as one JSON object; INVALID_ARGUMENT with the parser's reason otherwise.
core::Result<boost::json::object> ParseJsonObject(std::string_view body);

class JsonFields {
 public:
  explicit JsonFields(const boost::json::object& object) : object_(object) {}

  // Each getter leaves `out` unchanged when the field is absent (and not required) or invalid.
  void String(std::string_view key, std::string* out, bool required = false,
              size_t max_length = 256);
  void Int(std::string_view key, int* out, int min, int max, bool required = false);
  void OptionalInt(std::string_view key, std::optional<int>* out, int min, int max);
  void Int64(std::string_view key, int64_t* out, int64_t min, int64_t max, bool required = false);
  void Number(std::string_view key, double* out, double min, double max);  // integer or not
  void Bool(std::string_view key, bool* out);
  void StringList(std::string_view key, std::vector<std::string>* out, size_t max_items = 64);
  void OptionalStringList(std::string_view key, std::optional<std::vector<std::string>>* out);
  void StringMap(std::string_view key, std::map<std::string, std::string>* out,
                 size_t max_items = 128);
  // Integer micro-dollars, >= 0 unless `allow_negative`.
  void Micros(std::string_view key, core::Money* out, bool required = false,
              bool allow_negative = false);
  // The raw value, for nested objects; nullptr when absent.
  const boost::json::value* Raw(std::string_view key);
  // A nested object: calls `read` with its fields, which are then checked like a body's (unknown
  // keys refused); errors name `key`. Whether it was there and read without error.
  bool Object(std::string_view key, const std::function<void(JsonFields&)>& read);
  // An array of at most `max_items` objects, each read as Object reads one. Absent: nothing is
  // called.
  void Objects(std::string_view key, size_t max_items,
               const std::function<void(JsonFields&)>& read);

  void Fail(std::string message);
  bool ok() const { return error_.ok(); }
  core::Status Finish();

 private:
  const boost::json::value* Get(std::string_view key, bool required);
  bool ReadObject(std::string_view key, const boost::json::value& value,
                  const std::function<void(JsonFields&)>& read);

  const boost::json::object& object_;
  std::set<std::string, std::less<>> known_;
  core::Status error_;
};

}  // namespace suanli::server
