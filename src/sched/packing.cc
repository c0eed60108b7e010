#include "sched/packing.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <numeric>
#include <tuple>

namespace suanli::sched {
namespace {

// kSuanli's weight of best fit's score (0..1) against fragmentation, in milli-GPUs.
constexpr double kBestFitWeight = 0.05 * kMilliGpu;
// kSuanli's weight, in milli-GPUs, of a GPU node's imbalance: how far the share of its CPU left
// free is from the share of its GPUs left free. A node that runs out of cores first strands its
// GPUs, one that runs out of GPUs first strands cores that GPU pods need elsewhere.
constexpr double kImbalanceWeight = 0.5 * kMilliGpu;

bool ModelAccepted(const PackingNode& node, const Demand& pod) {
  if (pod.gpu_count == 0) return true;
  if (node.model < 0) return false;
  return pod.models == kAnyModel || (pod.models >> node.model & 1) != 0;
}

// Devices with at least `milli` free.
int DevicesWithRoom(const PackingNode& node, int milli) {
  return static_cast<int>(std::count_if(node.gpu_milli.begin(), node.gpu_milli.end(),
                                        [milli](int free) { return free >= milli; }));
}

// The node's state as a cache key: fragmentation depends on the model, CPU, memory and the
// multiset of free capacities, not on which device has which.
std::string StateKey(const PackingNode& node) {
  std::vector<int> free = node.gpu_milli;
  std::sort(free.begin(), free.end());
  std::string key(sizeof(int) + 2 * sizeof(int64_t) + free.size() * sizeof(int), '\0');
  char* out = key.data();
  std::memcpy(out, &node.model, sizeof(int));
  out += sizeof(int);
  std::memcpy(out, &node.cpu_milli, sizeof(int64_t));
  out += sizeof(int64_t);
  std::memcpy(out, &node.memory_mib, sizeof(int64_t));
  out += sizeof(int64_t);
  if (!free.empty()) std::memcpy(out, free.data(), free.size() * sizeof(int));
  return key;
}

// 0 (CPU and GPUs equally used) to 1; 0 for a node without GPUs or without its capacity.
double Imbalance(const PackingNode& node) {
  if (node.gpu_milli.empty() || node.cpu_milli_capacity <= 0) return 0;
  const double cpu_free =
      static_cast<double>(node.cpu_milli) / static_cast<double>(node.cpu_milli_capacity);
  const double gpu_free =
      static_cast<double>(node.GpuMilliFree()) / static_cast<double>(node.GpuMilliCapacity());
  return std::abs(cpu_free - gpu_free);
}

int LinkGroup(const PackingNode& node, size_t gpu) {
  return gpu < node.gpu_link_group.size() ? node.gpu_link_group[gpu] : 0;
}

// Whole devices (each with the pod's gpu_milli free) from as few link groups as possible: the
// group with the fewest such devices that holds the pod (larger free groups stay for larger
// pods), else the groups with the most first. Lowest indices first within a group.
std::vector<int> WholeDevices(const PackingNode& node, const Demand& pod) {
  const size_t want = static_cast<size_t>(pod.gpu_count);
  std::vector<int> gpus;
  if (node.gpu_link_group.empty()) {
    for (size_t gpu = 0; gpu < node.gpu_milli.size() && gpus.size() < want; ++gpu) {
      if (node.gpu_milli[gpu] >= pod.gpu_milli) gpus.push_back(static_cast<int>(gpu));
    }
    return gpus;
  }
  std::map<int, std::vector<int>> groups;  // link group -> its devices with room, ascending
  for (size_t gpu = 0; gpu < node.gpu_milli.size(); ++gpu) {
    if (node.gpu_milli[gpu] >= pod.gpu_milli)
      groups[LinkGroup(node, gpu)].push_back(static_cast<int>(gpu));
  }
  std::vector<const std::vector<int>*> order;
  for (const auto& [group, devices] : groups) order.push_back(&devices);
  std::stable_sort(order.begin(), order.end(), [want](const auto* a, const auto* b) {
    const bool a_holds = a->size() >= want;
    const bool b_holds = b->size() >= want;
    if (a_holds != b_holds) return a_holds;
    return a_holds ? a->size() < b->size() : a->size() > b->size();
  });
  for (const std::vector<int>* devices : order) {
    for (int gpu : *devices) {
      if (gpus.size() == want) break;
      gpus.push_back(gpu);
    }
  }
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

// The devices a share could go on, one per distinct free capacity (devices with the same free are
// the same choice to packing). Among equals, the one whose link group has the fewest whole free
// devices: a group left whole stays whole for a multi-GPU pod.
std::vector<int> ShareCandidates(const PackingNode& node, int milli) {
  std::map<int, int> whole_in_group;
  if (!node.gpu_link_group.empty()) {
    for (size_t gpu = 0; gpu < node.gpu_milli.size(); ++gpu) {
      if (node.gpu_milli[gpu] == kMilliGpu) ++whole_in_group[LinkGroup(node, gpu)];
    }
  }
  std::vector<int> candidates;
  for (size_t gpu = 0; gpu < node.gpu_milli.size(); ++gpu) {
    const int free = node.gpu_milli[gpu];
    if (free < milli) continue;
    auto same = std::find_if(candidates.begin(), candidates.end(), [&](int other) {
      return node.gpu_milli[static_cast<size_t>(other)] == free;
    });
    if (same == candidates.end()) {
      candidates.push_back(static_cast<int>(gpu));
    } else if (whole_in_group[LinkGroup(node, gpu)] <
               whole_in_group[LinkGroup(node, static_cast<size_t>(*same))]) {
      *same = static_cast<int>(gpu);
    }
  }
  return candidates;
}

}  // namespace

int64_t PackingNode::GpuMilliFree() const {
  return std::accumulate(gpu_milli.begin(), gpu_milli.end(), int64_t{0});
}

int64_t PackingNode::GpuMilliCapacity() const {
  return gpu_milli_capacity > 0 ? gpu_milli_capacity
                                : static_cast<int64_t>(kMilliGpu * gpu_milli.size());
}

Workload Workload::Of(const std::vector<Demand>& pods) {
  // Ordered by GPUs first: the sums over kinds, and so the replay's ties, come out the same each
  // run (docs/benchmarks.md's figures are in this order).
  std::map<std::tuple<int, int, int64_t, int64_t, ModelMask>, int64_t> counts;
  int64_t total = 0;
  for (const Demand& pod : pods) {
    if (pod.gpu_count == 0) continue;
    ++counts[{pod.gpu_count, pod.gpu_milli, pod.cpu_milli, pod.memory_mib, pod.models}];
    ++total;
  }
  Workload workload;
  for (const auto& [key, count] : counts) {
    const auto& [gpu_count, gpu_milli, cpu_milli, memory_mib, models] = key;
    workload.kinds.push_back({Demand{cpu_milli, memory_mib, gpu_count, gpu_milli, models},
                              static_cast<double>(count) / static_cast<double>(total)});
  }
  return workload;
}

std::optional<Policy> ParsePolicy(std::string_view name) {
  if (name == "random") return Policy::kRandom;
  if (name == "best-fit") return Policy::kBestFit;
  if (name == "fgd") return Policy::kFgd;
  if (name == "suanli") return Policy::kSuanli;
  return std::nullopt;
}

std::string_view PolicyName(Policy policy) {
  switch (policy) {
    case Policy::kRandom:
      return "random";
    case Policy::kBestFit:
      return "best-fit";
    case Policy::kFgd:
      return "fgd";
    case Policy::kSuanli:
      return "suanli";
  }
  return "?";
}

bool Fits(const PackingNode& node, const Demand& pod) {
  return ModelAccepted(node, pod) && node.cpu_milli >= pod.cpu_milli &&
         node.memory_mib >= pod.memory_mib &&
         (pod.gpu_count == 0 || DevicesWithRoom(node, pod.gpu_milli) >= pod.gpu_count);
}

void Take(PackingNode& node, const Demand& pod, const std::vector<int>& gpus) {
  node.cpu_milli -= pod.cpu_milli;
  node.memory_mib -= pod.memory_mib;
  for (int gpu : gpus) node.gpu_milli[static_cast<size_t>(gpu)] -= pod.gpu_milli;
}

int64_t StrandedFor(const PackingNode& node, const Demand& kind) {
  if (!Fits(node, kind)) return node.GpuMilliFree();
  int64_t stranded = 0;
  for (int free : node.gpu_milli) {
    if (free < kind.gpu_milli) stranded += free;
  }
  return stranded;
}

size_t DemandHash::operator()(const Demand& demand) const {
  size_t hash = std::hash<int64_t>()(demand.cpu_milli);
  for (uint64_t part :
       {static_cast<uint64_t>(demand.memory_mib), static_cast<uint64_t>(demand.gpu_count),
        static_cast<uint64_t>(demand.gpu_milli), demand.models}) {
    hash = hash * 1000003 ^ std::hash<uint64_t>()(part);
  }
  return hash;
}

Packer::Packer(Policy policy, Workload workload, std::vector<PackingNode> nodes, uint64_t seed)
    : policy_(policy),
      workload_(std::move(workload)),
      random_(seed),
      nodes_(std::move(nodes)),
      version_(nodes_.size(), 1) {
  for (const PackingNode& node : nodes_) {
    largest_cpu_ = std::max(largest_cpu_, std::max(node.cpu_milli_capacity, node.cpu_milli));
    largest_gpu_milli_ = std::max(largest_gpu_milli_, node.GpuMilliCapacity());
  }
}

double Packer::Fragmentation(const PackingNode& node) {
  if (node.GpuMilliFree() == 0) return 0;
  std::string key = StateKey(node);
  if (auto cached = fragmentation_by_state_.find(key); cached != fragmentation_by_state_.end()) {
    return cached->second;
  }
  double expected = 0;
  for (const Workload::Kind& kind : workload_.kinds) {
    expected += kind.share * static_cast<double>(StrandedFor(node, kind.demand));
  }
  // Bounded: a long replay visits many states; starting over costs only recomputation.
  if (fragmentation_by_state_.size() > (1u << 20)) fragmentation_by_state_.clear();
  fragmentation_by_state_.emplace(std::move(key), expected);
  return expected;
}

double Packer::BestFitScore(const PackingNode& after) const {
  return 0.5 * static_cast<double>(after.cpu_milli) / static_cast<double>(largest_cpu_) +
         0.5 * static_cast<double>(after.GpuMilliFree()) / static_cast<double>(largest_gpu_milli_);
}

Packer::Choice Packer::Score(const PackingNode& node, double fragmentation, const Demand& pod,
                             std::vector<int> gpus) {
  PackingNode after = node;
  Take(after, pod, gpus);
  Choice choice{std::move(gpus), 0, 0};
  switch (policy_) {
    case Policy::kRandom:
      break;
    case Policy::kBestFit:
      choice.score = BestFitScore(after);
      // A share: the fullest device it fits on.
      if (pod.IsShare()) choice.tie = after.gpu_milli[static_cast<size_t>(choice.gpus[0])];
      break;
    case Policy::kFgd:
      choice.score = Fragmentation(after) - fragmentation;
      break;
    case Policy::kSuanli:
      // FGD's measure, plus small weights of best fit's score and of the node's imbalance: among
      // placements that fragment about equally, the one that packs and keeps CPU for its GPUs.
      // The weights were chosen on the five headline traces (docs/benchmarks.md).
      choice.tie = BestFitScore(after);
      choice.score = Fragmentation(after) - fragmentation + kBestFitWeight * choice.tie +
                     kImbalanceWeight * Imbalance(after);
      break;
  }
  return choice;
}

std::optional<Packer::Choice> Packer::BestOn(const PackingNode& node, const Demand& pod) {
  if (!Fits(node, pod)) return std::nullopt;
  const double fragmentation =
      policy_ == Policy::kFgd || policy_ == Policy::kSuanli ? Fragmentation(node) : 0;
  if (pod.gpu_count == 0) return Score(node, fragmentation, pod, {});
  if (!pod.IsShare()) return Score(node, fragmentation, pod, WholeDevices(node, pod));
  std::optional<Choice> best;
  for (int gpu : ShareCandidates(node, pod.gpu_milli)) {
    Choice choice = Score(node, fragmentation, pod, {gpu});
    if (!best || choice.Before(*best)) best = std::move(choice);
  }
  return best;
}

std::optional<Placement> Packer::Place(const Demand& pod, const Eligible& eligible) {
  std::optional<Placement> placement = policy_ == Policy::kRandom || policy_ == Policy::kFgd
                                           ? PlaceByScan(pod, eligible)
                                           : PlaceByIndex(pod, eligible);
  if (placement) {
    Take(nodes_[placement->node], pod, placement->gpus);
    changed_.push_back(placement->node);
    ++version_[placement->node];
    // Bounded memory over a long life: past these sizes the kinds start over (each rescans once).
    if (changed_.size() > 64 * nodes_.size() + 4096 || index_.size() > 4096) {
      index_.clear();
      changed_.clear();
    }
  }
  return placement;
}

std::optional<Placement> Packer::PlaceByScan(const Demand& pod, const Eligible& eligible) {
  std::optional<Placement> best;
  std::optional<Choice> best_choice;
  int ties = 0;
  for (size_t index = 0; index < nodes_.size(); ++index) {
    if (eligible && !eligible(index)) continue;
    std::optional<Choice> choice = BestOn(nodes_[index], pod);
    if (!choice) continue;
    if (!best_choice || choice->Before(*best_choice)) {
      ties = 1;
    } else if (choice->Ties(*best_choice)) {
      // Reservoir sampling: each of the equal choices is kept with the same chance.
      if (std::uniform_int_distribution<int>(1, ++ties)(random_) != 1) continue;
    } else {
      continue;
    }
    best = Placement{index, choice->gpus};
    best_choice = std::move(choice);
  }
  return best;
}

// Each kind of pod keeps every node's best choice for it in order, and rescores only the nodes
// that changed since it last placed (the log in changed_): a placement changes one node, so a
// round costs a few rescorings however many nodes there are.
std::optional<Placement> Packer::PlaceByIndex(const Demand& pod, const Eligible& eligible) {
  auto [it, added] = index_.try_emplace(pod);
  KindIndex& kind = it->second;
  if (added) {
    kind.scored_version.assign(nodes_.size(), 0);
    kind.choices.resize(nodes_.size());
    for (size_t index = 0; index < nodes_.size(); ++index) Rescore(kind, pod, index);
    kind.log_position = changed_.size();
  } else {
    for (; kind.log_position < changed_.size(); ++kind.log_position) {
      const size_t index = changed_[kind.log_position];
      if (kind.scored_version[index] != version_[index]) Rescore(kind, pod, index);
    }
  }
  for (const auto& [score, tie, node] : kind.order) {
    if (!eligible || eligible(node)) return Placement{node, kind.choices[node]->gpus};
  }
  return std::nullopt;
}

void Packer::Rescore(KindIndex& kind, const Demand& pod, size_t index) {
  if (const std::optional<Choice>& old = kind.choices[index]) {
    kind.order.erase({old->score, old->tie, index});
  }
  kind.choices[index] = BestOn(nodes_[index], pod);
  if (const std::optional<Choice>& now = kind.choices[index]) {
    kind.order.emplace(now->score, now->tie, index);
  }
  kind.scored_version[index] = version_[index];
}

}  // namespace suanli::sched
