// Scheduler: which node and which GPUs each pending pod gets.
//
// Pure: the control plane passes a snapshot of its nodes, its pending pods and the pods bound now,
// and stores the bindings it gets back (durably, before any agent sees them). Pods are placed
// highest priority first, first come first served within a priority. A pod asks for whole GPUs of
// one type (1 to 64 devices nobody else uses) or a share of one (gpu_milli below kMilliGpu: 0.5 is
// 500, and several such pods use one device), plus vCPU, RAM and disk. Where it goes among the
// nodes that fit is packing's choice (sched/packing.h): by default kSuanli, which keeps the
// cluster's free capacity usable by the mix of pods it serves (whole nodes for 8-GPU pods, whole
// devices for whole-GPU pods, shares together), kBestFit to compare against. A pod that cannot be
// placed gets the reason a person needs ("no node has 2 free RTX 4090; 3 nodes have 1", "no node
// has 0.5 free of an RTX 4090; 2 have 0.25").
//
// Data: a pod whose volume is on a node goes there when that node has room (moving a volume costs
// its bytes; see the control plane), elsewhere otherwise, unless it must share the node.
//
// Labels: a pod's node_selector must be a subset of a node's labels. Preemption: when an on-demand
// pod cannot be placed, the scheduler looks for a node where stopping interruptible pods (lowest
// priority, newest first) frees enough; it returns those pods to stop and leaves the pod pending
// with that reason. The next round, after they have stopped, places it; GPU capacity is never given
// twice. Not thread-safe; one call places one batch.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sched/packing.h"

namespace suanli::sched {

inline constexpr int kMaxGpusPerNode = 64;

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
  std::string gpu_type;  // canonical catalog name; a node has one type
  // Per device (at most 64): the milli-GPUs not yet given to pods; kMilliGpu when a whole GPU is
  // free. A MIG slice is a device of less than a GPU (its capacity): shares go on it, whole-GPU
  // pods never.
  std::vector<int> gpu_free_milli;
  std::vector<int> gpu_capacity_milli;  // per device; empty: kMilliGpu each
  // Per device: GPUs with the same number talk over NVLink or one PCIe switch (packing.h); empty:
  // all alike. Multi-GPU pods get devices from as few groups as possible.
  std::vector<int> gpu_link_group;
  double gpu_memory_gb = 0;  // of one whole GPU of the type, for the reason a share waits
  Resources free;            // vCPU, RAM and disk not yet given to pods
  int vcpu_total = 0;        // the node's vCPU (packing weighs the CPU left beside free GPUs)
  bool schedulable = true;   // ready, not cordoned or draining
  std::map<std::string, std::string> labels;

  int FreeGpus() const;              // whole devices nobody uses
  int64_t GpuMilliCapacity() const;  // all devices together
};

// A pod bound to a node now. All of them describe the mix of pods the cluster serves (packing
// scores against it); the interruptible ones may be preempted.
struct RunningPod {
  std::string id;
  std::string node_id;
  int gpu_count = 0;
  int gpu_milli = kMilliGpu;  // of each of its GPUs
  std::vector<int> gpu_indices;
  Resources uses;
  int priority = 0;
  uint64_t sequence = 0;       // when it was created: newer ones are preempted first
  bool interruptible = false;  // and may be stopped now (it is meant to run)
};

struct PodRequest {
  std::string id;
  std::string gpu_type;       // canonical catalog name
  int gpu_count = 1;          // 1 to 64
  int gpu_milli = kMilliGpu;  // of each GPU; below kMilliGpu (a share) only with gpu_count 1
  Resources needs;
  int priority = 0;                                  // higher first
  uint64_t sequence = 0;                             // arrival order: lower first within a priority
  bool interruptible = false;                        // may be preempted, and never preempts
  std::map<std::string, std::string> node_selector;  // labels the node must have
  // The node that holds its data (its volume): tried first, so that nothing moves when it has
  // room; with `node_required`, the only node it may go to (a volume it shares with a pod bound
  // there, or a node that is away, whose data cannot move). "": none.
  std::string data_node;
  bool node_required = false;
};

struct Binding {
  std::string pod_id;
  std::string node_id;
  std::vector<int> gpu_indices;  // ascending; one index for a share
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

// The vCPU and RAM a pod gets when it does not ask: 2 vCPU and 8 GB per GPU, in proportion for a
// share of one (gpu_milli of kMilliGpu), at least 1 of each; disk 0 (the template sets it). The
// control plane gives pods these, and availability counts a free GPU only where a pod with them
// could have it (UsableFreeGpus).
Resources DefaultNeeds(int gpu_count, int gpu_milli);

// Whole free GPUs of `node` that pods with DefaultNeeds could take now: its free devices, fewer
// where its free vCPU or RAM would not cover 2 vCPU and 8 GB for each.
int UsableFreeGpus(const Node& node);
// The largest share (milli-GPUs, below kMilliGpu) whose DefaultNeeds `free` covers; 0 for none.
int LargestShareCovered(const Resources& free);

// Why `pod` could never be placed on these nodes even with all of them empty (`nodes` as they
// are with no pod bound: free is their capacity; unschedulable ones count, since a cordoned or
// unreachable node may come back): no node of its type, more GPUs than the largest such node has,
// a share larger than any device of the type, no such node with its labels, or more vCPU, RAM or
// disk than any such node has. The reason names what would fit. nullopt when some node could.
std::optional<std::string> WhyNeverPlaced(const PodRequest& pod, const std::vector<Node>& nodes);

// Places what fits and takes the resources it binds from `nodes` (so a caller may schedule again
// with more pods). Requests outside 1..64 GPUs, or a share that is not of one GPU, are unplaced
// with a reason. `running` lists the pods on the nodes now; pass none to disable preemption.
Plan Schedule(std::vector<Node>& nodes, std::vector<PodRequest> pending,
              const std::vector<RunningPod>& running = {}, Policy policy = Policy::kSuanli);

}  // namespace suanli::sched
