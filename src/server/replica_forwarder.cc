#include "server/replica_forwarder.h"

#include <thread>
#include <utility>

#include "core/mutex.h"
#include "net/http_client.h"
#include "net/proxy_headers.h"

namespace suanli::server {

struct ReplicaForwarder::Shared {
  std::string self;
  std::chrono::milliseconds timeout;
  core::Mutex mutex;
  core::CondVar drained;
  std::string leader GUARDED_BY(mutex);
  int in_flight GUARDED_BY(mutex) = 0;
};

namespace {

net::HttpResponse Unavailable(std::string_view message) {
  net::HttpResponse response = net::ErrorResponse(503, "UNAVAILABLE", message);
  response.headers.emplace_back("retry-after", "1");
  return response;
}

}  // namespace

ReplicaForwarder::ReplicaForwarder(std::string self, std::chrono::milliseconds timeout)
    : shared_(std::make_shared<Shared>()) {
  shared_->self = std::move(self);
  shared_->timeout = timeout;
}

ReplicaForwarder::~ReplicaForwarder() = default;

void ReplicaForwarder::SetLeader(std::string url) {
  core::MutexLock lock(shared_->mutex);
  shared_->leader = std::move(url);
}

std::string ReplicaForwarder::leader() const {
  core::MutexLock lock(shared_->mutex);
  return shared_->leader;
}

void ReplicaForwarder::Forward(net::HttpRequest&& request, net::Responder respond) {
  if (request.Header(kForwardedHeader)) {
    return respond(Unavailable(
        "this replica (" + shared_->self +
        ") was handed a request another replica forwarded, "
        "but it does not hold the store either; give each replica its own --advertise-url"));
  }
  std::string leader;
  {
    core::MutexLock lock(shared_->mutex);
    leader = shared_->leader;
    if (!leader.empty() && shared_->in_flight >= kMaxInFlight) {
      return respond(Unavailable("this standby replica is forwarding " +
                                 std::to_string(kMaxInFlight) + " requests already; retry"));
    }
    if (!leader.empty()) ++shared_->in_flight;
  }
  if (leader.empty()) {
    return respond(Unavailable("no replica serves right now (one is taking over); retry"));
  }
  std::thread([shared = shared_, leader = std::move(leader), request = std::move(request),
               respond = std::move(respond)]() mutable {
    net::Headers headers = net::EndToEndHeaders(request.headers, {"host", "content-length"});
    std::string forwarded_for = request.Header("x-forwarded-for").value_or("");
    if (!forwarded_for.empty()) forwarded_for += ", ";
    headers.emplace_back("x-forwarded-for", forwarded_for + request.remote_address);
    headers.emplace_back(kForwardedHeader, shared->self);
    core::Result<std::unique_ptr<net::HttpClient>> client =
        net::HttpClient::Create(leader, {shared->timeout});
    core::Result<net::HttpResponse> answer =
        client.ok() ? (*client)->Send(request.method, request.target, request.body, headers)
                    : core::Result<net::HttpResponse>(client.status());
    if (answer.ok()) {
      answer->headers =
          net::EndToEndHeaders(answer->headers, {"content-length", "content-type", "server"});
      answer->headers.emplace_back("x-suanli-served-by", leader);
      respond(std::move(answer).value());
    } else {
      respond(Unavailable("the replica that serves (" + leader +
                          ") did not answer: " + answer.status().message() + "; retry"));
    }
    core::MutexLock lock(shared->mutex);
    if (--shared->in_flight == 0) shared->drained.NotifyAll();
  }).detach();
}

void ReplicaForwarder::Drain(std::chrono::milliseconds grace) {
  core::MutexLock lock(shared_->mutex);
  shared_->drained.WaitFor(shared_->mutex, grace,
                           [this]() REQUIRES(shared_->mutex) { return shared_->in_flight == 0; });
}

}  // namespace suanli::server
