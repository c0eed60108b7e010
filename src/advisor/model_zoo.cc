#include "advisor/model_zoo.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>

#include "core/suggest.h"

namespace suanli::advisor {
namespace {

struct KindName {
  std::string_view name;
  ModelKind kind;
};
constexpr KindName kKinds[] = {{"decoder_lm", ModelKind::kDecoderLm},
                               {"encoder", ModelKind::kEncoder},
                               {"encoder_decoder", ModelKind::kEncoderDecoder},
                               {"vision", ModelKind::kVision},
                               {"diffusion", ModelKind::kDiffusion}};

std::optional<ModelKind> ReadKind(catalog::YamlEntry& reader) {
  const std::string name = reader.String("kind");
  if (!reader.status().ok()) return std::nullopt;
  std::vector<std::string> known;
  for (const KindName& kind : kKinds) {
    if (kind.name == name) return kind.kind;
    known.emplace_back(kind.name);
  }
  reader.Fail("kind", "field 'kind' must be one of " + core::JoinChoices(known, " or ") +
                          ", not '" + name + "'");
  return std::nullopt;
}

// Shapes that must agree with each other; fills kv_heads and head_dim where absent.
void CheckShapes(catalog::YamlEntry& reader, ModelSpec& model) {
  if (model.layers > 0) {
    if (model.head_dim == 0) {
      if (model.hidden % model.heads != 0) {
        reader.Fail("heads", "field 'heads' (" + std::to_string(model.heads) +
                                 ") must divide 'hidden' (" + std::to_string(model.hidden) +
                                 "); give 'head_dim' when heads are not hidden / heads wide");
        return;
      }
      model.head_dim = model.hidden / model.heads;
    }
    if (model.kv_heads == 0) {
      model.kv_heads = model.heads;
    } else if (model.heads % model.kv_heads != 0) {
      reader.Fail("kv_heads", "field 'kv_heads' (" + std::to_string(model.kv_heads) +
                                  ") must divide 'heads' (" + std::to_string(model.heads) + ")");
      return;
    }
  }
  if ((model.experts > 0) != (model.experts_per_token > 0)) {
    reader.Fail(model.experts > 0 ? "experts" : "experts_per_token",
                "a mixture-of-experts model gives both 'experts' and 'experts_per_token'");
  } else if (model.experts_per_token > model.experts) {
    reader.Fail("experts_per_token",
                "field 'experts_per_token' (" + std::to_string(model.experts_per_token) +
                    ") must not exceed 'experts' (" + std::to_string(model.experts) + ")");
  }
}

// Reads one entry of `models:`; the first problem is latched in `reader`.
ModelSpec ReadModel(catalog::YamlEntry& reader) {
  ModelSpec model;
  model.name = reader.String("name");
  if (!model.name.empty()) reader.set_label(model.name);
  model.aliases = reader.StringList("aliases");
  model.kind = ReadKind(reader).value_or(ModelKind::kDecoderLm);
  const bool transformer = IsTransformer(model.kind);

  // Vision transformers (ViT) may give shapes too; then they must give all of them.
  if (transformer || reader.Has("layers")) {
    model.layers = reader.PositiveInteger("layers");
    model.hidden = reader.PositiveInteger("hidden");
    model.heads = reader.PositiveInteger("heads");
    model.ffn = reader.PositiveInteger("ffn");
  }
  auto optional_integer = [&](const std::string& key) {
    return reader.OptionalPositiveInteger(key).value_or(0);
  };
  model.vocab = transformer ? reader.PositiveInteger("vocab") : optional_integer("vocab");
  model.context = transformer ? reader.PositiveInteger("context") : optional_integer("context");
  model.kv_heads = optional_integer("kv_heads");
  model.head_dim = optional_integer("head_dim");
  model.gated_mlp = reader.OptionalBool("gated_mlp").value_or(false);
  model.tied_embeddings = reader.OptionalBool("tied_embeddings").value_or(false);
  model.experts = optional_integer("experts");
  model.experts_per_token = optional_integer("experts_per_token");

  auto optional_number = [&](const std::string& key) {
    return reader.OptionalPositiveNumber(key).value_or(0);
  };
  model.forward_flops =
      transformer ? optional_number("forward_flops") : reader.PositiveNumber("forward_flops");
  model.resolution =
      transformer ? optional_integer("resolution") : reader.PositiveInteger("resolution");
  model.vae_decode_flops = model.kind == ModelKind::kDiffusion
                               ? reader.PositiveNumber("vae_decode_flops")
                               : optional_number("vae_decode_flops");
  model.activation_bytes_per_sample = optional_number("activation_bytes_per_sample");
  model.guidance_distilled = reader.OptionalBool("guidance_distilled").value_or(false);

  // Without shapes the parameters cannot be counted, so CNNs and UNets must say.
  const std::optional<double> params =
      transformer ? reader.OptionalPositiveNumber("params") : reader.PositiveNumber("params");
  const std::optional<double> active_params = reader.OptionalPositiveNumber("active_params");
  model.source = reader.String("source");
  model.notes = reader.OptionalString("notes").value_or("");
  reader.RejectUnknownFields({"name",
                              "aliases",
                              "kind",
                              "params",
                              "active_params",
                              "layers",
                              "hidden",
                              "heads",
                              "kv_heads",
                              "head_dim",
                              "ffn",
                              "gated_mlp",
                              "tied_embeddings",
                              "vocab",
                              "context",
                              "experts",
                              "experts_per_token",
                              "forward_flops",
                              "resolution",
                              "vae_decode_flops",
                              "activation_bytes_per_sample",
                              "guidance_distilled",
                              "source",
                              "notes"});
  if (!reader.status().ok()) return model;
  CheckShapes(reader, model);
  if (!reader.status().ok()) return model;

  if (active_params.has_value() && model.experts == 0) {
    reader.Fail("active_params",
                "field 'active_params' is for mixture-of-experts models (with 'experts'); a dense "
                "model uses all its parameters");
    return model;
  }
  const double counted = CountTransformerParams(model);
  model.params = params.value_or(counted);
  if (active_params.has_value()) {
    model.active_params = *active_params;
  } else if (model.experts > 0) {
    // The published total less the experts a token skips.
    model.active_params = model.params - (counted - CountActiveParams(model));
  } else {
    model.active_params = model.params;
  }
  if (model.active_params > model.params) {
    reader.Fail("active_params", "field 'active_params' must not exceed 'params'");
  }
  return model;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Lower-case letters and digits, and a '.' between two digits: "Qwen2.5-7B" is "qwen2.57b", which
// "qwen2-57b" (another model) must not match.
std::string LettersAndDigits(std::string_view name) {
  std::string key;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool version_dot =
        c == '.' && i > 0 && i + 1 < name.size() && IsDigit(name[i - 1]) && IsDigit(name[i + 1]);
    if ((c >= 'a' && c <= 'z') || IsDigit(c) || version_dot) key += c;
  }
  return key;
}

// The keys a name is known by: all its letters and digits, and for "org/name" (a Hugging Face repo
// id) also those after the last '/'. Both, because "ViT-B/16" is a name, not a repo.
std::vector<std::string> NameKeys(std::string_view name) {
  std::vector<std::string> keys;
  if (std::string key = LettersAndDigits(name); !key.empty()) keys.push_back(std::move(key));
  if (const size_t slash = name.rfind('/'); slash != std::string_view::npos) {
    if (std::string key = LettersAndDigits(name.substr(slash + 1)); !key.empty()) {
      keys.push_back(std::move(key));
    }
  }
  return keys;
}

}  // namespace

core::Result<ModelZoo> ModelZoo::Parse(const catalog::DataFile& file) try {
  core::Result<YAML::Node> root = catalog::ParseYamlFile(file);
  if (!root.ok()) return root.status();
  core::Result<YAML::Node> entries = catalog::TopLevelList(file, *root, "models");
  if (!entries.ok()) return entries.status();

  ModelZoo zoo;
  for (size_t index = 0; index < entries->size(); ++index) {
    const YAML::Node entry = (*entries)[index];
    catalog::YamlEntry reader(file, entry, "models[" + std::to_string(index) + "]");
    ModelSpec model = ReadModel(reader);
    if (!reader.status().ok()) return reader.status();

    std::vector<std::pair<std::string, YAML::Node>> names = {{model.name, entry["name"]}};
    for (size_t i = 0; i < model.aliases.size(); ++i) {
      names.emplace_back(model.aliases[i], entry["aliases"][i]);
    }
    for (const auto& [name, node] : names) {
      const std::string where = catalog::Where(file, node) + ": " + model.name + ": ";
      const std::vector<std::string> keys = NameKeys(name);
      if (keys.empty()) {
        return core::InvalidArgumentError(where + "'" + name + "' has no letters or digits");
      }
      for (const std::string& key : keys) {
        auto [it, inserted] = zoo.by_key_.emplace(key, index);
        if (inserted || it->second == index) continue;
        const std::string& other = zoo.models_[it->second].name;
        if (other == model.name) {
          return core::InvalidArgumentError(where + "model '" + other +
                                            "' is defined twice; keep one entry");
        }
        return core::InvalidArgumentError(where + "'" + name + "' also names " + other +
                                          "; give each model its own names");
      }
    }
    zoo.models_.push_back(std::move(model));
  }
  return zoo;
} catch (const YAML::Exception& error) {
  // The reads above check node kinds first; this keeps any yaml-cpp surprise inside this file.
  return core::InvalidArgumentError(file.name + ": " + std::string(error.what()));
}

core::Result<const ModelSpec*> ModelZoo::Find(std::string_view name) const {
  const std::vector<std::string> keys = NameKeys(name);
  if (keys.empty()) {
    return core::InvalidArgumentError("'" + std::string(name) +
                                      "' is not a model name; try e.g. 'llama-3-8b' ('suanli "
                                      "advise --list-models' lists them)");
  }
  for (const std::string& key : keys) {
    if (auto it = by_key_.find(key); it != by_key_.end()) return &models_[it->second];
  }
  std::string message = "no model named '" + std::string(name) + "' in the zoo";
  if (const std::vector<std::string> names = Suggestions(keys.back()); !names.empty()) {
    message += "; did you mean " + core::JoinChoices(names, " or ") + "?";
  }
  return core::NotFoundError(message + " ('suanli advise --list-models' lists them)");
}

std::vector<std::string> ModelZoo::Suggestions(const std::string& key) const {
  const std::vector<std::pair<std::string_view, size_t>> keys(by_key_.begin(), by_key_.end());
  std::vector<std::string> names;
  for (size_t index : core::ClosestMatches(key, keys, models_.size()))
    names.push_back(models_[index].name);
  return names;
}

core::Result<ModelZoo> LoadBuiltInModelZoo() {
  return ModelZoo::Parse({"data/models.yaml", BuiltInModelsYaml()});
}

}  // namespace suanli::advisor
