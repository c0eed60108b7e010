#include "server/server.h"

#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <ostream>
#include <thread>

#include "core/mutex.h"
#include "core/stop_signal.h"
#include "net/http_server.h"
#include "server/api.h"
#include "server/control_plane.h"
#include "server/event_webhooks.h"
#include "server/secrets.h"
#include "server/webhooks.h"
#include "store/commit_queue.h"
#include "store/store.h"

namespace suanli::server {
namespace {

core::Result<std::pair<std::string, uint16_t>> ParseListen(std::string_view listen) {
  const size_t colon = listen.rfind(':');
  int port = -1;
  if (colon != std::string_view::npos) {
    const std::string_view digits = listen.substr(colon + 1);
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), port);
    if (error != std::errc() || end != digits.data() + digits.size()) port = -1;
  }
  if (colon == std::string_view::npos || colon == 0 || port < 0 || port > 65535) {
    return core::InvalidArgumentError("--listen '" + std::string(listen) +
                                      "' must be HOST:PORT, e.g. 127.0.0.1:7070");
  }
  return std::pair<std::string, uint16_t>(std::string(listen.substr(0, colon)),
                                          static_cast<uint16_t>(port));
}

core::Status WriteSecretFile(const std::filesystem::path& path, const std::string& secret) {
  const std::filesystem::path temporary = path.string() + ".tmp";
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << secret << "\n";
    out.close();
    if (!out) return core::UnavailableError("cannot write " + temporary.string());
  }
  std::filesystem::permissions(
      temporary, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error)
    return core::UnavailableError("cannot write " + path.string() + ": " + error.message());
  return core::Status::Ok();
}

class ServerImpl final : public Server {
 public:
  ServerImpl(core::Clock& clock, std::ostream& log) : clock_(clock), log_(log) {}
  ~ServerImpl() override { Stop(); }

  core::Status Init(const ServerOptions& options, catalog::Catalog catalog) {
    core::Result<std::pair<std::string, uint16_t>> address = ParseListen(options.listen);
    if (!address.ok()) return address.status();
    std::error_code error;
    std::filesystem::create_directories(options.data_dir, error);
    if (error) {
      return core::UnavailableError("cannot create the data directory " +
                                    options.data_dir.string() + ": " + error.message());
    }
    std::filesystem::permissions(options.data_dir, std::filesystem::perms::owner_all, error);
    core::Result<std::unique_ptr<store::Store>> store =
        store::OpenStore(options.store, options.data_dir);
    if (!store.ok()) return store.status();
    store_ = std::move(*store);
    queue_ = std::make_unique<store::CommitQueue>(*store_);
    std::string admin_token;
    ControlPlaneOptions plane_options;
    plane_options.event_retention = std::chrono::hours(24 * options.event_retention_days);
    plane_options.audit_retention = std::chrono::hours(24 * options.audit_retention_days);
    plane_options.worker_url = options.worker_url.empty() ? "http://host.containers.internal:" +
                                                                std::to_string(address->second)
                                                          : options.worker_url;
    const bool loopback =
        address->first == "127.0.0.1" || address->first == "localhost" || address->first == "::1";
    if (options.worker_url.empty() && loopback && address->second != 0) {
      log_ << "serverless endpoints: workers reach this server at " << plane_options.worker_url
           << ", which a server listening on " << address->first
           << " does not answer; for endpoints, listen on an address containers reach (--listen "
              "0.0.0.0:PORT) or set --worker-url\n";
    }
    core::Result<std::unique_ptr<ControlPlane>> plane =
        ControlPlane::Open(*store_, *queue_, std::move(catalog), clock_, entropy_,
                           std::move(plane_options), &admin_token);
    if (!plane.ok()) return plane.status();
    plane_ = std::move(*plane);
    if (!admin_token.empty()) {
      SUANLI_RETURN_IF_ERROR(WriteSecretFile(options.data_dir / "admin-token", admin_token));
      log_ << "created the admin; its API token is in "
           << (options.data_dir / "admin-token").string() << " (mode 0600)\n";
    }
    api_ = std::make_unique<Api>(*plane_, *queue_, clock_, entropy_);
    net::HttpServerOptions http;
    http.host = address->first;
    http.port = address->second;
    http.max_body_bytes = options.max_body_bytes;
    http.threads = options.threads;
    core::Result<std::unique_ptr<net::HttpServer>> server =
        net::HttpServer::Start(http, [this](net::HttpRequest&& request, net::Responder respond) {
          api_->Handle(std::move(request), std::move(respond));
        });
    if (!server.ok()) return server.status();
    http_ = std::move(*server);
    ticker_ = std::thread([this] { TickLoop(); });
    event_webhooks_ = std::make_unique<EventWebhookDispatcher>(*plane_);
    return core::Status::Ok();
  }

  uint16_t port() const override { return http_->port(); }
  core::Status failure() const override { return queue_->latched_error(); }

  void Stop() override {
    {
      core::MutexLock lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    wake_.NotifyAll();
    if (ticker_.joinable()) ticker_.join();
    event_webhooks_.reset();  // before the queue it writes through
    if (http_) http_->Stop();
    queue_.reset();  // commits what is queued
  }

 private:
  void TickLoop() EXCLUDES(mutex_) {
    while (true) {
      {
        core::MutexLock lock(mutex_);
        if (stopped_) return;
      }
      plane_->Tick();
      for (WebhookDelivery& delivery : plane_->TakeWebhooks()) webhooks_.Send(std::move(delivery));
      core::MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, std::chrono::milliseconds(250),
                    [this]() REQUIRES(mutex_) { return stopped_; });
    }
  }

  core::Clock& clock_;
  std::ostream& log_;
  OpenSslEntropy entropy_;
  std::unique_ptr<store::Store> store_;
  std::unique_ptr<store::CommitQueue> queue_;
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<Api> api_;
  std::unique_ptr<net::HttpServer> http_;
  WebhookSender webhooks_;
  std::unique_ptr<EventWebhookDispatcher> event_webhooks_;
  std::thread ticker_;
  core::Mutex mutex_;
  core::CondVar wake_;
  bool stopped_ GUARDED_BY(mutex_) = false;
};

}  // namespace

core::Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options,
                                                    catalog::Catalog catalog, core::Clock& clock,
                                                    std::ostream& log) {
  auto server = std::make_unique<ServerImpl>(clock, log);
  SUANLI_RETURN_IF_ERROR(server->Init(options, std::move(catalog)));
  return std::unique_ptr<Server>(std::move(server));
}

core::Status RunServerUntilSignalled(const ServerOptions& options, catalog::Catalog catalog,
                                     std::ostream& log,
                                     const std::function<void(const std::string&)>& on_ready) {
  core::BlockStopSignals();
  core::SystemClock clock;
  core::Result<std::unique_ptr<Server>> server =
      Server::Start(options, std::move(catalog), clock, log);
  if (!server.ok()) return server.status();
  const std::string url = "http://" + options.listen.substr(0, options.listen.rfind(':')) + ":" +
                          std::to_string((*server)->port());
  log << "suanli server listening on " << url << " (data in "
      << (options.store.empty() ? options.data_dir.string() : store::RedactedUrl(options.store))
      << ")" << std::endl;
  if (on_ready) on_ready(url);
  const core::Status failure = core::WaitForStopSignal([&] { return (*server)->failure(); });
  if (failure.ok())
    log << "stopping: answering requests in flight and saving what is queued" << std::endl;
  (*server)->Stop();
  if (failure.ok()) return failure;
  return core::UnavailableError("the store failed, so the server stopped: " + failure.message() +
                                "; fix it and start the server again");
}

}  // namespace suanli::server
