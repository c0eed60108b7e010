#include "server/relay.h"

#include <algorithm>
#include <utility>

namespace suanli::server {

namespace {

std::string Seconds(core::Duration duration) {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(duration).count()) + " s";
}

}  // namespace

Relay::Relay(core::Clock& clock, std::function<std::string()> new_id, RelayOptions options)
    : clock_(clock), new_id_(std::move(new_id)), options_(options) {
  expiry_ = std::thread([this] { ExpiryLoop(); });
}

Relay::~Relay() {
  std::vector<Reply> replies;
  std::vector<Deliver> polls;
  {
    core::MutexLock lock(mutex_);
    stopping_ = true;
    for (auto& [id, entry] : entries_) replies.push_back(std::move(entry.reply));
    for (auto& [id, node] : nodes_) {
      if (node.poll) polls.push_back(std::move(node.poll->deliver));
    }
    entries_.clear();
    nodes_.clear();
  }
  wake_.NotifyAll();
  if (expiry_.joinable()) expiry_.join();
  for (Reply& reply : replies) {
    reply(net::ErrorResponse(503, "UNAVAILABLE",
                             "the server is stopping; try again once it is back"));
  }
  for (Deliver& deliver : polls) deliver({});
}

core::Status Relay::Submit(const std::string& node_id, std::string node_name, RelayRequest request,
                           Reply reply, std::optional<core::Duration> answer_within) {
  Deliver deliver;
  std::vector<RelayRequest> delivered;
  {
    core::MutexLock lock(mutex_);
    NodeQueue& node = nodes_[node_id];
    if (node.waiting >= options_.max_waiting_per_node) {
      return core::ResourceExhaustedError(std::to_string(node.waiting) +
                                          " requests already wait for node " + node_name +
                                          "; try again in a few seconds");
    }
    request.id = new_id_();
    const std::string id = request.id;
    entries_.emplace(id,
                     Entry{node_id, std::move(node_name), std::move(request), std::move(reply),
                           clock_.Now() + answer_within.value_or(options_.answer_within), false});
    node.queued.push_back(id);
    ++node.waiting;
    if (node.poll) {
      delivered = TakeQueued(node, node.poll->max);
      deliver = std::move(node.poll->deliver);
      node.poll.reset();
    }
  }
  if (deliver) deliver(std::move(delivered));
  return core::Status::Ok();
}

void Relay::Poll(const std::string& node_id, core::TimePoint deadline, size_t max,
                 Deliver deliver) {
  Deliver superseded;
  Deliver now;  // `deliver`, when it is to be called at once
  std::vector<RelayRequest> delivered;
  {
    core::MutexLock lock(mutex_);
    if (stopping_) {
      now = std::move(deliver);
    } else {
      NodeQueue& node = nodes_[node_id];
      if (node.poll) superseded = std::move(node.poll->deliver);
      node.poll.reset();
      if (!node.queued.empty() || deadline <= clock_.Now()) {
        delivered = TakeQueued(node, std::max<size_t>(max, 1));
        now = std::move(deliver);
        if (node.waiting == 0) nodes_.erase(node_id);
      } else {
        node.poll = Waiter{deadline, std::max<size_t>(max, 1), std::move(deliver)};
      }
    }
  }
  if (superseded) superseded({});
  if (now) now(std::move(delivered));
}

core::Status Relay::Answer(const std::string& node_id, std::string_view id,
                           net::HttpResponse answer) {
  Reply reply;
  {
    core::MutexLock lock(mutex_);
    const auto it = entries_.find(std::string(id));
    if (it == entries_.end() || it->second.node_id != node_id) {
      return core::NotFoundError("no relayed request " + std::string(id) +
                                 " waits for this node's answer (it was answered, or it expired)");
    }
    reply = std::move(it->second.reply);
    Erase(it);
  }
  reply(std::move(answer));
  return core::Status::Ok();
}

size_t Relay::waiting() const {
  core::MutexLock lock(mutex_);
  return entries_.size();
}

std::vector<RelayRequest> Relay::TakeQueued(NodeQueue& node, size_t max) {
  std::vector<RelayRequest> taken;
  while (!node.queued.empty() && taken.size() < max) {
    const auto it = entries_.find(node.queued.front());
    node.queued.pop_front();
    if (it == entries_.end()) continue;  // answered or expired meanwhile
    it->second.delivered = true;
    taken.push_back(it->second.request);
  }
  return taken;
}

void Relay::Erase(std::map<std::string, Entry>::iterator it) {
  const auto node = nodes_.find(it->second.node_id);
  if (node != nodes_.end()) {
    --node->second.waiting;
    if (!it->second.delivered) {
      std::erase(node->second.queued, it->first);
    }
    if (node->second.waiting == 0 && !node->second.poll) nodes_.erase(node);
  }
  entries_.erase(it);
}

void Relay::ExpiryLoop() {
  while (true) {
    {
      core::MutexLock lock(mutex_);
      wake_.WaitFor(mutex_, options_.check_every, [this]() REQUIRES(mutex_) { return stopping_; });
      if (stopping_) return;
    }
    ExpireDue();
  }
}

void Relay::ExpireDue() {
  std::vector<std::pair<Reply, net::HttpResponse>> replies;
  std::vector<Deliver> polls;
  {
    core::MutexLock lock(mutex_);
    const core::TimePoint now = clock_.Now();
    for (auto it = entries_.begin(); it != entries_.end();) {
      const auto next = std::next(it);
      const Entry& entry = it->second;
      if (entry.deadline <= now) {
        const std::string message =
            entry.delivered
                ? "node " + entry.node_name +
                      "'s agent took this request but did not answer within " +
                      Seconds(options_.answer_within)
                : "node " + entry.node_name + "'s agent did not pick this request up within " +
                      Seconds(options_.answer_within) +
                      "; is the agent running, and as new as the server?";
        replies.emplace_back(std::move(it->second.reply),
                             net::ErrorResponse(504, "DEADLINE_EXCEEDED", message));
        Erase(it);
      }
      it = next;
    }
    for (auto it = nodes_.begin(); it != nodes_.end();) {
      const auto next = std::next(it);
      NodeQueue& node = it->second;
      if (node.poll && node.poll->deadline <= now) {
        polls.push_back(std::move(node.poll->deliver));
        node.poll.reset();
        if (node.waiting == 0) nodes_.erase(it);
      }
      it = next;
    }
  }
  for (auto& [reply, response] : replies) reply(std::move(response));
  for (Deliver& deliver : polls) deliver({});
}

}  // namespace suanli::server
