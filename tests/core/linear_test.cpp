#include "core/model/linear.h"

#include <ATen/autocast_mode.h>
#include <thread>

#include "test_support.h"

namespace normlab::test {
namespace {

namespace F = torch::nn::functional;
using ::testing::HasSubstr;
using ::testing::Not;

// Restores the calling thread's kernel choice, whatever a test set.
class LinearTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(11); }
  void TearDown() override { set_onednn_matmuls(true); }
};

struct Gradients {
  torch::Tensor output, input, weight, bias;
  std::string product;  // the autograd node that computed the product
};

// The layer's output and its three gradients for one upstream gradient, at the CPU
// scale's shapes (batch 2 x 16 positions, by default 128 in, 384 out), through `layer`.
template <typename Layer>
Gradients through(Layer layer, bool with_bias, std::int64_t in = 128, std::int64_t out = 384) {
  torch::manual_seed(5);
  auto input = torch::randn({2, 16, in}).requires_grad_();
  auto weight = (torch::randn({out, in}) * 0.02).requires_grad_();
  auto bias = with_bias ? torch::randn({out}).requires_grad_() : torch::Tensor();
  auto output = layer(input, weight, bias);
  auto node = output.grad_fn();
  while (node->name().find("View") != std::string::npos) node = node->next_edges()[0].function;  // the unflatten
  output.backward(torch::randn(output.sizes()));
  return {output.detach(), input.grad(), weight.grad(), with_bias ? bias.grad() : torch::Tensor(), node->name()};
}

void expect_close(const Gradients& a, const Gradients& b) {
  EXPECT_TRUE(torch::allclose(a.output, b.output, 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(a.input, b.input, 1e-5, 1e-5));
  EXPECT_TRUE(torch::allclose(a.weight, b.weight, 1e-5, 1e-4));
  EXPECT_EQ(a.bias.defined(), b.bias.defined());
  if (a.bias.defined()) {
    EXPECT_TRUE(torch::allclose(a.bias, b.bias, 1e-5, 1e-4));
  }
}

const auto libtorch_linear = [](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return F::linear(x, w, b);
};
const auto normlab_linear = [](const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b) {
  return normlab::linear(x, w, b);
};

// A layer wider out than in and one wider in than out give LibTorch's products and
// gradients, the weight's laid out as the weight.
TEST_F(LinearTest, OneDnnGivesLibTorchsProductAndGradientsInFp32) {
  ASSERT_TRUE(onednn_matmuls());
  for (const auto& [in, out] : {std::pair{128, 384}, std::pair{512, 128}})
    for (const bool with_bias : {true, false}) {
      SCOPED_TRACE(std::to_string(in) + " in, " + std::to_string(out) + (with_bias ? " out, with bias" : " out"));
      const Gradients ours = through(normlab_linear, with_bias, in, out);
      const Gradients reference = through(libtorch_linear, with_bias, in, out);
      EXPECT_TRUE(ours.weight.is_contiguous());
      EXPECT_EQ(ours.output.sizes(), reference.output.sizes());
      EXPECT_EQ(ours.output.scalar_type(), torch::kFloat);
      expect_close(ours, reference);
      EXPECT_THAT(ours.product, HasSubstr("OneDnnLinear"));
      EXPECT_THAT(reference.product, Not(HasSubstr("OneDnnLinear")));
    }
}

TEST_F(LinearTest, OneDnnRepeatsToTheLastDigit) {
  const Gradients first = through(normlab_linear, true);
  const Gradients second = through(normlab_linear, true);
  EXPECT_TRUE(torch::equal(first.output, second.output));
  EXPECT_TRUE(torch::equal(first.input, second.input));
  EXPECT_TRUE(torch::equal(first.weight, second.weight));
  EXPECT_TRUE(torch::equal(first.bias, second.bias));
}

TEST_F(LinearTest, SwitchedOffItIsLibTorchsOwnToTheLastDigit) {
  set_onednn_matmuls(false);
  const Gradients ours = through(normlab_linear, true);
  const Gradients reference = through(libtorch_linear, true);
  EXPECT_TRUE(torch::equal(ours.output, reference.output));
  EXPECT_TRUE(torch::equal(ours.weight, reference.weight));
  EXPECT_EQ(ours.product, reference.product);
}

// Runs side by side each set their own kernel on their own thread.
TEST_F(LinearTest, TheChoiceIsTheCallingThreadsOwn) {
  set_onednn_matmuls(false);
  bool other_thread_starts_with_onednn = false;
  std::thread([&] { other_thread_starts_with_onednn = onednn_matmuls(); }).join();
  EXPECT_TRUE(other_thread_starts_with_onednn);
  EXPECT_FALSE(onednn_matmuls());
}

// bf16 autocast keeps its own rules: the layer goes through LibTorch and comes out in bf16.
TEST_F(LinearTest, UnderAutocastTheLayerIsLibTorchsBf16One) {
  at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
  at::autocast::set_autocast_enabled(at::kCPU, true);
  const auto output = normlab::linear(torch::randn({4, 128}), torch::randn({8, 128}), torch::randn({8}));
  at::autocast::set_autocast_enabled(at::kCPU, false);
  at::autocast::clear_cache();
  EXPECT_EQ(output.scalar_type(), torch::kBFloat16);
}

TEST_F(LinearTest, TheModuleKeepsTorchsParametersAndComputesThroughOneDnn) {
  Linear layer(128, 384);
  EXPECT_EQ(layer->named_parameters().keys(), (std::vector<std::string>{"weight", "bias"}));
  EXPECT_NE(std::shared_ptr<torch::nn::Module>(layer.ptr())->as<torch::nn::Linear>(), nullptr);
  const auto input = torch::randn({3, 128});
  const auto expected = normlab::linear(input, layer->weight, layer->bias);
  EXPECT_TRUE(torch::equal(layer(input), expected));
}

}  // namespace
}  // namespace normlab::test
