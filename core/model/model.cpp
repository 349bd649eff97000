#include "model.h"

#include <cmath>
#include <optional>

#include "causal_attention.h"

namespace normlab {
namespace F = torch::nn::functional;

CausalSelfAttentionImpl::CausalSelfAttentionImpl(const ModelConfig& config) : heads(config.heads) {
  qkv = register_module("qkv", Linear(config.d_model, 3 * config.d_model));
  proj = register_module("proj", Linear(config.d_model, config.d_model));
  if (config.qk_norm == Switch::On) {  // gains start at 1 and draw nothing: the other weights stay as they were
    q_norm = torch::nn::AnyModule(RmsNorm(config.d_model / config.heads));
    register_module("q_norm", q_norm.ptr());
    k_norm = torch::nn::AnyModule(RmsNorm(config.d_model / config.heads));
    register_module("k_norm", k_norm.ptr());
  }
}

torch::Tensor CausalSelfAttentionImpl::forward(const torch::Tensor& x) {
  const auto batch = x.size(0), time = x.size(1), width = x.size(2);
  const auto packed = qkv(x);  // (B, T, 3C): each position's q, k and v, heads side by side
  // (B, T, 3C) -> three (B, heads, T, C/heads) views
  const auto split = [&](const torch::Tensor& t) {
    // unbind, not three selects: backward then writes one gradient, not three zero-filled ones
    return t.view({batch, time, 3, heads, width / heads}).permute({2, 0, 3, 1, 4}).unbind(0);
  };
  if (q_norm.is_empty() && !cache) {
    if (auto y = fused_causal_attention(packed, heads)) {
      if (entropy_out) {  // the probe reads what the kernel keeps to itself
        const auto detached = split(packed.detach());
        *entropy_out = mean_normalised_attention_entropy(detached[0], detached[1]);
      }
      return proj(*y);
    }
  }
  const auto qkv_heads = split(packed);
  auto q = qkv_heads[0], k = qkv_heads[1];
  const auto& v = qkv_heads[2];
  if (!q_norm.is_empty()) {
    q = q_norm.forward(q);
    k = k_norm.forward(k);
  }
  if (entropy_out) *entropy_out = mean_normalised_attention_entropy(q, k);
  if (cache) {
    const std::int64_t first = cache_position;
    if (!cache->k.defined() || cache->k.scalar_type() != k.scalar_type()) {
      // Zeros, not garbage: a step (cache_step) multiplies the unwritten positions' values
      // by their zero weights, and 0 · NaN would be NaN.
      const auto shape = {batch, std::int64_t(heads), cache->capacity, width / heads};
      cache->k = torch::zeros(shape, k.options());
      cache->v = torch::zeros(shape, v.options());
    }
    if (cache_step.defined()) {
      cache->k.index_copy_(2, cache_step, k);
      cache->v.index_copy_(2, cache_step, v);
      // The query sees every key up to its position, read on the device: (1, 1, 1, context).
      const auto visible = torch::arange(cache->capacity, cache_step.options()).le(cache_step).view({1, 1, 1, -1});
      auto y = at::scaled_dot_product_attention(q, cache->k, cache->v, visible, 0.0, /*is_causal=*/false);
      return proj(y.transpose(1, 2).reshape({batch, time, width}));
    }
    cache->k.narrow(2, first, time).copy_(k);
    cache->v.narrow(2, first, time).copy_(v);
    cache->length = first + time;
    if (first > 0) {
      // After cached positions: each query sees them all and the new ones up to its own.
      const auto keys = cache->k.narrow(2, 0, first + time), values = cache->v.narrow(2, 0, first + time);
      std::optional<torch::Tensor> mask;  // one position sees every key: no mask
      if (time > 1) {
        const auto query = torch::arange(first, first + time, x.options().dtype(torch::kInt64)).unsqueeze(1);
        mask = torch::arange(first + time, x.options().dtype(torch::kInt64)).unsqueeze(0) <= query;
      }
      auto y = at::scaled_dot_product_attention(q, keys, values, mask, 0.0, /*is_causal=*/false);
      return proj(y.transpose(1, 2).reshape({batch, time, width}));
    }
  }
  auto y = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  return proj(y.transpose(1, 2).reshape({batch, time, width}));
}

torch::Tensor mean_normalised_attention_entropy(const torch::Tensor& q, const torch::Tensor& k) {
  torch::NoGradGuard no_grad;
  const auto time = q.size(-2);
  auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(q.size(-1)));
  const auto future = torch::ones({time, time}, q.options().dtype(torch::kBool)).triu(1);
  const auto log_p = torch::log_softmax(scores.masked_fill(future, -INFINITY), -1);
  // Hidden keys have p = 0 and log p = -inf; their term is 0.
  const auto entropy = -(log_p.exp() * log_p.masked_fill(future, 0)).sum(-1);  // (batch, heads, time)
  const auto log_visible = torch::arange(1, time + 1, q.options()).log();
  return (entropy.narrow(-1, 1, time - 1) / log_visible.narrow(0, 1, time - 1)).mean();
}

