#include "advisor/hf_config.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace suanli::advisor {
namespace {

using core::StatusCode;

// The config.json files as published on the Hugging Face hub (fields the advisor ignores trimmed in
// places).
constexpr std::string_view kLlama2_7b = R"({
  "_name_or_path": "meta-llama/Llama-2-7b-hf",
  "architectures": ["LlamaForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 11008,
  "max_position_embeddings": 4096,
  "model_type": "llama",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 32,
  "pretraining_tp": 1,
  "rms_norm_eps": 1e-05,
  "rope_scaling": null,
  "tie_word_embeddings": false,
  "torch_dtype": "float16",
  "transformers_version": "4.31.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

constexpr std::string_view kMistral7b = R"({
  "architectures": ["MistralForCausalLM"],
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mistral",
  "num_attention_heads": 32,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "rms_norm_eps": 1e-05,
  "rope_theta": 10000.0,
  "sliding_window": 4096,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.34.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

constexpr std::string_view kMixtral = R"({
  "architectures": ["MixtralForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 1,
  "eos_token_id": 2,
  "hidden_act": "silu",
  "hidden_size": 4096,
  "initializer_range": 0.02,
  "intermediate_size": 14336,
  "max_position_embeddings": 32768,
  "model_type": "mixtral",
  "num_attention_heads": 32,
  "num_experts_per_tok": 2,
  "num_hidden_layers": 32,
  "num_key_value_heads": 8,
  "num_local_experts": 8,
  "output_router_logits": false,
  "rms_norm_eps": 1e-05,
  "rope_theta": 1e6,
  "router_aux_loss_coef": 0.02,
  "sliding_window": null,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.36.0.dev0",
  "use_cache": true,
  "vocab_size": 32000
})";

constexpr std::string_view kQwen25_7b = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "attention_dropout": 0.0,
  "bos_token_id": 151643,
  "eos_token_id": 151643,
  "hidden_act": "silu",
  "hidden_size": 3584,
  "initializer_range": 0.02,
  "intermediate_size": 18944,
  "max_position_embeddings": 131072,
  "max_window_layers": 28,
  "model_type": "qwen2",
  "num_attention_heads": 28,
  "num_hidden_layers": 28,
  "num_key_value_heads": 4,
  "rms_norm_eps": 1e-06,
  "rope_theta": 1000000.0,
  "sliding_window": 131072,
  "tie_word_embeddings": false,
  "torch_dtype": "bfloat16",
  "transformers_version": "4.40.1",
  "use_cache": true,
  "use_sliding_window": false,
  "vocab_size": 152064
})";

constexpr std::string_view kQwen25_0_5b = R"({
  "architectures": ["Qwen2ForCausalLM"],
  "hidden_size": 896,
  "intermediate_size": 4864,
  "max_position_embeddings": 32768,
  "model_type": "qwen2",
  "num_attention_heads": 14,
  "num_hidden_layers": 24,
  "num_key_value_heads": 2,
  "tie_word_embeddings": true,
  "vocab_size": 151936
})";

constexpr std::string_view kGpt2 = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPT2LMHeadModel"],
  "attn_pdrop": 0.1,
  "bos_token_id": 50256,
  "embd_pdrop": 0.1,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gpt2",
  "n_ctx": 1024,
  "n_embd": 768,
  "n_head": 12,
  "n_layer": 12,
  "n_positions": 1024,
  "resid_pdrop": 0.1,
  "summary_activation": null,
  "summary_first_dropout": 0.1,
  "summary_proj_to_labels": true,
  "summary_type": "cls_index",
  "summary_use_proj": true,
  "task_specific_params": {"text-generation": {"do_sample": true, "max_length": 50}},
  "vocab_size": 50257
})";

constexpr std::string_view kGptJ = R"({
  "activation_function": "gelu_new",
  "architectures": ["GPTJForCausalLM"],
  "attn_pdrop": 0.0,
  "bos_token_id": 50256,
  "embd_pdrop": 0.0,
  "eos_token_id": 50256,
  "initializer_range": 0.02,
  "layer_norm_epsilon": 1e-05,
  "model_type": "gptj",
  "n_embd": 4096,
  "n_head": 16,
  "n_inner": null,
  "n_layer": 28,
  "n_positions": 2048,
  "resid_pdrop": 0.0,
  "rotary": true,
  "rotary_dim": 64,
  "tie_word_embeddings": false,
  "vocab_size": 50400
})";

