// The scheduler's own speed: 10,000 simulated nodes and 100,000 pending one-GPU pods (issue 4's
// target: at least 100,000 placements per second on these 2 cores).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

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
    node.gpu_count = 8;
    node.free_gpus = 0xff >> (i % 3);  // some nodes partly used already
    node.free = {128, 1024 * 1024, 8000};
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

}  // namespace
}  // namespace suanli::sched
