#include "advisor/estimate.h"

#include <gtest/gtest.h>

#include "advisor/test_models.h"
#include "catalog/catalog_file.h"

namespace suanli::advisor {
namespace {

using namespace suanli::advisor::testing;

const catalog::GpuType& Gpu(std::string_view name) {
  static const catalog::Catalog catalog = *catalog::LoadBuiltInCatalog();
  return **catalog.FindExact(name);
}

Workload Make(ModelSpec model, Task task) {
  Workload w;
  w.model = std::move(model);
  w.task = task;
  return w;
}

Estimate EstimateFor(Workload w, std::string_view gpu = "A100 80GB SXM", int count = 1) {
  core::Status status = CompleteAndValidate(w);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return EstimateOn(w, Gpu(gpu), count);
}

constexpr double kGb = 1e9;

TEST(MemoryTest, Llama2_7bFp16WeightsTake13_5Gb) {
  Workload w = Make(Llama2_7b(), Task::kInfer);
  w.precision = Precision::kFp16;
  EXPECT_NEAR(EstimateFor(w).memory.weights / kGb, 13.48, 0.05);
}

TEST(MemoryTest, MixedPrecisionAdamTakes16BytesPerParameter) {
  Workload w = Make(Llama2_7b(), Task::kFinetune);
  const Estimate e = EstimateFor(w, "H200");
  EXPECT_DOUBLE_EQ(
      (e.memory.weights + e.memory.gradients + e.memory.optimizer) / Llama2_7b().params, 16.0);
  w.optimizer = Optimizer::kAdamW8bit;
  const Estimate eight_bit = EstimateFor(w, "H200");
  EXPECT_DOUBLE_EQ(
      (eight_bit.memory.weights + eight_bit.memory.gradients + eight_bit.memory.optimizer) /
          Llama2_7b().params,
      10.0);
}

TEST(MemoryTest, ShardingDividesWeightsGradientsAndOptimizerStates) {
  Workload w = Make(Llama2_7b(), Task::kFinetune);
  const Estimate one = EstimateFor(w, "H100 SXM", 1);
  const Estimate four = EstimateFor(w, "H100 SXM", 4);
  EXPECT_DOUBLE_EQ(four.memory.optimizer * 4, one.memory.optimizer);
  EXPECT_DOUBLE_EQ(four.memory.activations,
                   one.memory.activations);  // each GPU holds its micro-batch
}

TEST(MemoryTest, KvCacheOfLlama3_8bIs128KiBPerTokenAtFp16) {
  Workload w = Make(Llama3_8b(), Task::kInfer);
  w.prompt_tokens = 1000;
  w.gen_tokens = 24;
  const Estimate e = EstimateFor(w);
  EXPECT_DOUBLE_EQ(e.memory.kv_cache / 1024, 131072.0);
  Workload mha = Make(Llama2_7b(), Task::kInfer);
  mha.prompt_tokens = 1000;
  mha.gen_tokens = 24;
  EXPECT_DOUBLE_EQ(EstimateFor(mha).memory.kv_cache / 1024, 524288.0);  // no GQA: 4x as much
}

// Qwen2.5-72B's published shapes (config.json): 72.7B parameters, 145.4e9 bytes in 16 bits.
ModelSpec Qwen2_5_72b() {
  ModelSpec m = Llama2_70b();
  m.name = "qwen2.5-72b";
  m.params = m.active_params = 72.7e9;
  m.ffn = 29568;
  m.vocab = 152064;
  m.context = 131072;
  return m;
}

TEST(MemoryTest, CapacityIsWhatNvmlReportsNotTheLabelInDecimalGb) {
  constexpr double kMiB = 1024.0 * 1024.0;
  // H200 "141 GB": nvidia-smi shows 143771 MiB, 150.76e9 bytes: more than 141e9, less than 141 GiB.
  EXPECT_DOUBLE_EQ(EstimateFor(Make(Llama2_7b(), Task::kInfer), "H200").memory_capacity,
                   143771 * kMiB);
  // L40S "48 GB" with ECC on: 46068 MiB, 3 GiB under its label.
  EXPECT_DOUBLE_EQ(EstimateFor(Make(Llama2_7b(), Task::kInfer), "L40S").memory_capacity,
                   46068 * kMiB);
  // Without an NVML figure the label counts in binary GB, as vendors count VRAM.
  EXPECT_DOUBLE_EQ(EstimateFor(Make(Llama2_7b(), Task::kInfer), "RTX 3090").memory_capacity,
                   24 * 1024 * kMiB);
}

// The boundary on both sides: a model whose memory is 0.1 GB under one H200 fits, 0.1 GB over
// does not; only the weights change between them.
TEST(MemoryTest, FitsExactlyUpToTheH200sCapacity) {
  Workload w = Make(Qwen2_5_72b(), Task::kInfer);
  w.precision = Precision::kFp16;
  const Estimate base = EstimateFor(w, "H200");
  const double capacity = base.memory_capacity;
  for (double margin : {+0.1e9, -0.1e9}) {
    Workload edge = w;
    edge.model.params += (capacity - base.memory.Total() - margin) / 2;  // 2 bytes a weight
    edge.model.active_params = edge.model.params;
    const Estimate e = EstimateFor(edge, "H200");
    EXPECT_NEAR(e.memory.Total(), capacity - margin, 1e3);
    EXPECT_EQ(e.fits, margin > 0) << "margin " << margin;
    if (!e.fits) {
      EXPECT_NE(e.reason.find("the H200 has 140.4 GB"), std::string::npos) << e.reason;
    }
  }
}

// Qwen2.5-72B in fp16 is 145.4e9 bytes of weights. One H200 holds 150.76e9: eager PyTorch at
// batch 1 fits with under 5 GB to spare, but a serving engine that takes 90 % of the card (vLLM's
// default) cannot; one 80 GB H100 holds far less than the weights.
TEST(MemoryTest, Qwen2_5_72bFp16OnOneH200FitsOnlyWithoutAServingEngine) {
  Workload infer = Make(Qwen2_5_72b(), Task::kInfer);
  infer.precision = Precision::kFp16;
  const Estimate eager = EstimateFor(infer, "H200");
  EXPECT_NEAR(eager.memory.weights / kGb, 145.4, 0.05);
  EXPECT_TRUE(eager.fits);
  EXPECT_LT(eager.memory_capacity - eager.memory.Total(), 5 * kGb);
  // In the GB people read (2^30 bytes, as the label counts): 135.4 of the 140.4 NVML reports, and
  // the estimate says how little is left.
  EXPECT_NEAR(eager.memory.weights / catalog::kBytesPerGb, 135.4, 0.05);
  EXPECT_NEAR(eager.memory_capacity / catalog::kBytesPerGb, 140.4, 0.05);
  ASSERT_FALSE(eager.notes.empty());
  EXPECT_NE(eager.notes.back().find("fits with only"), std::string::npos) << eager.notes.back();
  EXPECT_FALSE(EstimateFor(infer, "H100 SXM").fits);  // 85.5e9 bytes

  Workload serve = Make(Qwen2_5_72b(), Task::kServe);
  serve.precision = Precision::kFp16;
  const Estimate one = EstimateFor(serve, "H200");
  EXPECT_FALSE(one.fits);
  EXPECT_NE(one.reason.find("no room for the KV cache"), std::string::npos) << one.reason;
  EXPECT_TRUE(EstimateFor(serve, "H200", 2).fits);
}

// Published Stable Diffusion rates put Turing well under Ampere (issue 17): its 130 TFLOPS FP16
// peak is not what the UNet gets without FlashAttention and with 672 GB/s. At batch 1 a fast GPU
// waits for the CPU's kernel launches, so an H100 is not modelled many times a 4090.
TEST(SpeedTest, DiffusionRanksTuringUnderAmpereAndSmallBatchesWaitForLaunches) {
  Workload w = Make(Sd15(), Task::kInfer);
  w.precision = Precision::kFp16;
  w.batch = 1;
  const double titan = *EstimateFor(w, "Titan RTX").throughput.steps_per_s;
  const double rtx3090 = *EstimateFor(w, "RTX 3090").throughput.steps_per_s;
  const double rtx4090 = *EstimateFor(w, "RTX 4090").throughput.steps_per_s;
  const double h100 = *EstimateFor(w, "H100 SXM").throughput.steps_per_s;
  EXPECT_LT(titan, rtx3090);
  EXPECT_LT(h100, 1.5 * rtx4090);
  // A step runs the UNet on two latents (classifier-free guidance): batch 4 is eight latents, so
  // its steps are slower than batch 1's where the GPU, not the CPU, is the limit.
  Workload four = w;
  four.batch = 4;
  EXPECT_LT(*EstimateFor(four, "RTX 3090").throughput.steps_per_s, rtx3090 / 2);
}

// Diffusers' published Stable Diffusion 1.5 benchmark ran batch 16 at 512x512 in fp16 on a 16 GB
// T4 and on 24 GB cards: inference does not keep every layer's activations.
TEST(MemoryTest, StableDiffusionBatch16FitsA16GbT4) {
  Workload w = Make(Sd15(), Task::kInfer);
  w.precision = Precision::kFp16;
  w.batch = 16;
  const Estimate t4 = EstimateFor(w, "T4");
  EXPECT_TRUE(t4.fits) << t4.reason;
  w.batch = 64;
  EXPECT_FALSE(EstimateFor(w, "T4").fits);
}

TEST(SpeedTest, Int8RunsAtTheInt8TensorRateAndVoltaFallsBackToFp16) {
  Workload fp16 = Make(ResNet50(), Task::kInfer);
  fp16.precision = Precision::kFp16;
  fp16.batch = 256;
  Workload int8 = fp16;
  int8.precision = Precision::kInt8;
  const Estimate a100_fp16 = EstimateFor(fp16, "A100 80GB SXM");
  const Estimate a100_int8 = EstimateFor(int8, "A100 80GB SXM");
  // Twice the tensor rate and half the activation traffic: faster, by at most 2x.
  EXPECT_GT(*a100_int8.throughput.images_per_s, 1.3 * *a100_fp16.throughput.images_per_s);
  EXPECT_LE(*a100_int8.throughput.images_per_s, 2.0 * *a100_fp16.throughput.images_per_s + 1e-6);
  EXPECT_TRUE(a100_int8.notes.empty());
  EXPECT_DOUBLE_EQ(a100_int8.memory.weights, ResNet50().params);  // one byte a weight

  const Estimate v100_int8 = EstimateFor(int8, "V100 32GB SXM2");
  const Estimate v100_fp16 = EstimateFor(fp16, "V100 32GB SXM2");
  ASSERT_TRUE(v100_int8.supported);
  ASSERT_EQ(v100_int8.notes.size(), 1u);
  EXPECT_NE(v100_int8.notes[0].find("no INT8 tensor cores on Volta"), std::string::npos);
  // Same compute rate; only the 8-bit activations' lighter traffic can help.
  EXPECT_GE(*v100_int8.throughput.images_per_s, *v100_fp16.throughput.images_per_s);
  EXPECT_LE(*v100_int8.throughput.images_per_s, 2.0 * *v100_fp16.throughput.images_per_s);
}

TEST(SpeedTest, Int8LlmServingReadsOneByteAWeight) {
  Workload w = Make(Llama3_8b(), Task::kInfer);
  w.precision = Precision::kInt8;
  w.engine = Engine::kTensorRtLlm;
  w.engine_given = true;
  const Estimate int8 = EstimateFor(w, "L40S");
  EXPECT_DOUBLE_EQ(int8.memory.weights, Llama3_8b().params);
  w.precision = Precision::kFp16;
  const Estimate fp16 = EstimateFor(w, "L40S");
  // Half the bytes a step; the engine's fixed cost a step (scheduling, sampling: ~10 ms fitted on
  // TensorRT-LLM's serving rows) keeps batch 1 from the full 2x.
  EXPECT_GT(*int8.throughput.decode_tokens_per_s, 1.3 * *fp16.throughput.decode_tokens_per_s);
  EXPECT_GT(*int8.throughput.prefill_tokens_per_s, *fp16.throughput.prefill_tokens_per_s);
}

TEST(MemoryTest, QuantisedWeightsUseTheirRealBitsPerWeight) {
  Workload w = Make(Llama2_7b(), Task::kInfer);
  w.quant = *ParseQuantization("q4_0");
  EXPECT_NEAR(EstimateFor(w, "RTX 4090").memory.weights / kGb, 6.74 * 4.5 / 8, 0.01);
}

TEST(MemoryTest, ABiggerBatchNeverNeedsLessMemory) {
  for (Task task : {Task::kFinetune, Task::kLora, Task::kInfer}) {
    double previous = 0;
    for (int batch : {1, 2, 4, 8, 16}) {
      Workload w = Make(Llama3_8b(), task);
      w.batch = batch;
      const double total = EstimateFor(w, "H200").memory.Total();
      EXPECT_GE(total, previous) << TaskName(task) << " batch " << batch;
      previous = total;
    }
  }
}

TEST(MemoryTest, WithoutFlashAttentionActivationsGrowWithTheSquareOfTheSequence) {
  auto extra = [](int seq) {
    Workload flash = Make(Llama2_7b(), Task::kFinetune);
    flash.seq = seq;
    flash.batch = 1;
    Workload plain = flash;
    plain.flash_attention = false;
    return EstimateFor(plain, "H200").memory.activations -
           EstimateFor(flash, "H200").memory.activations;
  };
  EXPECT_GT(extra(1024), 0);
  // 5 x heads x seq^2 bytes per layer, times the activation factor: 4x when the sequence doubles.
  EXPECT_NEAR(extra(2048) / extra(1024), 4.0, 1e-9);
  EXPECT_NEAR(extra(1024), 32 * 5.0 * 32 * 1024 * 1024 * FittedEfficiency().activation_factor, 1);
}

TEST(MemoryTest, LoraOf7bFitsA24GbCardAndFullFineTuningDoesNot) {
  Workload lora = Make(Llama2_7b(), Task::kLora);
  lora.batch = 1;
  lora.seq = 1024;
  EXPECT_TRUE(EstimateFor(lora, "RTX 4090").fits);
  const Estimate full = EstimateFor(Make(Llama2_7b(), Task::kFinetune), "RTX 4090");
  EXPECT_FALSE(full.fits);
  EXPECT_NE(full.reason.find("GB per GPU"), std::string::npos) << full.reason;
}

TEST(SpeedTest, MoreBandwidthNeverSlowsDecode) {
  catalog::GpuType slow = Gpu("RTX A6000");
  catalog::GpuType fast = slow;
  fast.bandwidth_gbs *= 1.5;
  for (int batch : {1, 8, 64}) {
    Workload w = Make(Llama2_7b(), Task::kInfer);
    w.batch = batch;
    ASSERT_TRUE(CompleteAndValidate(w).ok());
    EXPECT_GE(*EstimateOn(w, fast, 1).throughput.decode_tokens_per_s,
              *EstimateOn(w, slow, 1).throughput.decode_tokens_per_s)
        << "batch " << batch;
  }
}

TEST(SpeedTest, SingleStreamDecodeIsBandwidthBoundAndTrainingComputeBound) {
  Workload infer = Make(Llama2_7b(), Task::kInfer);
  infer.engine = Engine::kLlamaCpp;
  infer.engine_given = true;
  const Estimate decode = EstimateFor(infer, "RTX 4090");
  EXPECT_EQ(decode.bound, Bound::kMemory);
  // About bandwidth / weight bytes, less the engine's efficiency and per-token overhead.
  EXPECT_LT(*decode.throughput.decode_tokens_per_s, 1008e9 / 13.48e9);
  EXPECT_GT(*decode.throughput.decode_tokens_per_s, 0.3 * 1008e9 / 13.48e9);
  Workload lora = Make(Llama2_7b(), Task::kLora);
  EXPECT_EQ(EstimateFor(lora, "RTX 4090").bound, Bound::kCompute);
}

TEST(SpeedTest, MixtureOfExpertsDecodesAtItsActiveParameters) {
  Workload moe = Make(Mixtral8x7b(), Task::kInfer);
  moe.engine = Engine::kVllm;
  moe.engine_given = true;
  const double moe_tps = *EstimateFor(moe, "H200").throughput.decode_tokens_per_s;
  Workload dense = Make(Llama2_70b(), Task::kInfer);
  dense.engine = Engine::kVllm;
  dense.engine_given = true;
  const double dense_tps = *EstimateFor(dense, "H200").throughput.decode_tokens_per_s;
  EXPECT_GT(moe_tps, 3 * dense_tps);
}

TEST(SpeedTest, ThroughputIsTheTotalOverAllGpus) {
  Workload w = Make(Llama3_8b(), Task::kFinetune);
  const double one = *EstimateFor(w, "H100 SXM", 1).throughput.train_tokens_per_s;
  const double eight = *EstimateFor(w, "H100 SXM", 8).throughput.train_tokens_per_s;
  EXPECT_GT(eight, 6 * one);
  EXPECT_LE(eight, 8 * one);
}

TEST(SpeedTest, TrainingAddsTheTrafficOfItsBandwidthBoundKernels) {
  // The RTX 3090 has 46 % of the RTX A6000's tensor rate (FP32 accumulation at half rate) and 122 %
  // of its bandwidth: norms, activations and the optimizer step run at the bandwidth, so it trains
  // at more than 46 % of the A6000's speed.
  Workload w = Make(Llama2_7b(), Task::kLora);
  const double geforce = *EstimateFor(w, "RTX 3090").throughput.train_tokens_per_s;
  const double workstation = *EstimateFor(w, "RTX A6000").throughput.train_tokens_per_s;
  EXPECT_GT(geforce / workstation, 71.0 / 154.8);
  EXPECT_LT(geforce / workstation, 1.0);
}

TEST(SpeedTest, Tf32IsPowerCappedAtHalfThe16BitRate) {
  // A B200's 2250 TFLOPS BF16 peak is capped by its 1000 W; TF32 costs twice the energy a FLOP, so
  // the cap halves with it (round 2 capped both alike and had TF32 nearly as fast as BF16).
  Workload bf16 = Make(Llama2_7b(), Task::kFinetune);
  Workload tf32 = bf16;
  tf32.precision = Precision::kTf32;
  const double bf16_tps = *EstimateFor(bf16, "B200").throughput.train_tokens_per_s;
  const double tf32_tps = *EstimateFor(tf32, "B200").throughput.train_tokens_per_s;
  EXPECT_LT(tf32_tps / bf16_tps, 0.55);
}

TEST(SpeedTest, ServingUsesTheLargestBatchTheKvCacheAllows) {
  Workload w = Make(Llama3_8b(), Task::kServe);
  const Estimate small = EstimateFor(w, "L40S");
  const Estimate large = EstimateFor(w, "H200");
  EXPECT_GT(small.batch, 1);
  EXPECT_GE(large.batch, small.batch);
  EXPECT_LE(large.memory.Total(), large.memory_capacity);
  EXPECT_GT(*large.throughput.decode_tokens_per_s, *small.throughput.decode_tokens_per_s);
}

TEST(SupportTest, Fp8NeedsAdaOrHopper) {
  Workload w = Make(Llama3_8b(), Task::kInfer);
  w.precision = Precision::kFp8;
  const Estimate ampere = EstimateFor(w, "A100 80GB SXM");
  EXPECT_FALSE(ampere.supported);
  EXPECT_FALSE(ampere.fits);
  EXPECT_NE(ampere.reason.find("no FP8"), std::string::npos);
  EXPECT_TRUE(EstimateFor(w, "H100 SXM").supported);
  EXPECT_TRUE(EstimateFor(w, "RTX 4090").supported);
}

TEST(SupportTest, Bf16OnVoltaIsEstimatedInFp16AndSaysSo) {
  const Estimate v100 = EstimateFor(Make(Llama2_7b(), Task::kInfer), "V100 32GB SXM2");
  ASSERT_EQ(v100.notes.size(), 1u);
  EXPECT_NE(v100.notes[0].find("no BF16"), std::string::npos);
}

TEST(SupportTest, TensorRtLlmRunsOnNvidiaOnly) {
  Workload w = Make(Llama3_8b(), Task::kServe);
  w.engine = Engine::kTensorRtLlm;
  w.engine_given = true;
  EXPECT_FALSE(EstimateFor(w, "MI300X").supported);
}

TEST(CostTest, AnEstimateThatDoesNotFitCostsNothingAndSaysWhy) {
  const Estimate e = EstimateFor(Make(Llama2_70b(), Task::kFinetune), "RTX 4090");
  EXPECT_FALSE(e.fits);
  EXPECT_EQ(e.cost.micros(), 0);
  EXPECT_FALSE(e.reason.empty());
}

TEST(CostTest, RentIsPricePerHourTimesHoursForAllGpus) {
  Workload w = Make(Llama3_8b(), Task::kFinetune);
  w.batch = 1;
  w.recompute = true;
  const Estimate e = EstimateFor(w, "H100 SXM", 2);
  ASSERT_TRUE(e.fits) << e.reason;
  const catalog::GpuType& h100 = Gpu("H100 SXM");
  EXPECT_EQ(e.rent_per_hour.micros(), 2 * h100.price.rent_per_hour.micros());
  EXPECT_NEAR(e.cost.ToDollars(), e.rent_per_hour.ToDollars() * e.time_s / 3600, 1e-6);
  EXPECT_EQ(e.buy.micros(), 2 * h100.price.buy.micros());
  const double power = 2 * h100.tdp_w / 1000.0 * 0.15;
  ASSERT_TRUE(e.break_even_hours.has_value());
  EXPECT_NEAR(*e.break_even_hours, e.buy.ToDollars() / (e.rent_per_hour.ToDollars() - power), 1e-6);
  EXPECT_EQ(e.unit, "1M tokens");
  EXPECT_NEAR(e.cost_per_unit_usd, e.cost.ToDollars() / 100.0, 1e-9);  // 1e8 tokens assumed
}

TEST(VisionTest, ResNetTrainingScalesWithBatchMemoryAndResolutionFlops) {
  Workload w = Make(ResNet50(), Task::kTrain);
  const Estimate e = EstimateFor(w, "RTX 3090");
  EXPECT_TRUE(e.fits);
  EXPECT_GT(*e.throughput.images_per_s, 100);
  w.image_size = 448;
  const Estimate big = EstimateFor(w, "RTX 3090");
  EXPECT_NEAR(*e.throughput.images_per_s / *big.throughput.images_per_s, 4.0, 0.01);
}

TEST(VisionTest, DataParallelTrainingHidesItsAllReduceUnderTheBackwardPass) {
  // ResNet-50's 51 MB of 16-bit gradients take ~6 ms to all-reduce over PCIe, under a backward
  // pass of ~150 ms at this batch: eight PCIe cards train nearly eight times as fast as one
  // (Lambda's 8x RTX 6000 Ada: 8.0x).
  Workload w = Make(ResNet50(), Task::kTrain);
  w.batch = 256;
  const double one = *EstimateFor(w, "RTX 6000 Ada", 1).throughput.images_per_s;
  const double eight = *EstimateFor(w, "RTX 6000 Ada", 8).throughput.images_per_s;
  EXPECT_GT(eight, 7.5 * one);
  EXPECT_LE(eight, 8 * one);
  // Inference on several GPUs is independent replicas: exactly eight times one.
  Workload infer = Make(ResNet50(), Task::kInfer);
  EXPECT_DOUBLE_EQ(*EstimateFor(infer, "RTX 6000 Ada", 8).throughput.images_per_s,
                   8 * *EstimateFor(infer, "RTX 6000 Ada", 1).throughput.images_per_s);
}

TEST(DiffusionTest, StepsPerSecondFallWithBatch) {
  Workload w = Make(Sd15(), Task::kInfer);
  const Estimate one = EstimateFor(w, "RTX 4090");
  w.batch = 4;
  const Estimate four = EstimateFor(w, "RTX 4090");
  EXPECT_GT(*one.throughput.steps_per_s, *four.throughput.steps_per_s);
  EXPECT_GT(*four.throughput.images_per_s, *one.throughput.images_per_s);
  EXPECT_EQ(one.unit, "1k images");
}

}  // namespace
}  // namespace suanli::advisor
