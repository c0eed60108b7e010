#include "server/server.h"

#include <sys/stat.h>

#include <charconv>
#include <fstream>
#include <optional>
#include <ostream>
#include <thread>

#include "core/mutex.h"
#include "core/stop_signal.h"
#include "net/http_server.h"
#include "server/api.h"
#include "server/control_plane.h"
#include "server/event_webhooks.h"
#include "server/replica_forwarder.h"
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

// "http://HOST:PORT" for other replicas: the listen address, or loopback for a wildcard one.
std::string DefaultAdvertiseUrl(const std::string& host, uint16_t port) {
  const bool wildcard = host == "0.0.0.0" || host == "::" || host == "[::]";
  return "http://" + (wildcard ? std::string("127.0.0.1") : host) + ":" + std::to_string(port);
}

class ServerImpl final : public Server {
 public:
  ServerImpl(core::Clock& clock, std::ostream& log) : clock_(clock), log_(log) {}
  ~ServerImpl() override { Stop(); }

  core::Status Init(const ServerOptions& options, catalog::Catalog catalog) {
    core::Result<std::pair<std::string, uint16_t>> address = ParseListen(options.listen);
    if (!address.ok()) return address.status();
    options_ = options;
    catalog_.emplace(std::move(catalog));
    core::Result<net::OutboundPolicy> policy = net::OutboundPolicy::Allowing(options.webhook_allow);
    if (!policy.ok()) return policy.status().WithContext("--webhook-allow");
    webhook_policy_ = std::move(policy->WithOwnAddresses());
    webhooks_ = std::make_unique<WebhookSender>(WebhookOptions{.policy = webhook_policy_});
    std::error_code error;
    std::filesystem::create_directories(options.data_dir, error);
    if (error) {
      return core::UnavailableError("cannot create the data directory " +
                                    options.data_dir.string() + ": " + error.message());
    }
    std::filesystem::permissions(options.data_dir, std::filesystem::perms::owner_all, error);
    // Listening first: a standby serves (by forwarding) from the start, and a replica's advertised
    // URL needs its port.
    net::HttpServerOptions http;
    http.host = address->first;
    http.port = address->second;
    http.max_body_bytes = options.max_body_bytes;
    http.body_limit = [max_body = options.max_body_bytes](std::string_view method,
                                                          std::string_view target) {
      return BodyLimitFor(method, target, max_body);
    };
    http.threads = options.threads;
    core::Result<std::unique_ptr<net::HttpServer>> server =
        net::HttpServer::Start(http, [this](net::HttpRequest&& request, net::Responder respond) {
          Dispatch(std::move(request), std::move(respond));
        });
    if (!server.ok()) return server.status();
    http_ = std::move(*server);
    port_ = http_->port();
    worker_url_ = options.worker_url.empty()
                      ? "http://host.containers.internal:" + std::to_string(port_)
                      : options.worker_url;
    const bool loopback =
        address->first == "127.0.0.1" || address->first == "localhost" || address->first == "::1";
    if (options.worker_url.empty() && loopback && address->second != 0) {
      log_ << "serverless endpoints: workers reach this server at " << worker_url_
           << ", which a server listening on " << address->first
           << " does not answer; for endpoints, listen on an address containers reach (--listen "
              "0.0.0.0:PORT) or set --worker-url\n";
    }
    if (!store::SupportsReplicas(options.store)) {
      core::Result<std::unique_ptr<store::Store>> store =
          store::OpenStore(options.store, options.data_dir);
      if (!store.ok()) return store.status();
      return Serve(std::move(*store));
    }
    const std::string advertise = options.advertise_url.empty()
                                      ? DefaultAdvertiseUrl(address->first, port_)
                                      : options.advertise_url;
    core::Result<std::unique_ptr<store::Election>> election =
        store::Election::Join(options.store, advertise);
    if (!election.ok()) return election.status();
    election_ = std::move(*election);
    core::Result<std::unique_ptr<store::Store>> store = election_->TryLead();
    if (!store.ok()) return store.status();
    if (*store) return Serve(std::move(*store));
    forwarder_ = std::make_unique<ReplicaForwarder>(advertise, kForwardTimeout);
    core::Result<std::string> leader = election_->Leader();
    if (leader.ok()) forwarder_->SetLeader(*leader);
    log_ << "standby: another replica"
         << (leader.ok() && !leader->empty() ? " (" + *leader + ")" : "")
         << " holds the store; this one (" << advertise
         << ") forwards requests to it and takes over when it goes\n";
    forwarding_.store(forwarder_.get());
    elector_ = std::thread([this] { StandBy(); });
    return core::Status::Ok();
  }

  uint16_t port() const override { return port_; }
  core::Status failure() const override EXCLUDES(mutex_) {
    core::MutexLock lock(mutex_);
    if (!failure_.ok()) return failure_;
    return queue_ ? queue_->latched_error() : core::Status::Ok();
  }

