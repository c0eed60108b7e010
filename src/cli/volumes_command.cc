// suanli volumes: volumes of their own, which outlive pods and follow them from node to node, and
// their snapshots.
#include <boost/json/array.hpp>
#include <chrono>
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/flags.h"
#include "cli/text_table.h"

namespace suanli::cli {
namespace {

struct VolumesFlags {
  bool json = false;
  std::string id;
  std::string name;
  int size_gb = 0;
  std::string from_snapshot;
  bool shared = false;
  bool wait = false;
  std::string project;  // create: the project whose volume it is
};

// How long `volumes snapshot --wait` waits for the node to make the archive.
constexpr auto kSnapshotWait = std::chrono::minutes(30);

std::string PodsOf(const boost::json::value& volume) {
  std::string pods;
  for (const boost::json::value& pod : JsonArray(volume, "attached_to")) {
    if (!pods.empty()) pods += ",";
    if (pod.is_string()) pods += pod.as_string();
  }
  if (pods.empty()) return "-";
  return pods + (JsonBool(volume, "attached_read_write") ? " (rw)" : " (ro)");
}

// The API's state, where "available" is said "in use" while a pod mounts the volume: available
// means no move or restore is under way, which a reader took for "free to attach".
std::string StateOf(const boost::json::value& volume) {
  const std::string state = JsonText(volume, "state");
  if (state == "available" && !JsonArray(volume, "attached_to").empty()) return "in use";
  return state;
}

std::string VolumesTable(const boost::json::array& volumes) {
  TextTable table;
  table.AddColumn("ID", TextTable::Align::kLeft);
  table.AddColumn("NAME", TextTable::Align::kLeft);
  table.AddColumn("SIZE GB", TextTable::Align::kRight);
  table.AddColumn("NODE", TextTable::Align::kLeft);
  table.AddColumn("STATE", TextTable::Align::kLeft);
  table.AddColumn("PODS", TextTable::Align::kLeft);
  table.AddColumn("$/HOUR", TextTable::Align::kRight);
  table.AddColumn("COST", TextTable::Align::kRight);
  for (const boost::json::value& volume : volumes) {
    const std::string node = JsonText(volume, "home_node");
    table.AddRow({JsonText(volume, "id"), JsonText(volume, "name"),
                  std::to_string(JsonInteger(volume, "size_gb")), node.empty() ? "-" : node,
                  StateOf(volume), PodsOf(volume),
                  MoneyText(volume, "storage_price_per_hour_micros"),
                  MoneyText(volume, "cost_micros")});
  }
  return table.Render();
}

std::string VolumeDetail(const boost::json::value& volume) {
  const std::string node = JsonText(volume, "home_node");
  const std::string from = JsonText(volume, "restored_from");
  return "id:        " + JsonText(volume, "id") + "\nname:      " + JsonText(volume, "name") +
         "\nsize:      " + std::to_string(JsonInteger(volume, "size_gb")) + " GB\nnode:      " +
         (node.empty() ? "- (no data yet)"
                       : node + (JsonBool(volume, "shared") ? " (the shared backend)" : "")) +
         "\nstate:     " + StateOf(volume) + "\npods:      " + PodsOf(volume) +
         (JsonText(volume, "project_id").empty()
              ? ""
              : "\nproject:   " + JsonText(volume, "project_id")) +
         "\nprice:     " + MoneyText(volume, "storage_price_per_hour_micros") +
         "/h\ncost:      " + MoneyText(volume, "cost_micros") +
         "\ncreated:   " + TimeText(JsonText(volume, "created_at")) + "\n" +
         (from.empty() ? "" : "restored:  from snapshot " + from + "\n");
}

std::string SnapshotsTable(const boost::json::array& snapshots) {
  TextTable table;
  table.AddColumn("ID", TextTable::Align::kLeft);
  table.AddColumn("NAME", TextTable::Align::kLeft);
  table.AddColumn("VOLUME", TextTable::Align::kLeft);
  table.AddColumn("STATE", TextTable::Align::kLeft);
  table.AddColumn("BYTES", TextTable::Align::kRight);
  table.AddColumn("SHA-256", TextTable::Align::kLeft);
  table.AddColumn("$/HOUR", TextTable::Align::kRight);
  table.AddColumn("COST", TextTable::Align::kRight);
  table.AddColumn("CREATED", TextTable::Align::kLeft);
  for (const boost::json::value& snapshot : snapshots) {
    const std::string sha = JsonText(snapshot, "sha256");
    table.AddRow({JsonText(snapshot, "id"), JsonText(snapshot, "name"),
                  JsonText(snapshot, "volume_name"), JsonText(snapshot, "state"),
                  std::to_string(JsonInteger(snapshot, "size_bytes")),
                  sha.empty() ? "-" : sha.substr(0, 12),
                  MoneyText(snapshot, "storage_price_per_hour_micros"),
                  MoneyText(snapshot, "cost_micros"), TimeText(JsonText(snapshot, "created_at"))});
  }
  return table.Render();
}

std::string SnapshotLine(const boost::json::value& snapshot) {
  const std::string state = JsonText(snapshot, "state");
  std::string line = "snapshot " + JsonText(snapshot, "id") + " (" + JsonText(snapshot, "name") +
                     ") of volume " + JsonText(snapshot, "volume_name") + ": " + state;
  if (state == "ready") {
    line += ", " + std::to_string(JsonInteger(snapshot, "size_bytes")) + " bytes, SHA-256 " +
            JsonText(snapshot, "sha256") + "; restore it with: suanli volumes create NAME " +
            "--from-snapshot " + JsonText(snapshot, "name");
  } else if (state == "failed") {
    line += " (" + JsonText(snapshot, "state_reason") + ")";
  } else {
    line += " on its node; see it with: suanli volumes snapshots";
  }
  return line + "\n";
}

core::Status RunSnapshot(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  boost::json::object body;
  if (!flags.name.empty()) body["name"] = flags.name;
  core::Result<boost::json::value> created =
      (*api)->Post(IdTarget("volumes", flags.id, "/snapshots"), body);
  if (!flags.wait || !created.ok()) return PrintResult(context, flags.json, created, SnapshotLine);
  // Until the node has made it (or failed): the archive of a large volume takes minutes.
  const std::string target = IdTarget("snapshots", JsonText(*created, "id"));
  const ApiEnvironment& env = *context.api_env;
  const core::TimePoint deadline = env.clock->Now() + kSnapshotWait;
  core::Result<boost::json::value> latest = std::move(created);
  while (latest.ok() && JsonText(*latest, "state") == "creating" && env.clock->Now() < deadline) {
    env.sleep(std::chrono::milliseconds(500));
    latest = (*api)->Get(target);
  }
  return PrintResult(context, flags.json, latest, SnapshotLine);
}

core::Status RunSnapshots(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/snapshots"),
      [](const boost::json::value& list) { return SnapshotsTable(JsonArray(list, "snapshots")); });
}

core::Status RunSnapshotRemove(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Delete(IdTarget("snapshots", flags.id)),
                     [](const boost::json::value& snapshot) {
                       return "removed snapshot " + JsonText(snapshot, "id") + " (" +
                              JsonText(snapshot, "name") + ")\n";
                     });
}

