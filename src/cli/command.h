// The `suanli` command line: one table of subcommands, each a row of {name, help, define}.
//
// A row's `define` adds the subcommand's flags to its CLI11 App and returns what runs once the
// command line is parsed. Handlers write to the context's streams, never to std::cout, so tests run
// them in process.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "cli/api_client.h"
#include "core/status.h"

namespace suanli::cli {

struct CommandContext {
  std::ostream& out;        // results: tables and JSON
  std::ostream& err;        // notes and errors for the person at the terminal
  std::string prices_file;  // --prices: an operator's prices on top of the built-in ones
  std::string api_url;      // --url, empty when not given
  std::string api_token;    // --token, empty when not given
  const ApiEnvironment* api_env = nullptr;  // not owned; outlives the command

  // The built-in catalog with --prices applied; errors name the file and line.
  core::Result<catalog::Catalog> LoadCatalog() const;

  // The server and token from --url/--token, the environment or the login file (see
  // api_client.h). UNAUTHENTICATED without a token when `require_token`; INVALID_ARGUMENT for a bad
  // URL or login file.
  core::Result<std::unique_ptr<ApiClient>> Api(bool require_token = true) const;
};

using CommandRun = std::function<core::Status(CommandContext&)>;

struct CommandSpec {
  std::string_view name;
  std::string_view help;
  CommandRun (*define)(CLI::App& command);
};

// The rows of the table; each lives in its own <name>_command.cc.
CommandRun DefineGpusCommand(CLI::App& command);
CommandRun DefineCompareCommand(CLI::App& command);
CommandRun DefineAdviseCommand(CLI::App& command);
CommandRun DefineServerCommand(CLI::App& command);
CommandRun DefineUpCommand(CLI::App& command);
CommandRun DefineStoreCommand(CLI::App& command);
CommandRun DefineAgentCommand(CLI::App& command);
CommandRun DefineLoginCommand(CLI::App& command);
CommandRun DefinePodsCommand(CLI::App& command);
CommandRun DefineTemplatesCommand(CLI::App& command);
CommandRun DefineVolumesCommand(CLI::App& command);
CommandRun DefineEndpointsCommand(CLI::App& command);
CommandRun DefineNodesCommand(CLI::App& command);
CommandRun DefineEventsCommand(CLI::App& command);  // events_command.cc, with audit
CommandRun DefineAuditCommand(CLI::App& command);
CommandRun DefineWebhooksCommand(CLI::App& command);
CommandRun DefineProjectsCommand(CLI::App& command);
CommandRun DefineAvailabilityCommand(CLI::App& command);
CommandRun DefineBillingCommand(CLI::App& command);
CommandRun DefineUsersCommand(CLI::App& command);
CommandRun DefineTokensCommand(CLI::App& command);
CommandRun DefineSshKeysCommand(CLI::App& command);
CommandRun DefinePricesCommand(CLI::App& command);
CommandRun DefineCompletionCommand(CLI::App& command);
CommandRun DefineVersionCommand(CLI::App& command);  // version_command.cc
CommandRun DefineApplyCommand(CLI::App& command);    // apply_command.cc, with delete
CommandRun DefineDeleteCommand(CLI::App& command);
CommandRun DefineGetCommand(CLI::App& command);

std::span<const CommandSpec> Commands();

// "suanli 0.1.0 (git 1a2b3c4d5e6f)": the release, and the commit of a build from a git checkout.
std::string VersionText();

}  // namespace suanli::cli
