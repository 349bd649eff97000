#pragma once
// A small GPT, in the shape of nanoGPT's model.py. The norm placement is read in
// Block::forward, where each placement is two lines, and in the placement table
// (final_norm).
#include <torch/torch.h>

#include "config.h"

namespace normlab {

// What a block measures of its own forward pass when a LayerRecorder arms it. Scalars,
// computed from detached tensors: the step's graph is the same with or without it.
struct BlockProbe {
  torch::Tensor norm_input_rms[2];  // RMS of the input of norm1 and norm2
  torch::Tensor attention_entropy;  // mean over heads and positions, 0 (one key) to 1 (uniform)
};

// Mean entropy of causal attention probabilities softmax(q kᵀ/√d), each query's divided
// by the log of its number of visible keys; the first position (one key) is left out.
torch::Tensor mean_normalised_attention_entropy(const torch::Tensor& q, const torch::Tensor& k);

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear qkv{nullptr}, proj{nullptr};
  int heads;
  torch::Tensor* entropy_out = nullptr;  // set while recording: the fused kernel keeps no probabilities
};
TORCH_MODULE(CausalSelfAttention);

struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  torch::nn::Linear up{nullptr}, down{nullptr};
};
TORCH_MODULE(Mlp);

// Root-mean-square norm over the last dimension: x / rms(x) times a learnt gain.
struct RmsNormImpl : torch::nn::Module {
  explicit RmsNormImpl(std::int64_t width);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;
};
TORCH_MODULE(RmsNorm);

// The norm the config's norm type names, over d_model.
torch::nn::AnyModule make_norm(const ModelConfig& config);

struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const ModelConfig& config);
  torch::Tensor forward(torch::Tensor x);
  // Arms (or, with nullptr, disarms) this block's measurements.
  void set_probe(BlockProbe* probe);

  torch::nn::AnyModule norm1, norm2;
  CausalSelfAttention attention{nullptr};
  Mlp mlp{nullptr};
  NormPlacement placement;

 private:
  torch::Tensor normalise(int which, const torch::Tensor& input);  // norm1 (0) or norm2 (1)
  BlockProbe* probe_ = nullptr;
};
TORCH_MODULE(Block);

struct GptImpl : torch::nn::Module {
  explicit GptImpl(const ModelConfig& config);
  // (batch, time) token ids -> (batch, time, vocab) logits.
  torch::Tensor forward(const torch::Tensor& ids);
  // Mean cross-entropy of the next-token predictions, nats.
  torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets);

  std::int64_t parameter_count() const;

  ModelConfig config;
  torch::nn::Embedding token_embedding{nullptr}, position_embedding{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::AnyModule final_norm;  // when the placement's table row asks for one
};
TORCH_MODULE(Gpt);

}  // namespace normlab
