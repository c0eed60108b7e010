#include "advisor/model_zoo.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <string_view>

#include "advisor/estimate.h"
#include "catalog/catalog_file.h"

namespace suanli::advisor {
namespace {

using core::StatusCode;

const ModelZoo& BuiltIn() {
  static const ModelZoo* zoo = [] {
    core::Result<ModelZoo> loaded = LoadBuiltInModelZoo();
    EXPECT_TRUE(loaded.ok()) << loaded.status().ToString();
    return new ModelZoo(std::move(loaded).value());
  }();
  return *zoo;
}

const ModelSpec& Model(std::string_view name) {
  core::Result<const ModelSpec*> model = BuiltIn().Find(name);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return **model;
}

TEST(ModelZooTest, BuiltInZooHasEveryModelTheProductPromises) {
  for (std::string_view name :
       {"llama-2-7b",   "llama-2-13b",   "llama-2-70b",      "llama-3-8b",   "llama-3-70b",
        "mistral-7b",   "mixtral-8x7b",  "qwen2.5-7b",       "qwen2.5-72b",  "gpt-j-6b",
        "gpt2",         "bert-base",     "bert-large",       "resnet-50",    "vit-b-16",
        "sd-1.5",       "sdxl",          "whisper-large-v3", "llama-3.1-8b", "llama-3.1-70b",
        "llama-3.2-3b", "llama-3.3-70b", "qwen2.5-0.5b",     "qwen2.5-1.5b", "qwen2.5-3b",
        "codellama-7b", "codellama-34b"}) {
    core::Result<const ModelSpec*> model = BuiltIn().Find(name);
    ASSERT_TRUE(model.ok()) << name << ": " << model.status().ToString();
    EXPECT_EQ((*model)->name, name);
    EXPECT_GT((*model)->params, 0) << name;
    EXPECT_GT((*model)->active_params, 0) << name;
    EXPECT_FALSE((*model)->source.empty()) << name;
  }
}

TEST(ModelZooTest, EveryBuiltInModelHasWhatItsKindNeeds) {
  for (const ModelSpec& model : BuiltIn().models()) {
    SCOPED_TRACE(model.name);
    switch (model.kind) {
      case ModelKind::kDecoderLm:
      case ModelKind::kEncoder:
      case ModelKind::kEncoderDecoder:
        EXPECT_GT(model.layers, 0);
        EXPECT_EQ(model.hidden % model.heads, 0);
        EXPECT_GT(model.head_dim, 0);
        EXPECT_EQ(model.heads % model.kv_heads, 0);
        EXPECT_GT(model.vocab, 0);
        EXPECT_GT(model.context, 0);
        // The shapes and the published count describe the same network.
        EXPECT_NEAR(CountTransformerParams(model) / model.params, 1.0, 0.02);
        break;
      case ModelKind::kDiffusion:
        EXPECT_GT(model.vae_decode_flops, 0);
        [[fallthrough]];
      case ModelKind::kVision:
        EXPECT_GT(model.forward_flops, 0);
        EXPECT_GT(model.resolution, 0);
        break;
    }
  }
}

TEST(ModelZooTest, FindsByAliasRepoIdAndLooseSpelling) {
  EXPECT_EQ(Model("meta-llama/Llama-2-7b-hf").name, "llama-2-7b");
  EXPECT_EQ(Model("Llama-2-7b-hf").name, "llama-2-7b");           // without the organisation
  EXPECT_EQ(Model("TheBloke/Llama-2-7b-hf").name, "llama-2-7b");  // another organisation
  EXPECT_EQ(Model("Llama 2 7B").name, "llama-2-7b");
  EXPECT_EQ(Model("LLAMA_2_7B").name, "llama-2-7b");
  EXPECT_EQ(Model("llama2 7b").name, "llama-2-7b");
  EXPECT_EQ(Model("Meta-Llama-3-8B-Instruct").name, "llama-3-8b");
  EXPECT_EQ(Model("Llama 3.1 70B Instruct").name, "llama-3.1-70b");
  EXPECT_EQ(Model("llama3.2:3b").name, "llama-3.2-3b");
  EXPECT_EQ(Model("Qwen/Qwen2.5-7B-Instruct").name, "qwen2.5-7b");
  EXPECT_EQ(Model("qwen 2.5 72b").name, "qwen2.5-72b");
  EXPECT_EQ(Model("Mixtral 8x7B").name, "mixtral-8x7b");
  EXPECT_EQ(Model("ViT-B/16").name, "vit-b-16");
  EXPECT_EQ(Model("SD 1.5").name, "sd-1.5");
  EXPECT_EQ(Model("runwayml/stable-diffusion-v1-5").name, "sd-1.5");
  EXPECT_EQ(Model("Stable Diffusion XL").name, "sdxl");
  EXPECT_EQ(Model("openai/whisper-large-v3").name, "whisper-large-v3");
  EXPECT_EQ(Model("bert-base-uncased").name, "bert-base");
  EXPECT_EQ(Model("GPT-2").name, "gpt2");
}

TEST(ModelZooTest, UnknownNameIsNotFoundWithSuggestions) {
  core::Result<const ModelSpec*> typo = BuiltIn().Find("llama-2-8b");
  ASSERT_FALSE(typo.ok());
  EXPECT_EQ(typo.status().code(), StatusCode::kNotFound);
  const std::string message = typo.status().message();
  EXPECT_NE(message.find("no model named 'llama-2-8b'"), std::string::npos) << message;
  EXPECT_NE(message.find("did you mean llama-2-7b"), std::string::npos) << message;
  EXPECT_NE(message.find("('suanli advise --list-models' lists them)"), std::string::npos)
      << message;

  core::Result<const ModelSpec*> far = BuiltIn().Find("completely-unknown-network");
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.status().code(), StatusCode::kNotFound);
  EXPECT_EQ(far.status().message().find("did you mean"), std::string::npos)
      << far.status().message();

