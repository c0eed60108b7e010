#include "cli/cli.h"

#include <optional>
#include <ostream>

#include "catalog/catalog_file.h"
#include "cli/command.h"
#include "cli/files.h"

namespace suanli::cli {
namespace {

constexpr CommandSpec kCommands[] = {
    {"gpus", "List GPU types with specs, prices and value per dollar; filter and sort them",
     DefineGpusCommand},
    {"compare", "Compare GPU types side by side, as ratios to the first", DefineCompareCommand},
    {"advise", "Predict memory, speed, time and cost of a workload on every GPU, and pick one",
     DefineAdviseCommand},
};

// CLI11 messages may span lines; the contract is one line per error.
std::string OneLine(std::string text) {
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

// CLI11 says only "A subcommand is required" for `suanli gpu`; people need the word it did not
// know.
std::optional<std::string> UnknownCommandError(const std::vector<std::string>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--prices") {
      ++i;  // its value
      continue;
    }
    if (word.starts_with("-")) continue;
    std::string known;
    for (const CommandSpec& spec : kCommands) {
      if (spec.name == word) return std::nullopt;
      known += (known.empty() ? "" : ", ") + std::string(spec.name);
    }
    std::string message = "unknown command '" + word + "'";
    for (const CommandSpec& spec : kCommands) {
      if (spec.name.starts_with(word) || word.starts_with(spec.name)) {
        message += "; did you mean '" + std::string(spec.name) + "'?";
        break;
      }
    }
    return message + " (commands: " + known + ")";
  }
  return std::nullopt;
}

}  // namespace

std::span<const CommandSpec> Commands() { return kCommands; }

core::Result<catalog::Catalog> CommandContext::LoadCatalog() const {
  if (prices_file.empty()) return catalog::LoadBuiltInCatalog();
  core::Result<std::string> text = ReadFile(prices_file);
  if (!text.ok()) return text.status().WithContext("--prices");
  const catalog::DataFile override_file{prices_file, *text};
  return catalog::LoadBuiltInCatalog(&override_file);
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app(
      "suanli: choose the GPU a deep-learning job needs, and rent it on your own GPU cloud.",
      "suanli");
  app.require_subcommand(1);
  app.fallthrough();  // global flags such as --prices may follow the subcommand
  CommandContext context{out, err, ""};
  app.add_option(
         "--prices", context.prices_file,
         "An operator's price file (same shape as data/prices.yaml) that replaces built-in prices")
      ->envname("SUANLI_PRICES");

  std::vector<std::pair<CLI::App*, CommandRun>> runs;
  for (const CommandSpec& spec : kCommands) {
    CLI::App* command = app.add_subcommand(std::string(spec.name), std::string(spec.help));
    runs.emplace_back(command, spec.define(*command));
  }

  if (args.empty()) {
    err << app.help();
    return 2;
  }
  if (std::optional<std::string> error = UnknownCommandError(args)) {
    err << "suanli: " << *error << "\n";
    return 2;
  }
  std::vector<const char*> argv = {"suanli"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::Success& help) {
    return app.exit(help, out, err);
  } catch (const CLI::ParseError& error) {
    std::string hint = "suanli --help";
    for (const auto& [command, run] : runs) {
      if (command->parsed()) hint = "suanli " + command->get_name() + " --help";
    }
    err << "suanli: " << OneLine(error.what()) << " (see '" << hint << "')\n";
    return 2;
  }

  for (auto& [command, run] : runs) {
    if (!command->parsed()) continue;
    const core::Status status = run(context);
    if (!status.ok()) {
      err << "suanli " << command->get_name() << ": " << OneLine(status.message()) << "\n";
      return core::ExitCodeFor(status.code());
    }
    return 0;
  }
  return 2;  // unreachable: require_subcommand(1) makes CLI11 refuse a line without one
}

}  // namespace suanli::cli
