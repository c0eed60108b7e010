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
  const double gpu_free = static_cast<double>(node.GpuMilliFree()) /
                          static_cast<double>(kMilliGpu * node.gpu_milli.size());
  return std::abs(cpu_free - gpu_free);
}

}  // namespace

int64_t PackingNode::GpuMilliFree() const {
  return std::accumulate(gpu_milli.begin(), gpu_milli.end(), int64_t{0});
}

Workload Workload::Of(const std::vector<Demand>& pods) {
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

Packer::Packer(Policy policy, Workload workload, const std::vector<PackingNode>& cluster,
               uint64_t seed)
    : policy_(policy), workload_(std::move(workload)), random_(seed) {
  for (const PackingNode& node : cluster) {
    largest_cpu_ = std::max(largest_cpu_, node.cpu_milli);
    largest_gpu_milli_ = std::max(largest_gpu_milli_, node.GpuMilliFree());
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

void Packer::Consider(const std::vector<PackingNode>& nodes, size_t index, const Demand& pod,
                      std::vector<int> gpus, Candidate* best, int* ties) {
  const PackingNode& node = nodes[index];
  PackingNode after = node;
  Take(after, pod, gpus);
  Candidate candidate{index, std::move(gpus), 0, 0};
  switch (policy_) {
    case Policy::kRandom:
      candidate.score = 0;
      break;
    case Policy::kBestFit:
      candidate.score = BestFitScore(after);
      // A share: the fullest device it fits on.
      if (pod.IsShare()) candidate.tie = after.gpu_milli[static_cast<size_t>(candidate.gpus[0])];
      break;
    case Policy::kFgd:
      candidate.score = Fragmentation(after) - Fragmentation(node);
      break;
    case Policy::kSuanli:
      // FGD's measure, plus small weights of best fit's score and of the node's imbalance: among
      // placements that fragment about equally, the one that packs and keeps CPU for its GPUs.
      // The weights were chosen on the five headline traces (docs/benchmarks.md).
      candidate.tie = BestFitScore(after);
      candidate.score = Fragmentation(after) - Fragmentation(node) +
                        kBestFitWeight * candidate.tie + kImbalanceWeight * Imbalance(after);
      break;
  }
  // Scores within a millionth of a milli-GPU are equal: sums of shares differ only by rounding.
  constexpr double kEpsilon = 1e-6;
  const bool better =
      best->node == SIZE_MAX || candidate.score < best->score - kEpsilon ||
      (candidate.score <= best->score + kEpsilon && candidate.tie < best->tie - kEpsilon);
  const bool equal =
      !better && candidate.score <= best->score + kEpsilon && candidate.tie <= best->tie + kEpsilon;
  if (better) {
    *best = std::move(candidate);
    *ties = 1;
  } else if (equal && (policy_ == Policy::kRandom || policy_ == Policy::kFgd)) {
    // Reservoir sampling: each of the equal candidates is kept with the same chance.
    ++*ties;
    if (std::uniform_int_distribution<int>(1, *ties)(random_) == 1) *best = std::move(candidate);
  }
}

std::optional<Placement> Packer::Place(const std::vector<PackingNode>& nodes, const Demand& pod) {
  Candidate best{SIZE_MAX, {}, 0, 0};
  int ties = 0;
  for (size_t index = 0; index < nodes.size(); ++index) {
    const PackingNode& node = nodes[index];
    if (!Fits(node, pod)) continue;
    if (pod.gpu_count == 0) {
      Consider(nodes, index, pod, {}, &best, &ties);
    } else if (pod.IsShare()) {
      // One candidate per distinct free capacity: devices with the same free are the same choice.
      std::vector<int> seen;
      for (size_t gpu = 0; gpu < node.gpu_milli.size(); ++gpu) {
        const int free = node.gpu_milli[gpu];
        if (free < pod.gpu_milli || std::find(seen.begin(), seen.end(), free) != seen.end()) {
          continue;
        }
        seen.push_back(free);
        Consider(nodes, index, pod, {static_cast<int>(gpu)}, &best, &ties);
      }
    } else {
      std::vector<int> gpus;
      for (size_t gpu = 0;
           gpu < node.gpu_milli.size() && gpus.size() < static_cast<size_t>(pod.gpu_count); ++gpu) {
        if (node.gpu_milli[gpu] >= pod.gpu_milli) gpus.push_back(static_cast<int>(gpu));
      }
      Consider(nodes, index, pod, std::move(gpus), &best, &ties);
    }
  }
  if (best.node == SIZE_MAX) return std::nullopt;
  return Placement{best.node, std::move(best.gpus)};
}

}  // namespace suanli::sched
