// Pieces every API command shares: --json, printing a result, ids in paths, a group's subcommands.
#pragma once

#include <CLI/CLI.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command.h"
#include "core/status.h"

namespace suanli::cli {

using JsonView = std::function<std::string(const boost::json::value&)>;

// Adds --json, bound to `json`, to `command`.
void AddJsonFlag(CLI::App& command, bool& json);

// Prints `result` as pretty JSON when `json`, else as `view` renders it; its error passes on.
core::Status PrintResult(CommandContext& context, bool json,
                         const core::Result<boost::json::value>& result, const JsonView& view);

// "/v1/pods/" + percent-encoded id + suffix: an id typed by a person cannot change the route.
std::string IdTarget(std::string_view collection, std::string_view id,
                     std::string_view suffix = "");

// ["K=V", ...] from a repeated flag such as --env as a JSON object; INVALID_ARGUMENT naming `flag`
// for an item without '=' or with an empty key.
core::Result<boost::json::object> ParseKeyValues(const std::vector<std::string>& items,
                                                 std::string_view flag);

// ["NAME:/path", "NAME:/path:ro", ...] from --volume as the API's "volumes" list; INVALID_ARGUMENT
// saying the form for anything else (the server checks the path itself).
core::Result<boost::json::array> ParseVolumeFlags(const std::vector<std::string>& items);

// A group such as `pods`: its subcommands and what each runs. The first runs when none is named
// (`suanli pods` lists), unless the group has no default (then a subcommand is required).
class CommandGroup {
 public:
  using Run = std::function<core::Status(CommandContext&)>;

  explicit CommandGroup(CLI::App& group, bool has_default = true);
  // Returns the subcommand for its flags.
  CLI::App& Add(std::string name, std::string help, Run run);
  // What the group runs: the parsed subcommand, else the first.
  CommandRun Build();

 private:
  CLI::App& group_;
  std::vector<std::pair<CLI::App*, Run>> subcommands_;
};

}  // namespace suanli::cli
