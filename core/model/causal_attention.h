#pragma once
// Causal self-attention on the CPU as one operator that reads the packed (B, T, 3C) output
// of the qkv layer in place and writes (B, T, C) in the layout the output projection takes:
// no split, permute or copy of q, k and v, and no (B·heads, T, T) probabilities kept for
// backward, which recomputes them from each row's saved logsumexp. Each (sequence, head)
// is a task of its own, so a step's results do not depend on the thread count. ATen's
// scaled_dot_product_attention does the rest (other devices and dtypes, other CPUs, QK-norm,
// decoding with a cache).
#include <optional>
#include <torch/torch.h>

namespace normlab {

// The longest sequence it takes: its backward keeps two (T, T) fp32 buffers a thread
// (8 MB at 1024).
inline constexpr std::int64_t kFusedAttentionMaxTime = 1024;

// Whether the calling thread's models use it (on) or ATen's scaled_dot_product_attention
// (off, as before version 12 of the run files). Per thread; threads start with it on.
void set_fused_attention(bool on);
bool fused_attention();

// softmax(q kᵀ/√d + causal mask) v for each head of a contiguous fp32 CPU qkv (B, T, 3C),
// q, k and v each C = heads × d wide, heads side by side; (B, T, C), differentiable with
// respect to qkv. nullopt where it does not apply: fused attention off for this thread,
// another device, dtype or shape, a head width that is not 16, 32, 48 or 64, T over
// kFusedAttentionMaxTime, or a CPU without AVX-512.
std::optional<torch::Tensor> fused_causal_attention(const torch::Tensor& qkv, std::int64_t heads);

namespace detail {
// One head of one sequence: rows of q, k and v `stride` floats apart.
struct HeadInput {
  const float *q, *k, *v;
  std::int64_t stride, time, width;
  float scale;  // 1/√width
};
// causal_attention_avx512.cpp, built for AVX-512; call only where the CPU has it. Forward
// writes y's rows (y_stride apart) and each row's logsumexp of its scaled scores; backward
// writes dq, dk and dv (rows d_stride apart) from y, its gradient dy and that logsumexp.
void causal_attention_head_forward(const HeadInput& in, float* y, std::int64_t y_stride, float* lse);
void causal_attention_head_backward(const HeadInput& in, const float* y, const float* dy, std::int64_t y_stride,
                                    const float* lse, float* dq, float* dk, float* dv, std::int64_t d_stride);
}  // namespace detail

}  // namespace normlab