MlpImpl::MlpImpl(const ModelConfig& config) {
  up = register_module("up", Linear(config.d_model, 4 * config.d_model));
  down = register_module("down", Linear(4 * config.d_model, config.d_model));
}

torch::Tensor MlpImpl::forward(const torch::Tensor& x) { return down(F::gelu(up(x))); }

RmsNormImpl::RmsNormImpl(std::int64_t width) { weight = register_parameter("weight", torch::ones({width})); }

torch::Tensor RmsNormImpl::forward(const torch::Tensor& x) {
  return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + 1e-5) * weight;  // LayerNorm's epsilon
}

DytImpl::DytImpl(std::int64_t width, double alpha0) {
  alpha = register_parameter("alpha", torch::full({}, alpha0));
  weight = register_parameter("weight", torch::ones({width}));
  bias = register_parameter("bias", torch::zeros({width}));
}

// Element-wise only, no reduction: three kernels, the last fusing gain and bias.
torch::Tensor DytImpl::forward(const torch::Tensor& x) { return torch::addcmul(bias, weight, torch::tanh(alpha * x)); }

torch::nn::AnyModule make_norm(const ModelConfig& config) {
  switch (config.norm_type) {
    case NormType::LayerNorm:
      return torch::nn::AnyModule(torch::nn::LayerNorm(torch::nn::LayerNormOptions({config.d_model})));
    case NormType::RmsNorm: return torch::nn::AnyModule(RmsNorm(config.d_model));
    case NormType::Dyt: return torch::nn::AnyModule(Dyt(config.d_model, config.dyt_alpha0));
  }
  throw std::logic_error("unknown norm type");
}

double deepnorm_alpha(int layers) { return std::pow(2.0 * layers, 0.25); }
double deepnorm_beta(int layers) { return std::pow(8.0 * layers, -0.25); }

BlockImpl::BlockImpl(const ModelConfig& config, int index)
    : placement(config.norm),
      mixed_as(index < config.layers / 4 ? NormPlacement::Post : NormPlacement::Pre),
      residual_scale(config.norm == NormPlacement::DeepNorm ? deepnorm_alpha(config.layers) : 1.0),
      depth_scale(config.norm == NormPlacement::LayerNormScaling ? 1.0 / std::sqrt(index + 1.0) : 1.0) {
  // Registered in this order so pre- and post-norm models draw their initial weights
  // exactly as before the output norms existed.
  const bool norms = info(config.norm).norms;
  if (norms) {
    norm1 = make_norm(config);
    register_module("norm1", norm1.ptr());
  }
  attention = register_module("attention", CausalSelfAttention(config));
  if (norms) {
    norm2 = make_norm(config);
    register_module("norm2", norm2.ptr());
  }
  mlp = register_module("mlp", Mlp(config));
  if (config.norm == NormPlacement::ReZero) rezero_alpha = register_parameter("rezero_alpha", torch::zeros({}));
  if (config.norm == NormPlacement::Peri) {
    out_norm1 = make_norm(config);
    register_module("out_norm1", out_norm1.ptr());
    out_norm2 = make_norm(config);
    register_module("out_norm2", out_norm2.ptr());
  }
}

