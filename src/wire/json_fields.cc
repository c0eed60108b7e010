#include "wire/json_fields.h"

#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <limits>
#include <set>
#include <vector>

namespace suanli::wire {
namespace {

std::string TypeName(const boost::json::value& value) {
  switch (value.kind()) {
    case boost::json::kind::null:
      return "null";
    case boost::json::kind::bool_:
      return "a boolean";
    case boost::json::kind::string:
      return "a string";
    case boost::json::kind::array:
      return "an array";
    case boost::json::kind::object:
      return "an object";
    default:
      return "a number";
  }
}

std::optional<int64_t> AsInteger(const boost::json::value& value) {
  if (value.is_int64()) return value.as_int64();
  if (value.is_uint64()) {
    if (value.as_uint64() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
      return std::nullopt;
    return static_cast<int64_t>(value.as_uint64());
  }
  return std::nullopt;
}

// A handler for boost::json::basic_parser that only looks for a key repeated within one object.
// Boost.JSON's own parser keeps the last of duplicate keys silently, so {"gpu_count":1,
// "gpu_count":8} would read as 8 here and perhaps as 1 in a proxy or a log reader in front of
// us: a request must mean one thing (RFC 8259 section 4 leaves duplicates' meaning undefined).
class DuplicateKeyFinder {
 public:
  static constexpr std::size_t max_array_size = -1;
  static constexpr std::size_t max_object_size = -1;
  static constexpr std::size_t max_string_size = -1;
  static constexpr std::size_t max_key_size = -1;

  // The first key seen twice in one object, with the keys of the objects around it
  // ("resources.gpu_count"); empty when none was.
  const std::string& duplicate() const { return duplicate_; }

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t, boost::system::error_code&) { return true; }
  bool on_object_begin(boost::system::error_code&) {
    objects_.push_back({});
    return true;
  }
  bool on_object_end(std::size_t, boost::system::error_code&) {
    objects_.pop_back();
    return true;
  }
  bool on_string_part(boost::json::string_view, std::size_t, boost::system::error_code&) {
    return true;
  }
  bool on_string(boost::json::string_view, std::size_t, boost::system::error_code&) { return true; }
  bool on_key_part(boost::json::string_view part, std::size_t, boost::system::error_code&) {
    key_.append(part.data(), part.size());
    return true;
  }
  bool on_key(boost::json::string_view part, std::size_t, boost::system::error_code& error) {
    key_.append(part.data(), part.size());
    Object& object = objects_.back();
    if (!object.keys.insert(key_).second) {
      for (const Object& outer : objects_) {
        if (&outer == &object) break;
        duplicate_ += outer.last_key + ".";
      }
      duplicate_ += key_;
      error = boost::json::error::syntax;  // stops the parse; duplicate_ says why
      return false;
    }
    object.last_key = std::move(key_);
    key_.clear();
    return true;
  }
  bool on_number_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_int64(int64_t, boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_uint64(uint64_t, boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_double(double, boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_bool(bool, boost::system::error_code&) { return true; }
  bool on_null(boost::system::error_code&) { return true; }
  bool on_comment_part(boost::json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(boost::json::string_view, boost::system::error_code&) { return true; }

 private:
  struct Object {
    std::set<std::string, std::less<>> keys;
    std::string last_key;
  };
  std::vector<Object> objects_;
  std::string key_;
  std::string duplicate_;
};

// The first duplicate key in `text` (valid JSON), or empty.
std::string FindDuplicateKey(std::string_view text) {
  boost::json::basic_parser<DuplicateKeyFinder> parser{boost::json::parse_options()};
  boost::system::error_code error;
  parser.write_some(false, text.data(), text.size(), error);
  return parser.handler().duplicate();
}

}  // namespace

core::Result<boost::json::object> ParseJsonObject(std::string_view text, std::string_view what) {
  if (text.empty()) return boost::json::object();
  boost::system::error_code error;
  boost::json::value value = boost::json::parse(text, error);
  if (error) {
    return core::InvalidArgumentError(std::string(what) + " is not valid JSON (" + error.message() +
                                      "); send one JSON object");
  }
  if (!value.is_object()) {
    return core::InvalidArgumentError(std::string(what) + " must be a JSON object, not " +
                                      TypeName(value));
  }
  if (const std::string duplicate = FindDuplicateKey(text); !duplicate.empty()) {
    return core::InvalidArgumentError(std::string(what) + " has the key '" + duplicate +
                                      "' twice; send each field once");
  }
  return std::move(value.as_object());
}

bool JsonFields::Object(std::string_view key, const std::function<void(JsonFields&)>& read) {
  const boost::json::value* value = Raw(key);
  if (value == nullptr) return false;
  return ReadObject(key, *value, read);
}

void JsonFields::Objects(std::string_view key, size_t max_items,
                         const std::function<void(JsonFields&)>& read) {
  const boost::json::value* value = Raw(key);
  if (value == nullptr) return;
  if (!value->is_array() || value->as_array().size() > max_items) {
    Fail(std::string(key) + ": must be an array of at most " + std::to_string(max_items) +
         " objects");
    return;
  }
  for (const boost::json::value& item : value->as_array()) {
    if (!ReadObject(key, item, read)) return;
  }
}

bool JsonFields::ReadObject(std::string_view key, const boost::json::value& value,
                            const std::function<void(JsonFields&)>& read) {
  if (!value.is_object()) {
    Fail(std::string(key) + ": must be an object, got " + TypeName(value));
    return false;
  }
  JsonFields fields(value.as_object(), unknown_);
  read(fields);
  if (const core::Status status = fields.Finish(); !status.ok()) {
    Fail(std::string(key) + ": " + status.message());
    return false;
  }
  return true;
}

void JsonFields::Fail(std::string message) {
  if (error_.ok()) error_ = core::InvalidArgumentError(std::move(message));
}

const boost::json::value* JsonFields::Get(std::string_view key, bool required) {
  known_.emplace(key);
  const boost::json::value* value = object_.if_contains(key);
  if (value == nullptr && required) Fail(std::string(key) + ": is required");
  return value;
}

const boost::json::value* JsonFields::Raw(std::string_view key) { return Get(key, false); }

void JsonFields::String(std::string_view key, std::string* out, TextRule rule) {
  const boost::json::value* value = Get(key, rule.required);
  if (value == nullptr) return;
  if (!value->is_string()) {
    Fail(std::string(key) + ": must be a string, got " + TypeName(*value));
    return;
  }
  const boost::json::string& text = value->as_string();
  if (text.size() > rule.max_length) {
    Fail(std::string(key) + ": is " + std::to_string(text.size()) + " characters long; at most " +
         std::to_string(rule.max_length) + " are allowed");
    return;
  }
  *out = std::string(text);
}

void JsonFields::Int64(std::string_view key, int64_t* out, RangeRule<int64_t> rule) {
  const boost::json::value* value = Get(key, rule.required);
  if (value == nullptr) return;
  const std::optional<int64_t> number = AsInteger(*value);
  if (!number || *number < rule.min || *number > rule.max) {
    Fail(std::string(key) + ": must be an integer from " + std::to_string(rule.min) + " to " +
         std::to_string(rule.max) + ", got " + boost::json::serialize(*value));
    return;
  }
  *out = *number;
}

void JsonFields::Number(std::string_view key, double* out, RangeRule<double> rule) {
  const boost::json::value* value = Get(key, rule.required);
  if (value == nullptr) return;
  const std::optional<double> number =
      value->is_double()   ? std::optional<double>(value->get_double())
      : value->is_int64()  ? std::optional<double>(static_cast<double>(value->get_int64()))
      : value->is_uint64() ? std::optional<double>(static_cast<double>(value->get_uint64()))
                           : std::nullopt;
  if (!number || !(*number >= rule.min && *number <= rule.max)) {  // NaN fails too
    Fail(std::string(key) + ": must be a number from " +
         boost::json::serialize(boost::json::value(rule.min)) + " to " +
         boost::json::serialize(boost::json::value(rule.max)) + ", got " +
         boost::json::serialize(*value));
    return;
  }
  *out = *number;
}

void JsonFields::Int(std::string_view key, int* out, RangeRule<int> rule) {
  int64_t number = *out;
  Int64(key, &number, {rule.min, rule.max, rule.required});
  *out = static_cast<int>(number);
}

void JsonFields::OptionalInt(std::string_view key, std::optional<int>* out, RangeRule<int> rule) {
  if (object_.if_contains(key) == nullptr) {
    known_.emplace(key);
    if (rule.required) Fail(std::string(key) + ": is required");
    return;
  }
  int number = 0;
  const bool was_ok = ok();
  Int(key, &number, rule);
  if (ok() || !was_ok) *out = number;
}

void JsonFields::Bool(std::string_view key, bool* out) {
  const boost::json::value* value = Get(key, false);
  if (value == nullptr) return;
  if (!value->is_bool()) {
    Fail(std::string(key) + ": must be true or false, got " + TypeName(*value));
    return;
  }
  *out = value->as_bool();
}

void JsonFields::OptionalBool(std::string_view key, std::optional<bool>* out) {
  if (object_.if_contains(key) == nullptr) {
    known_.emplace(key);
    return;
  }
  bool value = false;
  const bool was_ok = ok();
  Bool(key, &value);
  if (ok() || !was_ok) *out = value;
}

void JsonFields::Time(std::string_view key, core::TimePoint* out, FieldRule rule) {
  std::string text;
  const bool was_ok = ok();
  String(key, &text, {.required = rule.required, .max_length = 64});
  if (!ok() || !was_ok || object_.if_contains(key) == nullptr) return;
  core::Result<core::TimePoint> time = core::ParseTime(text);
  if (!time.ok()) {
    Fail(std::string(key) + ": " + time.status().message());
    return;
  }
  *out = *time;
}

void JsonFields::StringList(std::string_view key, std::vector<std::string>* out, size_t max_items) {
  const boost::json::value* value = Get(key, false);
  if (value == nullptr) return;
  if (!value->is_array() || value->as_array().size() > max_items) {
    Fail(std::string(key) + ": must be an array of at most " + std::to_string(max_items) +
         " strings");
    return;
  }
  std::vector<std::string> items;
  for (const boost::json::value& item : value->as_array()) {
    if (!item.is_string() || item.as_string().size() > 4096) {
      Fail(std::string(key) + ": every item must be a string of at most 4096 characters");
      return;
    }
    items.emplace_back(item.as_string());
  }
  *out = std::move(items);
}

void JsonFields::OptionalStringList(std::string_view key,
                                    std::optional<std::vector<std::string>>* out) {
  if (object_.if_contains(key) == nullptr) {
    known_.emplace(key);
    return;
  }
  std::vector<std::string> items;
  StringList(key, &items);
  if (ok()) *out = std::move(items);
}

void JsonFields::StringMap(std::string_view key, std::map<std::string, std::string>* out,
                           size_t max_items) {
  const boost::json::value* value = Get(key, false);
  if (value == nullptr) return;
  if (!value->is_object() || value->as_object().size() > max_items) {
    Fail(std::string(key) + ": must be an object of at most " + std::to_string(max_items) +
         " string values");
    return;
  }
  std::map<std::string, std::string> items;
  for (const auto& entry : value->as_object()) {
    if (!entry.value().is_string() || entry.key().empty() || entry.key().size() > 256 ||
        entry.value().as_string().size() > 32768) {
      Fail(std::string(key) + "." + std::string(entry.key()) +
           ": must be a string (names 1-256 characters, values at most 32 KiB)");
      return;
    }
    items.emplace(std::string(entry.key()), std::string(entry.value().as_string()));
  }
  *out = std::move(items);
}

void JsonFields::Micros(std::string_view key, core::Money* out, MicrosRule rule) {
  constexpr int64_t kLimit = core::Money::kMaxMicros;
  int64_t micros = out->micros();
  Int64(key, &micros, {rule.allow_negative ? -kLimit : 0, kLimit, rule.required});
  *out = core::Money::FromMicros(micros);
}

core::Status JsonFields::Finish() {
  if (!error_.ok()) return error_;
  if (unknown_ == UnknownFields::kIgnore) return core::Status::Ok();
  for (const auto& entry : object_) {
    if (known_.contains(std::string_view(entry.key()))) continue;
    std::string known;
    for (const std::string& name : known_) known += (known.empty() ? "" : ", ") + name;
    return core::InvalidArgumentError("unknown field '" + std::string(entry.key()) +
                                      "'; known fields: " + known);
  }
  return core::Status::Ok();
}

}  // namespace suanli::wire
