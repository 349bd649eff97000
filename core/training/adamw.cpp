#include "adamw.h"

#include <cmath>
#include <torch/csrc/autograd/variable.h>

namespace normlab {

AdamWGroup::AdamWGroup(std::vector<torch::Tensor> params, AdamWSettings settings)
    : params_(std::move(params)), settings_(settings) {
  for (const auto& p : params_) {
    exp_avg_.push_back(torch::zeros_like(p));
    exp_avg_sq_.push_back(torch::zeros_like(p));
    steps_.push_back(torch::zeros({}, p.options().dtype(torch::kFloat32)));
  }
}

void AdamWGroup::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

std::vector<torch::Tensor> AdamWGroup::state() const {
  std::vector<torch::Tensor> tensors = exp_avg_;
  tensors.insert(tensors.end(), exp_avg_sq_.begin(), exp_avg_sq_.end());
  tensors.insert(tensors.end(), steps_.begin(), steps_.end());
  return tensors;
}

void AdamWGroup::step(double lr) { update(lr); }
void AdamWGroup::step(const torch::Tensor& lr) { update(lr); }

template <typename LearningRate>
void AdamWGroup::update(const LearningRate& lr) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> params, grads, exp_avg, exp_avg_sq, steps;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].grad().defined()) continue;
    params.push_back(params_[i]);
    grads.push_back(params_[i].grad());
    exp_avg.push_back(exp_avg_[i]);
    exp_avg_sq.push_back(exp_avg_sq_[i]);
    steps.push_back(steps_[i]);
  }
  if (params.empty()) return;
  const AdamWSettings& s = settings_;
  torch::_foreach_add_(steps, 1);
  at::_fused_adamw_(params, grads, exp_avg, exp_avg_sq, /*max_exp_avg_sqs=*/{}, steps, lr, s.beta1, s.beta2,
                    s.weight_decay, s.eps, /*amsgrad=*/false, /*maximize=*/false);
  // ATen's fused kernel writes the parameters in place without bumping their version
  // counters, as in-place ops do: bumped here, so whatever keys on a tensor's version (the
  // bf16 weight copies of linear.h, autograd's saved-tensor checks) sees the update.
  for (const auto& p : params) torch::autograd::impl::bump_version(p);
}

}  // namespace normlab
