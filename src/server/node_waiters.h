// NodeWaiters: the agents' long polls, each waiting for its node's desired pods to change or its
// deadline to pass. It only collects the callbacks that are due; its owner runs them once it has
// released its own lock, since they call back into it (LevelDB's writers queue, in spirit).
//
// Thread-compatible: the control plane holds its lock around every call.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/clock.h"

namespace suanli::server {

class NodeWaiters {
 public:
  void Add(const std::string& node_id, core::TimePoint deadline, std::function<void()> notify);
  // Every poll of `node_id` is due: its desired pods changed.
  void Wake(const std::string& node_id);
  // Every poll whose deadline is at or before `now` is due: it answers with what it has.
  void Expire(core::TimePoint now);
  // The due callbacks, each once; to run outside the owner's lock.
  std::vector<std::function<void()>> TakeDue();

 private:
  struct Waiter {
    core::TimePoint deadline;
    std::function<void()> notify;
  };
  std::map<std::string, std::vector<Waiter>> waiting_;  // by node id
  std::vector<std::function<void()>> due_;
};

}  // namespace suanli::server
