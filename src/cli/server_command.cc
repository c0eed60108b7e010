#include <iostream>

#include "cli/command.h"
#include "server/server.h"

namespace suanli::cli {

CommandRun DefineServerCommand(CLI::App& command) {
  auto options = std::make_shared<server::ServerOptions>();
  command.add_option("--listen", options->listen, "HOST:PORT to serve the API and console on")
      ->capture_default_str();
  command
      .add_option("--data-dir", options->data_dir,
                  "Where the SQLite store and the admin token live (created if missing)")
      ->capture_default_str();
  command.add_option("--max-body", options->max_body_bytes, "Largest request body, in bytes")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1024}, size_t{64} << 20));
  command.add_option("--threads", options->threads, "HTTP threads")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  return [options](CommandContext& context) -> core::Status {
    core::Result<catalog::Catalog> catalog = context.LoadCatalog();
    if (!catalog.ok()) return catalog.status();
    return server::RunServerUntilSignalled(*options, std::move(*catalog), context.err);
  };
}

CommandRun DefineUpCommand(CLI::App& command) {
  auto options = std::make_shared<server::ServerOptions>();
  options->data_dir = "suanli-data";
  command.add_option("--listen", options->listen, "HOST:PORT to serve the API and console on")
      ->capture_default_str();
  command.add_option("--data-dir", options->data_dir, "Where the store and the admin token live")
      ->capture_default_str();
  return [options](CommandContext& context) -> core::Status {
    core::Result<catalog::Catalog> catalog = context.LoadCatalog();
    if (!catalog.ok()) return catalog.status();
    const std::string token = (options->data_dir / "admin-token").string();
    return server::RunServerUntilSignalled(
        *options, std::move(*catalog), context.err, [&](const std::string& url) {
          context.out << "suanli is up: the API is at " << url << " (Ctrl-C stops it)\n"
                      << "The admin's API token is in " << token << ". To rent out GPUs:\n"
                      << "  export SUANLI_URL=" << url << " SUANLI_TOKEN=$(cat " << token << ")\n"
                      << "  suanli users create alice --credits 20   # prints alice's token\n"
                      << "  suanli nodes join-token                  # the command for a GPU host\n"
                      << "  SUANLI_TOKEN=<alice's token> suanli pods create --template pytorch "
                         "--gpu 4090\n"
                      << std::flush;
        });
  };
}

}  // namespace suanli::cli
