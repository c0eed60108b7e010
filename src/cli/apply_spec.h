// The spec files of `suanli apply -f` (apply_command.cc): YAML documents, one object each, read
// into the API's create bodies, and compared with what the server holds. Pure: no I/O.
#pragma once

#include <boost/json/object.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace suanli::cli {

// In the order apply creates them: what others name (a pod's volumes, its template) first.
enum class ObjectKind { kVolume, kTemplate, kEndpoint, kPod };

struct KindInfo {
  std::string_view singular;    // "pod"
  std::string_view plural;      // "pods": the API's collection name
  std::string_view collection;  // "/v1/pods"
  std::string_view list_key;    // "pods": the list's key in GET collection
};

const KindInfo& InfoOf(ObjectKind kind);

struct ObjectSpec {
  ObjectKind kind = ObjectKind::kPod;
  std::string name;
  boost::json::object body;  // the create body: every key but `kind`, `name` included
  std::string where;         // "spec.yaml:12", for errors
};

// The objects of a spec file's documents, in the order apply creates them (by kind, see
// ObjectKind; the file's order within a kind): a pod may come before the volume it mounts. YAML
// scalars become JSON by their look (a quoted one stays a string; true/false, null, whole and
// decimal numbers as such). INVALID_ARGUMENT "FILE:LINE: ..." for a document that is not a mapping,
// lacks `kind` or `name`, names an unknown kind, repeats a key, or repeats a kind and name of an
// earlier document.
core::Result<std::vector<ObjectSpec>> ParseObjectSpecs(std::string_view text,
                                                       const std::string& file);

// The keys of `desired` (a create body) whose value differs from what `current` (the object as the
// API shows it) has, in `desired`'s order. Keys `current` shows under another name are compared
// there (template: template_id); a GPU type compares as the catalog's names do (case and spaces
// aside, "4090" is "RTX 4090"); a pod's volumes by their mount paths and read-only flags, in order
// (the view names each by id, the spec by name); keys the view does not show (queue, workload,
// durations written as text) cannot be compared and are left out.
std::vector<std::string> Differences(const boost::json::object& desired,
                                     const boost::json::object& current);

// "a", "a and b", "a, b and c".
std::string JoinWords(const std::vector<std::string>& words);

}  // namespace suanli::cli
