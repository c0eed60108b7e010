// Reading a Hugging Face config.json into a ModelSpec, for models the zoo does not know.
//
// Families by `model_type`: llama, mistral, mixtral, qwen2 (LLaMA-style: SwiGLU, RMSNorm, grouped
// KV heads), gpt2 and gptj (GPT-style: GELU MLP of 4 x hidden unless n_inner says otherwise) and
// bert (an encoder). Parameters are counted from the shapes (CountTransformerParams), since
// config.json does not state them.
#pragma once

#include <string_view>

#include "advisor/model.h"
#include "core/status.h"

namespace suanli::advisor {

// `source_name` (a file path or a repo id) names the config in errors and becomes the model's name
// and source when the config has no `_name_or_path`. INVALID_ARGUMENT, in one line starting with
// "<source>: ", for text that is not JSON or not an object, a missing field, a field that is not a
// positive integer (or a bool, or text, where that is expected), an unsupported model_type (the
// message lists the supported ones), and shapes that disagree (heads not dividing hidden, KV heads
// not dividing heads, more experts per token than experts).
core::Result<ModelSpec> ModelFromHfConfig(std::string_view json_text, std::string_view source_name);

}  // namespace suanli::advisor
