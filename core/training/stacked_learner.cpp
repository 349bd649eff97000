#include "stacked_learner.h"

#include <stdexcept>
#include <type_traits>

namespace normlab {

namespace {

std::vector<Gpt> models_of(const std::vector<Learner*>& learners) {
  std::vector<Gpt> models;
  for (Learner* learner : learners) models.push_back(learner->model());
  return models;
}

// The first setting, besides the model's shape, in which `b` cannot share a stack with `a`.
std::string setting_difference(const TrainConfig& a, const TrainConfig& b) {
  if (a.batch_size != b.batch_size) return "batch size";
  if (a.steps != b.steps) return "steps";
  if (a.device != b.device) return "device";
  if (a.threads != b.threads) return "threads";
  if (a.tf32 != b.tf32) return "tf32";
  if (a.corpus_path != b.corpus_path) return "corpus";
  return {};
}

}  // namespace

std::string stack_refusal(const std::vector<TrainConfig>& configs) {
  if (configs.empty()) return "there are no runs to stack";
  std::vector<ModelConfig> models;
  for (std::size_t r = 0; r < configs.size(); ++r) {
    const TrainConfig& config = configs[r];
    const std::string run = "run " + std::to_string(r + 1);
    // The stack multiplies in fp32 with LibTorch's batched products.
    if (config.autocast != "off") return run + " asks for bf16 autocast, which a stack does not do";
    if (config.cpu_precision != "fp32") return run + " asks for bf16 CPU matmuls, which a stack does not do";
    if (r > 0) {
      if (const std::string field = setting_difference(configs[0], config); !field.empty())
        return run + " differs from run 1 in " + field;
    }
    models.push_back(config.model);
  }
  return stack_refusal(models);
}

StackedLearner::StackedLearner(const std::vector<Learner*>& learners, torch::Device device, bool cuda_graph)
    : learners_(learners), model_(models_of(learners)) {
  // Each learner's state() is its parameters, its buffers, then its optimiser's tensors,
  // in the same order for every run: the optimiser's are stacked here and each run's
  // become views of its slice, as the model's parameters did in model_.
  const std::size_t parameters = model_.parameters().size();
  const std::size_t buffers = learners.front()->model()->buffers().size();
  if (buffers != 0) throw std::invalid_argument("cannot stack models with buffers");
  std::vector<std::vector<torch::Tensor>> states;
  for (Learner* learner : learners) states.push_back(learner->state());
  torch::NoGradGuard no_grad;
  for (std::size_t i = parameters; i < states.front().size(); ++i) {
    std::vector<torch::Tensor> slices;
    for (const auto& state : states) slices.push_back(state[i]);
    optimiser_state_.push_back(torch::stack(slices));
    for (std::size_t r = 0; r < states.size(); ++r) states[r][i].set_data(optimiser_state_.back().select(0, r));
  }
  if (cuda_graph && device.is_cuda()) {
    graphed_ = std::make_unique<GraphedStep>([this](const Batch& batch, const torch::Tensor& lrs) {
      return std::vector<torch::Tensor>{update(batch, lrs)};
    });
  }
}

std::string StackedLearner::cuda_graph_state() const {
  if (!graphed_) return "eager";
  if (!graphed_->failure().empty()) return graphed_->failure();
  return graphed_->captured() ? "replayed" : "eager";
}

torch::Tensor StackedLearner::step(const std::vector<Batch>& batches, const std::vector<double>& lrs) {
  if (int(batches.size()) != runs() || int(lrs.size()) != runs())
    throw std::invalid_argument("a stacked step takes one batch and one rate a run");
  std::vector<torch::Tensor> inputs, targets;
  for (const Batch& batch : batches) {
    inputs.push_back(batch.inputs);
    targets.push_back(batch.targets);
  }
  const Batch stacked{torch::stack(inputs), torch::stack(targets)};
  if (graphed_) {
    if (auto outputs = graphed_->step(stacked, lrs); !outputs.empty()) return outputs[0];
  }
  return update(stacked, lrs);
}

template <typename LearningRates>
torch::Tensor StackedLearner::update(const Batch& batch, const LearningRates& lrs) {
  for (const auto& parameter : model_.parameters()) parameter.mutable_grad().reset();
  const auto losses = model_.loss(batch.inputs, batch.targets);
  losses.sum().backward();  // each run's parameters reach only its own loss
  for (int r = 0; r < runs(); ++r) {
    auto own = learners_[r]->model()->parameters();
    for (std::size_t i = 0; i < own.size(); ++i) {
      const auto& gradient = model_.parameters()[i].grad();
      if (gradient.defined()) own[i].mutable_grad() = gradient.select(0, r);
      else own[i].mutable_grad().reset();
    }
    if constexpr (std::is_same_v<LearningRates, torch::Tensor>) learners_[r]->apply_gradients(lrs.select(0, r));
    else learners_[r]->apply_gradients(lrs[std::size_t(r)]);
  }
  return losses.detach();
}

}  // namespace normlab