  EXPECT_EQ(BuiltIn().Find(" -- ").status().code(), StatusCode::kInvalidArgument);
}

const catalog::GpuType& Gpu(std::string_view name) {
  static const catalog::Catalog catalog = *catalog::LoadBuiltInCatalog();
  return **catalog.FindExact(name);
}

// Each family people rent GPUs for loads, validates with its defaults and estimates on a node of
// eight H200s (Llama 3.1 405B in 16 bits is 812 GB: 101 GB a GPU).
TEST(ModelZooTest, CurrentFamiliesLoadAndEstimate) {
  for (std::string_view name : {"llama-3.1-405b",
                                "llama-3.2-1b",
                                "qwen2.5-14b",
                                "qwen2.5-32b",
                                "qwen3-4b",
                                "qwen3-8b",
                                "qwen3-14b",
                                "qwen3-32b",
                                "qwen3-30b-a3b",
                                "qwen3-235b-a22b",
                                "deepseek-r1-distill-qwen-1.5b",
                                "deepseek-r1-distill-qwen-7b",
                                "deepseek-r1-distill-qwen-14b",
                                "deepseek-r1-distill-qwen-32b",
                                "deepseek-r1-distill-llama-8b",
                                "deepseek-r1-distill-llama-70b",
                                "mistral-small-24b",
                                "mistral-nemo-12b",
                                "gemma-2-9b",
                                "gemma-2-27b",
                                "gemma-3-4b",
                                "gemma-3-12b",
                                "gemma-3-27b",
                                "gpt-oss-20b",
                                "gpt-oss-120b",
                                "phi-3-mini",
                                "phi-3-medium",
                                "phi-4",
                                "flux.1-dev",
                                "sd3-medium"}) {
    const ModelSpec& model = Model(name);
    EXPECT_EQ(model.name, name);
    for (Task task : {Task::kInfer, Task::kServe}) {
      Workload w;
      w.model = model;
      w.task = task;
      const core::Status status = CompleteAndValidate(w);
      ASSERT_TRUE(status.ok()) << name << ": " << status.ToString();
      const Estimate e = EstimateOn(w, Gpu("H200"), 8);
      EXPECT_TRUE(e.fits) << name << ": " << e.reason;
      EXPECT_GT(e.time_s, 0) << name;
      EXPECT_TRUE(std::isfinite(e.time_s)) << name;
    }
  }
}

TEST(ModelZooTest, Llama3_1ServesA22kTokenPrompt) {
  Workload w;
  w.model = Model("llama-3.1-8b");
  w.task = Task::kServe;
  w.prompt_tokens = 22000;
  w.gen_tokens = 512;
  ASSERT_TRUE(CompleteAndValidate(w).ok());
  const Estimate e = EstimateOn(w, Gpu("A100 80GB SXM"), 1);
  EXPECT_TRUE(e.fits) << e.reason;
  // 128 KiB of KV cache a token: 22512 tokens are 2.95 GB a sequence.
  EXPECT_GE(e.batch, 10);
  EXPECT_LE(e.batch, 30);
  Workload llama3 = w;
  llama3.model = Model("llama-3-8b");
  EXPECT_FALSE(CompleteAndValidate(llama3).ok());  // 8K context
}

// Memory holds every expert; a token computes with the 8 it is routed to.
TEST(ModelZooTest, Qwen3MoeKeepsAllExpertsInMemoryAndComputesWithActiveOnes) {
  const ModelSpec& moe = Model("qwen3-30b-a3b");
  EXPECT_EQ(moe.experts, 128);
  EXPECT_EQ(moe.experts_per_token, 8);
  EXPECT_DOUBLE_EQ(moe.active_params, 3.3e9);
  Workload w;
  w.model = moe;
  w.task = Task::kInfer;
  w.precision = Precision::kFp16;
  w.engine = Engine::kVllm;  // its small per-step overhead leaves the weights' bytes to decide
  w.engine_given = true;
  ASSERT_TRUE(CompleteAndValidate(w).ok());
  const Estimate e = EstimateOn(w, Gpu("H100 SXM"), 1);
  EXPECT_NEAR(e.memory.weights, 30.5e9 * 2, 1e6);
  Workload dense = w;
  dense.model = Model("qwen3-32b");
  const Estimate d = EstimateOn(dense, Gpu("H100 SXM"), 1);
  // Batch-1 decode reads the routed experts only (6.6 GB, not 61 GB): well ahead of a dense 32B.
  EXPECT_GT(*e.throughput.decode_tokens_per_s, 2.5 * *d.throughput.decode_tokens_per_s);
}

// FLUX.1 is guidance-distilled: one transformer pass a step, where SD3 runs two (CFG).
// gpt-oss as released: MXFP4 experts (4.25 bits a weight) put the 20B model in a 16 GB card,
// which 16-bit weights (42 GB) do not; a token computes with 3.6B of its 20.9B parameters.
TEST(ModelZooTest, GptOssFitsA16GbCardInMxfp4) {
  Workload w;
  w.model = Model("gpt-oss-20b");
  w.task = Task::kInfer;
  w.quant = *ParseQuantization("mxfp4");
  ASSERT_TRUE(CompleteAndValidate(w).ok());
  EXPECT_LT(w.model.active_params, 0.2 * w.model.params);
  const Estimate mxfp4 = EstimateOn(w, Gpu("RTX 4060 Ti 16GB"), 1);
  EXPECT_TRUE(mxfp4.fits) << mxfp4.reason;
  EXPECT_NEAR(mxfp4.memory.weights / 1e9, 20.9 * 4.25 / 8, 0.1);
  w.quant.reset();
  EXPECT_FALSE(EstimateOn(w, Gpu("RTX 4060 Ti 16GB"), 1).fits);
}

TEST(ModelZooTest, FluxRunsOneLatentAStepAndSd3Two) {
  EXPECT_TRUE(Model("flux.1-dev").guidance_distilled);
  EXPECT_FALSE(Model("sd3-medium").guidance_distilled);
  EXPECT_TRUE(Model("FLUX.1-schnell").guidance_distilled);
  Workload w;
  w.model = Model("flux.1-dev");
  w.task = Task::kInfer;
  ASSERT_TRUE(CompleteAndValidate(w).ok());
  Workload doubled = w;
  doubled.model.guidance_distilled = false;
  const Estimate one = EstimateOn(w, Gpu("H100 SXM"), 1);
  const Estimate two = EstimateOn(doubled, Gpu("H100 SXM"), 1);
  EXPECT_GT(*one.throughput.steps_per_s, 1.6 * *two.throughput.steps_per_s);
}

TEST(ModelZooTest, Llama3HasGroupedKvHeadsForItsKvCache) {
  const ModelSpec& llama = Model("llama-3-8b");
  EXPECT_EQ(llama.kv_heads, 8);
  EXPECT_EQ(llama.head_dim, 128);
  // K and V, per layer, per KV head, per dimension, 2 bytes at fp16.
  EXPECT_EQ(2 * llama.layers * llama.kv_heads * llama.head_dim * 2, 131072);
}

TEST(ModelZooTest, MixtureOfExpertsKeepsActiveBelowTotal) {
  const ModelSpec& mixtral = Model("mixtral-8x7b");
  EXPECT_EQ(mixtral.experts, 8);
  EXPECT_EQ(mixtral.experts_per_token, 2);
  EXPECT_DOUBLE_EQ(mixtral.params, 46.7e9);
  EXPECT_DOUBLE_EQ(mixtral.active_params, 12.9e9);
  const ModelSpec& dense = Model("llama-2-70b");
  EXPECT_DOUBLE_EQ(dense.active_params, dense.params);
}

// ---- Counting parameters from shapes.

ModelSpec Llama(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab) {
  ModelSpec model;
  model.layers = layers;
  model.hidden = hidden;
  model.heads = heads;
  model.kv_heads = kv_heads;
  model.ffn = ffn;
  model.vocab = vocab;
  model.context = 4096;
  model.gated_mlp = true;
  return model;
}

void ExpectWithin(double counted, double published, double tolerance) {
  EXPECT_NEAR(counted / published, 1.0, tolerance) << counted << " vs " << published;
}

TEST(CountTransformerParamsTest, MatchesPublishedDenseCounts) {
  ExpectWithin(CountTransformerParams(Llama(32, 4096, 32, 32, 11008, 32000)), 6.74e9, 0.01);
  ExpectWithin(CountTransformerParams(Llama(32, 4096, 32, 8, 14336, 128256)), 8.03e9, 0.01);
  ExpectWithin(CountTransformerParams(Llama(28, 3584, 28, 4, 18944, 152064)), 7.61e9, 0.01);
  ExpectWithin(CountTransformerParams(Llama(80, 8192, 64, 8, 28672, 32000)), 68.98e9, 0.01);
  ModelSpec llama32_3b = Llama(28, 3072, 24, 8, 8192, 128256);
  llama32_3b.tied_embeddings = true;
  ExpectWithin(CountTransformerParams(llama32_3b), 3.21e9, 0.01);
}

TEST(CountTransformerParamsTest, CountsEveryExpertButActivatesTopK) {
  ModelSpec mixtral = Llama(32, 4096, 32, 8, 14336, 32000);
  mixtral.experts = 8;
  mixtral.experts_per_token = 2;
  ExpectWithin(CountTransformerParams(mixtral), 46.7e9, 0.01);
  ExpectWithin(CountActiveParams(mixtral), 12.9e9, 0.01);
  const ModelSpec dense = Llama(32, 4096, 32, 8, 14336, 32000);
  EXPECT_DOUBLE_EQ(CountActiveParams(dense), CountTransformerParams(dense));
}

TEST(CountTransformerParamsTest, CountsGpt2AndBertExactly) {
  ModelSpec gpt2;
  gpt2.layers = 12;
  gpt2.hidden = 768;
  gpt2.heads = 12;
  gpt2.ffn = 3072;
  gpt2.vocab = 50257;
  gpt2.context = 1024;
  gpt2.tied_embeddings = true;
  EXPECT_DOUBLE_EQ(CountTransformerParams(gpt2), 124'439'808);

  ModelSpec bert = gpt2;
  bert.kind = ModelKind::kEncoder;
  bert.vocab = 30522;
  bert.context = 512;
  // BertModel is 109,482,240 with its two token-type embeddings, which are not counted.
  EXPECT_DOUBLE_EQ(CountTransformerParams(bert), 109'482'240 - 2 * 768);
}

TEST(CountTransformerParamsTest, IsZeroWithoutShapes) {
  ModelSpec cnn;
  cnn.kind = ModelKind::kVision;
  EXPECT_EQ(CountTransformerParams(cnn), 0);
  EXPECT_EQ(CountActiveParams(cnn), 0);
}

// ---- Malformed zoo files.

constexpr std::string_view kZoo = R"(models:
  - name: tiny-llama
    aliases: [org/Tiny-Llama, Tiny Llama]
    kind: decoder_lm
    layers: 2
    hidden: 64
    heads: 4
    kv_heads: 2
    ffn: 128
    gated_mlp: true
    vocab: 1000
    context: 512
    source: test
  - name: tiny-cnn
    kind: vision
    params: 1e6
    forward_flops: 2e9
    resolution: 224
    source: test
)";

