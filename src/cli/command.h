// The `suanli` command line: one table of subcommands, each a row of {name, help, define}.
//
// A row's `define` adds the subcommand's flags to its CLI11 App and returns what runs once the
// command line is parsed. Handlers write to the context's streams, never to std::cout, so tests run
// them in process.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "catalog/catalog.h"
#include "core/status.h"

namespace suanli::cli {

struct CommandContext {
  std::ostream& out;        // results: tables and JSON
  std::ostream& err;        // notes and errors for the person at the terminal
  std::string prices_file;  // --prices: an operator's prices on top of the built-in ones

  // The built-in catalog with --prices applied; errors name the file and line.
  core::Result<catalog::Catalog> LoadCatalog() const;
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

std::span<const CommandSpec> Commands();

}  // namespace suanli::cli