  void Stop() override {
    {
      core::MutexLock lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    wake_.NotifyAll();
    if (elector_.joinable()) elector_.join();
    if (ticker_.joinable()) ticker_.join();
    event_webhooks_.reset();  // before the queue it writes through
    if (http_) http_->Stop();
    if (forwarder_) forwarder_->Drain(std::chrono::seconds(1));
    core::MutexLock lock(mutex_);
    queue_.reset();  // commits what is queued
  }

 private:
  // Longer than any request waits on the replica that serves (an agent's long poll).
  static constexpr std::chrono::milliseconds kForwardTimeout = std::chrono::minutes(2);

  void Dispatch(net::HttpRequest&& request, net::Responder respond) {
    if (Api* api = api_.load()) return api->Handle(std::move(request), std::move(respond));
    if (ReplicaForwarder* forwarder = forwarding_.load()) {
      return forwarder->Forward(std::move(request), std::move(respond));
    }
    respond(net::ErrorResponse(503, "UNAVAILABLE", "the server is starting; retry"));
  }

  // This replica holds `store` now: load the state and serve.
  core::Status Serve(std::unique_ptr<store::Store> store) EXCLUDES(mutex_) {
    std::string admin_token;
    ControlPlaneOptions plane_options;
    plane_options.worker_url = worker_url_;
    plane_options.event_retention = std::chrono::hours(24 * options_.event_retention_days);
    plane_options.audit_retention = std::chrono::hours(24 * options_.audit_retention_days);
    plane_options.max_data_wait = std::chrono::seconds(options_.max_data_wait_s);
    auto queue = std::make_unique<store::CommitQueue>(*store);
    core::Result<std::unique_ptr<ControlPlane>> plane = ControlPlane::Open(
        *store, *queue, *catalog_, clock_, entropy_, std::move(plane_options), &admin_token);
    if (!plane.ok()) return plane.status();
    if (const std::vector<std::string> unreadable = (*plane)->UnreadableRecords();
        !unreadable.empty()) {
      log_ << "the store holds " << unreadable.size()
           << " record(s) this server cannot read; it serves everything else, and leaves these "
              "in the store as they are (mend them, or restore a backup, then restart):\n";
      for (const std::string& record : unreadable) log_ << "  " << record << "\n";
    }
    if (!admin_token.empty()) {
      SUANLI_RETURN_IF_ERROR(WriteSecretFile(options_.data_dir / "admin-token", admin_token));
      log_ << "created the admin; its API token is in "
           << (options_.data_dir / "admin-token").string() << " (mode 0600)\n";
    }
    {
      core::MutexLock lock(mutex_);
      store_ = std::move(store);
      queue_ = std::move(queue);
      plane_ = std::move(*plane);
      owned_api_ = std::make_unique<Api>(*plane_, *queue_, clock_, entropy_, RelayOptions{},
                                         webhook_policy_);
      api_.store(owned_api_.get());
    }
    ticker_ = std::thread([this] { TickLoop(); });
    event_webhooks_ = std::make_unique<EventWebhookDispatcher>(
        *plane_, EventWebhookOptions{.policy = webhook_policy_});
    return core::Status::Ok();
  }

  // A standby's loop: who to forward to, and a try at the store, four times a second.
  void StandBy() EXCLUDES(mutex_) {
    std::string last_error;
    while (true) {
      {
        core::MutexLock lock(mutex_);
        wake_.WaitFor(mutex_, std::chrono::milliseconds(250),
                      [this]() REQUIRES(mutex_) { return stopped_; });
        if (stopped_) return;
      }
      core::Result<std::unique_ptr<store::Store>> store = election_->TryLead();
      if (store.ok() && *store) {
        forwarder_->SetLeader("");
        const core::Status served = Serve(std::move(*store));
        if (!served.ok()) {
          core::MutexLock lock(mutex_);
          failure_ = served;  // the process stops: RunServerUntilSignalled watches failure()
          return;
        }
        log_ << "took over: this replica holds the store and serves" << std::endl;
        return;
      }
      core::Result<std::string> leader =
          store.ok() ? election_->Leader() : core::Result<std::string>(store.status());
      if (leader.ok()) {
        forwarder_->SetLeader(*leader);
        last_error.clear();
      } else if (leader.status().message() != last_error) {
        last_error = leader.status().message();
        log_ << "standby: " << last_error << "; trying again" << std::endl;
      }
    }
  }

  void TickLoop() EXCLUDES(mutex_) {
    while (true) {
      {
        core::MutexLock lock(mutex_);
        if (stopped_) return;
      }
      plane_->Tick();
      for (WebhookDelivery& delivery : plane_->TakeWebhooks()) webhooks_->Send(std::move(delivery));
      core::MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, std::chrono::milliseconds(250),
                    [this]() REQUIRES(mutex_) { return stopped_; });
    }
  }

  core::Clock& clock_;
  std::ostream& log_;
  ServerOptions options_;
  std::optional<catalog::Catalog> catalog_;  // set by Init
  OpenSslEntropy entropy_;
  uint16_t port_ = 0;
  std::string worker_url_;
  std::unique_ptr<store::Election> election_;    // PostgreSQL: one replica of several
  std::unique_ptr<ReplicaForwarder> forwarder_;  // while this replica stands by
  // The HTTP threads' view of forwarder_, published once it is made (requests may arrive while
  // Init still runs).
  std::atomic<ReplicaForwarder*> forwarding_{nullptr};
  mutable core::Mutex mutex_;
  // Set once, when this replica starts to serve; the HTTP threads read api_ without the lock.
  std::unique_ptr<store::Store> store_ GUARDED_BY(mutex_);
  std::unique_ptr<store::CommitQueue> queue_ GUARDED_BY(mutex_);
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<Api> owned_api_ GUARDED_BY(mutex_);
  std::atomic<Api*> api_{nullptr};
  std::unique_ptr<net::HttpServer> http_;
  net::OutboundPolicy webhook_policy_;  // which addresses webhooks may call (--webhook-allow)
  std::unique_ptr<WebhookSender> webhooks_;
  std::unique_ptr<EventWebhookDispatcher> event_webhooks_;
  std::thread elector_;
  std::thread ticker_;
  core::CondVar wake_;
  bool stopped_ GUARDED_BY(mutex_) = false;
  core::Status failure_ GUARDED_BY(mutex_);
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