core::Result<ModelZoo> Parse(std::string_view text) {
  return ModelZoo::Parse({"models.yaml", text});
}

// Replaces the first `from` in `text` with `to`.
std::string With(std::string_view text, std::string_view from, std::string_view to) {
  std::string result(text);
  const size_t at = result.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) result.replace(at, from.size(), to);
  return result;
}

void ExpectError(const core::Result<ModelZoo>& result, std::string_view expected) {
  ASSERT_FALSE(result.ok()) << "expected an error containing: " << expected;
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find(expected), std::string::npos)
      << "message: " << result.status().message() << "\nexpected: " << expected;
}

TEST(ModelZooParseTest, FillsWhatFollowsFromTheShapes) {
  core::Result<ModelZoo> zoo = Parse(kZoo);
  ASSERT_TRUE(zoo.ok()) << zoo.status().ToString();
  ASSERT_EQ(zoo->models().size(), 2u);
  const ModelSpec& llama = zoo->models()[0];
  EXPECT_EQ(llama.head_dim, 16);
  EXPECT_EQ(llama.kv_heads, 2);
  EXPECT_DOUBLE_EQ(llama.params, CountTransformerParams(llama));
  EXPECT_DOUBLE_EQ(llama.active_params, llama.params);
  const ModelSpec& cnn = zoo->models()[1];
  EXPECT_EQ(cnn.kind, ModelKind::kVision);
  EXPECT_DOUBLE_EQ(cnn.forward_flops, 2e9);
  EXPECT_EQ((*zoo->Find("Tiny-Llama"))->name, "tiny-llama");

  core::Result<ModelZoo> without_kv = Parse(With(kZoo, "    kv_heads: 2\n", ""));
  ASSERT_TRUE(without_kv.ok()) << without_kv.status().ToString();
  EXPECT_EQ(without_kv->models()[0].kv_heads, 4);
}

