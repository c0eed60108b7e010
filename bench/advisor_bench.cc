// The advisor's own speed: every catalog GPU for one workload must take well under a millisecond,
// since the console asks on every keystroke of its form and the scheduler asks for "cheapest that
// fits".
#include <benchmark/benchmark.h>

#include "advisor/advisor.h"
#include "advisor/model_zoo.h"
#include "catalog/catalog_file.h"

namespace suanli::advisor {
namespace {

void BM_AdviseEveryGpu(benchmark::State& state, const char* model, Task task) {
  const catalog::Catalog catalog = *catalog::LoadBuiltInCatalog();
  const ModelZoo zoo = *LoadBuiltInModelZoo();
  Workload workload;
  workload.model = **zoo.Find(model);
  workload.task = task;
  if (!CompleteAndValidate(workload).ok()) state.SkipWithError("invalid workload");
  for (auto _ : state) {
    Advice advice = Advise(workload, catalog, {});
    benchmark::DoNotOptimize(advice);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(catalog.gpus().size()));
}
BENCHMARK_CAPTURE(BM_AdviseEveryGpu, lora_llama2_7b, "llama-2-7b", Task::kLora)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdviseEveryGpu, serve_llama3_70b, "llama-3-70b", Task::kServe)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_AdviseEveryGpu, infer_sdxl, "sdxl", Task::kInfer)
    ->Unit(benchmark::kMicrosecond);

void BM_LoadModelZoo(benchmark::State& state) {
  for (auto _ : state) {
    core::Result<ModelZoo> zoo = LoadBuiltInModelZoo();
    benchmark::DoNotOptimize(zoo);
  }
}
BENCHMARK(BM_LoadModelZoo)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace suanli::advisor
