#include "causal_attention.h"

#include <ATen/Parallel.h>
#include <ATen/record_function.h>
#include <cmath>

#include "linear.h"

namespace normlab {

namespace {

thread_local bool use_fused_attention = true;

detail::HeadInput head_input(const torch::Tensor& qkv, std::int64_t heads, std::int64_t task) {
  const auto time = qkv.size(1), width = qkv.size(2) / 3, head_width = width / heads;
  const float* base = qkv.data_ptr<float>() + (task / heads) * time * 3 * width + (task % heads) * head_width;
  return {
      base, base + width, base + 2 * width, 3 * width, time, head_width, float(1.0 / std::sqrt(double(head_width)))};
}

// Each (sequence, head) on its own, whichever thread takes it.
template <typename Each>
void for_each_head(std::int64_t tasks, Each each) {
  at::parallel_for(0, tasks, 1, [&](std::int64_t first, std::int64_t last) {
    for (std::int64_t task = first; task < last; ++task) each(task);
  });
}

struct CausalAttention : torch::autograd::Function<CausalAttention> {
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& qkv,
                               std::int64_t heads) {
    RECORD_FUNCTION("normlab::causal_attention", std::vector<c10::IValue>({qkv}));
    const auto batch = qkv.size(0), time = qkv.size(1), width = qkv.size(2) / 3, head_width = width / heads;
    auto y = torch::empty({batch, time, width}, qkv.options());
    auto lse = torch::empty({batch, heads, time}, qkv.options());
    float* out = y.data_ptr<float>();
    float* sums = lse.data_ptr<float>();
    for_each_head(batch * heads, [&](std::int64_t task) {
      const std::int64_t b = task / heads, h = task % heads;
      detail::causal_attention_head_forward(head_input(qkv, heads, task), out + b * time * width + h * head_width,
                                            width, sums + task * time);
    });
    context->save_for_backward({qkv, y, lse});
    context->saved_data["heads"] = heads;
    return y;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               torch::autograd::tensor_list gradients) {
    RECORD_FUNCTION("normlab::causal_attention_backward", std::vector<c10::IValue>());
    const auto saved = context->get_saved_variables();
    const auto &qkv = saved[0], &y = saved[1], &lse = saved[2];
    const auto heads = context->saved_data["heads"].toInt();
    const auto dy = gradients[0].contiguous();
    const auto batch = qkv.size(0), time = qkv.size(1), width = qkv.size(2) / 3, head_width = width / heads;
    // Every entry is written: each head's rows of dq, dk and dv.
    auto dqkv = torch::empty_like(qkv);
    const float *out = y.data_ptr<float>(), *grad = dy.data_ptr<float>(), *sums = lse.data_ptr<float>();
    float* into = dqkv.data_ptr<float>();
    for_each_head(batch * heads, [&](std::int64_t task) {
      const std::int64_t b = task / heads, h = task % heads;
      const std::int64_t at = b * time * width + h * head_width;
      float* dq = into + b * time * 3 * width + h * head_width;
      detail::causal_attention_head_backward(head_input(qkv, heads, task), out + at, grad + at, width,
                                             sums + task * time, dq, dq + width, dq + 2 * width, 3 * width);
    });
    return {dqkv, torch::Tensor()};
  }
};

}  // namespace

void set_fused_attention(bool on) { use_fused_attention = on; }
bool fused_attention() { return use_fused_attention; }

std::optional<torch::Tensor> fused_causal_attention(const torch::Tensor& qkv, std::int64_t heads) {
  if (!use_fused_attention || !qkv.device().is_cpu() || qkv.scalar_type() != torch::kFloat || qkv.dim() != 3 ||
      heads <= 0 || qkv.size(2) % (3 * heads) != 0 || qkv.size(1) < 1 || qkv.size(1) > kFusedAttentionMaxTime ||
      !cpu_has_avx512())
    return std::nullopt;
  const auto head_width = qkv.size(2) / 3 / heads;
  if (head_width % 16 != 0 || head_width > 64) return std::nullopt;
  return CausalAttention::apply(qkv.contiguous(), heads);
}

}  // namespace normlab
