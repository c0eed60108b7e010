// suanli apply -f SPEC.yaml, suanli get -f SPEC.yaml and suanli delete -f SPEC.yaml: declarative
// specs (dstack's and SkyPilot's flat YAML), one object per YAML document:
//
//   kind: pod            # pod, endpoint, template or volume
//   name: train-1        # how apply finds it again: unique among your objects of that kind
//   gpu_type: RTX 4090   # every other key is the API's create body (docs/api.md), as is
//   image: ...
//
// apply creates what does not exist yet, by name, and leaves what does: a pod cannot change in
// place (rm it alone, then apply: delete -f would delete the file's volumes too), an endpoint's
// settings are PATCHed to the spec's, a volume is grown to the spec's size. Volumes and templates
// are created before the pods and endpoints that name them, whatever the file's order; delete -f
// goes the other way. Running apply again changes nothing (idempotent). --dry-run says what it
// would do and what the pods would cost per hour at this cloud's prices, and changes nothing. get
// -f shows each object of the file as it is now (kubectl's get -f): its id, its state, and whether
// it is as the spec says.
#include <fmt/format.h>

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/serialize.hpp>
#include <charconv>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <sstream>

#include "cli/api_command.h"
#include "cli/apply_spec.h"
#include "cli/text_table.h"
#include "core/money.h"

namespace suanli::cli {
namespace {

namespace json = boost::json;

struct ApplyFlags {
  std::string file;
  bool dry_run = false;
  bool force = false;  // delete: a pod's volume with data goes too
  bool json = false;   // get: the objects as the API shows them
};

core::Result<std::vector<ObjectSpec>> ReadSpecFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return core::NotFoundError("cannot read " + path + " (-f takes a YAML file)");
  std::stringstream text;
  text << in.rdbuf();
  return ParseObjectSpecs(text.str(), path);
}

// The objects that are yours, by kind and name (terminated pods are gone for apply). Each kind's
// list is fetched once per command: names are unique within a file, so what this command creates
// or deletes never needs a second look.
class ExistingObjects {
 public:
  explicit ExistingObjects(ApiClient& api) : api_(api) {}

  core::Result<std::vector<json::object>> Named(ObjectKind kind, std::string_view name) {
    auto list = lists_.find(kind);
    if (list == lists_.end()) {
      const KindInfo& info = InfoOf(kind);
      core::Result<json::value> fetched = api_.GetEveryPage(info.collection, info.list_key);
      if (!fetched.ok()) return fetched.status();
      const json::value* items =
          fetched->is_object() ? fetched->as_object().if_contains(info.list_key) : nullptr;
      list = lists_
                 .emplace(kind,
                          items != nullptr && items->is_array() ? items->as_array() : json::array())
                 .first;
    }
    std::vector<json::object> found;
    for (const json::value& item : list->second) {
      if (!item.is_object()) continue;
      const json::object& object = item.as_object();
      const json::value* item_name = object.if_contains("name");
      const json::value* state = object.if_contains("desired_state");
      if (item_name == nullptr || !item_name->is_string() || item_name->as_string() != name) {
        continue;
      }
      if (state != nullptr && state->is_string() && state->as_string() == "terminated") continue;
      found.push_back(object);
    }
    return found;
  }

