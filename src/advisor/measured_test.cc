#include "advisor/measured.h"

#include <gtest/gtest.h>

#include "advisor/estimate.h"
#include "advisor/test_models.h"
#include "catalog/catalog_file.h"

namespace suanli::advisor {
namespace {

const catalog::GpuType& Gpu(std::string_view name) {
  static const catalog::Catalog catalog = *catalog::LoadBuiltInCatalog();
  return **catalog.FindExact(name);
}

TEST(MeasuredTest, AGroupOfGpusIsSummedUpByTheMedianOfEachFigureOverTheGpusThatHaveIt) {
  EXPECT_FALSE(SummariseMeasurements({}).has_value());
  const std::vector<core::GpuMeasurement> three = {{0, 1400, 250, 255.0, std::nullopt},
                                                   {1, 1300, 260, std::nullopt, std::nullopt},
                                                   {2, 900, 100, 245.0, std::nullopt}};
  const std::optional<MeasuredFigures> figures = SummariseMeasurements(three);
  ASSERT_TRUE(figures.has_value());
  EXPECT_EQ(figures->gpus, 3);
  EXPECT_DOUBLE_EQ(figures->memory_bandwidth_gbps, 1300);  // one slow card does not drag it down
  EXPECT_DOUBLE_EQ(figures->fp16_tflops, 250);
  EXPECT_DOUBLE_EQ(figures->bf16_tflops.value_or(0), 250);  // the two that measured it
  EXPECT_FALSE(figures->fp8_tflops.has_value());
}

TEST(MeasuredTest, AHealthyCardKeepsItsDatasheetFigures) {
  const catalog::GpuType& h100 = Gpu("H100 SXM");
  // A healthy H100's copy moves ~90 % of 3350 GB/s; mma.sync gives ~65 % of its wgmma rate.
  const MeasuredFigures healthy{.gpus = 8,
                                .memory_bandwidth_gbps = 0.93 * h100.bandwidth_gbs,
                                .fp16_tflops = 0.70 * h100.fp16_tflops,
                                .bf16_tflops = 0.70 * h100.bf16_tflops.value_or(0),
                                .fp8_tflops = 0.66 * h100.fp8_tflops.value_or(0)};
  const Calibrated calibrated = CalibrateToMeasured(h100, healthy);
  EXPECT_DOUBLE_EQ(calibrated.bandwidth_scale, 1);
  EXPECT_DOUBLE_EQ(calibrated.compute_scale, 1);
  EXPECT_DOUBLE_EQ(calibrated.gpu.bandwidth_gbs, h100.bandwidth_gbs);
  EXPECT_EQ(calibrated.gpu.fp8_tflops, h100.fp8_tflops);
  EXPECT_NE(calibrated.note.find("8 H100 SXM GPU(s)"), std::string::npos) << calibrated.note;
  EXPECT_NE(calibrated.note.find("at least a healthy card's"), std::string::npos);
}

TEST(MeasuredTest, ACardMeasuringBelowAHealthyOneIsPredictedThatMuchSlower) {
  const catalog::GpuType& a100 = Gpu("A100 80GB SXM");
  // A power-capped card: its copy at 80 % of a healthy card's, its FP16 MMA at 70 %.
  const MeasuredFigures capped{.gpus = 1,
                               .memory_bandwidth_gbps = 0.8 * 0.9 * a100.bandwidth_gbs,
                               .fp16_tflops = 0.7 * 0.9 * a100.fp16_tflops,
                               .bf16_tflops = std::nullopt,
                               .fp8_tflops = std::nullopt};
  const Calibrated calibrated = CalibrateToMeasured(a100, capped);
  EXPECT_NEAR(calibrated.bandwidth_scale, 0.8, 1e-9);
  EXPECT_NEAR(calibrated.compute_scale, 0.7, 1e-9);  // BF16 unmeasured: FP16's scale
  EXPECT_NEAR(calibrated.gpu.bandwidth_gbs, 0.8 * a100.bandwidth_gbs, 1e-6);
  EXPECT_NEAR(*calibrated.gpu.bf16_tflops, 0.7 * *a100.bf16_tflops, 1e-6);
  EXPECT_NEAR(calibrated.gpu.fp32_tflops, 0.7 * a100.fp32_tflops, 1e-6);  // same clocks
  EXPECT_NE(calibrated.note.find("80% of a healthy card's"), std::string::npos) << calibrated.note;
  EXPECT_NE(calibrated.note.find("70% of a healthy card's"), std::string::npos) << calibrated.note;

  // Decoding one stream is bandwidth bound: it slows with the copy (less than the copy's 20 %: the
  // per-token launch overhead stays), not with the tensor rate (that would be 30 %).
  Workload decode;
  decode.model = testing::Llama3_8b();
  decode.task = Task::kInfer;
  ASSERT_TRUE(CompleteAndValidate(decode).ok());
  const Estimate on_datasheet = EstimateOn(decode, a100, 1);
  const Estimate as_measured = EstimateOn(decode, calibrated.gpu, 1);
  ASSERT_TRUE(on_datasheet.throughput.decode_tokens_per_s &&
              as_measured.throughput.decode_tokens_per_s);
  const double ratio =
      *as_measured.throughput.decode_tokens_per_s / *on_datasheet.throughput.decode_tokens_per_s;
  EXPECT_LT(ratio, 0.97);
  EXPECT_GE(ratio, 0.8);
}

TEST(MeasuredTest, TheProbesHealthyTensorFractionIsLowerWhereMmaSyncIsNotTheFullRatePath) {
  EXPECT_LT(HealthyProbeTensorFraction(Gpu("H100 SXM")),
            HealthyProbeTensorFraction(Gpu("A100 80GB SXM")));
  EXPECT_LT(HealthyProbeTensorFraction(Gpu("B200")), HealthyProbeTensorFraction(Gpu("RTX 5090")));
  EXPECT_EQ(HealthyProbeTensorFraction(Gpu("RTX 5090")),
            HealthyProbeTensorFraction(Gpu("RTX 4090")));
}

}  // namespace
}  // namespace suanli::advisor
