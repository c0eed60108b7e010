#include "advisor/model.h"

#include <algorithm>

namespace suanli::advisor {
namespace {

// The parameter counts of one layer's parts. Doubles throughout: 80 layers of 8192^2 overflow int.
struct LayerParams {
  double attention = 0;   // q, k, v, o and their biases
  double expert_mlp = 0;  // one expert's MLP (the whole MLP of a dense model)
  double router = 0;
  double norms = 0;
  int experts = 1;
};

LayerParams CountLayer(const ModelSpec& model) {
  const double hidden = model.hidden;
  const int head_dim =
      model.head_dim > 0 ? model.head_dim : (model.heads > 0 ? model.hidden / model.heads : 0);
  const double q_width = static_cast<double>(model.heads) * head_dim;
  const double kv_width =
      static_cast<double>(model.kv_heads > 0 ? model.kv_heads : model.heads) * head_dim;
  // LLaMA-style blocks (SwiGLU) carry no biases and RMSNorm (one vector); GPT-2/BERT-style blocks
  // have a bias on every matrix and LayerNorm (weight and bias). Qwen2's q/k/v biases (0.002% of
  // its parameters) are left out.
  const bool biases = !model.gated_mlp;
  const double ffn = model.ffn;

  LayerParams layer;
  layer.attention = 2 * hidden * q_width + 2 * hidden * kv_width;
  if (biases) layer.attention += q_width + 2 * kv_width + hidden;
  layer.expert_mlp = (model.gated_mlp ? 3 : 2) * hidden * ffn;
  if (biases) layer.expert_mlp += ffn + hidden;
  layer.experts = std::max(model.experts, 1);
  if (model.experts > 0) layer.router = hidden * model.experts;
  layer.norms = 2 * (biases ? 2 * hidden : hidden);
  return layer;
}

// Everything but the per-layer weights: embeddings, positions, final norms, head, pooler.
double CountOutsideLayers(const ModelSpec& model) {
  const double hidden = model.hidden;
  const bool learned_positions = !model.gated_mlp;
  const double norm = model.gated_mlp ? hidden : 2 * hidden;
  double total = static_cast<double>(model.vocab) * hidden + norm;
  if (learned_positions) total += static_cast<double>(model.context) * hidden;
  const bool has_output_head =
      model.kind == ModelKind::kDecoderLm || model.kind == ModelKind::kEncoderDecoder;
  if (has_output_head && !model.tied_embeddings) total += static_cast<double>(model.vocab) * hidden;
  if (model.kind == ModelKind::kEncoder) total += hidden * hidden + hidden;  // BERT's pooler
  if (model.kind == ModelKind::kEncoderDecoder) total += norm;  // the encoder's final norm too
  return total;
}

double CountLayers(const ModelSpec& model, int experts_used) {
  const LayerParams layer = CountLayer(model);
  const double block =
      layer.attention + experts_used * layer.expert_mlp + layer.router + layer.norms;
  double total = model.layers * block;
  if (model.kind == ModelKind::kEncoderDecoder) {
    // The encoder mirrors the decoder's shapes; each decoder layer adds cross-attention and a norm.
    const double cross = layer.attention + layer.norms / 2;
    total += model.layers * (block + cross);
  }
  return total;
}

}  // namespace

double CountTransformerParams(const ModelSpec& model) {
  if (model.layers <= 0 || model.hidden <= 0) return 0;
  return CountOutsideLayers(model) + CountLayers(model, std::max(model.experts, 1));
}

double CountActiveParams(const ModelSpec& model) {
  if (model.layers <= 0 || model.hidden <= 0) return 0;
  const int used = model.experts > 0 ? std::min(model.experts_per_token, model.experts) : 1;
  return CountOutsideLayers(model) + CountLayers(model, std::max(used, 1));
}

}  // namespace suanli::advisor
