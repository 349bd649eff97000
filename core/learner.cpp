#include "learner.h"

#include "trainer.h"

namespace normlab {

namespace {

// Decay matrices (linear weights, embeddings), not biases or norm gains, as in GPT-2.
std::unique_ptr<torch::optim::AdamW> make_optimizer(Gpt& model, const TrainConfig& config) {
  std::vector<torch::Tensor> decay, no_decay;
  for (auto& p : model->parameters()) (p.dim() >= 2 ? decay : no_decay).push_back(p);
  auto options = [&](double weight_decay) {
    return std::make_unique<torch::optim::AdamWOptions>(
        torch::optim::AdamWOptions(config.peak_lr).betas({0.9, 0.95}).weight_decay(weight_decay));
  };
  std::vector<torch::optim::OptimizerParamGroup> groups;
  groups.emplace_back(decay, options(config.weight_decay));
  groups.emplace_back(no_decay, options(0.0));
  return std::make_unique<torch::optim::AdamW>(groups, torch::optim::AdamWOptions(config.peak_lr));
}

}  // namespace

Batch to_device(const Batch& batch, torch::Device device) {
  return {batch.inputs.to(device), batch.targets.to(device)};
}

torch::Device select_device(const Environment& environment) {
  if (environment.device == "cuda") return torch::kCUDA;
  torch::set_num_threads(environment.threads);
  return torch::kCPU;
}

Learner::Learner(const TrainConfig& config, int vocab_size, torch::Device device)
    : config_(config), device_(device) {
  torch::manual_seed(config.seed);
  ModelConfig model_config = config.model;
  model_config.vocab = vocab_size;
  model_ = Gpt(model_config);
  model_->to(device);
  optimizer_ = make_optimizer(model_, config);
}

double Learner::step(const Batch& batch, double lr) {
  for (auto& group : optimizer_->param_groups()) {
    static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
  }
  optimizer_->zero_grad();
  const Batch on_device = to_device(batch, device_);
  auto loss = model_->loss(on_device.inputs, on_device.targets);
  loss.backward();
  if (config_.clip_grad_norm > 0) {
    torch::nn::utils::clip_grad_norm_(model_->parameters(), config_.clip_grad_norm);
  }
  optimizer_->step();
  return loss.item<double>();
}

double Learner::evaluate(const std::vector<Batch>& batches) {
  torch::NoGradGuard no_grad;
  model_->eval();
  double total = 0;
  for (const auto& batch : batches) total += model_->loss(batch.inputs, batch.targets).item<double>();
  model_->train();
  return total / batches.size();
}

}  // namespace normlab
