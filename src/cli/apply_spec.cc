#include "cli/apply_spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/value.hpp>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <set>
#include <utility>

#include "net/proxy_headers.h"

namespace suanli::cli {
namespace {

namespace json = boost::json;

constexpr KindInfo kPod{"pod", "pods", "/v1/pods", "pods"};
constexpr KindInfo kEndpoint{"endpoint", "endpoints", "/v1/endpoints", "endpoints"};
constexpr KindInfo kTemplate{"template", "templates", "/v1/templates", "templates"};
constexpr KindInfo kVolume{"volume", "volumes", "/v1/volumes", "volumes"};

std::string Where(const std::string& file, const YAML::Node& node) {
  return file + ":" + std::to_string(node.Mark().line + 1);
}

// Keys whose values the API reads as text, and maps of text (env, node_selector): `gpu_type: 4090`
// or `env: {DEBUG: 1}` must not become numbers (YAML's classic trap), so their scalars stay as
// written.
bool TakesText(std::string_view key) {
  for (std::string_view text_key :
       {"name", "gpu_type", "template", "image", "volume_mount_path", "pre_stop_command",
        "stop_after", "idle_stop_after", "env", "node_selector", "command", "ports"}) {
    if (key == text_key) return true;
  }
  return false;
}

// A plain scalar by its look; a quoted one ("!" tag in yaml-cpp), or one under a key that takes
// text, stays text.
json::value ScalarValue(const YAML::Node& node, bool as_text) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!" || as_text) return json::value(text);
  if (text == "true") return json::value(true);
  if (text == "false") return json::value(false);
  if (text == "null" || text == "~") return json::value(nullptr);
  int64_t whole = 0;
  if (auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), whole);
      error == std::errc() && end == text.data() + text.size() && !text.empty()) {
    return json::value(whole);
  }
  if (!text.empty() && (std::isdigit(static_cast<unsigned char>(text.front())) != 0 ||
                        text.front() == '-' || text.front() == '.')) {
    char* end = nullptr;
    errno = 0;
    const double number = std::strtod(text.c_str(), &end);
    if (errno == 0 && end == text.c_str() + text.size()) return json::value(number);
  }
  return json::value(text);
}

core::Result<json::value> ToJson(const YAML::Node& node, const std::string& file,
                                 bool as_text = false) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return ScalarValue(node, as_text);
    case YAML::NodeType::Null:
      return json::value(nullptr);
    case YAML::NodeType::Sequence: {
      json::array list;
      for (const YAML::Node& item : node) {
        core::Result<json::value> value = ToJson(item, file, as_text);
        if (!value.ok()) return value.status();
        list.push_back(std::move(*value));
      }
      return json::value(std::move(list));
    }
    case YAML::NodeType::Map: {
      json::object object;
      for (const auto& pair : node) {
        const std::string key = pair.first.as<std::string>();
        if (object.contains(key)) {
          return core::InvalidArgumentError(Where(file, pair.first) + ": '" + key +
                                            "' is given twice");
        }
        core::Result<json::value> value = ToJson(pair.second, file, as_text || TakesText(key));
        if (!value.ok()) return value.status();
        object[key] = std::move(*value);
      }
      return json::value(std::move(object));
    }
    case YAML::NodeType::Undefined:
      break;
  }
  return core::InvalidArgumentError(Where(file, node) + ": not a YAML value");
}

std::string Squeezed(std::string_view text) {
  std::string out;
  for (char c : net::LowerAscii(text)) {
    if (c != ' ' && c != '-' && c != '_') out += c;
  }
  return out;
}

// A pod's volumes as the spec gives them ([{name, mount_path, read_only}]) against its view's
// ([{volume_id, mount_path, read_only}]): the same mount paths and flags in the same order.
bool SameMounts(const json::value& desired, const json::value& current) {
  if (!desired.is_array() || !current.is_array()) return desired == current;
  const json::array& wanted = desired.as_array();
  const json::array& shown = current.as_array();
  if (wanted.size() != shown.size()) return false;
  for (size_t i = 0; i < wanted.size(); ++i) {
    if (!wanted[i].is_object() || !shown[i].is_object()) return false;
    const json::object& want = wanted[i].as_object();
    const json::object& have = shown[i].as_object();
    const json::value* path = want.if_contains("mount_path");
    const json::value* read_only = want.if_contains("read_only");
    if (path == nullptr || have.if_contains("mount_path") == nullptr ||
        *path != have.at("mount_path")) {
      return false;
    }
    const bool want_read_only =
        read_only != nullptr && read_only->is_bool() && read_only->as_bool();
    const json::value* has_read_only = have.if_contains("read_only");
    if (want_read_only !=
        (has_read_only != nullptr && has_read_only->is_bool() && has_read_only->as_bool())) {
      return false;
    }
  }
  return true;
}

