#pragma once
// A small GPT, in the shape of nanoGPT's model.py. The norm placement is read in
// BlockImpl::update, where each placement is one line, in the placement table
// (final_norm, norms), and for DeepNorm in its residual scale and initialisation. The
// norm type is read in make_norm; the model switches (QK-norm, scaled residual init) in
// the attention and at initialisation.
#include <torch/torch.h>

#include "core/runs/config.h"

#include "linear.h"
#include "output_loss.h"

namespace normlab {

// What a block measures of its own forward pass when a LayerRecorder arms it. Scalars,
// computed from detached tensors: the step's graph is the same with or without it.
struct BlockProbe {
  torch::Tensor norm_input_rms[2];  // RMS of the input of norm1 and norm2 (ReZero, with none: of each sub-layer)
  torch::Tensor attention_entropy;  // mean over heads and positions, 0 (one key) to 1 (uniform)
};

// Mean entropy of causal attention probabilities softmax(q kᵀ/√d), each query's divided
// by the log of its number of visible keys; the first position (one key) is left out.
torch::Tensor mean_normalised_attention_entropy(const torch::Tensor& q, const torch::Tensor& k);

// One block's keys and values of the positions decoded so far: (batch, heads, context,
// C/heads) buffers, allocated once for the whole context, of which the first `length`
// positions hold values. A forward at position p writes its positions into [p, p + n)
// in place, so decoding a token costs no copy of the positions before it.
struct AttentionCache {
  torch::Tensor k, v;         // undefined until the first forward, which knows their dtype
  std::int64_t length = 0;    // positions written
  std::int64_t capacity = 0;  // the context
};

struct CausalSelfAttentionImpl : torch::nn::Module {
  explicit CausalSelfAttentionImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  Linear qkv{nullptr}, proj{nullptr};
  torch::nn::AnyModule q_norm, k_norm;  // QK-norm: RMSNorm over each head's dimension; empty when off
  int heads;
  torch::Tensor* entropy_out = nullptr;  // set while recording: the fused kernel keeps no probabilities
  AttentionCache* cache = nullptr;       // set while decoding: x's positions start at cache_position
  std::int64_t cache_position = 0;
  // Set instead of cache_position for a one-position step (GptImpl::forward_step): the
  // position as a (1) int64 tensor on x's device, which the host never reads.
  torch::Tensor cache_step;
};
TORCH_MODULE(CausalSelfAttention);

struct MlpImpl : torch::nn::Module {
  explicit MlpImpl(const ModelConfig& config);
  torch::Tensor forward(const torch::Tensor& x);

  Linear up{nullptr}, down{nullptr};
};
TORCH_MODULE(Mlp);

// Root-mean-square norm over the last dimension: x / rms(x) times a learnt gain.
struct RmsNormImpl : torch::nn::Module {
  explicit RmsNormImpl(std::int64_t width);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor weight;
};
TORCH_MODULE(RmsNorm);

// Dynamic Tanh (Zhu et al. 2025), in a norm's place: γ · tanh(α x) + β, α one learnt
// scalar starting at alpha0, γ and β per channel starting at 1 and 0.
struct DytImpl : torch::nn::Module {
  DytImpl(std::int64_t width, double alpha0);
  torch::Tensor forward(const torch::Tensor& x);

  torch::Tensor alpha, weight, bias;
};
TORCH_MODULE(Dyt);

// The norm the config's norm type names, over d_model.
torch::nn::AnyModule make_norm(const ModelConfig& config);

// DeepNet's constants for a decoder of `layers` blocks (Wang et al. 2022): the residual
// is scaled up by alpha = (2N)^(1/4) and the value, output and MLP weights start
// Xavier-normal with gain beta = (8N)^(-1/4). For N = 8: alpha = 2, beta ~ 0.354.
double deepnorm_alpha(int layers);
double deepnorm_beta(int layers);

// Block `index` (0-based) of the model's config.layers.
struct BlockImpl : torch::nn::Module {
  explicit BlockImpl(const ModelConfig& config, int index = 0);
  torch::Tensor forward(torch::Tensor x);
  // Arms (or, with nullptr, disarms) this block's measurements.
  void set_probe(BlockProbe* probe);

