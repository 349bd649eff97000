#include "linear.h"

#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "tile_products.h"

namespace normlab {

namespace {

thread_local bool use_onednn = true;
thread_local bool use_bf16 = false;

bool tiles_for(const torch::Tensor& weight);
const TileOperand& weight_tiles(const torch::Tensor& weight, bool transposed);

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

// The same layer in bf16: x and W rounded to bf16 go into oneDNN, which accumulates in fp32
// and rounds its output to bf16; the bias is added in fp32 as the output is widened, in one
// pass. Backward rounds the output's gradient to bf16 and multiplies it with the saved bf16
// x and W, widening both gradients to fp32; the bias's is summed in fp32.
struct Bf16Linear : torch::autograd::Function<Bf16Linear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& weight, const std::optional<torch::Tensor>& bias) {
    const auto input16 = input.to(torch::kBFloat16);
    const auto weight16 = bf16_weight(weight);
    context->save_for_backward({input16, weight16});
    context->saved_data["has_bias"] = bias.has_value();
    const auto output16 = onednn_product(input16, weight16);
    return bias ? torch::add(*bias, output16) : output16.to(torch::kFloat);
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               torch::autograd::tensor_list output_gradients) {
    const auto saved = context->get_saved_variables();
    const auto &input16 = saved[0], &weight16 = saved[1];
    const auto& output_gradient = output_gradients[0];
    const auto gradient16 = output_gradient.to(torch::kBFloat16);
    torch::Tensor input_gradient, weight_gradient, bias_gradient;
    if (context->needs_input_grad(0)) input_gradient = onednn_product(gradient16, weight16.t()).to(torch::kFloat);
    // at::mm takes the transposed gradient as a view; oneDNN's linear would copy it.
    if (context->needs_input_grad(1)) weight_gradient = torch::mm(gradient16.t(), input16).to(torch::kFloat);
    if (context->saved_data["has_bias"].toBool() && context->needs_input_grad(2))
      bias_gradient = output_gradient.sum(0);
    return {input_gradient, weight_gradient, bias_gradient};
  }
};

// The same layer on AMX tiles (tile_products.h): x rounded to bf16 multiplies the packed Wᵀ
// into an fp32 output that starts as the bias, so nothing is widened or added after; backward
// multiplies the gradient rounded to bf16 with the packed W into the input's fp32 gradient,
// and gᵀ x into the weight's. The bias's gradient is summed in fp32, as in Bf16Linear.
struct TileLinear : torch::autograd::Function<TileLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* context, const torch::Tensor& input,
                               const torch::Tensor& weight, const std::optional<torch::Tensor>& bias) {
    const auto input16 = input.to(torch::kBFloat16);
    context->save_for_backward({input16});
    context->saved_data["weight"] = weight;  // its packed forms are cached by its version
    context->saved_data["has_bias"] = bias.has_value();
    auto output = bias ? bias->expand({input.size(0), weight.size(0)}).contiguous()
                       : torch::empty({input.size(0), weight.size(0)}, input.options());
    tile_multiply(input16, weight_tiles(weight, /*transposed=*/true), output, /*accumulate=*/bias.has_value());
    return output;
  }

  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* context,
                                               torch::autograd::tensor_list output_gradients) {
    const auto input16 = context->get_saved_variables()[0];
    const auto weight = context->saved_data["weight"].toTensor();
    const auto& output_gradient = output_gradients[0];
    const auto gradient16 = output_gradient.to(torch::kBFloat16);
    torch::Tensor input_gradient, weight_gradient, bias_gradient;
    if (context->needs_input_grad(0)) {
      input_gradient = torch::empty({gradient16.size(0), weight.size(1)}, output_gradient.options());
      tile_multiply(gradient16, weight_tiles(weight, /*transposed=*/false), input_gradient, /*accumulate=*/false);
    }
    // gᵀ x: gᵀ transposed in registers, x packed as the right operand (rows = positions)
    if (context->needs_input_grad(1) && TileOperand::fits(input16.size(0), input16.size(1))) {
      weight_gradient = torch::empty({weight.size(0), weight.size(1)}, output_gradient.options());
      constexpr auto kScratch = TileOperand::Storage::kScratch;  // both used here and dropped
      tile_multiply(transposed_bf16(gradient16, kScratch), TileOperand(input16, kScratch), weight_gradient,
                    /*accumulate=*/false);
    } else if (context->needs_input_grad(1)) {
      weight_gradient = torch::mm(gradient16.t(), input16).to(torch::kFloat);
    }
    if (context->saved_data["has_bias"].toBool() && context->needs_input_grad(2))
      bias_gradient = output_gradient.sum(0);
    return {input_gradient, weight_gradient, bias_gradient};
  }
};

