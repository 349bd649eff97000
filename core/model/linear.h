#pragma once
// Linear layers whose CPU fp32 products go through oneDNN rather than LibTorch's own
// (MKL) sgemm. Same precision (fp32 in, fp32 accumulate), different kernels: on AMD CPUs
// MKL takes its AVX2 path while oneDNN uses AVX-512, about 2x faster on the CPU scale's
// shapes (`normlab-cli bench --cpu-matmul onednn|libtorch` measures both).
// With bf16 matmuls on, a CPU layer multiplies in bf16 on the CPU's bf16 units (oneDNN's
// inner product on AVX512-BF16; on AMX its tiles, tile_products.h) with fp32 accumulation:
// its input and a bf16 copy of its fp32 weight, made once per weight update, go in; its
// output, and the gradients backward gives, come out in fp32, so the stream, attention,
// norms, the loss and the optimiser's master weights stay fp32. Everything else (the GPU,
// autocast's bf16, non-float inputs) goes to torch::nn::functional::linear.
#include <torch/torch.h>

namespace normlab {

// Which kernel the calling thread's CPU fp32 linear layers use. Per thread, like the
// thread count: runs side by side each keep their own. Threads start with oneDNN.
void set_onednn_matmuls(bool on);
bool onednn_matmuls();
// Whether the calling thread's CPU fp32 linear layers multiply in bf16 (see above). Per
// thread; threads start with fp32.
void set_bf16_matmuls(bool on);
bool bf16_matmuls();
// Whether this CPU multiplies bf16 in hardware (AVX512-BF16 or AMX-BF16): where it does
// not, oneDNN would emulate bf16 and gain nothing, so runs keep fp32 there.
bool cpu_has_bf16_units();
// Whether this CPU has AVX-512 (F, BW, VL and DQ), which the kernels built for it
// (softmax_loss_avx512.cpp, causal_attention_avx512.cpp) need.
bool cpu_has_avx512();

// The bf16 copy of `weight` that bf16 matmuls multiply with, made again only when the
// weight has changed since (its version counter, which in-place ops and AdamWGroup bump):
// once per optimiser step, not per use.
torch::Tensor bf16_weight(const torch::Tensor& weight);
// `input` as the calling thread's CPU products take it: in bf16 when its matmuls are bf16
// (cast once, for several products), else as it is.
torch::Tensor matmul_operand(const torch::Tensor& input);
// x Wᵀ (x W when `transposed`) for 2-D x (fp32, or already a matmul_operand) as the calling thread's linear layers
// compute it (oneDNN, bf16 on tiles or not, or LibTorch), without autograd: the products of the fused loss
// (output_loss.h). fp32 out, written into `out` when given (an fp32 tensor of the product's shape with unit
// column stride, such as a slice of rows).
torch::Tensor product(const torch::Tensor& input, const torch::Tensor& weight, bool transposed = false,
                      const torch::Tensor& out = {});
// A weight's gradient summed over chunks of positions, Σ gᵀ x from each chunk's output
// gradient g and input x, in the calling thread's precision and kernel. With oneDNN's fp32
// products each chunk is multiplied as its transpose, xᵀ g, kept transposed and turned once
// at the end: oneDNN takes gᵀ (a transposed view of the chunk's large gradient) about 1.7×
// slower than g as it lies, and LibTorch's addmm_ is MKL's slower AMD path (the fused loss's
// weight gradient, `bench --profile`'s aten::addmm_, was 12 % of the CPU-scale step).
class WeightGradientSum {
 public:
  explicit WeightGradientSum(const torch::Tensor& weight);
  void add(const torch::Tensor& gradient, const torch::Tensor& input);
  // The sum, fp32, shaped and laid out as the weight.
  torch::Tensor take();

 private:
  torch::Tensor weight_;
  torch::Tensor sum_;  // (in, out) while transposed_, else (out, in)
  bool transposed_ = false;
};

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
