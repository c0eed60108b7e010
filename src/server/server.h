// The `suanli server` process: the store, the control plane, the API on HTTP, and the loop that
// ticks the scheduler and the meter every second.
#pragma once

#include <atomic>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "catalog/catalog.h"
#include "core/clock.h"
#include "core/status.h"

namespace suanli::server {

struct ServerOptions {
  std::string listen = "127.0.0.1:7070";  // HOST:PORT; port 0 picks a free one
  std::filesystem::path data_dir = "suanli-data";
  // Where the state lives: "" for SQLite in data_dir, or a store URL (store::OpenStore:
  // sqlite://PATH, postgres://USER:PASSWORD@HOST:PORT/DATABASE). The admin token stays in data_dir.
  std::string store;
  size_t max_body_bytes = 1 << 20;
  int threads = 2;
  // The server's base URL as serverless workers' containers reach it; empty:
  // http://host.containers.internal:<port> (Podman's name for the host; Docker:
  // host.docker.internal).
  std::string worker_url;
  // With a PostgreSQL store, several servers may share it as replicas: this one's URL as the others
  // reach it, to forward requests to it while it serves; empty: http://<listen address> (loopback
  // for 0.0.0.0), which suits replicas on one machine only.
  std::string advertise_url;
  // Retention of the event stream and the audit log, in days.
  int event_retention_days = 30;
  int audit_retention_days = 365;
  // ControlPlaneOptions::max_data_wait, in seconds.
  int max_data_wait_s = 600;
  // Address ranges webhooks may call although they are loopback, private, link-local or the
  // server's own ("10.0.0.0/8", "127.0.0.1"): net::OutboundPolicy refuses those otherwise.
  std::vector<std::string> webhook_allow;
};

class Server {
 public:
  // Opens the store in data_dir (creating it, 0700), bootstraps the admin on first start (its
  // token in data_dir/admin-token, 0600) and starts serving. `log` gets one line per event worth
  // an operator's attention.
  static core::Result<std::unique_ptr<Server>> Start(const ServerOptions& options,
                                                     catalog::Catalog catalog, core::Clock& clock,
                                                     std::ostream& log);
  virtual ~Server() = default;
  virtual uint16_t port() const = 0;
  // Why the server stopped by itself (a failed store), or OK while it runs.
  virtual core::Status failure() const = 0;
  // Stops accepting, answers what is in flight, commits what is queued. Idempotent.
  virtual void Stop() = 0;
};

// Runs until SIGTERM or SIGINT (graceful; OK) or a store failure (UNAVAILABLE). `on_ready` runs
// once the server listens, with its URL.
core::Status RunServerUntilSignalled(const ServerOptions& options, catalog::Catalog catalog,
                                     std::ostream& log,
                                     const std::function<void(const std::string&)>& on_ready = {});

}  // namespace suanli::server