core::Status RunList(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/volumes"),
      [](const boost::json::value& list) { return VolumesTable(JsonArray(list, "volumes")); });
}

core::Status RunGet(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get(IdTarget("volumes", flags.id)), VolumeDetail);
}

core::Status RunCreate(const VolumesFlags& flags, CommandContext& context) {
  if (flags.size_gb == 0 && flags.from_snapshot.empty()) {
    return core::InvalidArgumentError(
        "--size is required (in GB), unless the volume is restored with --from-snapshot");
  }
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  boost::json::object body{{"name", flags.name}};
  if (flags.size_gb > 0) body["size_gb"] = flags.size_gb;
  if (!flags.from_snapshot.empty()) body["from_snapshot"] = flags.from_snapshot;
  if (flags.shared) body["shared"] = true;
  if (!flags.project.empty()) body["project"] = flags.project;
  return PrintResult(
      context, flags.json, (*api)->Post("/v1/volumes", body), [](const boost::json::value& volume) {
        const std::string restoring =
            JsonText(volume, "state") == "restoring"
                ? "; it is being restored from snapshot " + JsonText(volume, "restored_from") +
                      " (suanli volumes get " + JsonText(volume, "name") + ")"
                : "";
        return "created volume " + JsonText(volume, "id") + " (" + JsonText(volume, "name") + ", " +
               std::to_string(JsonInteger(volume, "size_gb")) + " GB)" + restoring +
               "; attach it with: suanli pods create ... --volume " + JsonText(volume, "name") +
               ":/data\n";
      });
}