TEST(ModelZooParseTest, MalformedYamlNamesFileAndLine) {
  ExpectError(Parse(With(kZoo, "hidden: 64", "hidden: [64")), "models.yaml:");
  ExpectError(Parse("models: []\n"), "models.yaml:1: expected a non-empty list 'models:'");
}

TEST(ModelZooParseTest, AnUnknownOrMissingFieldNamesLineModelAndField) {
  ExpectError(Parse(With(kZoo, "    gated_mlp: true", "    gated_ffn: true")),
              "models.yaml:10: tiny-llama: unknown field 'gated_ffn' (known fields: name, aliases");
  ExpectError(Parse(With(kZoo, "    ffn: 128\n", "")),
              "models.yaml:2: tiny-llama: missing field 'ffn'");
  ExpectError(Parse(With(kZoo, "    hidden: 64", "    hidden: sixty-four")),
              "models.yaml:6: tiny-llama: field 'hidden' must be a positive number");
}

TEST(ModelZooParseTest, AKindOutsideTheFiveIsAnError) {
  ExpectError(Parse(With(kZoo, "kind: decoder_lm", "kind: rnn")),
              "models.yaml:4: tiny-llama: field 'kind' must be one of decoder_lm, encoder, "
              "encoder_decoder, vision or diffusion, not 'rnn'");
}

