#include "catalog/data_file.h"

#include <algorithm>
#include <charconv>
#include <cmath>

namespace suanli::catalog {

std::string Where(const DataFile& file, const YAML::Node& node) {
  return file.name + ":" + std::to_string(node.Mark().line + 1);
}

core::Result<YAML::Node> ParseYamlFile(const DataFile& file) {
  try {
    YAML::Node root = YAML::Load(std::string(file.text));
    if (!root.IsMap()) {
      return core::InvalidArgumentError(file.name + ":1: expected a YAML mapping at the top level");
    }
    return root;
  } catch (const YAML::Exception& error) {
    return core::InvalidArgumentError(file.name + ":" + std::to_string(error.mark.line + 1) +
                                      ": not valid YAML: " + error.msg);
  }
}

core::Result<YAML::Node> TopLevelList(const DataFile& file, const YAML::Node& root,
                                      const std::string& key) {
  YAML::Node list = root[key];
  if (!list.IsDefined() || !list.IsSequence() || list.size() == 0) {
    return core::InvalidArgumentError(file.name + ":1: expected a non-empty list '" + key + ":'");
  }
  return list;
}

YamlEntry::YamlEntry(const DataFile& file, const YAML::Node& entry, std::string label)
    : file_(file), entry_(entry), label_(std::move(label)) {
  if (!entry_.IsMap()) FailAt(entry_, "expected a mapping of field: value");
}

bool YamlEntry::Has(const std::string& key) { return Field(key) != nullptr; }

std::optional<std::string> YamlEntry::OptionalString(const std::string& key) {
  const YAML::Node* node = Field(key);
  if (node == nullptr) return std::nullopt;
  if (node->IsNull()) {
    FailAt(*node, "field '" + key + "' has no value; give one or leave the field out");
    return std::nullopt;
  }
  if (!node->IsScalar()) {
    FailAt(*node, "field '" + key + "' must be text");
    return std::nullopt;
  }
  return node->Scalar();
}

std::string YamlEntry::String(const std::string& key) {
  std::optional<std::string> value = OptionalString(key);
  if (!value.has_value() || value->empty()) {
    if (value.has_value() || Field(key) == nullptr) Missing(key);
    return "";
  }
  return *value;
}

std::optional<double> YamlEntry::OptionalPositiveNumber(const std::string& key) {
  std::optional<std::string> text = OptionalString(key);
  if (!text.has_value()) return std::nullopt;
  double value = 0;
  const char* end = text->data() + text->size();
  auto [stop, error] = std::from_chars(text->data(), end, value);
  if (error != std::errc() || stop != end || !std::isfinite(value) || value <= 0) {
    FailAt(*Field(key), "field '" + key + "' must be a positive number, not '" + *text + "'");
    return std::nullopt;
  }
  return value;
}

double YamlEntry::PositiveNumber(const std::string& key) {
  std::optional<double> value = OptionalPositiveNumber(key);
  if (!value.has_value() && Field(key) == nullptr) Missing(key);
  return value.value_or(0);
}

std::optional<int> YamlEntry::OptionalPositiveInteger(const std::string& key) {
  const std::optional<double> value = OptionalPositiveNumber(key);
  if (!value.has_value()) return std::nullopt;
  if (*value != std::floor(*value) || *value > 1e9) {
    FailAt(*Field(key), "field '" + key + "' must be a whole number");
    return std::nullopt;
  }
  return static_cast<int>(*value);
}

int YamlEntry::PositiveInteger(const std::string& key) {
  const std::optional<int> value = OptionalPositiveInteger(key);
  if (!value.has_value() && Field(key) == nullptr) Missing(key);
  return value.value_or(0);
}

std::optional<bool> YamlEntry::OptionalBool(const std::string& key) {
  std::optional<std::string> text = OptionalString(key);
  if (!text.has_value()) return std::nullopt;
  if (*text == "true") return true;
  if (*text == "false") return false;
  FailAt(*Field(key), "field '" + key + "' must be true or false, not '" + *text + "'");
  return std::nullopt;
}

std::optional<core::Money> YamlEntry::OptionalPositiveMoney(const std::string& key) {
  std::optional<std::string> text = OptionalString(key);
  if (!text.has_value()) return std::nullopt;
  core::Result<core::Money> money = core::Money::ParseDollars(*text);
  if (!money.ok() || money->micros() <= 0) {
    FailAt(*Field(key), "field '" + key +
                            "' must be a positive amount of dollars such as 0.74, not '" + *text +
                            "'");
    return std::nullopt;
  }
  return *money;
}

std::vector<std::string> YamlEntry::StringList(const std::string& key) {
  std::vector<std::string> values;
  const YAML::Node* node = Field(key);
  if (node == nullptr || node->IsNull()) return values;
  if (!node->IsSequence()) {
    FailAt(*node, "field '" + key + "' must be a list such as [\"4090\", \"RTX4090\"]");
    return values;
  }
  for (const YAML::Node& item : *node) {
    if (!item.IsScalar() || item.Scalar().empty()) {
      FailAt(item, "field '" + key + "' must hold only non-empty names");
      return values;
    }
    values.push_back(item.Scalar());
  }
  return values;
}

void YamlEntry::RejectUnknownFields(std::initializer_list<std::string_view> known) {
  if (!status_.ok()) return;
  std::vector<std::string> seen;
  for (const auto& field : entry_) {
    const std::string key = field.first.Scalar();
    // yaml-cpp keeps both of two equal keys and reads the first; the second would be silently lost.
    if (std::find(seen.begin(), seen.end(), key) != seen.end()) {
      FailAt(field.first, "field '" + key + "' is given twice; keep one");
      return;
    }
    seen.push_back(key);
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      std::string list;
      for (std::string_view name : known) list += (list.empty() ? "" : ", ") + std::string(name);
      FailAt(field.first, "unknown field '" + key + "' (known fields: " + list + ")");
      return;
    }
  }
}

void YamlEntry::Fail(const std::string& key, const std::string& what) {
  const YAML::Node* node = Field(key);
  FailAt(node != nullptr ? *node : entry_, what);
}

const YAML::Node* YamlEntry::Field(const std::string& key) {
  if (!status_.ok() || !entry_.IsMap()) return nullptr;
  for (const auto& field : entry_) {
    if (field.first.Scalar() == key) {
      fields_.push_back(field.second);
      return &fields_.back();
    }
  }
  return nullptr;
}

void YamlEntry::Missing(const std::string& key) { FailAt(entry_, "missing field '" + key + "'"); }

void YamlEntry::FailAt(const YAML::Node& node, const std::string& what) {
  if (!status_.ok()) return;
  status_ = core::InvalidArgumentError(Where(file_, node) + ": " + label_ + ": " + what);
}

}  // namespace suanli::catalog
