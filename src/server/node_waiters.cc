#include "server/node_waiters.h"

#include <utility>

namespace suanli::server {

void NodeWaiters::Add(const std::string& node_id, core::TimePoint deadline,
                      std::function<void()> notify) {
  waiting_[node_id].push_back({deadline, std::move(notify)});
}

void NodeWaiters::Wake(const std::string& node_id) {
  const auto it = waiting_.find(node_id);
  if (it == waiting_.end()) return;
  for (Waiter& waiter : it->second) due_.push_back(std::move(waiter.notify));
  waiting_.erase(it);
}

void NodeWaiters::Expire(core::TimePoint now) {
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    std::vector<Waiter>& list = it->second;
    for (auto waiter = list.begin(); waiter != list.end();) {
      if (waiter->deadline <= now) {
        due_.push_back(std::move(waiter->notify));
        waiter = list.erase(waiter);
      } else {
        ++waiter;
      }
    }
    it = list.empty() ? waiting_.erase(it) : std::next(it);
  }
}

std::vector<std::function<void()>> NodeWaiters::TakeDue() {
  std::vector<std::function<void()>> due = std::move(due_);
  due_.clear();
  return due;
}

}  // namespace suanli::server
