#include "catalog/catalog_json.h"

#include <gtest/gtest.h>

#include "catalog/catalog_file.h"

namespace suanli::catalog {
namespace {

TEST(CatalogJsonTest, EveryTypeHasEveryFieldOfTheContract) {
  core::Result<Catalog> catalog = LoadBuiltInCatalog();
  ASSERT_TRUE(catalog.ok()) << catalog.status().ToString();
  for (const GpuType& gpu : catalog->gpus()) {
    SCOPED_TRACE(gpu.name);
    const boost::json::object json = GpuTypeToJson(gpu);
    for (const char* field :
         {"name", "aliases", "vendor", "arch", "memory_gb", "memory_type", "bandwidth_gbs",
          "fp32_tflops", "bf16_tflops", "fp8_tflops", "tensor_cores", "cuda_cores", "tdp_w",
          "rent_usd_per_hour", "buy_usd"}) {
      EXPECT_TRUE(json.contains(field)) << field;
    }
    EXPECT_TRUE(json.at("name").is_string());
    EXPECT_TRUE(json.at("aliases").is_array());
    EXPECT_TRUE(json.at("memory_gb").is_number());
    EXPECT_TRUE(json.at("bf16_tflops").is_number());
    EXPECT_TRUE(json.at("fp8_tflops").is_number() || json.at("fp8_tflops").is_null());
    EXPECT_GT(json.at("rent_usd_per_hour").to_number<double>(), 0);
    EXPECT_GT(json.at("buy_usd").to_number<double>(), 0);
  }
}

TEST(CatalogJsonTest, MarksTheFp16FallbackAndMissingFigures) {
  core::Result<Catalog> catalog = LoadBuiltInCatalog();
  ASSERT_TRUE(catalog.ok());
  const boost::json::object v100 = GpuTypeToJson(**catalog->FindExact("V100 16GB PCIe"));
  EXPECT_EQ(v100.at("bf16_native"), false);
  EXPECT_EQ(v100.at("bf16_tflops").to_number<double>(), 112);
  EXPECT_TRUE(v100.at("fp8_tflops").is_null());
  const boost::json::object h100 = GpuTypeToJson(**catalog->FindExact("H100 SXM"));
  EXPECT_EQ(h100.at("bf16_native"), true);
  EXPECT_GT(h100.at("fp8_tflops").to_number<double>(), h100.at("bf16_tflops").to_number<double>());
  const double rent = h100.at("rent_usd_per_hour").to_number<double>();
  EXPECT_NEAR(h100.at("tflops_per_dollar").to_number<double>(), 989.5 / rent, 1e-9);
}

}  // namespace
}  // namespace suanli::catalog