core::Status RunResize(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json,
      (*api)->Patch(IdTarget("volumes", flags.id), boost::json::object{{"size_gb", flags.size_gb}}),
      [](const boost::json::value& volume) {
        return "volume " + JsonText(volume, "name") + " is now " +
               std::to_string(JsonInteger(volume, "size_gb")) + " GB\n";
      });
}

core::Status RunRemove(const VolumesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Delete(IdTarget("volumes", flags.id)),
                     [](const boost::json::value& volume) {
                       return "removed volume " + JsonText(volume, "id") + " (" +
                              JsonText(volume, "name") + ") and its data\n";
                     });
}

}  // namespace

CommandRun DefineVolumesCommand(CLI::App& command) {
  auto flags = std::make_shared<VolumesFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("list", "List your volumes (the default)",
                        [flags](CommandContext& context) { return RunList(*flags, context); }),
              flags->json);

  CLI::App& get = group.Add("get", "Show one volume and the pods that use it",
                            [flags](CommandContext& context) { return RunGet(*flags, context); });
  get.add_option("id", flags->id, "Volume ID or name")->required();
  AddJsonFlag(get, flags->json);

  CLI::App& create = group.Add("create", "Create a volume", [flags](CommandContext& context) {
    return RunCreate(*flags, context);
  });
  create.add_option("name", flags->name, "Its name")->required();
  create.add_option("--size", flags->size_gb, "Its size in GB (from a snapshot: its volume's)")
      ->check(PositiveInteger(100'000));
  create.add_option("--from-snapshot", flags->from_snapshot,
                    "Fill it with a snapshot's files (ID or name; suanli volumes snapshots)");
  create.add_flag("--shared", flags->shared,
                  "On the shared backend (nodes started with --shared-volumes): any of them "
                  "runs its pods, and its data never moves");
  create.add_option("--project", flags->project,
                    "The project's volume (ID or name): its pods mount it, its owner pays");
  AddJsonFlag(create, flags->json);

  CLI::App& resize = group.Add("resize", "Grow a volume", [flags](CommandContext& context) {
    return RunResize(*flags, context);
  });
  resize.add_option("id", flags->id, "Volume ID or name")->required();
  resize.add_option("--size", flags->size_gb, "Its new size in GB (only larger)")
      ->required()
      ->check(PositiveInteger(100'000));
  AddJsonFlag(resize, flags->json);

  CLI::App& remove =
      group.Add("rm", "Delete a volume no pod uses, with its data",
                [flags](CommandContext& context) { return RunRemove(*flags, context); });
  remove.add_option("id", flags->id, "Volume ID or name")->required();
  AddJsonFlag(remove, flags->json);

  CLI::App& snapshot = group.Add(
      "snapshot", "Snapshot a volume: a point-in-time copy of its files, kept on its node",
      [flags](CommandContext& context) { return RunSnapshot(*flags, context); });
  snapshot.add_option("id", flags->id, "Volume ID or name")->required();
  snapshot.add_option("--name", flags->name, "The snapshot's name (default: VOLUME-<UTC time>)");
  snapshot.add_flag("--wait", flags->wait, "Wait until it is made (or failed)");
  AddJsonFlag(snapshot, flags->json);

  AddJsonFlag(group.Add("snapshots", "List your snapshots",
                        [flags](CommandContext& context) { return RunSnapshots(*flags, context); }),
              flags->json);

  CLI::App& snapshot_remove =
      group.Add("snapshot-rm", "Delete a snapshot",
                [flags](CommandContext& context) { return RunSnapshotRemove(*flags, context); });
  snapshot_remove.add_option("id", flags->id, "Snapshot ID or name")->required();
  AddJsonFlag(snapshot_remove, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
