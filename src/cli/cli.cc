#include "cli/cli.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <ostream>

#include "catalog/catalog_file.h"
#include "cli/command.h"
#include "cli/files.h"
#include "core/suggest.h"

namespace suanli::cli {
namespace {

constexpr CommandSpec kCommands[] = {
    {"gpus", "List GPU types with specs, prices and value per dollar; filter and sort them",
     DefineGpusCommand},
    {"compare", "Compare GPU types side by side, as ratios to the first", DefineCompareCommand},
    {"advise", "Predict memory, speed, time and cost of a workload on every GPU, and pick one",
     DefineAdviseCommand},
    {"up", "Run suanli on this machine with its defaults (./suanli-data, 127.0.0.1:7070)",
     DefineUpCommand},
    {"server", "Run the control plane: REST API, scheduler and per-second billing",
     DefineServerCommand},
    {"agent", "Run the node agent on a GPU host (or `agent doctor` to check the host)",
     DefineAgentCommand},
    {"login", "Save the server URL and your API token for the commands below", DefineLoginCommand},
    {"pods", "Deploy, list, stop, start and remove pods", DefinePodsCommand},
    {"templates", "List, show, create and remove pod templates", DefineTemplatesCommand},
    {"volumes", "Create, list, grow and remove volumes that outlive pods", DefineVolumesCommand},
    {"projects", "Teams: projects whose members share pods, billed to the owner",
     DefineProjectsCommand},
    {"endpoints", "Serverless endpoints: workers that scale with a job queue (RunPod's /v2 API)",
     DefineEndpointsCommand},
    {"availability", "Free GPUs on the cluster, by type, with prices", DefineAvailabilityCommand},
    {"apply", "Create the pods, endpoints, templates and volumes of a YAML spec (-f)",
     DefineApplyCommand},
    {"get", "Show the objects a YAML spec names as they are now, and whether they match it (-f)",
     DefineGetCommand},
    {"delete", "Delete the pods, endpoints, templates and volumes a YAML spec names (-f)",
     DefineDeleteCommand},
    {"nodes", "GPU servers: list, cordon, drain, remove; join tokens for new ones",
     DefineNodesCommand},
    {"billing", "Balance, spending, usage by pod or day, and the ledger", DefineBillingCommand},
    {"events", "What happened to your pods and account, and why (-f follows)", DefineEventsCommand},
    {"webhooks", "POST your events to a URL as they happen: list, create, rm",
     DefineWebhooksCommand},
    {"audit", "Who called which mutating API route, and how it ended (admin; --csv)",
     DefineAuditCommand},
    {"users", "Users and their credits (admin), or yourself", DefineUsersCommand},
    {"tokens", "Your API tokens: list, create, revoke", DefineTokensCommand},
    {"ssh-keys", "SSH public keys put into your pods", DefineSshKeysCommand},
    {"prices", "Set the hourly price of a GPU type (admin)", DefinePricesCommand},
    {"store", "Copy the control plane's state to another store (SQLite to PostgreSQL)",
     DefineStoreCommand},
    {"completion", "Print a shell completion script: suanli completion bash|zsh|fish",
     DefineCompletionCommand},
    {"version", "Print suanli's version (and the git commit it was built from)",
     DefineVersionCommand},
};

// Global flags that take a value, so the search for the command word skips that value.
constexpr std::string_view kGlobalFlagsWithValue[] = {"--prices", "--url", "--token"};

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
    if (std::find(std::begin(kGlobalFlagsWithValue), std::end(kGlobalFlagsWithValue), word) !=
        std::end(kGlobalFlagsWithValue)) {
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

// CLI11 says "The following arguments were not expected: demo-http --templte" for a mistyped flag
// (its value is an extra too); people need the flag it did not know and the one they meant. The
// known flags are those of the parsed command chain (`chain`, outermost first), since the global
// ones may follow the command. nullopt when no extra is a flag (a stray word keeps CLI11's text).
std::optional<std::string> UnknownFlagError(const std::vector<std::string>& extras,
                                            const std::vector<const CLI::App*>& chain) {
  std::vector<std::string> known;
  for (const CLI::App* app : chain) {
    for (const CLI::Option* option : app->get_options()) {
      for (const std::string& name : option->get_lnames()) known.push_back(name);
    }
  }
  std::vector<std::pair<std::string_view, size_t>> keys;
  for (size_t i = 0; i < known.size(); ++i) keys.emplace_back(known[i], i);
  std::vector<std::string> unknown;  // "--templte", each with its guess
  std::vector<std::string> guesses;
  for (const std::string& extra : extras) {
    if (!extra.starts_with("-") || extra == "-" || extra == "--") continue;
    const std::string flag = extra.substr(0, extra.find('='));
    const std::vector<size_t> closest =
        extra.starts_with("--")
            ? core::ClosestMatches(std::string_view(flag).substr(2), keys, known.size(), 1)
            : std::vector<size_t>{};
    unknown.push_back(flag);
    guesses.push_back(closest.empty() ? "" : "--" + known[closest.front()]);
  }
  if (unknown.empty()) return std::nullopt;
  if (unknown.size() == 1) {
    std::string message = "unknown flag " + unknown.front();
    if (!guesses.front().empty()) message += "; did you mean " + guesses.front() + "?";
    return message;
  }
  std::vector<std::string> named;
  for (size_t i = 0; i < unknown.size(); ++i) {
    named.push_back(unknown[i] + (guesses[i].empty() ? "" : " (did you mean " + guesses[i] + "?)"));
  }
  return "unknown flags " + core::JoinChoices(named, " and ");
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

core::Result<std::unique_ptr<ApiClient>> CommandContext::Api(bool require_token) const {
  core::Result<std::optional<ApiConfig>> file = ReadConfigFile(ConfigFilePath(*api_env));
  if (!file.ok()) return file.status();
  return ApiClient::Create(ResolveApiConfig(api_url, api_token, *api_env, *file), *api_env,
                           require_token);
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  return RunCli(args, out, err, ApiEnvironment::FromProcess());
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err,
           const ApiEnvironment& api_env) {
  CLI::App app(
      "suanli: choose the GPU a deep-learning job needs, and rent it on your own GPU cloud.",
      "suanli");
  app.require_subcommand(1);
  app.set_version_flag("--version", VersionText(), "Print suanli's version and exit");
  app.fallthrough();  // global flags such as --prices may follow the subcommand
  CommandContext context{out, err, "", "", "", &api_env};
  app.add_option("--url", context.api_url,
                 "The suanli server, http://HOST:PORT (else $SUANLI_URL, the login, or " +
                     std::string(kDefaultApiUrl) + ")");
  app.add_option("--token", context.api_token,
                 "Your API token (else $SUANLI_TOKEN or the one `suanli login` saved)");
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
    std::vector<const CLI::App*> chain = {&app};
    for (const auto& entry : runs) {
      const CLI::App* command = entry.first;
      if (!command->parsed()) continue;
      hint = "suanli " + command->get_name();
      chain.push_back(command);
      for (const CLI::App* sub : command->get_subcommands()) {
        hint += " " + sub->get_name();
        chain.push_back(sub);
      }
      hint += " --help";
    }
    std::optional<std::string> unknown_flag;
    if (dynamic_cast<const CLI::ExtrasError*>(&error) != nullptr) {
      unknown_flag = UnknownFlagError(app.remaining(true), chain);
    }
    err << "suanli: " << (unknown_flag ? *unknown_flag : OneLine(error.what())) << " (see '" << hint
        << "')\n";
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
