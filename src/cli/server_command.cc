#include <sys/wait.h>
#include <unistd.h>

#include <boost/json.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "agent/agent.h"
#include "agent/engine.h"
#include "cli/api_client.h"
#include "cli/command.h"
#include "cli/up_hints.h"
#include "core/stop_signal.h"
#include "server/server.h"
#include "store/store.h"

namespace suanli::cli {
namespace {

// The engine's socket: one that exists, or Podman's service started here (rootful, as `up` runs as
// root) when Podman is installed. scripts/engine.sh also configures Podman for sandboxes; this is
// the fallback for a machine where Podman just works.
core::Result<std::string> EnsureLocalEngine(std::ostream& log) {
  if (std::string socket = agent::FindEngineSocket(); !socket.empty()) return socket;
  const std::string path = "/run/podman/podman.sock";
  log << "no container engine socket found; starting Podman's service on " << path << std::endl;
  std::filesystem::create_directories("/run/podman");
  const pid_t child = fork();
  if (child == 0) {
    setsid();
    execlp("podman", "podman", "system", "service", "--time=0", ("unix://" + path).c_str(),
           static_cast<char*>(nullptr));
    _exit(127);
  }
  if (child < 0) return core::UnavailableError("cannot start podman: fork failed");
  for (int i = 0; i < 100; ++i) {
    if (std::filesystem::exists(path)) return "unix://" + path;
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return core::UnavailableError(
      "no Docker or Podman socket, and Podman's service did not start; install and start an "
      "engine: sudo bash scripts/install-deps.sh && sudo bash scripts/engine.sh");
}

// An API client with the admin's token, as an operator would use it.
core::Result<std::unique_ptr<ApiClient>> AdminApi(const std::string& url,
                                                  const std::filesystem::path& token_file,
                                                  const ApiEnvironment& env) {
  std::ifstream in(token_file);
  std::string admin_token;
  std::getline(in, admin_token);
  return ApiClient::Create({url, admin_token}, env);
}

// A join token for the local agent, made through the API with the admin's token.
core::Result<std::string> CreateJoinToken(ApiClient& api) {
  core::Result<boost::json::value> created =
      api.Post("/v1/join-tokens", boost::json::object{{"note", "suanli up: the local agent"}});
  if (!created.ok()) return created.status();
  const boost::json::value* secret = created->as_object().if_contains("secret");
  if (secret == nullptr || !secret->is_string()) {
    return core::InternalError("the server's join token answer has no secret");
  }
  return std::string(secret->as_string());
}

// Whether the admin is the only user (a first start, or no one made yet): then the hints suggest
// making one. When the server cannot say, they do too.
bool NoOtherUser(ApiClient& api) {
  core::Result<boost::json::value> users = api.Get("/v1/users");
  if (!users.ok() || !users->is_object()) return true;
  const boost::json::value* list = users->as_object().if_contains("users");
  return list == nullptr || !list->is_array() || list->as_array().size() <= 1;
}

// The hints for this binary, as PATH and /proc/self/exe tell.
UpHints HintsFor(const std::string& listen_host, uint16_t port) {
  UpHints hints;
  std::error_code error;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  const char* path_env = std::getenv("PATH");
  hints.program = error ? "suanli" : ProgramName(path_env == nullptr ? "" : path_env, self);
  hints.url = ReachableUrl(listen_host, port);
  hints.all_addresses = ListensOnAllAddresses(listen_host);
  return hints;
}

void AddStoreOption(CLI::App& command, std::string& store) {
  command
      .add_option("--store", store,
                  "Where the state lives: sqlite://PATH or postgres://USER:PASSWORD@HOST:PORT/DB "
                  "(default: SQLite in --data-dir)")
      ->envname("SUANLI_STORE");
}

void AddWebhookAllowOption(CLI::App& command, std::vector<std::string>& allowed) {
  command
      .add_option("--webhook-allow", allowed,
                  "Address ranges webhooks may call although they are loopback, private, "
                  "link-local or this server's own (refused otherwise), e.g. 10.0.0.0/8")
      ->delimiter(',')
      ->envname("SUANLI_WEBHOOK_ALLOW");
}

}  // namespace

CommandRun DefineServerCommand(CLI::App& command) {
  auto options = std::make_shared<server::ServerOptions>();
  command.add_option("--listen", options->listen, "HOST:PORT to serve the API and console on")
      ->capture_default_str();
  command
      .add_option("--data-dir", options->data_dir,
                  "Where the SQLite store and the admin token live (created if missing)")
      ->capture_default_str();
  AddStoreOption(command, options->store);
  AddWebhookAllowOption(command, options->webhook_allow);
  command.add_option("--max-body", options->max_body_bytes, "Largest request body, in bytes")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1024}, size_t{64} << 20));
  command.add_option("--threads", options->threads, "HTTP threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  command.add_option("--worker-url", options->worker_url,
                     "The server's URL as serverless workers' containers reach it (default "
                     "http://host.containers.internal:PORT)");
  command.add_option("--advertise-url", options->advertise_url,
                     "With a PostgreSQL --store shared by several servers (replicas): this one's "
                     "URL as the others reach it (default http://LISTEN, loopback for 0.0.0.0)");
  command
      .add_option("--event-retention-days", options->event_retention_days,
                  "Delete events older than this (the newest is always kept)")
      ->capture_default_str()
      ->check(CLI::Range(1, 36'500));
  command
      .add_option("--audit-retention-days", options->audit_retention_days,
                  "Delete audit entries older than this")
      ->capture_default_str()
      ->check(CLI::Range(1, 36'500));
  command
      .add_option("--max-data-wait", options->max_data_wait_s,
                  "Seconds a pod whose data's node is full waits for it before the data moves "
                  "to another node (it waits as long as the move would take, at most this; 0: "
                  "moves at once)")
      ->capture_default_str()
      ->check(CLI::Range(0, 7 * 24 * 3600));
  return [options](CommandContext& context) -> core::Status {
    core::Result<catalog::Catalog> catalog = context.LoadCatalog();
    if (!catalog.ok()) return catalog.status();
    return server::RunServerUntilSignalled(*options, std::move(*catalog), context.err);
  };
}

// `suanli up` runs the agent beside the server in one process, talking to it over HTTP as a remote
// agent would, so the all-in-one machine exercises the real protocol.
CommandRun DefineUpCommand(CLI::App& command) {
  auto server_options = std::make_shared<server::ServerOptions>();
  auto agent_options = std::make_shared<agent::AgentOptions>();
  command
      .add_option("--listen", server_options->listen, "HOST:PORT to serve the API and console on")
      ->capture_default_str();
  command
      .add_option("--data-dir", server_options->data_dir,
                  "Where the store and the admin token live")
      ->capture_default_str();
  AddStoreOption(command, server_options->store);
  AddWebhookAllowOption(command, server_options->webhook_allow);
  command.add_option(
      "--simulate-gpus", agent_options->simulate_gpus,
      "GPUs for the local agent to pretend it has, marked simulated, e.g. \"2xRTX 4090\"");
  command.add_option("--worker-url", server_options->worker_url,
                     "The server's URL as serverless workers' containers reach it (default "
                     "http://host.containers.internal:PORT; listen on an address they reach)");
  command.add_option("--engine", agent_options->engine_socket,
                     "The Docker or Podman socket; default: the first that answers, else Podman's "
                     "service is started");
  return [server_options, agent_options](CommandContext& context) -> core::Status {
    core::Result<catalog::Catalog> catalog = context.LoadCatalog();
    if (!catalog.ok()) return catalog.status();
    core::BlockStopSignals();
    if (agent_options->engine_socket.empty()) {
      core::Result<std::string> socket = EnsureLocalEngine(context.err);
      if (!socket.ok()) return socket.status();
      agent_options->engine_socket = *socket;
    }
    core::SystemClock clock;
    core::Result<std::unique_ptr<server::Server>> server =
        server::Server::Start(*server_options, *catalog, clock, context.err);
    if (!server.ok()) return server.status();
    const std::string host = server_options->listen.substr(0, server_options->listen.rfind(':'));
    UpHints hints = HintsFor(host, (*server)->port());
    const std::string& url = hints.url;  // 127.0.0.1, not the 0.0.0.0 it may listen on
    hints.token_file = server_options->data_dir / "admin-token";
    agent_options->server_url = url;
    agent_options->state_dir = server_options->data_dir / "agent";
    const core::Result<std::unique_ptr<ApiClient>> admin =
        AdminApi(url, hints.token_file, *context.api_env);
    // Not whether its state exists: an `up` stopped in its first second has made the agent's
    // database but not registered it, and must start again (issue 34, item 18).
    core::Result<bool> registered = agent::IsRegistered(agent_options->state_dir);
    if (!registered.ok()) {
      (*server)->Stop();
      return registered.status().WithContext("reading the local agent's state");
    }
    if (!*registered) {
      core::Result<std::string> join = admin.ok() ? CreateJoinToken(**admin) : admin.status();
      if (!join.ok()) {
        (*server)->Stop();
        return join.status().WithContext("creating the local agent's join token");
      }
      agent_options->join_token = *join;
    }
    core::Result<std::unique_ptr<agent::Agent>> agent =
        agent::Agent::Start(*agent_options, *catalog, clock, context.err);
    if (!agent.ok()) {
      (*server)->Stop();
      return agent.status().WithContext("starting the local agent");
    }
    hints.no_other_user = !admin.ok() || NoOtherUser(**admin);
    context.out << UpHintsText(hints) << std::flush;
    const core::Status failure = core::WaitForStopSignal([&]() -> core::Status {
      if (core::Status failed = (*server)->failure(); !failed.ok()) return failed;
      return (*agent)->failure();
    });
    (*agent)->Stop();
    (*server)->Stop();
    return failure;
  };
}

// `suanli store migrate`: the state of a stopped server, copied to a new store. Both stores are
// opened as a server opens them (their locks refuse a server that still runs on either).
CommandRun DefineStoreCommand(CLI::App& command) {
  struct Flags {
    std::filesystem::path data_dir = "suanli-data";
    std::string from;
    std::string to;
  };
  auto flags = std::make_shared<Flags>();
  command.require_subcommand(1);
  CLI::App* migrate = command.add_subcommand(
      "migrate", "Copy every user, pod, node, transition and ledger entry to an empty store");
  migrate->add_option("--from", flags->from, "The store to copy (default: SQLite in --data-dir)");
  migrate->add_option("--to", flags->to, "The new, empty store: postgres://USER:PASSWORD@HOST/DB")
      ->required();
  migrate->add_option("--data-dir", flags->data_dir, "The server's data folder")
      ->capture_default_str();
  return [flags](CommandContext& context) -> core::Status {
    core::Result<std::unique_ptr<store::Store>> from =
        store::OpenStore(flags->from, flags->data_dir);
    if (!from.ok()) return from.status().WithContext("--from");
    core::Result<std::unique_ptr<store::Store>> to = store::OpenStore(flags->to, flags->data_dir);
    if (!to.ok()) return to.status().WithContext("--to");
    core::Result<store::CopyCounts> copied = store::CopyStore(**from, **to);
    if (!copied.ok()) return copied.status();
    context.out << "copied " << copied->documents << " documents, " << copied->transitions
                << " transitions, " << copied->ledger_entries << " ledger entries, "
                << copied->events << " events and " << copied->audit_entries << " audit entries to "
                << store::RedactedUrl(flags->to) << "; start the server with --store "
                << store::RedactedUrl(flags->to) << "\n";
    return core::Status::Ok();
  };
}

}  // namespace suanli::cli
