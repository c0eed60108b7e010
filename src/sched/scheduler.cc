#include "sched/scheduler.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/check.h"

namespace suanli::sched {
namespace {

constexpr int kMaxGpusPerNode = 64;

bool HasLabels(const Node& node, const std::map<std::string, std::string>& selector) {
  for (const auto& [key, value] : selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  return true;
}

// The schedulable nodes of one GPU type, bucketed by their number of free GPUs so best fit is a
// walk up from the pod's count instead of a scan of every node.
class TypeIndex {
 public:
  void Add(int node, int free) {
    by_free_[free].push_back(node);
    position_[node] = by_free_[free].size() - 1;
  }

  void Move(int node, int from_free, int to_free) {
    std::vector<int>& bucket = by_free_[from_free];
    const size_t at = position_[node];
    bucket[at] = bucket.back();
    position_[bucket[at]] = at;
    bucket.pop_back();
    Add(node, to_free);
  }

  // Best fit: the first node, from the fewest free GPUs up, with the pod's GPUs, resources and
  // labels.
  int Find(const PodRequest& pod, const std::vector<Node>& nodes) const {
    for (int free = pod.gpu_count; free <= kMaxGpusPerNode; ++free) {
      for (int node : by_free_[free]) {
        if (nodes[node].free.Covers(pod.needs) && HasLabels(nodes[node], pod.node_selector))
          return node;
      }
    }
    return -1;
  }

  // For the reason a pod waits: the most free GPUs any node has, and how many nodes have that many.
  std::pair<int, int> MostFree() const {
    for (int free = kMaxGpusPerNode; free >= 0; --free) {
      if (!by_free_[free].empty()) return {free, static_cast<int>(by_free_[free].size())};
    }
    return {0, 0};
  }

  bool empty() const {
    return std::all_of(std::begin(by_free_), std::end(by_free_),
                       [](const auto& bucket) { return bucket.empty(); });
  }

 private:
  std::vector<int> by_free_[kMaxGpusPerNode + 1];
  std::unordered_map<int, size_t> position_;  // node -> index in its bucket
};

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

std::string WhyUnplaced(const PodRequest& pod, const TypeIndex* index) {
  const std::string want = std::to_string(pod.gpu_count) + " free " + pod.gpu_type;
  if (index == nullptr || index->empty()) return "no ready node has " + pod.gpu_type + " GPUs";
  const auto [most, nodes_with_most] = index->MostFree();
  if (most < pod.gpu_count) {
    if (most == 0) return "no node has " + want + "; all are in use";
    return "no node has " + want + "; " + Plural(nodes_with_most, "node") +
           (nodes_with_most == 1 ? " has " : " have ") + std::to_string(most);
  }
  return "no node with " + want + " also has " + std::to_string(pod.needs.vcpu) + " vCPU, " +
         std::to_string(pod.needs.ram_mb / 1024) + " GB RAM and " +
         std::to_string(pod.needs.disk_gb) + " GB disk free";
}

// Finds interruptible pods whose stopping would make room for an on-demand pod. Only nodes that run
// interruptible pods are searched, so a cluster without them pays nothing.
class Preemption {
 public:
  Preemption(const std::vector<RunningPod>& running, const std::vector<Node>& nodes) {
    if (running.empty()) return;
    std::unordered_map<std::string, int> node_index;
    for (size_t i = 0; i < nodes.size(); ++i) node_index.emplace(nodes[i].id, static_cast<int>(i));
    for (const RunningPod& pod : running) {
      auto it = node_index.find(pod.node_id);
      if (pod.interruptible && it != node_index.end()) by_node_[it->second].push_back(&pod);
    }
    for (auto& [node, pods] : by_node_) {
      // Lowest priority first, then the newest: the pods whose owners lose least.
      std::sort(pods.begin(), pods.end(), [](const RunningPod* a, const RunningPod* b) {
        return a->priority != b->priority ? a->priority < b->priority : a->sequence > b->sequence;
      });
    }
  }

  // The node needing the fewest victims to fit `pod`; adds them to plan.preempt and returns the
  // reason the pod waits. nullopt when no preemption helps.
  std::optional<std::string> Try(const PodRequest& pod, const std::vector<Node>& nodes,
                                 Plan& plan) {
    int best_node = -1;
    std::vector<const RunningPod*> best_victims;
    for (const auto& [node_index, candidates] : by_node_) {
      const Node& node = nodes[node_index];
      if (!node.schedulable || node.gpu_type != pod.gpu_type || !HasLabels(node, pod.node_selector))
        continue;
      int gpus = std::popcount(node.free_gpus);
      Resources free = node.free;
      std::vector<const RunningPod*> victims;
      for (const RunningPod* victim : candidates) {
        if (gpus >= pod.gpu_count && free.Covers(pod.needs)) break;
        if (victim->priority > pod.priority || taken_.contains(victim->id)) continue;
        victims.push_back(victim);
        gpus += victim->gpu_count;
        free.vcpu += victim->uses.vcpu;
        free.ram_mb += victim->uses.ram_mb;
        free.disk_gb += victim->uses.disk_gb;
      }
      const bool fits = gpus >= pod.gpu_count && free.Covers(pod.needs);
      if (fits && !victims.empty() && (best_node < 0 || victims.size() < best_victims.size())) {
        best_node = node_index;
        best_victims = std::move(victims);
      }
    }
    if (best_node < 0) return std::nullopt;
    for (const RunningPod* victim : best_victims) {
      taken_.insert(victim->id);
      plan.preempt.push_back(victim->id);
    }
    return "waiting for " + Plural(static_cast<int>(best_victims.size()), "interruptible pod") +
           " to stop on " + nodes[best_node].id;
  }

 private:
  std::map<int, std::vector<const RunningPod*>> by_node_;  // node index -> its interruptible pods
  std::unordered_set<std::string> taken_;                  // already chosen this round
};

std::vector<int> TakeGpus(Node& node, int count) {
  std::vector<int> indices;
  for (int taken = 0; taken < count; ++taken) {
    const int index = std::countr_zero(node.free_gpus);
    indices.push_back(index);
    node.free_gpus &= node.free_gpus - 1;  // clear the lowest set bit
  }
  return indices;
}

}  // namespace

Plan Schedule(std::vector<Node>& nodes, std::vector<PodRequest> pending,
              const std::vector<RunningPod>& running) {
  Preemption preemption(running, nodes);
  std::unordered_map<std::string, TypeIndex> by_type;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& node = nodes[i];
    SUANLI_CHECK(node.gpu_count >= 0 && node.gpu_count <= kMaxGpusPerNode,
                 "a node has 0 to 64 GPUs");
    if (node.schedulable)
      by_type[node.gpu_type].Add(static_cast<int>(i), std::popcount(node.free_gpus));
  }
  std::stable_sort(pending.begin(), pending.end(), [](const PodRequest& a, const PodRequest& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.sequence < b.sequence;
  });

