#pragma once
// Linear layers whose CPU fp32 products go through oneDNN rather than LibTorch's own
// (MKL) sgemm. Same precision (fp32 in, fp32 accumulate), different kernels: on AMD CPUs
// MKL takes its AVX2 path while oneDNN uses AVX-512, about 2x faster on the CPU scale's
// shapes (`normlab-cli bench --cpu-matmul onednn|libtorch` measures both). Everything
// else (the GPU, autocast's bf16, non-float inputs) goes to torch::nn::functional::linear.
#include <torch/torch.h>

namespace normlab {

// Which kernel the calling thread's CPU fp32 linear layers use. Per thread, like the
// thread count: runs side by side each keep their own. Threads start with oneDNN.
void set_onednn_matmuls(bool on);
bool onednn_matmuls();

// y = x Wᵀ + b over the last dimension of x, as torch::nn::functional::linear; `bias` may
// be undefined.
torch::Tensor linear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias = {});

// torch::nn::Linear (its parameters, names and initialisation) computing through linear().
class LinearImpl : public torch::nn::LinearImpl {
 public:
  using torch::nn::LinearImpl::LinearImpl;
  torch::Tensor forward(const torch::Tensor& input) { return normlab::linear(input, weight, bias); }
};
TORCH_MODULE(Linear);

}  // namespace normlab
