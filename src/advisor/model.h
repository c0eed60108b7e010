// ModelSpec: what the advisor needs to know about a neural network to predict its memory and speed.
//
// Transformers (LLMs, BERT, ViT, Whisper) are described by their shapes, from which parameters,
// FLOPs, KV cache and activations follow. Networks whose cost is not a function of a few shapes
// (CNNs, diffusion UNets) carry their measured forward FLOPs per sample instead. Values are plain
// data; the zoo owns them.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace suanli::advisor {

enum class ModelKind {
  kDecoderLm,       // GPT-style causal LM: LLaMA, Mistral, Qwen, GPT-2, GPT-J, Mixtral
  kEncoder,         // bidirectional encoder: BERT
  kEncoderDecoder,  // Whisper: an audio encoder and a text decoder
  kVision,          // image classifier: ResNet (CNN), ViT
  kDiffusion,       // latent diffusion: a UNet run once per denoising step, then a VAE decoder
};

struct ModelSpec {
  std::string name;                  // zoo name, e.g. "llama-2-7b"
  std::vector<std::string> aliases;  // e.g. "meta-llama/Llama-2-7b-hf", "Llama 2 7B"
  ModelKind kind = ModelKind::kDecoderLm;
  double params = 0;  // all parameters (for MoE: all experts)
  double active_params =
      0;  // used per token (MoE: shared + top-k experts); = params for dense models

  // Transformer shapes; zero where they do not apply (CNNs).
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;        // < heads with grouped-query attention
  int head_dim = 0;        // usually hidden / heads
  int ffn = 0;             // MLP inner size (per expert for MoE)
  bool gated_mlp = false;  // SwiGLU/GeGLU: three FFN matrices instead of two
  int vocab = 0;
  bool tied_embeddings = false;  // the LM head reuses the input embedding (GPT-2, Llama 3.2 3B)
  int context = 0;               // longest sequence the model was trained for, tokens
  int experts = 0;               // MoE: experts per layer; 0 for dense
  int experts_per_token = 0;

  // Vision and diffusion models: forward FLOPs for one sample at `resolution` (one UNet step for
  // diffusion, for one latent, without classifier-free guidance).
  double forward_flops = 0;
  int resolution = 0;           // pixels on a side, e.g. 224 or 512
  double vae_decode_flops = 0;  // diffusion: decoding one image at `resolution`
  // Diffusion: guidance distilled into the weights (FLUX.1 dev and schnell), so a step runs the
  // network on one latent instead of classifier-free guidance's two.
  bool guidance_distilled = false;
  double activation_bytes_per_sample = 0;  // vision training: 16-bit activations kept for backward

  std::string source;  // where the numbers come from (config.json URL, paper)
  std::string notes;
};

// Parameters implied by the transformer shapes: embeddings, per-layer attention and MLP (every
// expert, plus the router), norms, and an output projection unless tied_embeddings. Models with
// gated_mlp are LLaMA-like (RMSNorm, rotary positions, no biases); the others GPT-2/BERT-like
// (LayerNorm, biases, learned positions over `context`). An encoder_decoder has an encoder and a
// decoder of `layers` layers each, the decoder with cross-attention (Whisper). Encoders add a
// pooler (BERT). 0 for a model without shapes (CNNs, UNets).
double CountTransformerParams(const ModelSpec& model);

// Parameters one token passes through: CountTransformerParams() less the experts a
// mixture-of-experts layer does not route it to; the same as CountTransformerParams() for dense
// models.
double CountActiveParams(const ModelSpec& model);

// Language models described by their transformer shapes (decoders, encoders, Whisper), as opposed
// to vision and diffusion models described by their FLOPs.
inline bool IsTransformer(ModelKind kind) {
  return kind == ModelKind::kDecoderLm || kind == ModelKind::kEncoder ||
         kind == ModelKind::kEncoderDecoder;
}

}  // namespace suanli::advisor