bool fp32_cpu(const torch::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == torch::kFloat; }

bool takes_onednn(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias) {
  return (use_onednn || use_bf16) && fp32_cpu(input) && fp32_cpu(weight) && (!bias.defined() || fp32_cpu(bias)) &&
         !at::autocast::is_autocast_enabled(at::kCPU) && onednn_linear_op().has_value();
}

// Each weight's bf16 copy, with the weight (weakly, so a freed weight's entry is known for
// stale) and its version when copied. Per thread, as runs side by side each have theirs.
struct Bf16Copy {
  std::optional<c10::weak_intrusive_ptr<c10::TensorImpl, c10::UndefinedTensorImpl>> weight;
  std::uint32_t version = 0;
  torch::Tensor copy;
  TileOperand as_right;             // W as the right operand, K = its rows: x W (input gradients)
  TileOperand as_right_transposed;  // Wᵀ: x Wᵀ (outputs)
};
thread_local std::unordered_map<const c10::TensorImpl*, Bf16Copy> bf16_copies;

// The weight's entry, its bf16 copy made again (and its tile operands dropped) when the
// weight has changed since.
Bf16Copy& fresh_copy(const torch::Tensor& weight) {
  torch::NoGradGuard no_grad;
  const std::uint32_t version = weight._version();
  auto& entry = bf16_copies[weight.unsafeGetTensorImpl()];
  const bool same_weight = entry.weight && entry.weight->lock().get() == weight.unsafeGetTensorImpl();
  if (!same_weight || entry.version != version) {
    if (bf16_copies.size() > 4096) {  // drop the entries of weights that are gone
      for (auto it = bf16_copies.begin(); it != bf16_copies.end();) {
        it = (!it->second.weight || it->second.weight->expired()) && &it->second != &entry ? bf16_copies.erase(it)
                                                                                           : std::next(it);
      }
    }
    entry.weight.emplace(weight.getIntrusivePtr());
    entry.version = version;
    entry.copy = weight.detach().to(torch::kBFloat16);
    entry.as_right = entry.as_right_transposed = TileOperand();
  }
  return entry;
}

// Whether the calling thread's bf16 products with this (out × in) weight go on tiles.
bool tiles_for(const torch::Tensor& weight) {
  return use_bf16 && tile_products() && tile_products_available() && weight.dim() == 2 &&
         TileOperand::fits(weight.size(0), weight.size(1)) && TileOperand::fits(weight.size(1), weight.size(0));
}

// The weight packed for tile products, W (x W) or, `transposed`, Wᵀ (x Wᵀ): packed from its
// bf16 copy once per weight update.
const TileOperand& weight_tiles(const torch::Tensor& weight, bool transposed) {
  auto& entry = fresh_copy(weight);
  auto& operand = transposed ? entry.as_right_transposed : entry.as_right;
  if (!operand.defined()) operand = TileOperand(transposed ? entry.copy.t() : entry.copy);
  return operand;
}

}  // namespace

void set_onednn_matmuls(bool on) { use_onednn = on; }
bool onednn_matmuls() { return use_onednn; }
void set_bf16_matmuls(bool on) { use_bf16 = on; }
bool bf16_matmuls() { return use_bf16; }

bool cpu_has_bf16_units() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512bf16") || __builtin_cpu_supports("amx-bf16");
  return has;
#else
  return false;
#endif
}

bool cpu_has_avx512() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq");
  return has;
#else
  return false;
#endif
}

