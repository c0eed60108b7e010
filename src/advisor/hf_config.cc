#include "advisor/hf_config.h"

#include <algorithm>
#include <boost/json/parse.hpp>
#include <boost/json/serialize.hpp>
#include <boost/json/stream_parser.hpp>
#include <boost/json/value.hpp>
#include <exception>
#include <limits>
#include <optional>
#include <string>

namespace suanli::advisor {
namespace {

constexpr std::string_view kSupportedTypes = "llama, mistral, mixtral, qwen2, gpt2, gptj, bert";

// Reads fields of the config's top-level object. The first problem is latched, so a family's
// fields are read in a row and status() checked once. A field that is null counts as absent, as
// transformers treats it.
class ConfigReader {
 public:
  ConfigReader(const boost::json::object& object, std::string source)
      : object_(object), source_(std::move(source)) {}

  const core::Status& status() const { return status_; }

  int Integer(std::string_view key) {
    const std::optional<int> value = OptionalInteger(key);
    if (!value.has_value() && status_.ok()) Fail("field '" + std::string(key) + "' is missing");
    return value.value_or(0);
  }

  std::optional<int> OptionalInteger(std::string_view key) {
    const boost::json::value* value = Field(key);
    if (value == nullptr) return std::nullopt;
    std::optional<int64_t> number;
    if (value->is_int64()) number = value->get_int64();
    if (value->is_uint64() && value->get_uint64() <= std::numeric_limits<uint32_t>::max()) {
      number = static_cast<int64_t>(value->get_uint64());
    }
    if (!number.has_value() || *number <= 0 || *number > std::numeric_limits<int>::max()) {
      Fail("field '" + std::string(key) + "' must be a positive integer, not " + Shown(*value));
      return std::nullopt;
    }
    return static_cast<int>(*number);
  }

  std::optional<bool> OptionalBool(std::string_view key) {
    const boost::json::value* value = Field(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_bool()) {
      Fail("field '" + std::string(key) + "' must be true or false, not " + Shown(*value));
      return std::nullopt;
    }
    return value->get_bool();
  }

  std::optional<std::string> OptionalString(std::string_view key) {
    const boost::json::value* value = Field(key);
    if (value == nullptr) return std::nullopt;
    if (!value->is_string()) {
      Fail("field '" + std::string(key) + "' must be text, not " + Shown(*value));
      return std::nullopt;
    }
    return std::string(value->get_string());
  }

  void Fail(const std::string& what) {
    if (status_.ok()) status_ = core::InvalidArgumentError(source_ + ": " + what);
  }

 private:
  const boost::json::value* Field(std::string_view key) const {
    if (!status_.ok()) return nullptr;
    const boost::json::value* value = object_.if_contains(key);
    return value == nullptr || value->is_null() ? nullptr : value;
  }

  // A value as it is written, cut short: errors stay on one line.
  static std::string Shown(const boost::json::value& value) {
    std::string text = boost::json::serialize(value);
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return text;
  }