  // norm1 and norm2 are each sub-layer's norm (its input's, or the sum's); peri-norm
  // also normalises each sub-layer's output, with out_norm1 and out_norm2. ReZero has none.
  torch::nn::AnyModule norm1, norm2, out_norm1, out_norm2;
  CausalSelfAttention attention{nullptr};
  Mlp mlp{nullptr};
  NormPlacement placement;
  NormPlacement mixed_as;       // mix: post in the first quarter of the blocks, pre after
  double residual_scale = 1.0;  // DeepNorm's alpha; 1 otherwise
  double depth_scale = 1.0;     // LayerNorm Scaling's 1/√ℓ, ℓ = index + 1; 1 otherwise
  torch::Tensor rezero_alpha;   // ReZero's learnt scalar, from 0; undefined otherwise

 private:
  // One sub-layer f's update of the residual stream x: the formulas of kPlacements.
  // `which` names the sub-layer's norm, norm1 (0) or norm2 (1).
  template <typename SubLayer>
  torch::Tensor update(NormPlacement rule, const torch::Tensor& x, SubLayer& f, int which,
                       torch::nn::AnyModule& out_norm);
  torch::Tensor normalise(int which, const torch::Tensor& input);       // norm1 (0) or norm2 (1), measured when armed
  const torch::Tensor& measure(int which, const torch::Tensor& input);  // the RMS of a norm's (or sub-layer's) input
  BlockProbe* probe_ = nullptr;
};
TORCH_MODULE(Block);

struct GptImpl : torch::nn::Module {
  explicit GptImpl(const ModelConfig& config);
  // (batch, time) token ids -> (batch, time, vocab) logits.
  torch::Tensor forward(const torch::Tensor& ids);
  // The same for ids at positions [first_position, first_position + time), which attend to
  // the positions before them held in `cache` (one per block, allocated on first use for
  // the whole context and the batch) and leave their keys and values there: a next token
  // costs one position's forward pass instead of the whole sequence's. first_position 0
  // starts afresh; a gap after the cached positions, or positions past the context, are
  // refused (std::invalid_argument).
  torch::Tensor forward_at(const torch::Tensor& ids, std::vector<AttentionCache>& cache, std::int64_t first_position);
  // One position's logits, (batch, 1, vocab), for (batch, 1) ids at `position`, a (1)
  // int64 tensor on their device that only the device reads, after the positions before
  // it in `cache` (which forward_at filled for this batch; else std::invalid_argument).
  // Its keys and values are written there, and the query attends to the whole context's
  // buffers with the positions after it masked. Nothing the host does depends on the
  // position, so a CUDA graph records the step once and replays it at every position
  // (graphed_decode.h). The cache's `length` is then the caller's to keep.
  torch::Tensor forward_step(const torch::Tensor& ids, std::vector<AttentionCache>& cache,
                             const torch::Tensor& position);
  // Mean cross-entropy of the next-token predictions, nats: the output projection and the
  // loss fused (output_loss.h) unless the thread has turned that off. `each_chunk` sees
  // the logits as they are made, a few hundred positions at a time.
  torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets,
                     const std::function<void(const torch::Tensor& logits)>& each_chunk = {});

  std::int64_t parameter_count() const;

  ModelConfig config;
  torch::nn::Embedding token_embedding{nullptr}, position_embedding{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::AnyModule final_norm;  // when the placement's table row asks for one
  // DyT models only: a learnt scalar on the summed embeddings, from √d (the DyT paper's
  // LLaMA recipe), so the first DyT sees values of order 1 rather than std 0.02.
  torch::Tensor embedding_scale;

 private:
  // For ids at `positions`, (time) int64 on their device.
  torch::Tensor logits(const torch::Tensor& ids, const torch::Tensor& positions);
  // The last block's output, through the final norm where there is one: what the output
  // projection (the token embedding, tied) turns into logits.
  torch::Tensor hidden(const torch::Tensor& ids, const torch::Tensor& positions);
  torch::Tensor positions(const torch::Tensor& ids, std::int64_t first_position) const;
  // Points each block's attention at its cache for one call; the returned guard unpoints them.
  std::shared_ptr<void> arm(std::vector<AttentionCache>& cache, std::int64_t first_position, const torch::Tensor& step);
  void init_deepnorm();
  void init_scaled_residual();
};
TORCH_MODULE(Gpt);

// Mean cross-entropy, nats, of (..., vocab) logits for (...) next tokens: GptImpl::loss's.
torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets);

}  // namespace normlab