template <typename SubLayer>
torch::Tensor BlockImpl::update(NormPlacement rule, const torch::Tensor& x, SubLayer& f, int which,
                                torch::nn::AnyModule& out_norm) {
  switch (rule) {                                                 // no default: a new placement must say its line here
    case NormPlacement::Pre: return x + f(normalise(which, x));   // x + f(Norm x)
    case NormPlacement::Post: return normalise(which, x + f(x));  // Norm(x + f(x))
    case NormPlacement::Peri: return x + out_norm.forward(f(normalise(which, x)));          // x + Norm(f(Norm x))
    case NormPlacement::DeepNorm: return normalise(which, residual_scale * x + f(x));       // Norm(alpha x + f(x))
    case NormPlacement::Mix: return update(mixed_as, x, f, which, out_norm);                // post early, pre after
    case NormPlacement::LayerNormScaling: return x + f(normalise(which, x) * depth_scale);  // x + f(Norm(x) / √ℓ)
    case NormPlacement::ReZero: return x + rezero_alpha * f(measure(which, x));             // x + α f(x)
  }
  throw std::logic_error("unknown norm placement");
}

torch::Tensor BlockImpl::forward(torch::Tensor x) {
  x = update(placement, x, attention, 0, out_norm1);
  return update(placement, x, mlp, 1, out_norm2);
}

torch::Tensor BlockImpl::normalise(int which, const torch::Tensor& input) {
  return (which == 0 ? norm1 : norm2).forward(measure(which, input));
}

const torch::Tensor& BlockImpl::measure(int which, const torch::Tensor& input) {
  if (probe_) {
    torch::NoGradGuard no_grad;
    probe_->norm_input_rms[which] = input.detach().square().mean().sqrt();
  }
  return input;
}

void BlockImpl::set_probe(BlockProbe* probe) {
  probe_ = probe;
  attention->entropy_out = probe ? &probe->attention_entropy : nullptr;
}

GptImpl::GptImpl(const ModelConfig& model_config) : config(model_config) {
  token_embedding = register_module("token_embedding", torch::nn::Embedding(config.vocab, config.d_model));
  position_embedding = register_module("position_embedding", torch::nn::Embedding(config.context, config.d_model));
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int i = 0; i < config.layers; ++i) blocks->push_back(Block(config, i));
  if (info(config.norm).final_norm) {
    final_norm = make_norm(config);
    register_module("final_norm", final_norm.ptr());
  }
  if (info(config.norm).norms && config.norm_type == NormType::Dyt)
    embedding_scale = register_parameter("embedding_scale", torch::full({}, std::sqrt(double(config.d_model))));

  torch::NoGradGuard no_grad;
  for (auto& module : modules(/*include_self=*/false)) {
    if (auto* linear = module->as<torch::nn::Linear>()) {
      linear->weight.normal_(0.0, 0.02);
      linear->bias.zero_();
    } else if (auto* embedding = module->as<torch::nn::Embedding>()) {
      embedding->weight.normal_(0.0, 0.02);
    }
  }
  if (config.norm == NormPlacement::DeepNorm) init_deepnorm();
  if (config.scaled_residual_init == Switch::On) init_scaled_residual();
}

// GPT-2's residual scaling: the same draws as without it, scaled, so the switch changes
// these two matrices and nothing else (std 0.02 becomes 0.02/√(2N)).
void GptImpl::init_scaled_residual() {
  const double scale = 1.0 / std::sqrt(2.0 * config.layers);
  for (auto& module : *blocks) {
    auto& block = *module->as<BlockImpl>();
    block.attention->proj->weight.mul_(scale);
    block.mlp->down->weight.mul_(scale);
  }
}

void GptImpl::init_deepnorm() {
  const double beta = deepnorm_beta(config.layers);
  const auto d = config.d_model;
  auto xavier = [](torch::Tensor weight, double gain) { torch::nn::init::xavier_normal_(weight, gain); };
  for (auto& module : *blocks) {
    auto& block = *module->as<BlockImpl>();
    // qkv holds three d x d matrices: each starts as the separate projection it stands for.
    const auto qkv = block.attention->qkv->weight;
    xavier(qkv.narrow(0, 0, d), 1.0);       // query
    xavier(qkv.narrow(0, d, d), 1.0);       // key
    xavier(qkv.narrow(0, 2 * d, d), beta);  // value
    xavier(block.attention->proj->weight, beta);
    xavier(block.mlp->up->weight, beta);
    xavier(block.mlp->down->weight, beta);
  }
}