  const boost::json::object& object_;
  std::string source_;
  core::Status status_;
};

// LLaMA and its descendants: SwiGLU MLP, RMSNorm, rotary positions, grouped KV heads.
void ReadLlamaLike(ConfigReader& config, std::string_view model_type, ModelSpec& model) {
  model.layers = config.Integer("num_hidden_layers");
  model.hidden = config.Integer("hidden_size");
  model.heads = config.Integer("num_attention_heads");
  model.kv_heads = config.OptionalInteger("num_key_value_heads").value_or(0);
  model.head_dim = config.OptionalInteger("head_dim").value_or(0);
  model.ffn = config.Integer("intermediate_size");
  model.vocab = config.Integer("vocab_size");
  model.context = config.Integer("max_position_embeddings");
  model.gated_mlp = true;
  model.tied_embeddings = config.OptionalBool("tie_word_embeddings").value_or(false);
  if (model_type == "mixtral") {
    model.experts = config.Integer("num_local_experts");
    model.experts_per_token = config.Integer("num_experts_per_tok");
  }
}

// GPT-2 and GPT-J name their fields alike; GPT-J ties no embeddings and uses rotary positions.
void ReadGptLike(ConfigReader& config, std::string_view model_type, ModelSpec& model) {
  model.layers = config.Integer("n_layer");
  model.hidden = config.Integer("n_embd");
  model.heads = config.Integer("n_head");
  model.context = config.Integer("n_positions");
  model.vocab = config.Integer("vocab_size");
  // n_inner: null (the usual case) means 4 x n_embd.
  model.ffn = config.OptionalInteger("n_inner").value_or(4 * model.hidden);
  model.tied_embeddings = config.OptionalBool("tie_word_embeddings").value_or(model_type == "gpt2");
}

void ReadBert(ConfigReader& config, ModelSpec& model) {
  model.kind = ModelKind::kEncoder;
  model.layers = config.Integer("num_hidden_layers");
  model.hidden = config.Integer("hidden_size");
  model.heads = config.Integer("num_attention_heads");
  model.ffn = config.Integer("intermediate_size");
  model.vocab = config.Integer("vocab_size");
  model.context = config.Integer("max_position_embeddings");
}

// Shapes that must agree; fills kv_heads and head_dim where the config leaves them out.
void CheckShapes(ConfigReader& config, ModelSpec& model) {
  if (model.head_dim == 0) {
    if (model.hidden % model.heads != 0) {
      config.Fail("the attention heads (" + std::to_string(model.heads) +
                  ") must divide the hidden size (" + std::to_string(model.hidden) + ")");
      return;
    }
    model.head_dim = model.hidden / model.heads;
  }
  if (model.kv_heads == 0) model.kv_heads = model.heads;
  if (model.heads % model.kv_heads != 0) {
    config.Fail("the key/value heads (" + std::to_string(model.kv_heads) +
                ") must divide the attention heads (" + std::to_string(model.heads) + ")");
    return;
  }
  if (model.experts_per_token > model.experts) {
    config.Fail("num_experts_per_tok (" + std::to_string(model.experts_per_token) +
                ") must not exceed num_local_experts (" + std::to_string(model.experts) + ")");
  }
}

}  // namespace

core::Result<ModelSpec> ModelFromHfConfig(std::string_view json_text,
                                          std::string_view source_name) try {
  const std::string source(source_name);
  boost::json::stream_parser parser;
  boost::system::error_code error;
  const size_t consumed = parser.write_some(json_text.data(), json_text.size(), error);
  if (!error) parser.finish(error);
  if (error) {
    const size_t at = std::min(consumed, json_text.size());
    const auto line = 1 + std::count(json_text.begin(), json_text.begin() + at, '\n');
    return core::InvalidArgumentError(source + ": not valid JSON: " + error.message() +
                                      " at line " + std::to_string(line));
  }
  const boost::json::value root = parser.release();
  if (!root.is_object()) {
    return core::InvalidArgumentError(source +
                                      ": not a model config: expected a JSON object such as "
                                      "{\"model_type\": \"llama\", ...}");
  }

  ConfigReader config(root.get_object(), source);
  const std::optional<std::string> model_type = config.OptionalString("model_type");
  if (!config.status().ok()) return config.status();
  if (!model_type.has_value()) {
    return core::InvalidArgumentError(
        source + ": field 'model_type' is missing; supported: " + std::string(kSupportedTypes));
  }

  ModelSpec model;
  const std::string& type = *model_type;
  if (type == "llama" || type == "mistral" || type == "mixtral" || type == "qwen2") {
    ReadLlamaLike(config, type, model);
  } else if (type == "gpt2" || type == "gptj") {
    ReadGptLike(config, type, model);
  } else if (type == "bert") {
    ReadBert(config, model);
  } else {
    return core::InvalidArgumentError(
        source + ": model_type '" + type +
        "' is not supported; supported: " + std::string(kSupportedTypes));
  }
  const std::optional<std::string> name = config.OptionalString("_name_or_path");
  if (!config.status().ok()) return config.status();
  CheckShapes(config, model);
  if (!config.status().ok()) return config.status();

  model.name = name.has_value() && !name->empty() ? *name : source;
  model.params = CountTransformerParams(model);
  model.active_params = CountActiveParams(model);
  model.source = source;
  model.notes = "read from a Hugging Face config.json (model_type " + type +
                "); parameters counted from the shapes";
  return model;
} catch (const std::exception& error) {
  // Boost.JSON reports parse errors through error_code; only allocation can still throw.
  return core::InvalidArgumentError(std::string(source_name) + ": " + error.what());
}

}  // namespace suanli::advisor
