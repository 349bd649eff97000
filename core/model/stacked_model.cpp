#include "stacked_model.h"

#include <cmath>
#include <stdexcept>

#include "causal_attention.h"

namespace normlab {

namespace {

// The fields that shape a model's tensors and its forward pass, each with its name.
std::string shape_difference(const ModelConfig& a, const ModelConfig& b) {
  if (a.layers != b.layers) return "layers";
  if (a.d_model != b.d_model) return "d_model";
  if (a.heads != b.heads) return "heads";
  if (a.context != b.context) return "context";
  if (a.vocab != b.vocab) return "the vocabulary";
  if (a.norm != b.norm) return "the norm placement";
  if (a.norm_type != b.norm_type) return "the norm type";
  if (a.norm_type == NormType::Dyt && a.dyt_alpha0 != b.dyt_alpha0) return "DyT's alpha0";
  if (a.qk_norm != b.qk_norm) return "QK-norm";
  if (a.scaled_residual_init != b.scaled_residual_init) return "the scaled residual init";
  return {};
}

}  // namespace

std::string stack_refusal(const std::vector<ModelConfig>& configs) {
  if (configs.empty()) return "there are no runs to stack";
  for (std::size_t r = 1; r < configs.size(); ++r) {
    const std::string field = shape_difference(configs[0], configs[r]);
    if (!field.empty()) return "run " + std::to_string(r + 1) + " differs from run 1 in " + field;
  }
  return {};
}

StackedModel::StackedModel(const std::vector<Gpt>& models)
    : config(models.empty() ? ModelConfig{} : models.front()->config), runs_(int(models.size())) {
  std::vector<ModelConfig> configs;
  for (const auto& model : models) configs.push_back(model->config);
  if (const std::string refusal = stack_refusal(configs); !refusal.empty())
    throw std::invalid_argument("cannot stack these models: " + refusal);
  torch::NoGradGuard no_grad;
  const auto names = models.front()->named_parameters().keys();
  for (const auto& name : names) {
    std::vector<torch::Tensor> slices;
    for (const auto& model : models) slices.push_back(model->named_parameters()[name]);
    index_[name] = parameters_.size();
    parameters_.push_back(torch::stack(slices).requires_grad_(true));
  }
  // Each model's parameter becomes its run's slice of the stack: same storage, so the
  // model and the stack always hold the same weights. The tensor objects stay, so whatever
  // holds them (the model's modules, an optimiser) holds the slice.
  for (int r = 0; r < runs_; ++r) {
    for (auto& item : models[r]->named_parameters()) {
      item.value().set_data(parameters_[index_.at(item.key())].detach().select(0, r));
    }
  }
}

const torch::Tensor& StackedModel::parameter(const std::string& name) const {
  const auto found = index_.find(name);
  if (found == index_.end()) throw std::logic_error("the stacked model has no parameter " + name);
  return parameters_[found->second];
}

torch::Tensor StackedModel::per_run(const torch::Tensor& parameter, const torch::Tensor& x) const {
  std::vector<std::int64_t> shape(std::size_t(x.dim()), 1);
  shape[0] = runs_;
  for (std::int64_t i = 1; i < parameter.dim(); ++i)
    shape[std::size_t(x.dim() - parameter.dim() + i)] = parameter.size(i);
  return parameter.view(shape);
}

// x (R, ..., in) -> (R, ..., out): x Wᵀ + b, run by run in one batched product.
torch::Tensor StackedModel::linear(const std::string& name, const torch::Tensor& x) const {
  const auto& weight = parameter(name + ".weight");  // (R, out, in)
  const auto& bias = parameter(name + ".bias");      // (R, out)
  auto sizes = x.sizes().vec();
  sizes.back() = weight.size(1);
  const auto flat = x.reshape({runs_, -1, x.size(-1)});
  return torch::baddbmm(bias.unsqueeze(1), flat, weight.transpose(1, 2)).view(sizes);
}

// The norm model.cpp's make_norm builds for the config's norm type, with each run's gains.
torch::Tensor StackedModel::norm(const std::string& name, const torch::Tensor& x) const {
  switch (config.norm_type) {
    case NormType::LayerNorm: {
      const auto normalised = torch::layer_norm(x, {x.size(-1)}, {}, {}, 1e-5);
      return torch::addcmul(per_run(parameter(name + ".bias"), x), normalised, per_run(parameter(name + ".weight"), x));
    }
    case NormType::RmsNorm:
      return x * torch::rsqrt(x.pow(2).mean(-1, /*keepdim=*/true) + 1e-5) * per_run(parameter(name + ".weight"), x);
    case NormType::Dyt:
      return torch::addcmul(per_run(parameter(name + ".bias"), x), per_run(parameter(name + ".weight"), x),
                            torch::tanh(per_run(parameter(name + ".alpha"), x) * x));
  }
  throw std::logic_error("unknown norm type");
}

// x (R, batch, time, C): the runs' batches side by side as R x batch sequences.
torch::Tensor StackedModel::attention(const std::string& block, const torch::Tensor& x) const {
  const auto batch = x.size(1), time = x.size(2), width = x.size(3);
  const auto heads = std::int64_t(config.heads), head_width = width / heads;
  const auto packed = linear(block + ".attention.qkv", x);
  if (config.qk_norm != Switch::On) {
    if (auto y = fused_causal_attention(packed.view({runs_ * batch, time, 3 * width}), heads))
      return linear(block + ".attention.proj", y->view({runs_, batch, time, width}));
  }
  const auto qkv = packed.view({runs_ * batch, time, 3, heads, head_width}).permute({2, 0, 3, 1, 4}).unbind(0);
  auto q = qkv[0], k = qkv[1];
  const auto& v = qkv[2];
  if (config.qk_norm == Switch::On) {  // per head: the gains broadcast over (R, batch, heads, time, head_width)
    const auto rms = [&](const torch::Tensor& t, const std::string& name) {
      const auto runs_first = t.view({runs_, batch, heads, time, head_width});
      return (runs_first * torch::rsqrt(runs_first.pow(2).mean(-1, /*keepdim=*/true) + 1e-5) *
              per_run(parameter(name), runs_first))
          .view(t.sizes());
    };
    q = rms(q, block + ".attention.q_norm.weight");
    k = rms(k, block + ".attention.k_norm.weight");
  }
  auto y = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true);
  return linear(block + ".attention.proj", y.transpose(1, 2).reshape({runs_, batch, time, width}));
}

