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

}  // namespace suanli::cli
