#pragma once
// AdamW for one parameter group, as one fused kernel per step where LibTorch has it.
// LibTorch's torch::optim::AdamW updates each tensor with about nine small ops, which
// costs ~10 % of a small CPU step and hundreds of kernel launches on a GPU.
#include <torch/torch.h>
#include <vector>

namespace normlab {

struct AdamWSettings {
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.0;  // decoupled: w <- w (1 - lr wd)
};

class AdamWGroup {
 public:
  AdamWGroup(std::vector<torch::Tensor> params, AdamWSettings settings);
  void step(double lr);  // parameters without a gradient are left alone
  // The same update reading lr from a one-element float32 tensor on the parameters'
  // device, so that a CUDA graph replays it at each step's rate.
  void step(const torch::Tensor& lr);
  void zero_grad();  // drops the gradients, as set_to_none does
  // The moments and step counts, one of each per parameter: the live tensors, so a
  // checkpoint reads them and a resumed run copies its saved values into them.
  std::vector<torch::Tensor> state() const;

 private:
  template <typename LearningRate>
  void update(const LearningRate& lr);

  std::vector<torch::Tensor> params_, exp_avg_, exp_avg_sq_, steps_;
  AdamWSettings settings_;
};

}  // namespace normlab
