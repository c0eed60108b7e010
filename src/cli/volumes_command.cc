// suanli volumes: volumes of their own, which outlive pods and follow them from node to node.
#include <boost/json/array.hpp>
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
};

std::string PodsOf(const boost::json::value& volume) {
  std::string pods;
  for (const boost::json::value& pod : JsonArray(volume, "attached_to")) {
    if (!pods.empty()) pods += ",";
    if (pod.is_string()) pods += pod.as_string();
  }
  if (pods.empty()) return "-";
  return pods + (JsonBool(volume, "attached_read_write") ? " (rw)" : " (ro)");
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
                  JsonText(volume, "state"), PodsOf(volume),
                  MoneyText(volume, "storage_price_per_hour_micros"),
                  MoneyText(volume, "cost_micros")});
  }
  return table.Render();
}

std::string VolumeDetail(const boost::json::value& volume) {
  const std::string node = JsonText(volume, "home_node");
  return "id:        " + JsonText(volume, "id") + "\nname:      " + JsonText(volume, "name") +
         "\nsize:      " + std::to_string(JsonInteger(volume, "size_gb")) +
         " GB\nnode:      " + (node.empty() ? "- (no data yet)" : node) +
         "\nstate:     " + JsonText(volume, "state") + "\npods:      " + PodsOf(volume) +
         "\nprice:     " + MoneyText(volume, "storage_price_per_hour_micros") +
         "/h\ncost:      " + MoneyText(volume, "cost_micros") +
         "\ncreated:   " + TimeText(JsonText(volume, "created_at")) + "\n";
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
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json,
                     (*api)->Post("/v1/volumes", boost::json::object{{"name", flags.name},
                                                                     {"size_gb", flags.size_gb}}),
                     [](const boost::json::value& volume) {
                       return "created volume " + JsonText(volume, "id") + " (" +
                              JsonText(volume, "name") + ", " +
                              std::to_string(JsonInteger(volume, "size_gb")) +
                              " GB); attach it with: suanli pods create ... --volume " +
                              JsonText(volume, "name") + ":/data\n";
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
  create.add_option("--size", flags->size_gb, "Its size in GB")
      ->required()
      ->check(PositiveInteger(100'000));
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
  return group.Build();
}

}  // namespace suanli::cli