 private:
  ApiClient& api_;
  std::map<ObjectKind, json::array> lists_;
};

std::string IdOf(const json::object& object) {
  const json::value* id = object.if_contains("id");
  return id != nullptr && id->is_string() ? std::string(id->as_string()) : "";
}

// What a pod of `spec` costs per hour at this cloud's prices, for --dry-run: its GPUs (the type
// named as the catalog resolves it, priced by /v1/availability), or nothing said when unknown.
std::string PodPrice(const ObjectSpec& spec, const catalog::Catalog& catalog,
                     const json::value& availability) {
  const json::value* type = spec.body.if_contains("gpu_type");
  if (type == nullptr || !type->is_string()) return "";
  core::Result<catalog::GpuMatch> match = catalog.Find(type->as_string());
  const std::string canonical = match.ok() ? match->gpu->name : std::string(type->as_string());
  double count = 1;
  if (const json::value* gpus = spec.body.if_contains("gpu_count"); gpus != nullptr) {
    if (gpus->is_number()) count = gpus->to_number<double>();
  }
  const json::value* list =
      availability.is_object() ? availability.as_object().if_contains("gpus") : nullptr;
  if (list == nullptr || !list->is_array()) return "";
  for (const json::value& entry : list->as_array()) {
    const json::object& gpu = entry.as_object();
    if (gpu.at("gpu_type").as_string() != canonical) continue;
    const auto micros = static_cast<int64_t>(
        static_cast<double>(gpu.at("price_per_hour_micros").to_number<int64_t>()) * count);
    return ", " + core::Money::FromMicros(micros).ToRoundedString() + "/h for its GPUs";
  }
  return ", " + canonical + " is not on this cloud (no price)";
}

core::Status RunApply(const ApplyFlags& flags, CommandContext& context) {
  core::Result<std::vector<ObjectSpec>> specs = ReadSpecFile(flags.file);
  if (!specs.ok()) return specs.status();
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  std::optional<json::value> availability;
  std::optional<catalog::Catalog> catalog;
  ExistingObjects objects(**api);
  int left_differing = 0;
  for (const ObjectSpec& spec : *specs) {
    const KindInfo& kind = InfoOf(spec.kind);
    core::Result<std::vector<json::object>> existing = objects.Named(spec.kind, spec.name);
    if (!existing.ok()) return existing.status();
    if (existing->size() > 1) {
      return core::FailedPreconditionError(
          fmt::format("{}: {} {} are named '{}'; apply needs one (rename or remove the others: "
                      "suanli {} list)",
                      spec.where, existing->size(), kind.plural, spec.name, kind.plural));
    }
    const std::string label = std::string(kind.singular) + " " + spec.name;
    if (existing->empty()) {
      if (flags.dry_run) {
        std::string price;
        if (spec.kind == ObjectKind::kPod) {
          if (!availability) {
            core::Result<json::value> answer = (*api)->Get("/v1/availability");
            if (!answer.ok()) return answer.status();
            availability = std::move(*answer);
            core::Result<catalog::Catalog> loaded = context.LoadCatalog();
            if (!loaded.ok()) return loaded.status();
            catalog = std::move(*loaded);
          }
          price = PodPrice(spec, *catalog, *availability);
        }
        context.out << label << ": would be created" << price << "\n";
        continue;
      }
      core::Result<json::value> created = (*api)->Post(kind.collection, spec.body);
      if (!created.ok()) return created.status().WithContext(spec.where + ": creating " + label);
      context.out << label << ": created ("
                  << (created->is_object() ? IdOf(created->as_object()) : "") << ")\n";
      continue;
    }
    const json::object& current = existing->front();
    const std::string id = IdOf(current);
    const std::vector<std::string> differences = Differences(spec.body, current);
    if (differences.empty()) {
      context.out << label << ": unchanged (" << id << ")\n";
      continue;
    }
    // An endpoint's settings and a volume's size change in place (PATCH); pods and templates do
    // not: say where the spec and the object differ.
    if (spec.kind != ObjectKind::kEndpoint && spec.kind != ObjectKind::kVolume) {
      // Not `delete -f`: it would delete the file's volumes, and their data, with the pod.
      context.out << label << ": exists (" << id << ") and differs in " << JoinWords(differences)
                  << "; a " << kind.singular << " cannot change in place: replace it alone with "
                  << "`suanli " << kind.plural << " rm " << id << "`, then apply again"
                  << (spec.kind == ObjectKind::kPod
                          ? " (this keeps the volumes; `delete -f` would delete the file's "
                            "volumes and their data)"
                          : "")
                  << "\n";
      ++left_differing;
      continue;
    }
    if (flags.dry_run) {
      context.out << label << ": would be updated (" << id << "): " << JoinWords(differences)
                  << "\n";
      continue;
    }
    json::object patch = spec.body;
    if (spec.kind == ObjectKind::kVolume) {  // PATCH /v1/volumes/ID takes the size alone
      patch = {};
      for (const std::string& key : differences) patch[key] = spec.body.at(key);
    }
    core::Result<json::value> updated = (*api)->Patch(IdTarget(kind.plural, id), patch);
    if (!updated.ok()) return updated.status().WithContext(spec.where + ": updating " + label);
    context.out << label << ": updated (" << id << "): " << JoinWords(differences) << "\n";
  }
  if (left_differing > 0) {
    // The spec is not what runs: a script must not read this as done.
    return core::FailedPreconditionError(
        std::to_string(left_differing) +
        " object(s) differ from the spec and were left as they are (above)");
  }
  return core::Status::Ok();
}

core::Status RunDelete(const ApplyFlags& flags, CommandContext& context) {
  core::Result<std::vector<ObjectSpec>> specs = ReadSpecFile(flags.file);
  if (!specs.ok()) return specs.status();
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  ExistingObjects objects(**api);
  // Backwards: the pods before the volumes they mount.
  for (auto it = specs->rbegin(); it != specs->rend(); ++it) {
    const ObjectSpec& spec = *it;
    const KindInfo& kind = InfoOf(spec.kind);
    core::Result<std::vector<json::object>> existing = objects.Named(spec.kind, spec.name);
    if (!existing.ok()) return existing.status();
    const std::string label = std::string(kind.singular) + " " + spec.name;
    if (existing->empty()) {
      context.out << label << ": not found (nothing to delete)\n";
      continue;
    }
    for (const json::object& object : *existing) {
      const std::string id = IdOf(object);
      std::string target = IdTarget(kind.plural, id);
      if (spec.kind == ObjectKind::kPod && flags.force) target += "?force=true";
      core::Result<json::value> deleted = (*api)->Delete(target);
      if (!deleted.ok()) return deleted.status().WithContext(spec.where + ": deleting " + label);
      context.out << label << ": deleted (" << id << ")\n";
    }
  }
  return core::Status::Ok();
}

std::string TextOf(const json::object& object, std::string_view key) {
  const json::value* value = object.if_contains(key);
  if (value == nullptr || value->is_null()) return "-";
  return value->is_string() ? std::string(value->as_string()) : json::serialize(*value);
}

// One row per object of the file, in the order apply makes them. NOT_FOUND (exit 3) after the
// table when some do not exist, as kubectl's get -f: a script can tell "all there" apart.
core::Status RunGet(const ApplyFlags& flags, CommandContext& context) {
  core::Result<std::vector<ObjectSpec>> specs = ReadSpecFile(flags.file);
  if (!specs.ok()) return specs.status();
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  ExistingObjects objects(**api);
  TextTable table;
  for (const char* header : {"KIND", "NAME", "ID", "STATE", "SPEC"}) {
    table.AddColumn(header, TextTable::Align::kLeft);
  }
  json::array found_json;
  int missing = 0;
  for (const ObjectSpec& spec : *specs) {
    const KindInfo& kind = InfoOf(spec.kind);
    core::Result<std::vector<json::object>> existing = objects.Named(spec.kind, spec.name);
    if (!existing.ok()) return existing.status();
    if (existing->empty()) {
      ++missing;
      table.AddRow({std::string(kind.singular), spec.name, "-", "-", "not created"});
      found_json.emplace_back(json::object{{"kind", kind.singular},
                                           {"name", spec.name},
                                           {"where", spec.where},
                                           {"object", nullptr},
                                           {"differences", json::array()}});
      continue;
    }
    for (const json::object& object : *existing) {
      const std::vector<std::string> differences = Differences(spec.body, object);
      json::array differing;
      for (const std::string& key : differences) differing.emplace_back(key);
      table.AddRow({std::string(kind.singular), spec.name, IdOf(object), TextOf(object, "state"),
                    differences.empty() ? "as specified" : "differs in " + JoinWords(differences)});
      found_json.emplace_back(json::object{{"kind", kind.singular},
                                           {"name", spec.name},
                                           {"where", spec.where},
                                           {"object", object},
                                           {"differences", std::move(differing)}});
    }
  }
  if (flags.json) {
    context.out << json::serialize(json::object{{"objects", std::move(found_json)}}) << "\n";
  } else {
    context.out << table.Render();
  }
  if (missing > 0) {
    return core::NotFoundError(std::to_string(missing) + " object(s) of " + flags.file +
                               " do not exist yet; create them: suanli apply -f " + flags.file);
  }
  return core::Status::Ok();
}

void AddFileFlag(CLI::App& command, ApplyFlags& flags) {
  command.add_option("-f,--file", flags.file, "The YAML spec: one object per document (---)")
      ->required();
}

}  // namespace

CommandRun DefineApplyCommand(CLI::App& command) {
  auto flags = std::make_shared<ApplyFlags>();
  AddFileFlag(command, *flags);
  command.add_flag("--dry-run", flags->dry_run,
                   "Say what would be created or updated, and the pods' prices; change nothing");
  return [flags](CommandContext& context) { return RunApply(*flags, context); };
}

CommandRun DefineGetCommand(CLI::App& command) {
  auto flags = std::make_shared<ApplyFlags>();
  AddFileFlag(command, *flags);
  command.add_flag("--json", flags->json, "Print the objects as the server shows them");
  return [flags](CommandContext& context) { return RunGet(*flags, context); };
}

CommandRun DefineDeleteCommand(CLI::App& command) {
  auto flags = std::make_shared<ApplyFlags>();
  AddFileFlag(command, *flags);
  command.add_flag("--force", flags->force, "Also delete pods' volumes that hold data");
  return [flags](CommandContext& context) { return RunDelete(*flags, context); };
}

}  // namespace suanli::cli
