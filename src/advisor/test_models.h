// Model shapes for the advisor's tests, from the models' published config.json files, so the tests
// do not depend on the zoo's data file.
#pragma once

#include "advisor/model.h"

namespace suanli::advisor::testing {

inline ModelSpec Llama2_7b() {
  ModelSpec m;
  m.name = "llama-2-7b";
  m.kind = ModelKind::kDecoderLm;
  m.params = m.active_params = 6.74e9;
  m.layers = 32;
  m.hidden = 4096;
  m.heads = 32;
  m.kv_heads = 32;
  m.ffn = 11008;
  m.gated_mlp = true;
  m.vocab = 32000;
  m.context = 4096;
  return m;
}

inline ModelSpec Llama3_8b() {
  ModelSpec m = Llama2_7b();
  m.name = "llama-3-8b";
  m.params = m.active_params = 8.03e9;
  m.kv_heads = 8;
  m.ffn = 14336;
  m.vocab = 128256;
  m.context = 8192;
  return m;
}

inline ModelSpec Llama2_70b() {
  ModelSpec m = Llama2_7b();
  m.name = "llama-2-70b";
  m.params = m.active_params = 68.98e9;
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn = 28672;
  return m;
}

inline ModelSpec Mixtral8x7b() {
  ModelSpec m = Llama3_8b();
  m.name = "mixtral-8x7b";
  m.params = 46.7e9;
  m.active_params = 12.9e9;
  m.vocab = 32000;
  m.context = 32768;
  m.experts = 8;
  m.experts_per_token = 2;
  return m;
}

inline ModelSpec ResNet50() {
  ModelSpec m;
  m.name = "resnet-50";
  m.kind = ModelKind::kVision;
  m.params = m.active_params = 25.6e6;
  m.forward_flops = 8.2e9;
  m.resolution = 224;
  m.activation_bytes_per_sample = 1.0e8;
  return m;
}

inline ModelSpec Sd15() {
  ModelSpec m;
  m.name = "sd-1.5";
  m.kind = ModelKind::kDiffusion;
  m.params = m.active_params = 1.07e9;
  m.forward_flops = 0.68e12;
  m.resolution = 512;
  m.vae_decode_flops = 1.24e12;
  return m;
}

}  // namespace suanli::advisor::testing
