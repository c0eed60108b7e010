// The store's write path: how many batches per second reach the disk (SQLite WAL, synchronous=FULL,
// so every transaction is an fsync) when each batch is its own transaction, when 64 share one, and
// through a CommitQueue fed by 8 threads. A batch is what one pod state change writes: the pod's
// document (~600 bytes of JSON) and one transition. Results in docs/benchmarks.md.
#include <benchmark/benchmark.h>

#include <future>
#include <thread>
#include <vector>

#include "store/commit_queue.h"
#include "store/store.h"
#include "store/store_testing.h"
#include "testing/temp_dir.h"

namespace suanli::store {
namespace {

Batch PodChange(int64_t seq) {
  Batch batch;
  batch.puts = {testing::MakePodDocument("pod-" + std::to_string(seq % 256), seq)};
  batch.transitions = {
      testing::MakeTransition(seq, "pod-" + std::to_string(seq % 256), "alice", seq)};
  return batch;
}

std::unique_ptr<Store> OpenOrSkip(benchmark::State& state, const suanli::testing::TempDir& dir) {
  core::Result<std::unique_ptr<Store>> store = OpenSqliteStore(dir.File("bench.db"));
  if (!store.ok()) {
    state.SkipWithError(store.status().ToString().c_str());
    return nullptr;
  }
  return std::move(store).value();
}

// Arg: batches per Commit call (one transaction).
void BM_Commit(benchmark::State& state) {
  suanli::testing::TempDir dir;
  std::unique_ptr<Store> store = OpenOrSkip(state, dir);
  if (store == nullptr) return;
  const auto group = static_cast<int64_t>(state.range(0));
  int64_t seq = 0;
  std::vector<Batch> batches;
  for (auto _ : state) {
    state.PauseTiming();
    batches.clear();
    for (int64_t i = 0; i < group; ++i) batches.push_back(PodChange(++seq));
    state.ResumeTiming();
    core::Status status = store->Commit(batches);
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
  const auto transactions = static_cast<double>(state.iterations());
  state.counters["transactions/s"] = benchmark::Counter(transactions, benchmark::Counter::kIsRate);
  state.counters["batches/s"] =
      benchmark::Counter(transactions * static_cast<double>(group), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_Commit)->Arg(1)->Arg(64)->UseRealTime()->Unit(benchmark::kMicrosecond);

// Each iteration: 8 threads submit 128 batches each through one CommitQueue, then wait until all
// are durable. Shows what group commit gives concurrent requests without any tuning.
void BM_CommitQueueFromEightThreads(benchmark::State& state) {
  suanli::testing::TempDir dir;
  std::unique_ptr<Store> store = OpenOrSkip(state, dir);
  if (store == nullptr) return;
  constexpr int kThreads = 8;
  constexpr int kPerThread = 128;
  CommitQueue queue(*store);
  std::mutex order;  // seq and Submit together, as the control plane does
  int64_t seq = 0;
  for (auto _ : state) {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < kPerThread; ++i) {
          std::lock_guard lock(order);
          (void)queue.Submit(PodChange(++seq), nullptr);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    std::promise<core::Status> durable;
    queue.AfterDurable(queue.submitted(),
                       [&durable](const core::Status& status) { durable.set_value(status); });
    core::Status status = durable.get_future().get();
    if (!status.ok()) {
      state.SkipWithError(status.ToString().c_str());
      break;
    }
  }
  const auto batches = static_cast<double>(queue.submitted());
  state.counters["batches/s"] = benchmark::Counter(batches, benchmark::Counter::kIsRate);
  state.counters["batches/transaction"] =
      batches / static_cast<double>(std::max<uint64_t>(queue.transactions(), 1));
}
BENCHMARK(BM_CommitQueueFromEightThreads)->UseRealTime()->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace suanli::store
