#include "catalog/catalog_file.h"

#include <gtest/gtest.h>

namespace suanli::catalog {
namespace {

using core::StatusCode;

constexpr std::string_view kGpus = R"(gpus:
  - name: RTX 4090
    aliases: [GeForce RTX 4090]
    vendor: NVIDIA
    arch: Ada
    year: 2022
    memory_gb: 24
    memory_type: GDDR6X
    bandwidth_gbs: 1008
    fp32_tflops: 82.58
    fp16_tflops: 165.2
    bf16_tflops: 165.2
    tensor_cores: 512
    tdp_w: 450
    interconnect: PCIe only
    form_factor: PCIe triple-slot
    source: https://example.invalid/ada.pdf
  - name: V100 16GB PCIe
    vendor: NVIDIA
    arch: Volta
    year: 2017
    memory_gb: 16
    memory_type: HBM2
    bandwidth_gbs: 900
    fp32_tflops: 14
    fp16_tflops: 112
    tdp_w: 250
    interconnect: PCIe only
    form_factor: PCIe dual-slot
    source: https://example.invalid/v100.pdf
)";

constexpr std::string_view kPrices = R"(prices:
  - gpu: RTX 4090
    rent_usd_per_hour: 0.74
    rent_source: seed article
    rent_date: "2024-06"
    buy_usd: 1599
    buy_source: MSRP
    buy_date: "2022-10-12"
  - gpu: V100 16GB PCIe
    rent_usd_per_hour: 0.3
    rent_source: somewhere
    rent_date: "2025-01"
    buy_usd: 500
    buy_source: used market
    buy_date: "2025-01"
)";

core::Result<Catalog> Load(std::string_view gpus, std::string_view prices,
                           const DataFile* override_file = nullptr) {
  return LoadCatalog({"gpus.yaml", gpus}, {"prices.yaml", prices}, override_file);
}

// Replaces the first `from` in `text` with `to`.
std::string With(std::string_view text, std::string_view from, std::string_view to) {
  std::string result(text);
  const size_t at = result.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) result.replace(at, from.size(), to);
  return result;
}

void ExpectError(const core::Result<Catalog>& result, std::string_view expected) {
  ASSERT_FALSE(result.ok()) << "expected an error containing: " << expected;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(expected), std::string::npos)
      << "message: " << result.status().message() << "\nexpected: " << expected;
}