torch::Tensor bf16_weight(const torch::Tensor& weight) { return fresh_copy(weight).copy; }

torch::Tensor matmul_operand(const torch::Tensor& input) {
  return use_bf16 && takes_onednn(input, input, {}) ? input.to(torch::kBFloat16) : input;
}

torch::Tensor product(const torch::Tensor& input, const torch::Tensor& weight, bool transposed,
                      const torch::Tensor& out) {
  torch::Tensor result;
  if (input.scalar_type() == torch::kBFloat16 && tiles_for(weight)) {
    result = out.defined()
                 ? out
                 : torch::empty({input.size(0), weight.size(transposed ? 1 : 0)}, input.options().dtype(torch::kFloat));
    tile_multiply(input, weight_tiles(weight, /*transposed=*/!transposed), result, /*accumulate=*/false);
    return result;
  }
  if (input.scalar_type() == torch::kBFloat16 && use_bf16) {
    const auto weight16 = bf16_weight(weight);
    result = onednn_product(input, transposed ? weight16.t() : weight16).to(torch::kFloat);
  } else if (!takes_onednn(input, weight, {})) {
    result = torch::mm(input, transposed ? weight : weight.t());
  } else {
    result = onednn_product(input, transposed ? weight.t() : weight);
  }
  return out.defined() ? out.copy_(result) : result;
}

WeightGradientSum::WeightGradientSum(const torch::Tensor& weight) : weight_(weight) {}

void WeightGradientSum::add(const torch::Tensor& gradient, const torch::Tensor& input) {
  if (gradient.scalar_type() == torch::kBFloat16 && tiles_for(weight_) &&
      TileOperand::fits(gradient.size(0), gradient.size(1))) {
    // xᵀ g on tiles, the chunk's large gradient packed as the right operand, summed transposed
    constexpr auto kScratch = TileOperand::Storage::kScratch;  // both used here and dropped
    const auto left = transposed_bf16(input.to(torch::kBFloat16), kScratch);
    const bool first = !sum_.defined();
    if (first) sum_ = torch::empty({weight_.size(1), weight_.size(0)}, weight_.options().dtype(torch::kFloat));
    tile_multiply(left, TileOperand(gradient, kScratch), sum_, /*accumulate=*/!first);
    transposed_ = true;
    return;
  }
  if (gradient.scalar_type() == torch::kBFloat16) {
    if (!sum_.defined()) sum_ = torch::zeros_like(weight_, weight_.options().dtype(torch::kFloat));
    sum_.add_(torch::mm(gradient.t(), input.to(torch::kBFloat16)));
    return;
  }
  if (takes_onednn(gradient, input, {}) && !use_bf16) {
    auto chunk = onednn_product(input.t(), gradient.t());  // (in, out) = xᵀ g
    transposed_ = true;
    sum_ = sum_.defined() ? sum_.add_(chunk) : std::move(chunk);
    return;
  }
  if (!sum_.defined()) sum_ = torch::zeros_like(weight_);
  sum_.addmm_(gradient.t(), input);
}

torch::Tensor WeightGradientSum::take() {
  if (!sum_.defined()) return torch::zeros_like(weight_, weight_.options().dtype(torch::kFloat));
  auto sum = std::move(sum_);
  if (!transposed_) return sum;
  transposed_ = false;
  return torch::empty_like(weight_, weight_.options().dtype(torch::kFloat)).copy_(sum.t());
}

torch::Tensor linear(const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!takes_onednn(input, weight, bias)) return torch::nn::functional::linear(input, weight, bias);
  auto sizes = input.sizes().vec();
  sizes.back() = weight.size(0);
  const auto optional_bias = bias.defined() ? std::optional(bias) : std::nullopt;
  if (tiles_for(weight))
    return TileLinear::apply(input.reshape({-1, input.size(-1)}), weight, optional_bias).view(sizes);
  if (use_bf16) return Bf16Linear::apply(input.reshape({-1, input.size(-1)}), weight, optional_bias).view(sizes);
  return OneDnnLinear::apply(input.reshape({-1, input.size(-1)}), weight, optional_bias).view(sizes);
}

}  // namespace normlab
