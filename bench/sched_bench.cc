// The scheduler's own speed: 10,000 simulated nodes and 100,000 pending one-GPU pods (issue 4's
// target: at least 100,000 placements per second on these 2 cores), and the packing policies at
// the same scale (issue 13's: the same rate).
#include <benchmark/benchmark.h>

#include <random>
#include <string>
#include <vector>

#include "sched/packing.h"
#include "sched/scheduler.h"

namespace suanli::sched {
namespace {

const char* const kTypes[] = {"RTX 4090", "A100 80GB SXM", "H100 SXM", "L40S"};

std::vector<Node> Cluster(int count) {
  std::vector<Node> nodes;
  nodes.reserve(count);
  for (int i = 0; i < count; ++i) {
    Node node;
    node.id = "node-" + std::to_string(i);
    node.gpu_type = kTypes[i % 4];
    // Some nodes partly used already.
    for (int gpu = 0; gpu < 8; ++gpu)
      node.gpu_free_milli.push_back(gpu < 8 - i % 3 ? kMilliGpu : 0);
    node.free = {128, 1024 * 1024, 8000};
    node.vcpu_total = 128;
    nodes.push_back(std::move(node));
  }
  return nodes;
}

std::vector<PodRequest> Pending(int count, int gpus) {
  std::vector<PodRequest> pods;
  pods.reserve(count);
  for (int i = 0; i < count; ++i) {
    PodRequest pod;
    pod.id = "pod-" + std::to_string(i);
    pod.gpu_type = kTypes[(i * 7) % 4];
    pod.gpu_count = gpus;
    pod.needs = {8, 32 * 1024, 50};
    pod.sequence = static_cast<uint64_t>(i);
    pods.push_back(std::move(pod));
  }
  return pods;
}

void BM_Schedule(benchmark::State& state) {
  const int node_count = static_cast<int>(state.range(0));
  const int pod_count = static_cast<int>(state.range(1));
  const std::vector<Node> cluster = Cluster(node_count);
  const std::vector<PodRequest> pending = Pending(pod_count, static_cast<int>(state.range(2)));
  size_t placed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Node> nodes = cluster;
    std::vector<PodRequest> pods = pending;
    state.ResumeTiming();
    Plan plan = Schedule(nodes, std::move(pods));
    placed = plan.bindings.size();
    benchmark::DoNotOptimize(plan);
  }
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(pod_count),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Schedule)
    ->Args({10'000, 100'000, 1})
    ->Args({10'000, 20'000, 4})
    ->Unit(benchmark::kMillisecond);

// Packing (sched/packing.h) at the same scale: 10,000 nodes of 8 GPUs of 4 models with 128 cores,
// and 100,000 pods of the mix Alibaba's trace has (shares of 0.23-0.81 GPU, one GPU, a few with 2,
// 4 or 8, and CPU-only ones), one at a time.
std::vector<PackingNode> PackingCluster(int count) {
  std::vector<PackingNode> nodes(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) {
    PackingNode& node = nodes[static_cast<size_t>(i)];
    node.model = i % 4;
    node.cpu_milli_capacity = node.cpu_milli = 128'000;
    node.memory_mib = 1024 * 1024;
    node.gpu_milli.assign(8, kMilliGpu);
  }
  return nodes;
}

std::vector<Demand> PackingPods(int count) {
  const Demand kinds[] = {
      {3152, 16384, 1, 810, kAnyModel},         {4000, 12288, 1, 470, kAnyModel},
      {4000, 12288, 1, 320, kAnyModel},         {6000, 16384, 1, 650, kAnyModel},
      {2000, 8192, 1, 230, kAnyModel},          {11300, 32768, 1, kMilliGpu, kAnyModel},
      {8000, 32768, 1, kMilliGpu, 1},           {16000, 65536, 2, kMilliGpu, kAnyModel},
      {32000, 131072, 4, kMilliGpu, kAnyModel}, {64000, 262144, 8, kMilliGpu, kAnyModel},
      {12500, 32768, 0, 0, kAnyModel},
  };
  const int weights[] = {13, 9, 4, 3, 2, 30, 10, 1, 1, 1, 13};  // percent, about the trace's
  std::vector<Demand> pods;
  pods.reserve(static_cast<size_t>(count));
  std::mt19937_64 random(42);
  std::discrete_distribution<size_t> pick(std::begin(weights), std::end(weights));
  for (int i = 0; i < count; ++i) pods.push_back(kinds[pick(random)]);
  return pods;
}

void BM_Pack(benchmark::State& state) {
  const Policy policy = static_cast<Policy>(state.range(0));
  const std::vector<PackingNode> cluster = PackingCluster(static_cast<int>(state.range(1)));
  const std::vector<Demand> pods = PackingPods(static_cast<int>(state.range(2)));
  const Workload workload = Workload::Of(pods);
  size_t placed = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Packer packer(policy, workload, cluster, 1);
    placed = 0;
    state.ResumeTiming();
    for (const Demand& pod : pods) placed += packer.Place(pod).has_value();
  }
  state.SetLabel(std::string(PolicyName(policy)));
  state.counters["placed"] = static_cast<double>(placed);
  state.counters["pods_per_s"] = benchmark::Counter(static_cast<double>(pods.size()),
                                                    benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Pack)
    ->Args({static_cast<int>(Policy::kSuanli), 10'000, 100'000})
    ->Args({static_cast<int>(Policy::kBestFit), 10'000, 100'000})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace suanli::sched
