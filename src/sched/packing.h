// Packing: where a pod that asks for a share of one GPU, whole GPUs or none, plus CPU and memory,
// goes on a cluster of multi-GPU nodes, so that as few GPUs as possible are left stranded.
//
// GPU capacity is counted in milli-GPUs (kMilliGpu = one device). A pod asks for
//   - a share of one GPU (gpu_count 1, gpu_milli 1..999): several such pods share one device;
//   - whole GPUs (gpu_milli = kMilliGpu, gpu_count >= 1): devices nobody else uses;
//   - no GPU (gpu_count 0): CPU and memory only.
//
// Policies:
//   kRandom   any node that fits: the floor every other policy must beat.
//   kBestFit  the node left with the least free CPU and GPU, each normalised by the largest node
//             and weighted half (as the FGD paper's simulator defines best fit); a share goes on
//             the fullest GPU it fits on.
//   kFgd      fragmentation gradient descent (Weng et al., "Beware of Fragmentation", ATC '23):
//             the placement that adds the least expected fragmentation to its node, measured
//             against the workload, the mix of pods the cluster serves. Ties go to a random one.
//   kSuanli   FGD's measure plus small weights of best fit's score and of the node's imbalance
//             (how far its free CPU share is from its free GPU share), and ties (frequent: whole
//             nodes in the same state) broken by best fit instead of at random: among placements
//             that fragment about equally, the one that packs tighter and keeps cores beside its
//             GPUs.
//
// The fragmentation of a node for one kind of pod is the free GPU capacity that pod could not use
// there: all of it when the pod does not fit on the node at all (its CPU, memory or GPU model),
// else the GPUs with less free than the pod asks of each (a 0.3 remnant for a 0.5 share; any partly
// used GPU for a whole-GPU pod). A node's fragmentation is that, averaged over the workload.
//
// Pure and single-threaded. A Packer holds the nodes, a cache of fragmentation by node state and,
// for the deterministic policies, each kind of pod's choices in order, rescoring only the nodes
// that changed since that kind last placed (bench/sched_bench, docs/benchmarks.md).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/gpu_share.h"

namespace suanli::sched {

using core::kMilliGpu;

// GPU models as bits, so that "any of these models" is one AND; the caller numbers its models.
using ModelMask = uint64_t;
inline constexpr ModelMask kAnyModel = 0;

struct Demand {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
  int gpu_count = 0;             // 0: no GPU
  int gpu_milli = 0;             // of each GPU: 1..kMilliGpu; below kMilliGpu only with gpu_count 1
  ModelMask models = kAnyModel;  // the GPU models it accepts; kAnyModel: any

  int64_t GpuMilliTotal() const { return static_cast<int64_t>(gpu_count) * gpu_milli; }
  bool IsShare() const { return gpu_count == 1 && gpu_milli < kMilliGpu; }
  bool operator==(const Demand&) const = default;
};

// A node and what is free on it.
struct PackingNode {
  int model = -1;  // bit index of its GPU model; -1: no GPUs
  int64_t cpu_milli_capacity = 0;
  int64_t cpu_milli = 0;  // free
  int64_t memory_mib = 0;
  std::vector<int> gpu_milli;  // free capacity of each device
  // Per device, its link group: devices that talk over NVLink or through one PCIe switch share a
  // number. Empty: all in one group. Whole-GPU pods take their devices from as few groups as
  // possible, and single devices and shares go where they break up the fewest whole groups.
  std::vector<int> gpu_link_group;
  // All devices' capacity together, when some are less than a whole GPU (MIG slices); 0: each
  // device is kMilliGpu.
  int64_t gpu_milli_capacity = 0;

  int64_t GpuMilliFree() const;
  int64_t GpuMilliCapacity() const;
};

// The mix of pods a cluster serves: each distinct demand and its share of the pods (shares sum to
// 1). Pods without a GPU are left out: they strand no GPU capacity of their own.
struct Workload {
  struct Kind {
    Demand demand;
    double share = 0;
  };
  std::vector<Kind> kinds;

