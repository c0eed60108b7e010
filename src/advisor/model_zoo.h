// ModelZoo: the networks the advisor knows by name (data/models.yaml), found forgivingly.
//
// Each entry gives a model's shapes (transformers) or measured FLOPs (CNNs, diffusion UNets), its
// published parameter count and a source. Names match ignoring case, punctuation and a leading
// Hugging Face organisation, so "meta-llama/Llama-2-7b-hf", "Llama 2 7B" and "llama-2-7b" are one
// model. A model the zoo lacks can still be described by its config.json (hf_config.h).
#pragma once

#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "advisor/model.h"
#include "catalog/data_file.h"
#include "core/status.h"

namespace suanli::advisor {

// Immutable once parsed, so one zoo may be read from any number of threads.
class ModelZoo {
 public:
  // INVALID_ARGUMENT naming file, line, model and field for: malformed YAML, an unknown or missing
  // field, a bad number, a `kind` other than decoder_lm, encoder, encoder_decoder, vision or
  // diffusion, a transformer without its shapes, a vision or diffusion model without forward_flops
  // and resolution, heads that do not divide hidden (when head_dim is absent), kv_heads that do not
  // divide heads, experts_per_token above experts, and a name or alias that names two models.
  // Fills what follows from the rest: kv_heads = heads, head_dim = hidden / heads, params from the
  // shapes where absent, active_params = params for dense models.
  static core::Result<ModelZoo> Parse(const catalog::DataFile& file);

  std::span<const ModelSpec> models() const { return models_; }

  // The model with this name or alias, ignoring case, spaces, punctuation and an "org/" prefix.
  // NOT_FOUND naming the closest models otherwise; INVALID_ARGUMENT for a name with no letters.
  core::Result<const ModelSpec*> Find(std::string_view name) const;

 private:
  std::vector<std::string> Suggestions(const std::string& key) const;

  std::vector<ModelSpec> models_;
  // Each name and alias as lower-case letters and digits ("llama27b"), and for an "org/name" alias
  // also the part after the '/' ("llama27bhf" from "meta-llama/Llama-2-7b-hf").
  std::map<std::string, size_t, std::less<>> by_key_;
};

// The zoo compiled from data/models.yaml.
core::Result<ModelZoo> LoadBuiltInModelZoo();

// The text of data/models.yaml; CMake generates its definition.
std::string_view BuiltInModelsYaml();

}  // namespace suanli::advisor
