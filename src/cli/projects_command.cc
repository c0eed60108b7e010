// suanli projects: teams' projects, their members and roles (docs/api.md, "Projects"). A project's
// pods are created with `suanli pods create --project NAME`.
#include <memory>
#include <string>
#include <tuple>

#include "cli/api_command.h"
#include "cli/api_views.h"
#include "cli/text_table.h"
#include "net/http_client.h"

namespace suanli::cli {
namespace {

struct ProjectsFlags {
  bool json = false;
  std::string project;
  std::string name;
  std::string user;
  std::string role = "member";
  // set-budget: each given one is set ("" : left as it is).
  std::string cap;
  std::string monthly;
  std::string action;
};

// set-budget's body: the flags given, in micro-dollars; INVALID_ARGUMENT naming a bad one.
core::Result<boost::json::object> BudgetBody(const ProjectsFlags& flags) {
  boost::json::object body;
  for (const auto& [flag, value, key] :
       {std::tuple{"--cap", &flags.cap, "spend_cap_per_hour_micros"},
        std::tuple{"--monthly", &flags.monthly, "monthly_budget_micros"}}) {
    if (value->empty()) continue;
    core::Result<core::Money> money = core::Money::ParseDollars(*value);
    if (!money.ok()) return money.status().WithContext(flag);
    body[key] = money->micros();
  }
  if (!flags.action.empty()) body["action"] = flags.action;
  if (body.empty()) {
    return core::InvalidArgumentError(
        "give --cap DOLLARS_PER_HOUR, --monthly DOLLARS or --action (0: none)");
  }
  return body;
}

// "alice=owner bob=member": members by user id, with their roles.
std::string MembersText(const boost::json::value& project) {
  std::string text;
  for (const boost::json::value& member : JsonArray(project, "members")) {
    text +=
        (text.empty() ? "" : " ") + JsonText(member, "user_id") + "=" + JsonText(member, "role");
  }
  return text;
}

std::string ProjectsTable(const boost::json::array& projects) {
  TextTable table;
  table.AddColumn("ID", TextTable::Align::kLeft);
  table.AddColumn("NAME", TextTable::Align::kLeft);
  table.AddColumn("OWNER", TextTable::Align::kLeft);
  table.AddColumn("MEMBERS", TextTable::Align::kLeft);
  for (const boost::json::value& project : projects) {
    table.AddRow({JsonText(project, "id"), JsonText(project, "name"), JsonText(project, "owner_id"),
                  MembersText(project)});
  }
  return table.Render();
}

core::Status RunProjects(const ProjectsFlags& flags, CommandContext& context,
                         std::string_view verb) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  const auto one = [](const boost::json::value& project) {
    return ProjectsTable(boost::json::array{project});
  };
  const std::string members =
      IdTarget("projects", flags.project, "/members/" + net::PercentEncode(flags.user));
  if (verb == "create") {
    return PrintResult(context, flags.json,
                       (*api)->Post("/v1/projects", boost::json::object{{"name", flags.name}}),
                       one);
  }
  if (verb == "show") {
    return PrintResult(context, flags.json, (*api)->Get(IdTarget("projects", flags.project)), one);
  }
  if (verb == "add-member") {
    return PrintResult(context, flags.json,
                       (*api)->Put(members, boost::json::object{{"role", flags.role}}), one);
  }
  if (verb == "remove-member") {
    return PrintResult(context, flags.json, (*api)->Delete(members), one);
  }
  if (verb == "set-budget") {
    core::Result<boost::json::object> body = BudgetBody(flags);
    if (!body.ok()) return body.status();
    return PrintResult(
        context, flags.json, (*api)->Put(IdTarget("projects", flags.project, "/budget"), *body),
        [](const boost::json::value& project) {
          const auto dollars = [&](std::string_view key) {
            const int64_t micros = JsonInteger(project, key);
            return micros > 0 ? core::Money::FromMicros(micros).ToString() : std::string("none");
          };
          return JsonText(project, "name") + ": cap " + dollars("spend_cap_per_hour_micros") +
                 "/h, monthly budget " + dollars("monthly_budget_micros") +
                 " (at 100 %: " + JsonText(project, "budget_action") + ")\n";
        });
  }
  if (verb == "rm") {
    return PrintResult(
        context, flags.json, (*api)->Delete(IdTarget("projects", flags.project)),
        [&flags](const boost::json::value&) { return "removed project " + flags.project + "\n"; });
  }
  return PrintResult(context, flags.json, (*api)->Get("/v1/projects"),
                     [](const boost::json::value& answer) {
                       return ProjectsTable(JsonArray(answer, "projects"));
                     });
}

}  // namespace

CommandRun DefineProjectsCommand(CLI::App& command) {
  auto flags = std::make_shared<ProjectsFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  const auto verb = [flags](std::string_view name) {
    return [flags, name](CommandContext& context) { return RunProjects(*flags, context, name); };
  };
  AddJsonFlag(group.Add("list", "The projects you are a member of (the default)", verb("list")),
              flags->json);
  CLI::App& create =
      group.Add("create", "Create a project you own: its pods bill your balance", verb("create"));
  create.add_option("name", flags->name, "The project's name, unique in this cloud")->required();
  AddJsonFlag(create, flags->json);
  CLI::App& show = group.Add("show", "A project and its members", verb("show"));
  show.add_option("project", flags->project, "Project ID or name")->required();
  AddJsonFlag(show, flags->json);
  CLI::App& add = group.Add(
      "add-member", "Make a user a member (creates and runs its pods) or a viewer (sees them)",
      verb("add-member"));
  add.add_option("project", flags->project, "Project ID or name")->required();
  add.add_option("user", flags->user, "User ID or name")->required();
  add.add_option("--role", flags->role, "member or viewer")
      ->check(CLI::IsMember({"member", "viewer"}))
      ->capture_default_str();
  AddJsonFlag(add, flags->json);
  CLI::App& remove = group.Add("remove-member", "Remove a member (the owner), or leave yourself",
                               verb("remove-member"));
  remove.add_option("project", flags->project, "Project ID or name")->required();
  remove.add_option("user", flags->user, "User ID or name")->required();
  AddJsonFlag(remove, flags->json);
  CLI::App& budget = group.Add(
      "set-budget",
      "Its own limits (the owner; 0: none): a $/h cap on its pods together, and a monthly budget "
      "warned at 80 % with an action at 100 %",
      verb("set-budget"));
  budget.add_option("project", flags->project, "Project ID or name")->required();
  budget.add_option("--cap", flags->cap, "Dollars per hour its pods may cost together, e.g. 10");
  budget.add_option("--monthly", flags->monthly, "Dollars per calendar month (UTC), e.g. 500");
  budget.add_option("--action", flags->action, "At 100 %: notify, stop_interruptible or stop_all")
      ->check(CLI::IsMember({"notify", "stop_interruptible", "stop_all"}));
  AddJsonFlag(budget, flags->json);
  CLI::App& rm =
      group.Add("rm", "Delete a project (its owner; its pods terminated first)", verb("rm"));
  rm.add_option("project", flags->project, "Project ID or name")->required();
  AddJsonFlag(rm, flags->json);
  return group.Build();
}

}  // namespace suanli::cli
