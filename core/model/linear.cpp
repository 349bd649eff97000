#include "linear.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <optional>
#include <string_view>

namespace normlab {

namespace {

thread_local bool use_onednn = true;

// oneDNN's fp32 inner product, as LibTorch registers it for its CPU inference passes
// (mkldnn::_linear_pointwise, no post-op): out = input · weightᵀ + bias, both 2-D, any strides.
using PointwiseLinear = at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                                   std::string_view, c10::List<std::optional<c10::Scalar>>,
                                   std::optional<std::string_view>);

const std::optional<c10::TypedOperatorHandle<PointwiseLinear>>& onednn_linear_op() {
  static const auto op = []() -> std::optional<c10::TypedOperatorHandle<PointwiseLinear>> {
    if (!at::hasMKLDNN()) return std::nullopt;
    const auto handle = c10::Dispatcher::singleton().findSchema({"mkldnn::_linear_pointwise", ""});
    if (!handle) return std::nullopt;
    return handle->typed<PointwiseLinear>();
  }();
  return op;
}

torch::Tensor onednn_product(const torch::Tensor& input, const torch::Tensor& weight,
                             const std::optional<torch::Tensor>& bias = std::nullopt) {
  return onednn_linear_op()->call(input, weight, bias, "none", c10::List<std::optional<c10::Scalar>>(), std::nullopt);
}

// The layer on 2-D input, with its backward through the same kernel: the input's gradient
// is dy · W, the weight's dyᵀ · x (transposed views, no copies), the bias's the column sum.
struct OneDnnLinear : torch::autograd::Function<OneDnnLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& weight, const std::optional<torch::Tensor>& bias) {
    context->save_for_backward({input, weight});
    context->saved_data["has_bias"] = bias.has_value();
    return onednn_product(input, weight, bias);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               torch::autograd::tensor_list output_gradients) {
    const auto saved = context->get_saved_variables();
    const auto &input = saved[0], &weight = saved[1];
    const auto& output_gradient = output_gradients[0];
    torch::Tensor input_gradient, weight_gradient, bias_gradient;
    if (context->needs_input_grad(0)) input_gradient = onednn_product(output_gradient, weight.t());
    if (context->needs_input_grad(1)) weight_gradient = onednn_product(output_gradient.t(), input.t());
    // An absent bias is no input edge, so it has no index to ask about.
    if (context->saved_data["has_bias"].toBool() && context->needs_input_grad(2))
      bias_gradient = output_gradient.sum(0);
    return {input_gradient, weight_gradient, bias_gradient};
  }
};

bool takes_onednn(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias) {
  const auto fp32_cpu = [](const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat; };
  return use_onednn && fp32_cpu(input) && fp32_cpu(weight) && (!bias.defined() || fp32_cpu(bias)) &&
         !at::autocast::is_autocast_enabled(at::kCPU) && onednn_linear_op().has_value();
}

}  // namespace

void set_onednn_matmuls(bool on) { use_onednn = on; }
bool onednn_matmuls() { return use_onednn; }

torch::Tensor linear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!takes_onednn(input, weight, bias)) return torch::nn::functional::linear(input, weight, bias);
  auto sizes = input.sizes().vec();
  sizes.back() = weight.size(0);
  const auto optional_bias = bias.defined() ? std::optional(bias) : std::nullopt;
  return OneDnnLinear::apply(input.reshape({-1, input.size(-1)}), weight, optional_bias).view(sizes);
}

}  // namespace normlab
