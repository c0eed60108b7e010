// suanli nodes: the GPU servers of the cluster, their upkeep, and join tokens for new ones;
// suanli availability: free GPUs by type.
#include <memory>
#include <ostream>

#include "cli/api_command.h"
#include "cli/api_views.h"

namespace suanli::cli {
namespace {

struct NodesFlags {
  bool json = false;
  std::string id;
  std::string note;
};

// The pods the table counts GPUs in use from (the server sends no count per node); none for
// --json, which prints the server's answer unchanged.
core::Result<boost::json::array> PodsForTable(bool json, ApiClient& api) {
  if (json) return boost::json::array();
  core::Result<boost::json::value> list = api.GetEveryPage("/v1/pods", "pods");
  if (!list.ok()) return list.status();
  return JsonArray(*list, "pods");
}

core::Status RunList(const NodesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  core::Result<boost::json::value> answer = (*api)->Get("/v1/nodes");
  core::Result<boost::json::array> pods = PodsForTable(flags.json, **api);
  if (answer.ok() && !pods.ok()) return pods.status();
  return PrintResult(context, flags.json, answer,
                     [&context, &pods](const boost::json::value& list) {
                       const boost::json::array& nodes = JsonArray(list, "nodes");
                       if (nodes.empty()) {
                         context.err << "no nodes; add one with `suanli nodes join-token`, then "
                                        "`suanli agent` on the GPU server\n";
                         return std::string();
                       }
                       return NodesTable(nodes, *pods);
                     });
}

core::Status RunGet(const NodesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  core::Result<boost::json::value> answer = (*api)->Get(IdTarget("nodes", flags.id));
  core::Result<boost::json::array> pods = PodsForTable(flags.json, **api);
  if (answer.ok() && !pods.ok()) return pods.status();
  return PrintResult(context, flags.json, answer,
                     [&pods](const boost::json::value& node) { return NodeDetail(node, *pods); });
}

// cordon, uncordon, drain (POST) and rm (DELETE).
core::Status RunAction(const NodesFlags& flags, CommandContext& context, std::string_view action) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  const core::Result<boost::json::value> answer =
      action == "rm" ? (*api)->Delete(IdTarget("nodes", flags.id))
                     : (*api)->Post(IdTarget("nodes", flags.id, "/" + std::string(action)),
                                    boost::json::object());
  return PrintResult(context, flags.json, answer, [&](const boost::json::value& node) {
    if (action == "rm") return "removed node " + flags.id + "\n";
    return JsonText(node, "id") + " " + JsonText(node, "state") +
           (JsonBool(node, "cordoned") ? ", cordoned" : "") +
           (JsonBool(node, "draining") ? ", draining" : "") + "\n";
  });
}

core::Status RunCreateJoinToken(const NodesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  boost::json::object body;
  if (!flags.note.empty()) body["note"] = flags.note;
  const std::string url = (*api)->config().url;
  return PrintResult(context, flags.json, (*api)->Post("/v1/join-tokens", body),
                     [&url](const boost::json::value& answer) {
                       const std::string secret = JsonText(answer, "secret");
                       const boost::json::value* token = JsonField(answer, "join_token");
                       const std::string expires =
                           token ? TimeText(JsonText(*token, "expires_at")) : "-";
                       return secret + "\n" + "run on the GPU server (the token expires " +
                              expires + " UTC and is shown only now):\n  suanli agent --server " +
                              url + " --join-token " + secret + "\n";
                     });
}

core::Status RunListJoinTokens(const NodesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Get("/v1/join-tokens"),
                     [](const boost::json::value& list) {
                       return JoinTokensTable(JsonArray(list, "join_tokens"));
                     });
}

core::Status RunRemoveJoinToken(const NodesFlags& flags, CommandContext& context) {
  core::Result<std::unique_ptr<ApiClient>> api = context.Api();
  if (!api.ok()) return api.status();
  return PrintResult(context, flags.json, (*api)->Delete(IdTarget("join-tokens", flags.id)),
                     [&flags](const boost::json::value& /*answer*/) {
                       return "revoked join token " + flags.id + "\n";
                     });
}

struct AvailabilityFlags {
  bool json = false;
};

}  // namespace

CommandRun DefineNodesCommand(CLI::App& command) {
  auto flags = std::make_shared<NodesFlags>();
  CommandGroup group(command);
  AddJsonFlag(command, flags->json);
  AddJsonFlag(group.Add("list", "List the nodes (the default)",
                        [flags](CommandContext& context) { return RunList(*flags, context); }),
              flags->json);
  CLI::App& get = group.Add("get", "Show one node and its GPUs",
                            [flags](CommandContext& context) { return RunGet(*flags, context); });
  get.add_option("id", flags->id, "Node ID")->required();
  AddJsonFlag(get, flags->json);

  const std::pair<const char*, const char*> actions[] = {
      {"cordon", "Place no new pods on a node"},
      {"uncordon", "Place pods on a node again"},
      {"drain", "Cordon a node and stop its pods"},
      {"rm", "Forget a node (its agent must join again)"},
  };
  for (const auto& action : actions) {
    const std::string name = action.first;
    CLI::App& sub = group.Add(name, action.second, [flags, name](CommandContext& context) {
      return RunAction(*flags, context, name);
    });
    sub.add_option("id", flags->id, "Node ID")->required();
    AddJsonFlag(sub, flags->json);
  }

  // A group inside the group: its run exists only once its subcommands do.
  auto join_run = std::make_shared<CommandRun>();
  CLI::App& join = group.Add("join-token", "Create (the default), list or revoke join tokens",
                             [join_run](CommandContext& context) { return (*join_run)(context); });
  CommandGroup join_group(join);
  AddJsonFlag(join, flags->json);
  CLI::App& create = join_group.Add(
      "create", "A one-time token for `suanli agent --join-token`",
      [flags](CommandContext& context) { return RunCreateJoinToken(*flags, context); });
  create.add_option("--note", flags->note, "What it is for, e.g. the host's name");
  AddJsonFlag(create, flags->json);
  AddJsonFlag(join_group.Add(
                  "list", "List unused join tokens",
                  [flags](CommandContext& context) { return RunListJoinTokens(*flags, context); }),
              flags->json);
  CLI::App& revoke = join_group.Add("rm", "Revoke a join token", [flags](CommandContext& context) {
    return RunRemoveJoinToken(*flags, context);
  });
  revoke.add_option("id", flags->id, "Join token ID")->required();
  AddJsonFlag(revoke, flags->json);
  join.add_option("--note", flags->note, "What it is for, e.g. the host's name");
  *join_run = join_group.Build();
  return group.Build();
}

CommandRun DefineAvailabilityCommand(CLI::App& command) {
  auto flags = std::make_shared<AvailabilityFlags>();
  AddJsonFlag(command, flags->json);
  return [flags](CommandContext& context) -> core::Status {
    core::Result<std::unique_ptr<ApiClient>> api = context.Api();
    if (!api.ok()) return api.status();
    return PrintResult(context, flags->json, (*api)->Get("/v1/availability"),
                       [](const boost::json::value& answer) {
                         return AvailabilityTable(JsonArray(answer, "gpus"));
                       });
  };
}

}  // namespace suanli::cli