torch::Tensor StackedModel::mlp(const std::string& block, const torch::Tensor& x) const {
  return linear(block + ".mlp.down", torch::gelu(linear(block + ".mlp.up", x)));
}

// BlockImpl::update's formulas, line for line.
torch::Tensor StackedModel::block(int index, torch::Tensor x) const {
  const std::string name = "blocks." + std::to_string(index);
  const double residual_scale = config.norm == NormPlacement::DeepNorm ? deepnorm_alpha(config.layers) : 1.0;
  const double depth_scale = config.norm == NormPlacement::LayerNormScaling ? 1.0 / std::sqrt(index + 1.0) : 1.0;
  const NormPlacement mixed_as = index < config.layers / 4 ? NormPlacement::Post : NormPlacement::Pre;
  const auto update = [&](NormPlacement rule, const torch::Tensor& x, int which) {
    const std::string suffix = std::to_string(which + 1);
    const auto f = [&](const torch::Tensor& input) { return which == 0 ? attention(name, input) : mlp(name, input); };
    const auto normalise = [&](const torch::Tensor& input) { return norm(name + ".norm" + suffix, input); };
    for (;;) {
      switch (rule) {
        case NormPlacement::Pre: return x + f(normalise(x));
        case NormPlacement::Post: return normalise(x + f(x));
        case NormPlacement::Peri: return x + norm(name + ".out_norm" + suffix, f(normalise(x)));
        case NormPlacement::DeepNorm: return normalise(residual_scale * x + f(x));
        case NormPlacement::Mix: rule = mixed_as; continue;
        case NormPlacement::LayerNormScaling: return x + f(normalise(x) * depth_scale);
        case NormPlacement::ReZero: return x + per_run(parameter(name + ".rezero_alpha"), x) * f(x);
      }
      throw std::logic_error("unknown norm placement");
    }
  };
  x = update(config.norm, x, 0);
  return update(config.norm, x, 1);
}

torch::Tensor StackedModel::loss(const torch::Tensor& ids, const torch::Tensor& targets) {
  if (ids.dim() != 3 || ids.size(0) != runs_) throw std::invalid_argument("stacked ids are (runs, batch, time)");
  const auto time = ids.size(2);
  const auto& tokens = parameter("token_embedding.weight");  // (R, vocab, C)
  const auto vocab = tokens.size(1), width = tokens.size(2);
  const auto offsets = torch::arange(runs_, ids.options()).mul_(vocab).view({runs_, 1, 1});
  auto x = torch::embedding(tokens.reshape({runs_ * vocab, width}), ids + offsets) +
           parameter("position_embedding.weight").narrow(1, 0, time).unsqueeze(1);
  if (index_.count("embedding_scale")) x = x * per_run(parameter("embedding_scale"), x);
  for (int i = 0; i < config.layers; ++i) x = block(i, x);
  if (info(config.norm).final_norm) x = norm("final_norm", x);
  // The output projection tied to each run's token embedding; each run's mean over its positions.
  const auto logits = torch::bmm(x.reshape({runs_, -1, width}), tokens.transpose(1, 2));
  const auto log_probs = torch::log_softmax(logits, -1);
  return -log_probs.gather(-1, targets.reshape({runs_, -1, 1})).squeeze(-1).mean(1);
}

}  // namespace normlab
