// DataFile and YamlEntry: reading suanli's YAML data files (GPU specs, prices, the model zoo) with
// errors that name the file, the line, the entry and the field.
#pragma once

#include <yaml-cpp/yaml.h>

#include <deque>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/money.h"
#include "core/status.h"

namespace suanli::catalog {

struct DataFile {
  std::string name;       // shown in errors, e.g. "data/gpus.yaml" or the operator's path
  std::string_view text;  // not owned; must outlive the call it is passed to
};

// "file:line" of a node, counting lines from 1 as editors do.
std::string Where(const DataFile& file, const YAML::Node& node);

// The file's top-level mapping. INVALID_ARGUMENT "file:line: not valid YAML: ..." otherwise.
core::Result<YAML::Node> ParseYamlFile(const DataFile& file);

// The non-empty list under `key` of the top-level mapping.
core::Result<YAML::Node> TopLevelList(const DataFile& file, const YAML::Node& root,
                                      const std::string& key);

// Reads the fields of one YAML mapping. The first problem is latched (as LevelDB latches a
// background error) so a parser reads every field in a row and checks status() once; reads after a
// problem return empty values. Not thread-safe; one per entry.
class YamlEntry {
 public:
  YamlEntry(const DataFile& file, const YAML::Node& entry, std::string label);
  YamlEntry(const YamlEntry&) = delete;
  YamlEntry& operator=(const YamlEntry&) = delete;

  const core::Status& status() const { return status_; }

  // The label names the entry in errors, e.g. once its `name` field is known.
  void set_label(std::string label) { label_ = std::move(label); }

  bool Has(const std::string& key);
  std::optional<std::string> OptionalString(const std::string& key);
  std::string String(const std::string& key);  // required, non-empty
  std::optional<double> OptionalPositiveNumber(const std::string& key);
  double PositiveNumber(const std::string& key);  // required
  std::optional<int> OptionalPositiveInteger(const std::string& key);
  int PositiveInteger(const std::string& key);  // required
  std::optional<bool> OptionalBool(const std::string& key);
  std::optional<core::Money> OptionalPositiveMoney(const std::string& key);
  std::vector<std::string> StringList(const std::string& key);  // absent: empty

  // Fails on a field not in `known`: a typo such as "memroy_gb" must not pass silently.
  void RejectUnknownFields(std::initializer_list<std::string_view> known);

  // Latches an error about `key` (or the entry when the field is absent), e.g. a cross-field check.
  void Fail(const std::string& key, const std::string& what);

 private:
  const YAML::Node* Field(const std::string& key);
  void Missing(const std::string& key);
  void FailAt(const YAML::Node& node, const std::string& what);

  const DataFile& file_;
  YAML::Node entry_;
  std::string label_;
  std::deque<YAML::Node> fields_;  // keeps the nodes Field() returns alive, at stable addresses
  core::Status status_;
};

}  // namespace suanli::catalog
