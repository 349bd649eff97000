#pragma once
// R models of one shape as one: every parameter stacked along a leading run dimension,
// every linear layer a batched matmul (baddbmm) over (R, positions, in) x (R, in, out),
// embeddings gathered and norms applied per run. Each run keeps its own weights, and its
// loss is its model's own (within fp32 rounding): on a GPU one stack fills the device
// where one small model leaves it idle, and its step is one set of kernels for all runs.
#include <string>
#include <torch/torch.h>
#include <unordered_map>
#include <vector>

#include "core/runs/config.h"

#include "model.h"

namespace normlab {

// Why models of these configs cannot stack, in one line; empty when they can (one shape:
// the same layers, width, heads, context, vocabulary, placement, norm type and switches).
std::string stack_refusal(const std::vector<ModelConfig>& configs);

class StackedModel {
 public:
  // Stacks the models' parameters (run r's slice holds model r's values, exactly), then
  // makes each model's parameters views of its slice: whatever reads or writes a model
  // (evaluation, text, a step taken alone, a checkpoint) reads and writes the stack's
  // weights. std::invalid_argument when stack_refusal refuses the models' configs.
  explicit StackedModel(const std::vector<Gpt>& models);

  // (R, batch, time) token ids and next tokens -> (R) mean cross-entropies, nats: each
  // run's loss on its own batch, as its model's loss() gives it.
  torch::Tensor loss(const torch::Tensor& ids, const torch::Tensor& targets);

  int runs() const { return runs_; }
  // The stacked parameters, (R, ...) each, in the models' parameters() order.
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }
  // The stacked parameter a model names `name` ("blocks.0.mlp.up.weight").
  const torch::Tensor& parameter(const std::string& name) const;

  const ModelConfig config;

 private:
  torch::Tensor linear(const std::string& name, const torch::Tensor& x) const;
  torch::Tensor norm(const std::string& name, const torch::Tensor& x) const;
  torch::Tensor attention(const std::string& block, const torch::Tensor& x) const;
  torch::Tensor mlp(const std::string& block, const torch::Tensor& x) const;
  torch::Tensor block(int index, torch::Tensor x) const;
  // An (R) or (R, width) parameter shaped to broadcast over x's (R, ..., width).
  torch::Tensor per_run(const torch::Tensor& parameter, const torch::Tensor& x) const;

  int runs_;
  std::vector<torch::Tensor> parameters_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace normlab
