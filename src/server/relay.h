// Relay: requests for a pod's node (its logs, an HTTP request to one of its ports) carried over the
// node agent's own dial-out connection.
//
// The server never connects to a node: nodes may sit behind NAT or a firewall that only lets them
// dial out. So a user's request is queued here for the pod's node; the node's agent takes it with a
// long poll (Poll), does the work on its host, and posts the answer back (Answer), which goes to
// the user's waiting request. A request not answered within `answer_within` of its submission is
// answered 504 (whether the agent never took it or took it and went silent), and forgotten.
//
// Delivery is at most once: a request handed to an agent whose poll answer is then lost in transit
// is not handed out again (an HTTP POST to a pod must not run twice); it ends in a 504.
//
// Nothing here is durable: on a restart of the server, the requests in flight end with their
// connections, and the agent's late answers find no request (404 to the agent).
//
// Thread-safe: one mutex guards everything; callbacks (replies to users, deliveries to agents) run
// outside it, on the calling thread or on the relay's expiry thread, which checks deadlines every
// `check_every` against the injected clock.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/clock.h"
#include "core/mutex.h"
#include "core/status.h"
#include "net/http.h"
#include "wire/relay_protocol.h"

namespace suanli::server {

// One request for an agent, as it is handed over (wire/relay_protocol.h encodes it).
using wire::RelayRequest;

struct RelayOptions {
  core::Duration answer_within = std::chrono::seconds(30);  // from submission to answer
  size_t max_waiting_per_node = 64;                         // queued and in flight
  std::chrono::milliseconds check_every{100};               // real time, for the expiry thread
};

class Relay {
 public:
  using Reply = std::function<void(net::HttpResponse)>;
  using Deliver = std::function<void(std::vector<RelayRequest>)>;

  // `new_id` returns a fresh unguessable id ("rly_" + random hex): ids must not repeat across
  // restarts, or an agent's late answer could reach another user's request.
  Relay(core::Clock& clock, std::function<std::string()> new_id, RelayOptions options = {});
  // Answers every waiting request 503 and every waiting poll empty, then joins the expiry thread.
  ~Relay();
  Relay(const Relay&) = delete;
  Relay& operator=(const Relay&) = delete;

  // Queues `request` for `node_id`'s agent. `reply` is called exactly once: with the agent's
  // answer, or 504 when none comes within `answer_within` (default: the options') of now.
  // `node_name` is for messages. RESOURCE_EXHAUSTED (and `reply` is dropped uncalled) when
  // max_waiting_per_node requests wait for the node already.
  core::Status Submit(const std::string& node_id, std::string node_name, RelayRequest request,
                      Reply reply, std::optional<core::Duration> answer_within = std::nullopt);

  // An agent's long poll: calls `deliver` once, with up to `max` requests queued for the node, as
  // soon as there is one, or with none once `deadline` passes. A newer poll of the same node
  // supersedes a waiting one, which is answered empty at once (its connection is likely dead).
  void Poll(const std::string& node_id, core::TimePoint deadline, size_t max, Deliver deliver);

  // The agent's answer to request `id`, passed to the user as it is. NOT_FOUND when no request
  // with that id waits for `node_id` (unknown, answered, expired, or another node's).
  core::Status Answer(const std::string& node_id, std::string_view id, net::HttpResponse answer);

  // Requests submitted and not yet answered, over all nodes.
  size_t waiting() const;

 private:
  struct Entry {
    std::string node_id;
    std::string node_name;
    RelayRequest request;
    Reply reply;
    core::TimePoint deadline;
    bool delivered = false;
  };
  struct Waiter {
    core::TimePoint deadline;
    size_t max = 0;
    Deliver deliver;
  };
  struct NodeQueue {
    std::deque<std::string> queued;  // ids not yet delivered, oldest first
    std::optional<Waiter> poll;
    size_t waiting = 0;  // queued and in flight
  };

  // Moves up to `max` queued requests of `node` out, marking them delivered.
  std::vector<RelayRequest> TakeQueued(NodeQueue& node, size_t max) REQUIRES(mutex_);
  // Forgets entry `it`.
  void Erase(std::map<std::string, Entry>::iterator it) REQUIRES(mutex_);
  void ExpiryLoop() EXCLUDES(mutex_);
  void ExpireDue() EXCLUDES(mutex_);

  core::Clock& clock_;
  const std::function<std::string()> new_id_;
  const RelayOptions options_;

  mutable core::Mutex mutex_;
  core::CondVar wake_;
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::map<std::string, Entry> entries_ GUARDED_BY(mutex_);  // by request id
  std::map<std::string, NodeQueue> nodes_ GUARDED_BY(mutex_);
  std::thread expiry_;
};

}  // namespace suanli::server
