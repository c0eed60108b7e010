// Scheduler: which node and which GPUs each pending pod gets.
//
// Pure: the control plane passes a snapshot of its nodes and pending pods and stores the bindings
// it gets back (durably, before any agent sees them). Pods are placed highest priority first, first
// come first served within a priority. Among the nodes that fit, a pod takes the one with the
// fewest free GPUs of its type (best fit), so whole nodes stay free for the multi-GPU pods that
// need them. A pod that cannot be placed gets the reason a person needs ("no node has 2 free RTX
// 4090; 3 nodes have 1").
//
// Labels: a pod's node_selector must be a subset of a node's labels. Preemption: when an on-demand
// pod cannot be placed, the scheduler looks for a node where stopping interruptible pods (lowest
// priority, newest first) frees enough; it returns those pods to stop and leaves the pod pending
// with that reason. The next round, after they have stopped, places it; GPUs are never given to two
// pods at once. Not thread-safe; one call places one batch.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace suanli::sched {

struct Resources {
  int vcpu = 0;
  int64_t ram_mb = 0;
  int64_t disk_gb = 0;
  bool Covers(const Resources& need) const {
    return vcpu >= need.vcpu && ram_mb >= need.ram_mb && disk_gb >= need.disk_gb;
  }
};

struct Node {
  std::string id;
  std::string gpu_type;     // canonical catalog name; a node has one type
  int gpu_count = 0;        // at most 64
  uint64_t free_gpus = 0;   // bit i set: GPU index i is free
  Resources free;           // vCPU, RAM and disk not yet given to pods
  bool schedulable = true;  // ready, not cordoned or draining
  std::map<std::string, std::string> labels;
};

// A pod that holds GPUs on a node now; only interruptible ones matter to the scheduler.
struct RunningPod {
  std::string id;
  std::string node_id;
  int gpu_count = 0;
  Resources uses;
  int priority = 0;
  uint64_t sequence = 0;  // when it was created: newer ones are preempted first
  bool interruptible = false;
};

struct PodRequest {
  std::string id;
  std::string gpu_type;  // canonical catalog name
  int gpu_count = 1;     // >= 1
  Resources needs;
  int priority = 0;                                  // higher first
  uint64_t sequence = 0;                             // arrival order: lower first within a priority
  bool interruptible = false;                        // may be preempted, and never preempts
  std::map<std::string, std::string> node_selector;  // labels the node must have
};

struct Binding {
  std::string pod_id;
  std::string node_id;
  std::vector<int> gpu_indices;  // ascending
};

struct Unplaced {
  std::string pod_id;
  std::string reason;
};

struct Plan {
  std::vector<Binding> bindings;
  std::vector<Unplaced> unplaced;
  std::vector<std::string> preempt;  // running interruptible pods to stop (the user is told why)
};

// Places what fits and takes the resources it binds from `nodes` (so a caller may schedule again
// with more pods). Requests whose gpu_count is below 1 or above 64 are unplaced with a reason.
// `running` lists the pods on the nodes now, for preemption; pass none to disable it.
Plan Schedule(std::vector<Node>& nodes, std::vector<PodRequest> pending,
              const std::vector<RunningPod>& running = {});

}  // namespace suanli::sched