bool SameValue(std::string_view key, const json::value& desired, const json::value& current) {
  if (key == "volumes") return SameMounts(desired, current);
  if (key == "gpu_type" && desired.is_string() && current.is_string()) {
    // The catalog resolves a short name ("4090", "a100") to a type whose name holds it.
    return Squeezed(current.as_string()).find(Squeezed(desired.as_string())) != std::string::npos;
  }
  if (desired.is_number() && current.is_number()) {
    return desired.to_number<double>() == current.to_number<double>();
  }
  return desired == current;
}

}  // namespace

const KindInfo& InfoOf(ObjectKind kind) {
  switch (kind) {
    case ObjectKind::kPod:
      return kPod;
    case ObjectKind::kEndpoint:
      return kEndpoint;
    case ObjectKind::kTemplate:
      return kTemplate;
    case ObjectKind::kVolume:
      return kVolume;
  }
  return kPod;
}

core::Result<std::vector<ObjectSpec>> ParseObjectSpecs(std::string_view text,
                                                       const std::string& file) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& error) {
    return core::InvalidArgumentError(file + ":" + std::to_string(error.mark.line + 1) +
                                      ": not valid YAML: " + error.msg);
  }
  std::vector<ObjectSpec> specs;
  std::set<std::pair<ObjectKind, std::string>> seen;
  for (const YAML::Node& document : documents) {
    if (document.IsNull()) continue;  // an empty document, e.g. after a trailing ---
    if (!document.IsMap()) {
      return core::InvalidArgumentError(Where(file, document) +
                                        ": expected a mapping (kind: pod, name: ..., and fields)");
    }
    core::Result<json::value> converted = ToJson(document, file);
    if (!converted.ok()) return converted.status();
    ObjectSpec spec;
    spec.where = Where(file, document);
    spec.body = std::move(converted->as_object());
    const json::value* kind = spec.body.if_contains("kind");
    const std::string kind_name =
        kind != nullptr && kind->is_string() ? net::LowerAscii(kind->as_string()) : "";
    if (kind_name == "pod") {
      spec.kind = ObjectKind::kPod;
    } else if (kind_name == "endpoint") {
      spec.kind = ObjectKind::kEndpoint;
    } else if (kind_name == "template") {
      spec.kind = ObjectKind::kTemplate;
    } else if (kind_name == "volume") {
      spec.kind = ObjectKind::kVolume;
    } else {
      return core::InvalidArgumentError(
          spec.where + ": kind must be pod, endpoint, template or volume" +
          (kind == nullptr ? std::string(" (it is missing)") : ", not " + json::serialize(*kind)));
    }
    spec.body.erase("kind");
    const json::value* name = spec.body.if_contains("name");
    if (name == nullptr || !name->is_string() || name->as_string().empty()) {
      return core::InvalidArgumentError(spec.where +
                                        ": name is required: apply finds the object by it");
    }
    spec.name = std::string(name->as_string());
    if (!seen.emplace(spec.kind, spec.name).second) {
      return core::InvalidArgumentError(spec.where + ": " +
                                        std::string(InfoOf(spec.kind).singular) + " " + spec.name +
                                        " is in the file twice");
    }
    specs.push_back(std::move(spec));
  }
  if (specs.empty()) {
    return core::InvalidArgumentError(file +
                                      ": no objects (each YAML document is one: kind, name, "
                                      "fields)");
  }
  std::stable_sort(specs.begin(), specs.end(),
                   [](const ObjectSpec& a, const ObjectSpec& b) { return a.kind < b.kind; });
  return specs;
}

std::vector<std::string> Differences(const json::object& desired, const json::object& current) {
  std::vector<std::string> differences;
  for (const auto& [key, value] : desired) {
    if (key == "name") continue;
    std::string_view shown = key;
    if (key == "template") shown = "template_id";
    const json::value* now = current.if_contains(shown);
    if (now == nullptr) continue;
    if (!SameValue(key, value, *now)) differences.emplace_back(key);
  }
  return differences;
}

std::string JoinWords(const std::vector<std::string>& words) {
  std::string joined;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0) joined += i + 1 == words.size() ? " and " : ", ";
    joined += words[i];
  }
  return joined;
}

}  // namespace suanli::cli
