// How fast the catalog loads and answers names: every CLI call loads it once, and the advisor, the
// scheduler and the API resolve GPU names on their hot paths.
#include <benchmark/benchmark.h>

#include <boost/json/array.hpp>
#include <boost/json/serialize.hpp>

#include "catalog/catalog_file.h"
#include "catalog/catalog_json.h"

namespace suanli::catalog {
namespace {

const Catalog& BuiltIn() {
  static const Catalog catalog = *LoadBuiltInCatalog();
  return catalog;
}

void BM_LoadBuiltInCatalog(benchmark::State& state) {
  for (auto _ : state) {
    core::Result<Catalog> catalog = LoadBuiltInCatalog();
    benchmark::DoNotOptimize(catalog);
  }
}
BENCHMARK(BM_LoadBuiltInCatalog)->Unit(benchmark::kMicrosecond);

void BM_FindName(benchmark::State& state, const char* name) {
  const Catalog& catalog = BuiltIn();
  for (auto _ : state) {
    core::Result<GpuMatch> match = catalog.Find(name);
    benchmark::DoNotOptimize(match);
  }
}
BENCHMARK_CAPTURE(BM_FindName, exact, "NVIDIA GeForce RTX 4090");
BENCHMARK_CAPTURE(BM_FindName, words, "4090");
BENCHMARK_CAPTURE(BM_FindName, ambiguous, "a100-80g");
BENCHMARK_CAPTURE(BM_FindName, unknown_with_suggestions, "rtx 4900");

void BM_CatalogToJson(benchmark::State& state) {
  const Catalog& catalog = BuiltIn();
  for (auto _ : state) {
    boost::json::array entries;
    for (const GpuType& gpu : catalog.gpus()) entries.emplace_back(GpuTypeToJson(gpu));
    std::string text = boost::json::serialize(entries);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_CatalogToJson)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace suanli::catalog
