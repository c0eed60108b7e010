#include "sched/scheduler.h"

#include <algorithm>
#include <numeric>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "core/check.h"

namespace suanli::sched {
namespace {

bool HasLabels(const Node& node, const std::map<std::string, std::string>& selector) {
  for (const auto& [key, value] : selector) {
    auto it = node.labels.find(key);
    if (it == node.labels.end() || it->second != value) return false;
  }
  return true;
}

std::string Plural(int n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

bool IsShare(const PodRequest& pod) { return pod.gpu_milli < kMilliGpu; }

// "12 GB", "7.5 GB": a person reads GB to the tenth.
std::string GbText(double gb) {
  const int64_t tenths = static_cast<int64_t>(gb * 10 + 0.5);
  return std::to_string(tenths / 10) + (tenths % 10 == 0 ? "" : "." + std::to_string(tenths % 10)) +
         " GB";
}

// What a pod with these GPUs could still get on `node`: whole free devices, or for a share the
// most milli-GPUs left on one device.
int Room(const std::vector<int>& free_milli, bool share) {
  int room = 0;
  for (int free : free_milli) {
    if (share) {
      room = std::max(room, free);
    } else if (free == kMilliGpu) {
      ++room;
    }
  }
  return room;
}

bool FitsGpus(const std::vector<int>& free_milli, const PodRequest& pod) {
  return IsShare(pod) ? Room(free_milli, true) >= pod.gpu_milli
                      : Room(free_milli, false) >= pod.gpu_count;
}

// A selector as people write it: "disk=nvme, region=sh".
std::string SelectorText(const std::map<std::string, std::string>& selector) {
  std::string text;
  for (const auto& [key, value] : selector) text += (text.empty() ? "" : ", ") + key + "=" + value;
  return text;
}

// The parts of `need` that `most` (the most any candidate node has of each) lacks: "8 vCPU (the
// most is 4) and 32 GB RAM (the most is 16 GB)"; "" when each part is there on some node.
std::string Shortfall(const Resources& need, const Resources& most, std::string_view unit) {
  std::vector<std::string> parts;
  if (need.vcpu > most.vcpu) {
    parts.push_back(std::to_string(need.vcpu) + " vCPU" + std::string(unit) + " (the most is " +
                    std::to_string(std::max(0, most.vcpu)) + ")");
  }
  if (need.ram_mb > most.ram_mb) {
    parts.push_back(GbText(static_cast<double>(need.ram_mb) / 1024) + " RAM" + std::string(unit) +
                    " (the most is " +
                    GbText(static_cast<double>(std::max<int64_t>(0, most.ram_mb)) / 1024) + ")");
  }
  if (need.disk_gb > most.disk_gb) {
    parts.push_back(std::to_string(need.disk_gb) + " GB disk" + std::string(unit) +
                    " (the most is " + std::to_string(std::max<int64_t>(0, most.disk_gb)) + " GB)");
  }
  std::string text;
  for (size_t i = 0; i < parts.size(); ++i) {
    text += (i == 0 ? "" : i + 1 == parts.size() ? " and " : ", ") + parts[i];
  }
  return text;
}

Resources MostOf(const std::vector<const Node*>& nodes) {
  Resources most{-1, -1, -1};
  for (const Node* node : nodes) {
    most.vcpu = std::max(most.vcpu, node->free.vcpu);
    most.ram_mb = std::max(most.ram_mb, node->free.ram_mb);
    most.disk_gb = std::max(most.disk_gb, node->free.disk_gb);
  }
  return most;
}

// Why nothing fit, from the nodes of the pod's type that are ready now.
std::string WhyUnplaced(const PodRequest& pod, const std::vector<Node>& nodes) {
  const bool share = IsShare(pod);
  int most = -1;
  int nodes_with_most = 0;
  double gpu_memory_gb = 0;
  int largest_device =
      0;  // the largest device's capacity: less than a GPU where all are MIG slices
  std::vector<const Node*> with_gpus;  // nodes with the GPUs the pod asks free now
  for (const Node& node : nodes) {
    if (!node.schedulable || node.gpu_type != pod.gpu_type || node.gpu_free_milli.empty()) continue;
    gpu_memory_gb = std::max(gpu_memory_gb, node.gpu_memory_gb);
    largest_device =
        node.gpu_capacity_milli.empty()
            ? kMilliGpu
            : std::max(largest_device, *std::max_element(node.gpu_capacity_milli.begin(),
                                                         node.gpu_capacity_milli.end()));
    const int room = Room(node.gpu_free_milli, share);
    if (room > most) {
      most = room;
      nodes_with_most = 0;
    }
    if (room == most) ++nodes_with_most;
    if (FitsGpus(node.gpu_free_milli, pod)) with_gpus.push_back(&node);
  }
  if (most < 0) return "no ready node has " + pod.gpu_type + " GPUs";
  std::string want = share ? core::MilliGpuText(pod.gpu_milli) + " free of an " + pod.gpu_type
                           : std::to_string(pod.gpu_count) + " free " + pod.gpu_type;
  if (share && gpu_memory_gb > 0) {
    want += " (" + GbText(gpu_memory_gb * pod.gpu_milli / kMilliGpu) + " of its memory)";
  }
  const bool short_of_gpus = share ? most < pod.gpu_milli : most < pod.gpu_count;
  if (short_of_gpus && largest_device < (share ? pod.gpu_milli : kMilliGpu)) {
    return "no node has " + want + ": their GPUs are split into MIG slices, the largest " +
           core::MilliGpuText(largest_device) + " of a GPU; ask for a share of at most that";
  }
  if (short_of_gpus) {
    if (most == 0) return "no node has " + want + "; all are in use";
    return "no node has " + want + "; " + Plural(nodes_with_most, "node") +
           (nodes_with_most == 1 ? " has " : " have ") +
           (share ? core::MilliGpuText(most) : std::to_string(most));
  }
  std::erase_if(with_gpus, [&](const Node* node) { return !HasLabels(*node, pod.node_selector); });
  if (with_gpus.empty()) {
    return "no node with " + want + " has the labels " + SelectorText(pod.node_selector);
  }
  // The GPUs are there: say which of vCPU, RAM and disk is short beside them.
  const std::string short_of = Shortfall(pod.needs, MostOf(with_gpus), " free");
  if (!short_of.empty()) {
    return "no node with " + want + " also has " + short_of +
           "; ask for less, or wait for other pods to stop";
  }
  return "no node with " + want + " also has " + std::to_string(pod.needs.vcpu) + " vCPU, " +
         GbText(static_cast<double>(pod.needs.ram_mb) / 1024) + " RAM and " +
         std::to_string(pod.needs.disk_gb) + " GB disk free together";
}

// Finds interruptible pods whose stopping would make room for an on-demand pod. Only nodes that run
// interruptible pods are searched, so a cluster without them pays nothing.
class Preemption {
 public:
  Preemption(const std::vector<RunningPod>& running, const std::vector<Node>& nodes) {
    std::unordered_map<std::string, int> node_index;
    for (const RunningPod& pod : running) {
      if (!pod.interruptible) continue;
      if (node_index.empty()) {
        for (size_t i = 0; i < nodes.size(); ++i)
          node_index.emplace(nodes[i].id, static_cast<int>(i));
      }
      auto it = node_index.find(pod.node_id);
      if (it != node_index.end()) by_node_[it->second].push_back(&pod);
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
      std::vector<int> gpus = node.gpu_free_milli;
      Resources free = node.free;
      std::vector<const RunningPod*> victims;
      for (const RunningPod* victim : candidates) {
        if (FitsGpus(gpus, pod) && free.Covers(pod.needs)) break;
        if (victim->priority > pod.priority || taken_.contains(victim->id)) continue;
        victims.push_back(victim);
        for (int index : victim->gpu_indices) {
          if (index >= 0 && static_cast<size_t>(index) < gpus.size())
            gpus[static_cast<size_t>(index)] += victim->gpu_milli;
        }
        free.vcpu += victim->uses.vcpu;
        free.ram_mb += victim->uses.ram_mb;
        free.disk_gb += victim->uses.disk_gb;
      }
      const bool fits = FitsGpus(gpus, pod) && free.Covers(pod.needs);
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

// Packing knows GPU models as bits of a mask; types beyond 64 share bits, which only blurs the
// fragmentation estimate: the exact type is checked on every placement.
class ModelBits {
 public:
  int Of(const std::string& type) {
    auto [it, added] = bits_.try_emplace(type, static_cast<int>(bits_.size() % 64));
    return it->second;
  }

 private:
  std::unordered_map<std::string, int> bits_;
};

Demand DemandOf(int gpu_count, int gpu_milli, const Resources& resources, int model) {
  return Demand{int64_t{resources.vcpu} * 1000, resources.ram_mb, gpu_count, gpu_milli,
                ModelMask{1} << model};
}

std::optional<std::string> Invalid(const PodRequest& pod) {
  if (pod.gpu_count < 1 || pod.gpu_count > kMaxGpusPerNode)
    return "a pod asks for 1 to 64 GPUs, not " + std::to_string(pod.gpu_count);
  if (pod.gpu_milli < 1 || pod.gpu_milli > kMilliGpu || (IsShare(pod) && pod.gpu_count != 1))
    return "a pod asks for a share of one GPU (0.001 to 0.999) or whole GPUs, not " +
           std::to_string(pod.gpu_count) + " x " + core::MilliGpuText(pod.gpu_milli);
  return std::nullopt;
}

// The capacity of device `index` of `node` in milli-GPUs.
int DeviceCapacity(const Node& node, size_t index) {
  return node.gpu_capacity_milli.empty() ? kMilliGpu : node.gpu_capacity_milli[index];
}

}  // namespace

Resources DefaultNeeds(int gpu_count, int gpu_milli) {
  const int64_t milli = int64_t{gpu_count} * gpu_milli;
  return Resources{static_cast<int>(std::max<int64_t>(1, 2 * milli / kMilliGpu)),
                   std::max<int64_t>(1, 8 * milli / kMilliGpu) * 1024, 0};
}

int UsableFreeGpus(const Node& node) {
  int usable = node.FreeGpus();
  while (usable > 0 && !node.free.Covers(DefaultNeeds(usable, kMilliGpu))) --usable;
  return usable;
}

int LargestShareCovered(const Resources& free) {
  // DefaultNeeds grows with the share: the largest covered one by bisection.
  if (!free.Covers(DefaultNeeds(1, 1))) return 0;
  int low = 1;               // covered
  int high = kMilliGpu - 1;  // the largest share
  if (free.Covers(DefaultNeeds(1, high))) return high;
  while (high - low > 1) {
    const int middle = low + (high - low) / 2;
    (free.Covers(DefaultNeeds(1, middle)) ? low : high) = middle;
  }
  return low;
}

std::optional<std::string> WhyNeverPlaced(const PodRequest& pod, const std::vector<Node>& nodes) {
  if (std::optional<std::string> invalid = Invalid(pod)) return invalid;
  const bool share = IsShare(pod);
  std::map<std::string, int> most_by_type;  // GPUs on the largest node of each type
  int most_whole = 0;                       // whole GPUs on the largest node of the pod's type
  int largest_device = 0;                   // milli-GPUs
  bool any_of_type = false;
  std::vector<const Node*> with_gpus;  // nodes of the type with the GPUs the pod asks
  for (const Node& node : nodes) {
    if (node.gpu_free_milli.empty()) continue;
    int whole = 0;
    int largest = 0;
    for (size_t i = 0; i < node.gpu_free_milli.size(); ++i) {
      const int capacity = DeviceCapacity(node, i);
      if (capacity >= kMilliGpu) ++whole;
      largest = std::max(largest, capacity);
    }
    int& most_here = most_by_type[node.gpu_type];
    most_here = std::max(most_here, whole);
    if (node.gpu_type != pod.gpu_type) continue;
    any_of_type = true;
    most_whole = std::max(most_whole, whole);
    largest_device = std::max(largest_device, largest);
    if (share ? largest >= pod.gpu_milli : whole >= pod.gpu_count) with_gpus.push_back(&node);
  }
  if (!any_of_type) {
    if (most_by_type.empty()) return "no node has joined this cluster yet";
    std::string types;
    for (const auto& [type, most] : most_by_type) {
      types += (types.empty() ? "" : ", ") + type + " (" + std::to_string(most) + " a node)";
    }
    return "no node here has " + pod.gpu_type + " GPUs; the types here are " + types;
  }
  if (with_gpus.empty()) {
    if (share || most_whole == 0) {
      return "no " + pod.gpu_type + " device here holds " +
             (share ? core::MilliGpuText(pod.gpu_milli) + " of a GPU"
                    : std::string("a whole GPU")) +
             ": they are split into MIG slices, the largest " + core::MilliGpuText(largest_device) +
             " of a GPU; ask for a share of at most that";
    }
    return "the largest " + pod.gpu_type + " node here has " + Plural(most_whole, "GPU") +
           "; ask for at most " + std::to_string(most_whole);
  }
  const std::string want = share ? core::MilliGpuText(pod.gpu_milli) + " of an " + pod.gpu_type
                                 : std::to_string(pod.gpu_count) + " " + pod.gpu_type;
  std::erase_if(with_gpus, [&](const Node* node) { return !HasLabels(*node, pod.node_selector); });
  if (with_gpus.empty()) {
    return "no node here with " + want + " has the labels " + SelectorText(pod.node_selector);
  }
  for (const Node* node : with_gpus) {
    if (node->free.Covers(pod.needs)) return std::nullopt;
  }
  const std::string short_of = Shortfall(pod.needs, MostOf(with_gpus), "");
  if (!short_of.empty()) return "no node here with " + want + " has " + short_of + "; ask for less";
  return "no node here with " + want + " has " + std::to_string(pod.needs.vcpu) + " vCPU, " +
         GbText(static_cast<double>(pod.needs.ram_mb) / 1024) + " RAM and " +
         std::to_string(pod.needs.disk_gb) + " GB disk together; ask for less";
}

int Node::FreeGpus() const { return Room(gpu_free_milli, false); }

int64_t Node::GpuMilliCapacity() const {
  return gpu_capacity_milli.empty()
             ? int64_t{kMilliGpu} * static_cast<int64_t>(gpu_free_milli.size())
             : std::accumulate(gpu_capacity_milli.begin(), gpu_capacity_milli.end(), int64_t{0});
}

Plan Schedule(std::vector<Node>& nodes, std::vector<PodRequest> pending,
              const std::vector<RunningPod>& running, Policy policy) {
  Preemption preemption(running, nodes);
  ModelBits models;
  std::vector<PackingNode> packing_nodes;
  packing_nodes.reserve(nodes.size());
  for (const Node& node : nodes) {
    SUANLI_CHECK(node.gpu_free_milli.size() <= kMaxGpusPerNode, "a node has 0 to 64 GPUs");
    PackingNode& packing = packing_nodes.emplace_back();
    packing.model = node.gpu_free_milli.empty() ? -1 : models.Of(node.gpu_type);
    packing.cpu_milli_capacity = int64_t{node.vcpu_total} * 1000;
    packing.cpu_milli = int64_t{node.free.vcpu} * 1000;
    packing.memory_mib = node.free.ram_mb;
    packing.gpu_milli = node.gpu_free_milli;
    packing.gpu_link_group = node.gpu_link_group;
    if (!node.gpu_capacity_milli.empty()) packing.gpu_milli_capacity = node.GpuMilliCapacity();
  }
  // The mix packing keeps room for: what runs now and what waits.
  std::unordered_map<std::string_view, int> model_of_node;
  for (size_t i = 0; i < nodes.size(); ++i)
    model_of_node.emplace(nodes[i].id, packing_nodes[i].model);
  std::vector<Demand> mix;
  mix.reserve(running.size() + pending.size());
  for (const RunningPod& pod : running) {
    auto model = model_of_node.find(pod.node_id);
    if (model == model_of_node.end() || model->second < 0) continue;
    mix.push_back(DemandOf(pod.gpu_count, pod.gpu_milli, pod.uses, model->second));
  }
  for (const PodRequest& pod : pending) {
    if (!Invalid(pod))
      mix.push_back(DemandOf(pod.gpu_count, pod.gpu_milli, pod.needs, models.Of(pod.gpu_type)));
  }
  Packer packer(policy, Workload::Of(mix), std::move(packing_nodes), /*seed=*/1);

  std::stable_sort(pending.begin(), pending.end(), [](const PodRequest& a, const PodRequest& b) {
    return a.priority != b.priority ? a.priority > b.priority : a.sequence < b.sequence;
  });
  Plan plan;
  plan.bindings.reserve(pending.size());
  std::vector<std::pair<size_t, const PodRequest*>> why_unplaced;  // plan.unplaced's index, pod
  for (const PodRequest& pod : pending) {
    if (std::optional<std::string> invalid = Invalid(pod)) {
      plan.unplaced.push_back({pod.id, std::move(*invalid)});
      continue;
    }
    const Demand demand =
        DemandOf(pod.gpu_count, pod.gpu_milli, pod.needs, models.Of(pod.gpu_type));
    auto fits = [&](size_t index) {
      const Node& node = nodes[index];
      return node.schedulable && node.gpu_type == pod.gpu_type &&
             node.free.disk_gb >= pod.needs.disk_gb && HasLabels(node, pod.node_selector);
    };
    std::optional<Placement> placement;
    if (!pod.data_node.empty()) {
      placement = packer.Place(
          demand, [&](size_t index) { return nodes[index].id == pod.data_node && fits(index); });
    }
    if (!placement && pod.node_required) {
      plan.unplaced.push_back(
          {pod.id,
           "waiting for room on node " + pod.data_node +
               ", which holds its data and cannot move it now (a volume shared with a pod there, "
               "or the node is away) (" +
               (pod.gpu_milli < kMilliGpu ? "a share of " : std::to_string(pod.gpu_count) + " ") +
               pod.gpu_type + ")"});
      continue;
    }
    if (!placement) placement = packer.Place(demand, fits);
    if (!placement) {
      std::optional<std::string> waiting;
      if (!pod.interruptible) waiting = preemption.Try(pod, nodes, plan);
      if (!waiting) why_unplaced.emplace_back(plan.unplaced.size(), &pod);
      plan.unplaced.push_back({pod.id, waiting.value_or("")});
      continue;
    }
    Node& node = nodes[placement->node];
    plan.bindings.push_back({pod.id, node.id, placement->gpus});
    for (int index : placement->gpus)
      node.gpu_free_milli[static_cast<size_t>(index)] -= pod.gpu_milli;
    node.free.vcpu -= pod.needs.vcpu;
    node.free.ram_mb -= pod.needs.ram_mb;
    node.free.disk_gb -= pod.needs.disk_gb;
  }
  // Reasons from the nodes as the round leaves them, once per kind of request: a round of many
  // pods that all wait (a full cluster) would otherwise scan every node for each of them.
  std::map<std::tuple<std::string_view, int, int, int, int64_t, int64_t, std::string>, std::string>
      reasons;
  for (const auto& [index, pod] : why_unplaced) {
    auto [it, added] = reasons.try_emplace({pod->gpu_type, pod->gpu_count, pod->gpu_milli,
                                            pod->needs.vcpu, pod->needs.ram_mb, pod->needs.disk_gb,
                                            SelectorText(pod->node_selector)});
    if (added) it->second = WhyUnplaced(*pod, nodes);
    plan.unplaced[index].reason = it->second;
  }
  return plan;
}

}  // namespace suanli::sched