TEST(ModelZooParseTest, VisionWithoutFlopsOrResolutionIsAnError) {
  ExpectError(Parse(With(kZoo, "    forward_flops: 2e9\n", "")),
              "models.yaml:14: tiny-cnn: missing field 'forward_flops'");
  ExpectError(Parse(With(kZoo, "    resolution: 224\n", "")),
              "models.yaml:14: tiny-cnn: missing field 'resolution'");
  ExpectError(Parse(With(kZoo, "    params: 1e6\n", "")),
              "models.yaml:14: tiny-cnn: missing field 'params'");
}

TEST(ModelZooParseTest, ShapesThatDisagreeAreErrors) {
  ExpectError(Parse(With(kZoo, "heads: 4", "heads: 5")),
              "models.yaml:7: tiny-llama: field 'heads' (5) must divide 'hidden' (64)");
  ExpectError(Parse(With(kZoo, "kv_heads: 2", "kv_heads: 3")),
              "models.yaml:8: tiny-llama: field 'kv_heads' (3) must divide 'heads' (4)");
  ExpectError(
      Parse(With(kZoo, "    gated_mlp: true", "    experts: 4\n    experts_per_token: 8")),
      "models.yaml:11: tiny-llama: field 'experts_per_token' (8) must not exceed 'experts' (4)");
  ExpectError(Parse(With(kZoo, "    gated_mlp: true", "    experts: 4")),
              "tiny-llama: a mixture-of-experts model gives both");
  ExpectError(Parse(With(kZoo, "    gated_mlp: true", "    active_params: 1e6")),
              "models.yaml:10: tiny-llama: field 'active_params' is for mixture-of-experts");
}

TEST(ModelZooParseTest, ANameOrAliasOfTwoModelsIsAnError) {
  ExpectError(Parse(With(kZoo, "name: tiny-cnn", "name: tiny-llama")),
              "models.yaml:14: tiny-llama: model 'tiny-llama' is defined twice");
  ExpectError(Parse(With(kZoo, "    kind: vision", "    aliases: [TINY LLAMA]\n    kind: vision")),
              "models.yaml:15: tiny-cnn: 'TINY LLAMA' also names tiny-llama");
  // "other/tiny-llama" without its organisation is tiny-llama's name.
  ExpectError(
      Parse(With(kZoo, "    kind: vision", "    aliases: [other/tiny-llama]\n    kind: vision")),
      "'other/tiny-llama' also names tiny-llama");
}

}  // namespace
}  // namespace suanli::advisor