  static Workload Of(const std::vector<Demand>& pods);
};

enum class Policy { kRandom, kBestFit, kFgd, kSuanli };

std::optional<Policy> ParsePolicy(std::string_view name);  // "random", "best-fit", "fgd", "suanli"
std::string_view PolicyName(Policy policy);

struct Placement {
  size_t node = 0;
  std::vector<int> gpus;  // device indices, ascending; empty for a pod without a GPU
};

// Whether `pod` fits on `node` now: its model, CPU, memory and GPUs.
bool Fits(const PackingNode& node, const Demand& pod);

// Takes what `pod` asks from `node`, on the devices `gpus`.
void Take(PackingNode& node, const Demand& pod, const std::vector<int>& gpus);

// Free GPU capacity on `node` that pods of `kind` could not use (see the file comment).
int64_t StrandedFor(const PackingNode& node, const Demand& kind);

struct DemandHash {
  size_t operator()(const Demand& demand) const;
};

// Places pods one at a time on the nodes it holds.
class Packer {
 public:
  // `nodes` as they are now; the largest node's CPU and GPUs set best fit's scale. `seed` drives
  // the random choices (kRandom, and kFgd's ties).
  Packer(Policy policy, Workload workload, std::vector<PackingNode> nodes, uint64_t seed);

  // Where `pod` goes, taking what it asks from that node; nullopt when it fits nowhere. Only nodes
  // `eligible` accepts are considered (all when it is empty): the product's constraints packing
  // does not model (labels, disk, the exact GPU type, a node that is not ready).
  using Eligible = std::function<bool(size_t node)>;
  std::optional<Placement> Place(const Demand& pod, const Eligible& eligible = {});

  const std::vector<PackingNode>& nodes() const { return nodes_; }

  // The node's expected fragmentation under the workload, in milli-GPUs.
  double Fragmentation(const PackingNode& node);

 private:
  // A pod's best placement on one node: lower score first, then lower tie.
  struct Choice {
    std::vector<int> gpus;
    double score = 0;
    double tie = 0;
    bool Before(const Choice& other) const {
      return score < other.score || (score == other.score && tie < other.tie);
    }
    bool Ties(const Choice& other) const { return score == other.score && tie == other.tie; }
  };
  struct KindIndex {
    std::vector<uint64_t> scored_version;        // per node: its version when last scored
    std::vector<std::optional<Choice>> choices;  // per node: the best choice, if the pod fits
    std::set<std::tuple<double, double, size_t>> order;  // (score, tie, node) of the fits
    size_t log_position = 0;                             // in changed_: rescored up to here
  };

  // `fragmentation`: the node's before the pod (kFgd and kSuanli; computed once per node).
  Choice Score(const PackingNode& node, double fragmentation, const Demand& pod,
               std::vector<int> gpus);
  std::optional<Choice> BestOn(const PackingNode& node, const Demand& pod);
  std::optional<Placement> PlaceByScan(const Demand& pod, const Eligible& eligible);
  std::optional<Placement> PlaceByIndex(const Demand& pod, const Eligible& eligible);
  void Rescore(KindIndex& kind, const Demand& pod, size_t index);
  double BestFitScore(const PackingNode& after) const;

  Policy policy_;
  Workload workload_;
  std::mt19937_64 random_;
  std::vector<PackingNode> nodes_;
  std::vector<uint64_t> version_;  // per node: bumped by each placement on it
  std::vector<size_t> changed_;    // the node of each placement, in order
  int64_t largest_cpu_ = 1;
  int64_t largest_gpu_milli_ = 1;
  std::unordered_map<std::string, double> fragmentation_by_state_;
  std::unordered_map<Demand, KindIndex, DemandHash> index_;  // kBestFit and kSuanli
};

}  // namespace suanli::sched
