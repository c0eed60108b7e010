#include "cli/api_command.h"

#include <ostream>

#include "net/http_client.h"

namespace suanli::cli {

void AddJsonFlag(CLI::App& command, bool& json) {
  command.add_flag("--json", json, "Print the server's JSON instead of a table");
}

core::Status PrintResult(CommandContext& context, bool json,
                         const core::Result<boost::json::value>& result, const JsonView& view) {
  if (!result.ok()) return result.status();
  context.out << (json ? PrettyJson(*result) : view(*result));
  return core::Status::Ok();
}

std::string IdTarget(std::string_view collection, std::string_view id, std::string_view suffix) {
  std::string target = "/v1/";
  target += collection;
  target += "/";
  target += net::PercentEncode(id);
  target += suffix;
  return target;
}

core::Result<boost::json::object> ParseKeyValues(const std::vector<std::string>& items,
                                                 std::string_view flag) {
  boost::json::object object;
  for (const std::string& item : items) {
    const size_t equals = item.find('=');
    if (equals == std::string::npos || equals == 0) {
      return core::InvalidArgumentError(std::string(flag) + " '" + item +
                                        "' is not KEY=VALUE (a name, '=', then its value)");
    }
    object[item.substr(0, equals)] = item.substr(equals + 1);
  }
  return object;
}

core::Result<boost::json::array> ParseVolumeFlags(const std::vector<std::string>& items) {
  boost::json::array volumes;
  for (const std::string& item : items) {
    const size_t colon = item.find(':');
    std::string path = colon == std::string::npos ? "" : item.substr(colon + 1);
    bool read_only = false;
    if (path.ends_with(":ro")) {
      read_only = true;
      path.resize(path.size() - 3);
    } else if (path.ends_with(":rw")) {
      path.resize(path.size() - 3);
    }
    if (colon == 0 || path.empty() || path.front() != '/' || path.find(':') != std::string::npos) {
      return core::InvalidArgumentError("--volume '" + item +
                                        "' is not NAME:/path or NAME:/path:ro, such as --volume "
                                        "data:/data:ro");
    }
    volumes.push_back(boost::json::object{
        {"name", item.substr(0, colon)}, {"mount_path", path}, {"read_only", read_only}});
  }
  return volumes;
}

CommandGroup::CommandGroup(CLI::App& group, bool has_default) : group_(group) {
  group_.require_subcommand(has_default ? 0 : 1, 1);
}

CLI::App& CommandGroup::Add(std::string name, std::string help, Run run) {
  CLI::App* command = group_.add_subcommand(std::move(name), std::move(help));
  subcommands_.emplace_back(command, std::move(run));
  return *command;
}

CommandRun CommandGroup::Build() {
  return [subcommands = subcommands_](CommandContext& context) -> core::Status {
    for (const auto& entry : subcommands) {
      if (entry.first->parsed()) return entry.second(context);
    }
    return subcommands.front().second(context);
  };
}

}  // namespace suanli::cli
