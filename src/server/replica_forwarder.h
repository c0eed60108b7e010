// ReplicaForwarder: how a standby replica serves. It forwards each request as it came to the
// replica that holds the store, and that one's answer back, so that every replica serves the API
// and the console (Vault's standby nodes do the same): clients and agents may be given any
// replica's URL. A standby holds no state of its own, so there is nothing on it to go stale.
//
// Each forwarded request runs on a thread of its own for as long as it waits (an agent's long
// poll waits up to a minute), at most kMaxInFlight at once; past that, and while no replica holds
// the store (a takeover under way), the answer is 503 with Retry-After.
//
// Thread-safety: all methods from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "net/http_server.h"

namespace suanli::server {

class ReplicaForwarder {
 public:
  static constexpr int kMaxInFlight = 512;
  // Set on every forwarded request: a replica never forwards a request that already carries it, so
  // two misconfigured replicas (each advertising the other's URL) cannot bounce one forever.
  static constexpr std::string_view kForwardedHeader = "x-suanli-forwarded-by";

  // `self` is this replica's advertised URL, for the header above and for messages.
  ReplicaForwarder(std::string self, std::chrono::milliseconds timeout);
  ~ReplicaForwarder();
  ReplicaForwarder(const ReplicaForwarder&) = delete;
  ReplicaForwarder& operator=(const ReplicaForwarder&) = delete;

  // Where to forward from now on: the advertised URL of the replica that holds the store, or ""
  // while none does.
  void SetLeader(std::string url);
  std::string leader() const;

  void Forward(net::HttpRequest&& request, net::Responder respond);

  // Waits up to `grace` for the requests in flight (a thread still running after it answers
  // through a Responder that outlives the server, which is safe).
  void Drain(std::chrono::milliseconds grace);

 private:
  struct Shared;
  std::shared_ptr<Shared> shared_;
};

}  // namespace suanli::server