constexpr std::string_view kBertBase = R"({
  "architectures": ["BertForMaskedLM"],
  "attention_probs_dropout_prob": 0.1,
  "gradient_checkpointing": false,
  "hidden_act": "gelu",
  "hidden_dropout_prob": 0.1,
  "hidden_size": 768,
  "initializer_range": 0.02,
  "intermediate_size": 3072,
  "layer_norm_eps": 1e-12,
  "max_position_embeddings": 512,
  "model_type": "bert",
  "num_attention_heads": 12,
  "num_hidden_layers": 12,
  "pad_token_id": 0,
  "position_embedding_type": "absolute",
  "transformers_version": "4.6.0.dev0",
  "type_vocab_size": 2,
  "use_cache": true,
  "vocab_size": 30522
})";

ModelSpec Read(std::string_view json, std::string_view source = "config.json") {
  core::Result<ModelSpec> model = ModelFromHfConfig(json, source);
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? *model : ModelSpec{};
}

void ExpectNear(double counted, double published, double tolerance) {
  EXPECT_NEAR(counted / published, 1.0, tolerance) << counted << " vs " << published;
}

TEST(HfConfigTest, ReadsLlama2ShapesAndCountsItsParameters) {
  const ModelSpec model = Read(kLlama2_7b, "llama/config.json");
  EXPECT_EQ(model.name, "meta-llama/Llama-2-7b-hf");
  EXPECT_EQ(model.source, "llama/config.json");
  EXPECT_EQ(model.kind, ModelKind::kDecoderLm);
  EXPECT_EQ(model.layers, 32);
  EXPECT_EQ(model.hidden, 4096);
  EXPECT_EQ(model.heads, 32);
  EXPECT_EQ(model.kv_heads, 32);
  EXPECT_EQ(model.head_dim, 128);
  EXPECT_EQ(model.ffn, 11008);
  EXPECT_TRUE(model.gated_mlp);
  EXPECT_FALSE(model.tied_embeddings);
  EXPECT_EQ(model.vocab, 32000);
  EXPECT_EQ(model.context, 4096);
  ExpectNear(model.params, 6.74e9, 0.01);
  EXPECT_DOUBLE_EQ(model.active_params, model.params);
}

TEST(HfConfigTest, ReadsMistralWithGroupedKvHeads) {
  const ModelSpec model = Read(kMistral7b, "mistral-7b.json");
  EXPECT_EQ(model.name, "mistral-7b.json");  // no _name_or_path: the source names it
  EXPECT_EQ(model.kv_heads, 8);
  EXPECT_EQ(model.ffn, 14336);
  EXPECT_EQ(model.context, 32768);
  ExpectNear(model.params, 7.24e9, 0.01);
}

TEST(HfConfigTest, ReadsMixtralExpertsAndActiveParameters) {
  const ModelSpec model = Read(kMixtral);
  EXPECT_EQ(model.experts, 8);
  EXPECT_EQ(model.experts_per_token, 2);
  ExpectNear(model.params, 46.7e9, 0.01);
  ExpectNear(model.active_params, 12.9e9, 0.01);
}

TEST(HfConfigTest, ReadsQwen25TiedAndUntied) {
  const ModelSpec qwen7b = Read(kQwen25_7b);
  EXPECT_EQ(qwen7b.kv_heads, 4);
  EXPECT_EQ(qwen7b.head_dim, 128);
  EXPECT_EQ(qwen7b.vocab, 152064);
  ExpectNear(qwen7b.params, 7.61e9, 0.01);

  const ModelSpec qwen05b = Read(kQwen25_0_5b);
  EXPECT_TRUE(qwen05b.tied_embeddings);
  EXPECT_EQ(qwen05b.head_dim, 64);
  ExpectNear(qwen05b.params, 0.494e9, 0.01);
}

TEST(HfConfigTest, ReadsGpt2WithDefaultMlpAndTiedHead) {
  const ModelSpec model = Read(kGpt2);
  EXPECT_EQ(model.layers, 12);
  EXPECT_EQ(model.hidden, 768);
  EXPECT_EQ(model.heads, 12);
  EXPECT_EQ(model.ffn, 4 * 768);
  EXPECT_EQ(model.context, 1024);
  EXPECT_FALSE(model.gated_mlp);
  EXPECT_TRUE(model.tied_embeddings);
  ExpectNear(model.params, 124.4e6, 0.01);
}

TEST(HfConfigTest, ReadsGptJWithNullInnerSize) {
  const ModelSpec model = Read(kGptJ);
  EXPECT_EQ(model.ffn, 16384);
  EXPECT_EQ(model.heads, 16);
  EXPECT_EQ(model.head_dim, 256);
  EXPECT_FALSE(model.tied_embeddings);
  ExpectNear(model.params, 6.05e9, 0.01);
}

