#include "output_loss.h"

#include <ATen/record_function.h>
#include <cmath>

#include "linear.h"
#include "softmax_loss.h"

namespace normlab {

namespace {

thread_local bool use_fused_loss = true;

// Each chunk of positions [begin, end) of the flattened batch.
template <typename Each>
void for_each_chunk(std::int64_t positions, Each each) {
  for (std::int64_t begin = 0; begin < positions; begin += kLossChunkPositions)
    each(begin, std::min(positions, begin + kLossChunkPositions));
}

// The loss of 2-D x, and, in the same pass, the gradients of the mean loss with respect to x
// and W, kept for backward, which scales them by the loss's own gradient.
struct FusedOutputLoss : torch::autograd::Function<FusedOutputLoss> {
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& targets) {
    RECORD_USER_SCOPE("normlab::loss");
    torch::NoGradGuard no_grad;
    const auto positions = x.size(0);
    const auto operands = matmul_operand(x);  // x in what the products multiply in, once
    auto x_gradient = torch::empty_like(x);
    WeightGradientSum weight_gradient(weight);
    auto total = torch::zeros({}, x.options());
    // where the products take bf16, the logits land in one buffer for every chunk and the
    // loss's own pass rounds their gradient for the products into another
    const bool bf16 = operands.scalar_type() == torch::kBFloat16;
    const auto chunk_shape = std::vector<std::int64_t>{std::min(positions, kLossChunkPositions), weight.size(0)};
    const auto logits_chunks = bf16 ? torch::empty(chunk_shape, x.options()) : torch::Tensor();
    const auto rounded_chunks = bf16 ? torch::empty(chunk_shape, operands.options()) : torch::Tensor();
    for_each_chunk(positions, [&](std::int64_t begin, std::int64_t end) {
      const auto rows = operands.slice(0, begin, end);
      const auto chunk_targets = targets.slice(0, begin, end).unsqueeze(1);
      // positions x d(mean loss)/d logits = softmax - one-hot, made in place of the logits;
      // the 1/positions goes on the much smaller products
      auto gradient =
          product(rows, weight, /*transposed=*/false, bf16 ? logits_chunks.slice(0, 0, end - begin) : torch::Tensor());
      auto rounded = rounded_chunks.defined() ? rounded_chunks.slice(0, 0, end - begin) : torch::Tensor();
      torch::Tensor gradient_operand;
      if (const auto losses =
              softmax_loss_in_place(gradient, chunk_targets.squeeze(1), rounded.defined() ? &rounded : nullptr)) {
        total.add_(*losses);
        gradient_operand = rounded.defined() ? rounded : gradient;
      } else {  // ATen's operators: two passes with an exp each
        gradient = torch::log_softmax(gradient, 1);
        total.sub_(gradient.gather(1, chunk_targets).sum());
        gradient.exp_().scatter_add_(1, chunk_targets, torch::full_like(chunk_targets, -1.0, gradient.options()));
        gradient_operand = matmul_operand(gradient);
      }
      product(gradient_operand, weight, /*transposed=*/true, x_gradient.slice(0, begin, end));
      weight_gradient.add(gradient_operand, rows);
    });
    context->saved_data["x_gradient"] = x_gradient.div_(positions);
    context->saved_data["weight_gradient"] = weight_gradient.take().div_(positions);
    return total / positions;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               torch::autograd::tensor_list output_gradients) {
    const auto& scale = output_gradients[0];
    auto x_gradient = context->saved_data["x_gradient"].toTensor().mul_(scale);
    auto weight_gradient = context->saved_data["weight_gradient"].toTensor().mul_(scale);
    return {x_gradient, weight_gradient, torch::Tensor()};
  }
};

}  // namespace

void set_fused_loss(bool on) { use_fused_loss = on; }
bool fused_loss() { return use_fused_loss; }

torch::Tensor output_loss(const torch::Tensor& hidden, const torch::Tensor& weight, const torch::Tensor& targets,
                          const std::function<void(const torch::Tensor& logits)>& each_chunk) {
  const auto x = hidden.reshape({-1, hidden.size(-1)});
  const auto flat_targets = targets.reshape({-1});
  if (!use_fused_loss) {
    const auto logits = normlab::linear(x, weight);
    if (each_chunk) each_chunk(logits);
    return torch::nn::functional::cross_entropy(logits, flat_targets);
  }
  if (torch::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()) && !each_chunk)
    return FusedOutputLoss::apply(x, weight, flat_targets);
  RECORD_USER_SCOPE("normlab::loss");
  torch::NoGradGuard no_grad;  // a loss without gradients: evaluation's
  auto total = torch::zeros({}, x.options().dtype(torch::kFloat64));
  const auto operands = matmul_operand(x);
  for_each_chunk(x.size(0), [&](std::int64_t begin, std::int64_t end) {
    const auto logits = product(operands.slice(0, begin, end), weight);
    if (each_chunk) each_chunk(logits);
    const auto chunk_targets = flat_targets.slice(0, begin, end).unsqueeze(1);
    total.sub_(torch::log_softmax(logits, 1).gather(1, chunk_targets).sum());
  });
  return (total / x.size(0)).to(x.scalar_type());
}

}  // namespace normlab