  Plan plan;
  plan.bindings.reserve(pending.size());
  for (const PodRequest& pod : pending) {
    if (pod.gpu_count < 1 || pod.gpu_count > kMaxGpusPerNode) {
      plan.unplaced.push_back(
          {pod.id, "a pod asks for 1 to 64 GPUs, not " + std::to_string(pod.gpu_count)});
      continue;
    }
    auto type = by_type.find(pod.gpu_type);
    TypeIndex* index = type == by_type.end() ? nullptr : &type->second;
    const int chosen = index == nullptr ? -1 : index->Find(pod, nodes);
    if (chosen < 0) {
      std::string reason = WhyUnplaced(pod, index);
      if (!pod.interruptible) {
        if (std::optional<std::string> waiting = preemption.Try(pod, nodes, plan))
          reason = *waiting;
      }
      plan.unplaced.push_back({pod.id, std::move(reason)});
      continue;
    }
    Node& node = nodes[chosen];
    const int free_before = std::popcount(node.free_gpus);
    plan.bindings.push_back({pod.id, node.id, TakeGpus(node, pod.gpu_count)});
    node.free.vcpu -= pod.needs.vcpu;
    node.free.ram_mb -= pod.needs.ram_mb;
    node.free.disk_gb -= pod.needs.disk_gb;
    index->Move(chosen, free_before, free_before - pod.gpu_count);
  }
  return plan;
}

}  // namespace suanli::sched