TEST(HfConfigTest, ReadsBertAsAnEncoder) {
  const ModelSpec model = Read(kBertBase);
  EXPECT_EQ(model.kind, ModelKind::kEncoder);
  EXPECT_EQ(model.layers, 12);
  EXPECT_EQ(model.ffn, 3072);
  EXPECT_EQ(model.context, 512);
  ExpectNear(model.params, 109.5e6, 0.01);
}

// Replaces the first `from` in `text` with `to`.
std::string With(std::string_view text, std::string_view from, std::string_view to) {
  std::string result(text);
  const size_t at = result.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) result.replace(at, from.size(), to);
  return result;
}

void ExpectError(std::string_view json, std::string_view expected) {
  core::Result<ModelSpec> model = ModelFromHfConfig(json, "cfg.json");
  ASSERT_FALSE(model.ok()) << "expected an error containing: " << expected;
  EXPECT_EQ(model.status().code(), StatusCode::kInvalidArgument);
  const std::string message = model.status().message();
  EXPECT_NE(message.find(expected), std::string::npos)
      << "message: " << message << "\nexpected: " << expected;
  EXPECT_EQ(message.find('\n'), std::string::npos) << "not one line: " << message;
}

TEST(HfConfigTest, MalformedJsonSaysWhereInOneLine) {
  ExpectError(With(kLlama2_7b, "\"hidden_size\": 4096,", "\"hidden_size\": 4096,,"),
              "cfg.json: not valid JSON: ");
  ExpectError(With(kLlama2_7b, "\"hidden_size\": 4096,", "\"hidden_size\": 4096,,"), "line 7");
  ExpectError("", "cfg.json: not valid JSON: ");
  ExpectError("[1, 2]", "cfg.json: not a model config: expected a JSON object");
}

TEST(HfConfigTest, AMissingFieldIsNamed) {
  ExpectError(With(kLlama2_7b, "\"hidden_size\": 4096,", ""),
              "cfg.json: field 'hidden_size' is missing");
  ExpectError(With(kMixtral, "\"num_local_experts\": 8,", ""),
              "cfg.json: field 'num_local_experts' is missing");
  ExpectError(With(kGpt2, "\"n_embd\": 768,", ""), "cfg.json: field 'n_embd' is missing");
  ExpectError(With(kLlama2_7b, "\"model_type\": \"llama\",", ""),
              "cfg.json: field 'model_type' is missing");
}

TEST(HfConfigTest, AFieldOfTheWrongTypeIsNamed) {
  ExpectError(With(kLlama2_7b, "\"hidden_size\": 4096", "\"hidden_size\": \"4096\""),
              "cfg.json: field 'hidden_size' must be a positive integer, not \"4096\"");
  ExpectError(With(kLlama2_7b, "\"hidden_size\": 4096", "\"hidden_size\": -4096"),
              "field 'hidden_size' must be a positive integer, not -4096");
  ExpectError(With(kLlama2_7b, "\"hidden_size\": 4096", "\"hidden_size\": 4096.5"),
              "field 'hidden_size' must be a positive integer");
  ExpectError(With(kLlama2_7b, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": 0"),
              "field 'tie_word_embeddings' must be true or false, not 0");
  ExpectError(With(kLlama2_7b, "\"model_type\": \"llama\"", "\"model_type\": 7"),
              "field 'model_type' must be text, not 7");
}

TEST(HfConfigTest, AnUnsupportedModelTypeListsTheSupportedOnes) {
  ExpectError(With(kLlama2_7b, "\"model_type\": \"llama\"", "\"model_type\": \"t5\""),
              "cfg.json: model_type 't5' is not supported; supported: llama, mistral, mixtral, "
              "qwen2, gpt2, gptj, bert");
}

TEST(HfConfigTest, ShapesThatDisagreeAreErrors) {
  ExpectError(With(kLlama2_7b, "\"num_key_value_heads\": 32", "\"num_key_value_heads\": 5"),
              "cfg.json: the key/value heads (5) must divide the attention heads (32)");
  ExpectError(With(kLlama2_7b, "\"num_attention_heads\": 32", "\"num_attention_heads\": 30"),
              "cfg.json: the attention heads (30) must divide the hidden size (4096)");
  ExpectError(With(kMixtral, "\"num_experts_per_tok\": 2", "\"num_experts_per_tok\": 9"),
              "num_experts_per_tok (9) must not exceed num_local_experts (8)");
}

TEST(HfConfigTest, AbsentKvHeadsMeanOnePerHead) {
  const ModelSpec model = Read(With(kLlama2_7b, "\"num_key_value_heads\": 32,", ""));
  EXPECT_EQ(model.kv_heads, 32);
}

}  // namespace
}  // namespace suanli::advisor