TEST(CatalogFileTest, LoadsSpecsAndPrices) {
  core::Result<Catalog> catalog = Load(kGpus, kPrices);
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  ASSERT_EQ(catalog->gpus().size(), 2u);
  const GpuType& rtx4090 = catalog->gpus()[0];
  EXPECT_EQ(rtx4090.name, "RTX 4090");
  EXPECT_DOUBLE_EQ(rtx4090.memory_gb, 24);
  EXPECT_EQ(rtx4090.tensor_cores, 512);
  EXPECT_FALSE(rtx4090.cuda_cores.has_value());
  EXPECT_EQ(rtx4090.price.rent_per_hour.micros(), 740'000);
  EXPECT_EQ(rtx4090.price.buy.micros(), 1'599'000'000);
  EXPECT_EQ(rtx4090.price.rent_date, "2024-06");
  EXPECT_EQ(rtx4090.price.origin, "prices.yaml");
  const GpuType& v100 = catalog->gpus()[1];
  EXPECT_FALSE(v100.bf16_tflops.has_value());
  EXPECT_DOUBLE_EQ(v100.Tensor16Tflops(), 112);
}

TEST(CatalogFileTest, MalformedYamlNamesFileAndLine) {
  ExpectError(
      Load(With(kGpus, "    vendor: NVIDIA\n    arch: Ada", "    vendor: [NVIDIA\n    arch: Ada"),
           kPrices),
      "gpus.yaml:");
  ExpectError(Load(kGpus, "prices: [\n"), "prices.yaml:");
  ExpectError(Load("", kPrices), "gpus.yaml:1: expected a YAML mapping");
  ExpectError(Load("gpus: []\n", kPrices), "gpus.yaml:1: expected a non-empty list 'gpus:'");
}

TEST(CatalogFileTest, ABadFigureNamesFileLineGpuAndField) {
  ExpectError(Load(With(kGpus, "memory_gb: 24", "memory_gb: abc"), kPrices),
              "gpus.yaml:7: RTX 4090: field 'memory_gb' must be a positive number, not 'abc'");
  ExpectError(Load(With(kGpus, "bandwidth_gbs: 900", "bandwidth_gbs: -900"), kPrices),
              "gpus.yaml:24: V100 16GB PCIe: field 'bandwidth_gbs' must be a positive number");
  ExpectError(Load(With(kGpus, "tdp_w: 450", "tdp_w: 450.5"), kPrices),
              "field 'tdp_w' must be a whole number");
  ExpectError(Load(With(kGpus, "fp32_tflops: 14", "fp32_tflops: nan"), kPrices), "'fp32_tflops'");
  ExpectError(Load(With(kGpus, "fp32_tflops: 14", "fp32_tflops:"), kPrices),
              "field 'fp32_tflops' has no value");
}

TEST(CatalogFileTest, AMissingOrUnknownFieldIsAnError) {
  ExpectError(Load(With(kGpus, "    memory_type: GDDR6X\n", ""), kPrices),
              "gpus.yaml:2: RTX 4090: missing field 'memory_type'");
  ExpectError(Load(With(kGpus, "memory_gb: 24", "memroy_gb: 24"), kPrices),
              "missing field 'memory_gb'");
  ExpectError(Load(With(kGpus, "    year: 2022\n", "    year: 2022\n    colour: green\n"), kPrices),
              "gpus.yaml:7: RTX 4090: unknown field 'colour'");
  ExpectError(Load(With(kGpus, "  - name: RTX 4090\n", "  - nam: RTX 4090\n"), kPrices),
              "gpus[0]: missing field 'name'");
}

TEST(CatalogFileTest, AFieldGivenTwiceIsAnError) {
  ExpectError(Load(kGpus, With(kPrices, "    rent_usd_per_hour: 0.74\n",
                               "    rent_usd_per_hour: 0.74\n    rent_usd_per_hour: 9\n")),
              "prices.yaml:4: RTX 4090: field 'rent_usd_per_hour' is given twice");
}

TEST(CatalogFileTest, TwoTypesWithOneNameAreAnError) {
  ExpectError(Load(With(kGpus, "name: V100 16GB PCIe", "name: GeForce RTX 4090"), kPrices),
              "names both");
}

TEST(CatalogFileTest, EveryTypeNeedsACompleteSourcedPrice) {
  ExpectError(Load(kGpus, With(kPrices, "  - gpu: V100 16GB PCIe", "  - gpu: RTX 4090")),
              "priced twice");
  const std::string only_4090(kPrices.substr(0, kPrices.find("  - gpu: V100")));
  ExpectError(Load(kGpus, only_4090), "prices.yaml: no price for V100 16GB PCIe");
  ExpectError(Load(kGpus, With(kPrices, "    rent_source: seed article\n", "")),
              "prices.yaml:2: RTX 4090: missing field 'rent_source'");
  ExpectError(Load(kGpus, With(kPrices, "    buy_usd: 1599\n", "")), "missing field 'buy_usd'");
  ExpectError(
      Load(kGpus, With(kPrices, "rent_usd_per_hour: 0.74", "rent_usd_per_hour: -0.74")),
      "prices.yaml:3: RTX 4090: field 'rent_usd_per_hour' must be a positive amount of dollars");
  ExpectError(Load(kGpus, With(kPrices, "rent_usd_per_hour: 0.74", "rent_usd_per_hour: 0")),
              "must be a positive amount");
  ExpectError(Load(kGpus, With(kPrices, "gpu: RTX 4090", "gpu: RTX 4900")),
              "prices.yaml:2: no GPU type named 'RTX 4900'; did you mean RTX 4090?");
}

TEST(CatalogFileTest, AnOperatorFileReplacesOnlyThePricesItNames) {
  const std::string override_text = "prices:\n  - gpu: 4090\n    rent_usd_per_hour: 0.55\n";
  const DataFile override_file{"/etc/suanli/prices.yaml", override_text};
  core::Result<Catalog> catalog = Load(kGpus, kPrices, &override_file);
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  const Price& rtx4090 = catalog->gpus()[0].price;
  EXPECT_EQ(rtx4090.rent_per_hour.micros(), 550'000);
  EXPECT_EQ(rtx4090.rent_source, "operator price file /etc/suanli/prices.yaml");
  EXPECT_EQ(rtx4090.buy.micros(), 1'599'000'000);  // untouched
  EXPECT_EQ(rtx4090.buy_source, "MSRP");
  EXPECT_EQ(rtx4090.origin, "/etc/suanli/prices.yaml");
  EXPECT_EQ(catalog->gpus()[1].price.rent_per_hour.micros(), 300'000);
  EXPECT_EQ(catalog->gpus()[1].price.origin, "prices.yaml");
}

TEST(CatalogFileTest, AnOperatorFileWithABadEntryIsRefusedWhole) {
  const std::string bad_price = "prices:\n  - gpu: RTX 4090\n    rent_usd_per_hour: cheap\n";
  const DataFile bad_price_file{"ops.yaml", bad_price};
  ExpectError(Load(kGpus, kPrices, &bad_price_file),
              "ops.yaml:3: RTX 4090: field 'rent_usd_per_hour' must be a positive amount of "
              "dollars such as "
              "0.74, not 'cheap'");
  const std::string unknown_field = "prices:\n  - gpu: RTX 4090\n    rent: 0.5\n";
  const DataFile unknown_field_file{"ops.yaml", unknown_field};
  ExpectError(Load(kGpus, kPrices, &unknown_field_file),
              "ops.yaml:3: RTX 4090: unknown field 'rent'");
}

TEST(CatalogFileTest, AnOperatorFileMustNameGpusUnambiguously) {
  core::Result<Catalog> builtin = LoadBuiltInCatalog();
  ASSERT_TRUE(builtin.ok()) << builtin.status().ToString();
  const std::string text = "prices:\n  - gpu: a100\n    rent_usd_per_hour: 1.1\n";
  const DataFile file{"ops.yaml", text};
  core::Result<Catalog> catalog = LoadBuiltInCatalog(&file);
  ExpectError(catalog, "ops.yaml:2: 'a100' could be");
}

TEST(CatalogFileTest, TheBuiltInDataLoads) {
  core::Result<Catalog> catalog = LoadBuiltInCatalog();
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  EXPECT_GE(catalog->gpus().size(), 35u);
}

}  // namespace
}  // namespace suanli::catalog
