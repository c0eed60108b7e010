#include "catalog/catalog.h"

#include <gtest/gtest.h>

#include "catalog/catalog_file.h"

namespace suanli::catalog {
namespace {

using core::StatusCode;

const Catalog& BuiltIn() {
  static const Catalog* catalog = [] {
    core::Result<Catalog> loaded = LoadBuiltInCatalog();
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return new Catalog(std::move(loaded).value());
  }();
  return *catalog;
}

std::string FoundName(std::string_view query) {
  core::Result<GpuMatch> match = BuiltIn().Find(query);
  if (!match.ok()) return "error: " + match.status().message();
  return match->gpu->name;
}

TEST(GpuNameTokensTest, IgnoresCaseVendorWordsAndHowSizesAreWritten) {
  EXPECT_EQ(GpuNameTokens("NVIDIA GeForce RTX 4090"), (std::vector<std::string>{"rtx", "4090"}));
  EXPECT_EQ(GpuNameTokens("A100-SXM4-80GB"), (std::vector<std::string>{"a100", "sxm4", "80g"}));
  EXPECT_EQ(GpuNameTokens("a100 80 GB"), (std::vector<std::string>{"a100", "80g"}));
  EXPECT_EQ(GpuNameTokens("a100_80g"), (std::vector<std::string>{"a100", "80g"}));
  EXPECT_EQ(GpuNameTokens("RTX 3090Ti"), (std::vector<std::string>{"rtx", "3090", "ti"}));
  EXPECT_TRUE(GpuNameTokens(" - ").empty());
}

TEST(CatalogTest, FindsTheSeedGpusByTheNamesPeopleType) {
  EXPECT_EQ(FoundName("4090"), "RTX 4090");
  EXPECT_EQ(FoundName("rtx4090"), "RTX 4090");
  EXPECT_EQ(FoundName("RTX 4090"), "RTX 4090");
  EXPECT_EQ(FoundName("NVIDIA GeForce RTX 4090"), "RTX 4090");
  EXPECT_EQ(FoundName("3090"), "RTX 3090");  // fewer extra words than "RTX 3090 Ti"
  EXPECT_EQ(FoundName("rtx 3090 ti"), "RTX 3090 Ti");
  EXPECT_EQ(FoundName("3090ti"), "RTX 3090 Ti");
  EXPECT_EQ(FoundName("4060ti"), "RTX 4060 Ti 16GB");
  EXPECT_EQ(FoundName("A6000"), "RTX A6000");
  EXPECT_EQ(FoundName("A100 80GB SXM"), "A100 80GB SXM");
  EXPECT_EQ(FoundName("a100-80g"), "A100 80GB SXM");
  EXPECT_EQ(FoundName("a100 80gb pcie"), "A100 80GB PCIe");
  EXPECT_EQ(FoundName("h100 sxm"), "H100 SXM");
  EXPECT_EQ(FoundName("H100-PCIe"), "H100 PCIe");
  EXPECT_EQ(FoundName("v100 16gb pcie"), "V100 16GB PCIe");
}

TEST(CatalogTest, ShortModelNamesMatchExactlyBeforeWordsDo) {
  // "a40" must not become an "A100 40GB", nor "a10" an A100, nor "l4" an L40.
  EXPECT_EQ(FoundName("a40"), "A40");
  EXPECT_EQ(FoundName("A10"), "A10");
  EXPECT_EQ(FoundName("l4"), "L4");
  EXPECT_EQ(FoundName("L40"), "L40");
  EXPECT_EQ(FoundName("l40s"), "L40S");
  EXPECT_EQ(FoundName("t4"), "T4");
}

TEST(CatalogTest, FindsWhatNvmlCallsAGpu) {
  EXPECT_EQ(FoundName("NVIDIA A100-SXM4-80GB"), "A100 80GB SXM");
  EXPECT_EQ(FoundName("NVIDIA A100-PCIE-40GB"), "A100 40GB PCIe");
  EXPECT_EQ(FoundName("NVIDIA H100 80GB HBM3"), "H100 SXM");
  EXPECT_EQ(FoundName("Tesla V100-SXM2-16GB"), "V100 16GB SXM2");
  EXPECT_EQ(FoundName("Tesla T4"), "T4");
  EXPECT_EQ(FoundName("NVIDIA RTX 6000 Ada Generation"), "RTX 6000 Ada");
  EXPECT_EQ(FoundName("AMD Instinct MI300X"), "MI300X");
}

TEST(CatalogTest, AnAmbiguousNameUsesThePreferredTypeAndSaysWhich) {
  core::Result<GpuMatch> match = BuiltIn().Find("a100");
  ASSERT_TRUE(match.ok()) << match.status().ToString();
  EXPECT_EQ(match->gpu->name, "A100 80GB SXM");
  EXPECT_EQ(match->equally_good.size(), 4u);
  const std::string note = match->Note("a100");
  EXPECT_NE(note.find("A100 40GB PCIe"), std::string::npos) << note;
  EXPECT_NE(note.find("using A100 80GB SXM"), std::string::npos) << note;

  EXPECT_EQ(FoundName("a100 40gb"), "A100 40GB SXM");
  EXPECT_EQ(FoundName("v100"), "V100 32GB SXM2");
  EXPECT_EQ(FoundName("h100"), "H100 SXM");
  EXPECT_EQ(BuiltIn().Find("4090")->Note("4090"), "");
}

TEST(CatalogTest, AnAmbiguousNameWithNoPreferenceAsksWhich) {
  core::Result<GpuMatch> match = BuiltIn().Find("6000");
  ASSERT_FALSE(match.ok());
  EXPECT_EQ(match.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(match.status().message().find("RTX A6000"), std::string::npos);
  EXPECT_NE(match.status().message().find("RTX 6000 Ada"), std::string::npos);
  EXPECT_NE(match.status().message().find("say which"), std::string::npos);
}

TEST(CatalogTest, FindExactRefusesWhatOnlyAPreferenceSettles) {
  EXPECT_EQ((*BuiltIn().FindExact("rtx4090"))->name, "RTX 4090");
  core::Result<const GpuType*> ambiguous = BuiltIn().FindExact("a100");
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_EQ(ambiguous.status().code(), StatusCode::kInvalidArgument);
}

TEST(CatalogTest, AnUnknownNameSuggestsCloseOnes) {
  core::Result<GpuMatch> typo = BuiltIn().Find("rtx 4900");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kNotFound);
  EXPECT_NE(typo.status().message().find("did you mean"), std::string::npos);
  EXPECT_NE(typo.status().message().find("RTX 4090"), std::string::npos);

  core::Result<GpuMatch> nonsense = BuiltIn().Find("potato");
  ASSERT_FALSE(nonsense.ok());
  EXPECT_EQ(nonsense.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(nonsense.status().message().find("did you mean"), std::string::npos);

  EXPECT_EQ(BuiltIn().Find("  ").status().code(), StatusCode::kInvalidArgument);
}

GpuType Named(std::string name, std::vector<std::string> aliases = {}) {
  GpuType gpu;
  gpu.name = std::move(name);
  gpu.aliases = std::move(aliases);
  return gpu;
}

TEST(CatalogTest, RefusesTwoTypesThatShareAName) {
  std::vector<GpuType> gpus = {Named("RTX 4090"), Named("RTX 4090 D", {"rtx-4090"})};
  core::Result<Catalog> catalog = Catalog::Create(std::move(gpus), {});
  ASSERT_FALSE(catalog.ok());
  EXPECT_NE(catalog.status().message().find("names both RTX 4090 and RTX 4090 D"),
            std::string::npos)
      << catalog.status().message();
}

TEST(CatalogTest, RefusesAPreferenceForAnUnknownType) {
  core::Result<Catalog> catalog = Catalog::Create({Named("A100 80GB SXM")}, {"A100 96GB"});
  ASSERT_FALSE(catalog.ok());
  EXPECT_NE(catalog.status().message().find("A100 96GB"), std::string::npos);
}

TEST(BuiltInCatalogTest, HasEveryGpuOfTheSeedAndTheOnesPeopleRentToday) {
  EXPECT_GE(BuiltIn().gpus().size(), 35u);
  for (const char* name : {"RTX 4090",
                           "RTX 3090",
                           "V100 16GB PCIe",
                           "RTX A6000",
                           "A100 80GB SXM",
                           "RTX 3060 12GB",
                           "RTX 5090",
                           "RTX A4000",
                           "RTX A5000",
                           "RTX 6000 Ada",
                           "L4",
                           "L40S",
                           "T4",
                           "A10",
                           "A40",
                           "A100 40GB PCIe",
                           "A100 40GB SXM",
                           "A100 80GB PCIe",
                           "H100 PCIe",
                           "H100 SXM",
                           "H200",
                           "B200",
                           "MI250X",
                           "MI300X"}) {
    EXPECT_EQ(FoundName(name), name);
  }
}

TEST(BuiltInCatalogTest, FollowsTheDatasheetWhereTheSeedDisagrees) {
  // The seed says V100 350 W and A100 "80 GB, 2 TB/s" for every A100.
  EXPECT_EQ((*BuiltIn().FindExact("V100 16GB PCIe"))->tdp_w, 250);
  EXPECT_EQ((*BuiltIn().FindExact("V100 32GB SXM2"))->tdp_w, 300);
  EXPECT_DOUBLE_EQ((*BuiltIn().FindExact("A100 80GB PCIe"))->bandwidth_gbs, 1935);
  EXPECT_DOUBLE_EQ((*BuiltIn().FindExact("A100 40GB SXM"))->bandwidth_gbs, 1555);
  EXPECT_DOUBLE_EQ((*BuiltIn().FindExact("A100 80GB SXM"))->bandwidth_gbs, 2039);
  // And where they agree, the seed's RTX 4090 figures hold.
  const GpuType& rtx4090 = **BuiltIn().FindExact("RTX 4090");
  EXPECT_EQ(rtx4090.tensor_cores, 512);
  EXPECT_EQ(rtx4090.cuda_cores, 16384);
  EXPECT_DOUBLE_EQ(rtx4090.bandwidth_gbs, 1008);
}

TEST(BuiltInCatalogTest, EveryTypeHasSaneFiguresAndSourcedPrices) {
  for (const GpuType& gpu : BuiltIn().gpus()) {
    SCOPED_TRACE(gpu.name);
    EXPECT_GT(gpu.memory_gb, 0);
    EXPECT_GT(gpu.bandwidth_gbs, 0);
    // Tensor cores multiply the FP32 rate; a smaller tensor figure would mean a unit mix-up.
    EXPECT_GT(gpu.Tensor16Tflops(), gpu.fp32_tflops);
    if (gpu.fp8_tflops) {
      EXPECT_GT(*gpu.fp8_tflops, gpu.Tensor16Tflops());
    }
    EXPECT_GT(gpu.price.rent_per_hour.micros(), 0);
    EXPECT_GT(gpu.price.buy.micros(), gpu.price.rent_per_hour.micros());
    EXPECT_FALSE(gpu.price.rent_source.empty());
    EXPECT_FALSE(gpu.price.rent_date.empty());
    EXPECT_FALSE(gpu.price.buy_source.empty());
    EXPECT_FALSE(gpu.price.buy_date.empty());
    EXPECT_EQ(gpu.price.origin, "data/prices.yaml");
    EXPECT_FALSE(gpu.source.empty());
  }
}

TEST(BuiltInCatalogTest, PricesRankAsTheMarketDoes) {
  auto rent = [](std::string_view name) {
    return (*BuiltIn().FindExact(name))->price.rent_per_hour;
  };
  EXPECT_LT(rent("RTX 3060 12GB"), rent("RTX 4090"));
  EXPECT_LT(rent("RTX 4090"), rent("A100 80GB SXM"));
  EXPECT_LT(rent("A100 80GB SXM"), rent("H100 SXM"));
  EXPECT_LT(rent("H100 SXM"), rent("B200"));
}

}  // namespace
}  // namespace suanli::catalog
