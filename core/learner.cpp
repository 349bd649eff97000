#include "learner.h"

#include <optional>

#include "layer_recorder.h"
#include "trainer.h"

namespace normlab {

namespace {

// Seeds torch first, so the same seed gives the same initial weights.
Gpt build_model(const TrainConfig& config, int vocab_size, torch::Device device) {
  torch::manual_seed(config.seed);
  ModelConfig model_config = config.model;
  model_config.vocab = vocab_size;
  Gpt model(model_config);
  model->to(device);
  return model;
}

std::vector<torch::Tensor> parameters_where(Gpt& model, bool matrices) {
  std::vector<torch::Tensor> chosen;
  for (auto& p : model->parameters()) {
    if ((p.dim() >= 2) == matrices) chosen.push_back(p);
  }
  return chosen;
}

AdamWSettings with_decay(double weight_decay) {
  AdamWSettings settings;
  settings.weight_decay = weight_decay;
  return settings;
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
    : clip_grad_norm_(config.clip_grad_norm),
      device_(device),
      model_(build_model(config, vocab_size, device)),
      decayed_(parameters_where(model_, /*matrices=*/true), with_decay(config.weight_decay)),
      not_decayed_(parameters_where(model_, /*matrices=*/false), with_decay(0.0)) {}

double Learner::step(const Batch& batch, double lr, std::vector<SeriesPoint>* statistics) {
  decayed_.zero_grad();
  not_decayed_.zero_grad();
  std::optional<LayerRecorder> recorder;
  if (statistics) recorder.emplace(model_);
  const Batch on_device = to_device(batch, device_);
  auto loss = model_->loss(on_device.inputs, on_device.targets);
  loss.backward();
  if (recorder) recorder->after_backward();
  if (clip_grad_norm_ > 0) {
    torch::nn::utils::clip_grad_norm_(model_->parameters(), clip_grad_norm_);
  }
  decayed_.step(lr);
  not_decayed_.step(lr);
  if (recorder) *statistics = recorder->after_update();
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
