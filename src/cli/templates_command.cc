// suanli templates: the images and settings pods start from.
#include <boost/json/array.hpp>
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/flags.h"

namespace suanli::cli {
namespace {

struct TemplatesFlags {
  bool json = false;
  std::string id;
  // create
  std::string name;
  std::string image;
  std::string description;
  std::vector<std::string> command;
  std::vector<std::string> env;
  std::vector<std::string> ports;
  std::optional<int> disk_gb;
  std::optional<int> volume_gb;
  std::string volume_path;
  bool is_public = false;
};

core::Status RunList(const TemplatesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Get("/v1/templates"),
      [](const boost::json::value& list) { return TemplatesTable(JsonArray(list, "templates")); });
}

core::Status RunGet(const TemplatesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get(IdTarget("templates", flags.id)),
                     TemplateDetail);
}

core::Status RunCreate(const TemplatesFlags& flags, CommandContext& context) {
  boost::json::object body;
  body["name"] = flags.name;
  body["image"] = flags.image;
  if (!flags.description.empty()) body["description"] = flags.description;
  if (!flags.command.empty()) {
    boost::json::array command;
    for (const std::string& word : flags.command) command.emplace_back(word);
    body["command"] = std::move(command);
  }
  if (!flags.env.empty()) {
    core::Result<boost::json::object> env = ParseKeyValues(flags.env, "--env");
    if (!env.ok()) return env.status();
    body["env"] = std::move(*env);
  }
  if (!flags.ports.empty()) {
    boost::json::array ports;
    for (const std::string& port : flags.ports) ports.emplace_back(port);
    body["ports"] = std::move(ports);
  }
  if (flags.disk_gb) body["container_disk_gb"] = *flags.disk_gb;
  if (flags.volume_gb) body["volume_gb"] = *flags.volume_gb;
  if (!flags.volume_path.empty()) body["volume_mount_path"] = flags.volume_path;
  if (flags.is_public) body["public"] = true;
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(
      context, flags.json, (*api)->Post("/v1/templates", body), [](const boost::json::value& spec) {
        return "created template " + JsonText(spec, "id") + " (" + JsonText(spec, "name") + ")\n";
      });
}

core::Status RunRemove(const TemplatesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Delete(IdTarget("templates", flags.id)),
                     [&flags](const boost::json::value& /*answer*/) {
                       return "removed template " + flags.id + "\n";
                     });
}

}  // namespace

CommandRun DefineTemplatesCommand(CLI::App& command) {
  auto flags = std::make_shared<TemplatesFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("list", "List the templates you can use (the default)",
                        [flags](CommandContext& context) { return RunList(*flags, context); }),
              flags->json);

  CLI::App& get = group.Add("get", "Show one template",
                            [flags](CommandContext& context) { return RunGet(*flags, context); });
  get.add_option("id", flags->id, "Template ID or name")->required();
  AddJsonFlag(get, flags->json);

  CLI::App& create = group.Add("create", "Create a template", [flags](CommandContext& context) {
    return RunCreate(*flags, context);
  });
  create.add_option("name", flags->name, "Its name")->required();
  create.add_option("--image", flags->image, "Container image")->required();
  create.add_option("--description", flags->description, "What it is for");
  create.add_option("--command", flags->command,
                    "The container's command, one word per flag (repeatable)");
  create.add_option("--env", flags->env, "An environment variable, KEY=VALUE (repeatable)");
  create.add_option("--port", flags->ports, "A port to expose, e.g. 22/tcp (repeatable)");
  create.add_option("--disk-gb", flags->disk_gb, "Container disk in GB")
      ->check(PositiveInteger(1 << 20));
  create.add_option("--volume-gb", flags->volume_gb, "Persistent volume in GB")
      ->check(CLI::Range(0, 1 << 20));
  create.add_option("--volume-path", flags->volume_path, "Where the volume is mounted");
  create.add_flag("--public", flags->is_public, "Let every user deploy it");
  AddJsonFlag(create, flags->json);

  CLI::App& remove =
      group.Add("rm", "Remove a template you created",
                [flags](CommandContext& context) { return RunRemove(*flags, context); });
  remove.add_option("id", flags->id, "Template ID")->required();
  AddJsonFlag(remove, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