torch::Tensor GptImpl::forward(const torch::Tensor& ids) { return logits(ids, positions(ids, 0)); }

torch::Tensor GptImpl::forward_at(const torch::Tensor& ids, std::vector<AttentionCache>& cache,
                                  std::int64_t first_position) {
  const auto batch = ids.size(0), time = ids.size(1);
  cache.resize(blocks->size());
  if (first_position < 0 || first_position + time > config.context)
    throw std::invalid_argument("decoding past the context");
  if (first_position > 0 && (first_position > cache.front().length || cache.front().k.size(0) != batch))
    throw std::invalid_argument("a gap after the cached positions");
  for (AttentionCache& c : cache) {
    // Buffers for another batch or device are made again, by the attention's forward.
    if (c.k.defined() && (c.k.size(0) != batch || c.k.device() != ids.device())) c = {};
    c.capacity = config.context;
    if (first_position == 0) c.length = 0;
  }
  const auto armed = arm(cache, first_position, {});
  return logits(ids, positions(ids, first_position));
}

torch::Tensor GptImpl::forward_step(const torch::Tensor& ids, std::vector<AttentionCache>& cache,
                                    const torch::Tensor& position) {
  if (ids.size(1) != 1 || position.numel() != 1 || cache.size() != blocks->size() || !cache.front().k.defined() ||
      cache.front().k.size(0) != ids.size(0) || cache.front().k.device() != ids.device())
    throw std::invalid_argument("a step of one position after a cache that forward_at filled for its batch");
  const auto step = position.reshape({1});
  const auto armed = arm(cache, 0, step);
  return logits(ids, step);
}

std::shared_ptr<void> GptImpl::arm(std::vector<AttentionCache>& cache, std::int64_t first_position,
                                   const torch::Tensor& step) {
  for (std::size_t i = 0; i < blocks->size(); ++i) {
    auto& attention = *blocks[i]->as<BlockImpl>()->attention;
    attention.cache = &cache[i];
    attention.cache_position = first_position;
    attention.cache_step = step;
  }
  // The blocks read the cache for this call only, whatever it throws.
  return std::shared_ptr<void>(nullptr, [this](void*) {
    for (auto& block : *blocks) {
      auto& attention = *block->as<BlockImpl>()->attention;
      attention.cache = nullptr;
      attention.cache_step = torch::Tensor();
    }
  });
}

torch::Tensor GptImpl::positions(const torch::Tensor& ids, std::int64_t first_position) const {
  return torch::arange(first_position, first_position + ids.size(1), ids.options());
}

torch::Tensor GptImpl::logits(const torch::Tensor& ids, const torch::Tensor& positions) {
  return normlab::linear(hidden(ids, positions), token_embedding->weight);  // output tied to the input embedding
}

torch::Tensor GptImpl::hidden(const torch::Tensor& ids, const torch::Tensor& positions) {
  auto x = token_embedding(ids) + position_embedding(positions);
  if (embedding_scale.defined()) x = x * embedding_scale;
  for (auto& block : *blocks) x = block->as<BlockImpl>()->forward(x);
  if (!final_norm.is_empty()) x = final_norm.forward(x);
  return x;
}

torch::Tensor GptImpl::loss(const torch::Tensor& ids, const torch::Tensor& targets,
                            const std::function<void(const torch::Tensor& logits)>& each_chunk) {
  return output_loss(hidden(ids, positions(ids, 0)), token_embedding->weight, targets, each_chunk);
}

torch::Tensor next_token_loss(const torch::Tensor& logits, const torch::Tensor& targets) {
  return F::cross_entropy(logits.view({-1, logits.size(-1)}), targets.view({-1}));
}

std::int64_t GptImpl::parameter_count() const {
  std::int64_t total = 0;
  for (const auto& p : parameters()) total += p.numel();
  return total;
}

}  // namespace normlab
