// bf16 products on AMX tiles (core/model/tile_products.h): the packed layout, the products
// against fp32 products of the same rounded operands, and the layers and loss that use them
// against the inner-product path they replace. They need a CPU with AMX: elsewhere the
// tests say so and skip, as the CUDA tests do without a GPU.
#include "core/model/tile_products.h"

#include "core/model/linear.h"
#include "core/model/output_loss.h"

#include "test_support.h"

namespace normlab::test {
namespace {

class TileProductsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!tile_products_available()) GTEST_SKIP() << "no AMX here: tile products not checked";
  }
  void TearDown() override {
    set_bf16_matmuls(false);
    set_tile_products(true);
  }
};

torch::Tensor rounded(const torch::Tensor& t) { return t.to(torch::kBFloat16).to(torch::kFloat); }

double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

// A transposed view is packed by NormLab's own code, rows by oneDNN's kernel: the same bytes,
// a last block of 16 columns included.
TEST_F(TileProductsTest, ATransposedViewPacksAsItsContiguousCopy) {
  torch::manual_seed(1);
  const auto m = torch::randn({80, 130}).to(torch::kBFloat16);  // the operand is mᵀ: K 130, N 80
  const TileOperand from_view(m.t()), from_copy(m.t().contiguous());
  ASSERT_EQ(from_view.rows(), 130);
  ASSERT_EQ(from_view.columns(), 80);
  EXPECT_TRUE(torch::equal(from_view.data(), from_copy.data()));
  EXPECT_TRUE(torch::equal(TileOperand(m.t().to(torch::kFloat)).data(), from_copy.data())) << "fp32, rounded";
}

// The transpose in registers, at sizes that leave parts of its 32 x 32 blocks, from a slice.
TEST_F(TileProductsTest, ATransposeInRegistersIsTheTranspose) {
  torch::manual_seed(5);
  const auto wide = torch::randn({70, 50}).to(torch::kBFloat16);
  const auto m = wide.slice(1, 3, 48);  // 70 x 45, a row stride of 50
  const auto t = transposed_bf16(m);
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_TRUE(torch::equal(t, m.t()));
}

// A scratch operand reuses the thread's buffer once it is large enough, and packs as its own.
TEST_F(TileProductsTest, ScratchOperandsReuseTheThreadsBuffer) {
  torch::manual_seed(6);
  const auto large = torch::randn({64, 32}), small = torch::randn({32, 16});
  constexpr auto kScratch = TileOperand::Storage::kScratch;
  const void* first = TileOperand(large, kScratch).data().data_ptr();
  const TileOperand again(small, kScratch);
  EXPECT_EQ(again.data().data_ptr(), first);
  EXPECT_TRUE(torch::equal(again.data(), TileOperand(small).data()));
  const auto m = torch::randn({40, 24}).to(torch::kBFloat16);
  const auto t = transposed_bf16(m, kScratch);
  EXPECT_EQ(transposed_bf16(m.slice(0, 0, 20), kScratch).data_ptr(), t.data_ptr());
}

TEST_F(TileProductsTest, OperandsThatDoNotFitAreRefused) {
  EXPECT_FALSE(TileOperand::fits(129, 64));  // K odd
  EXPECT_FALSE(TileOperand::fits(128, 72));  // N not a multiple of 16
  EXPECT_THROW(TileOperand(torch::zeros({129, 64})), c10::Error);
}

// The products are fp32 products of the bf16 operands, up to the order of the sums: written
// into a slice of a larger result, its other columns untouched, or added to what is there.
TEST_F(TileProductsTest, AProductIsTheFp32ProductOfTheRoundedOperands) {
  torch::manual_seed(2);
  const auto wide_left = torch::randn({300, 150}).to(torch::kBFloat16);
  const auto left = wide_left.slice(1, 0, 130);  // 300 rows, a row stride of 150
  const auto right = torch::randn({130, 80});
  const auto expected = torch::mm(left.to(torch::kFloat), rounded(right));
  auto result = torch::full({300, 100}, 7.0);
  auto out = result.slice(1, 10, 90);
  const TileOperand operand(right);
  tile_multiply(left, operand, out, /*accumulate=*/false);
  EXPECT_LT(relative_difference(out, expected), 1e-6);
  EXPECT_TRUE(torch::all(result.slice(1, 0, 10) == 7.0).item<bool>());
  EXPECT_TRUE(torch::all(result.slice(1, 90, 100) == 7.0).item<bool>());
  tile_multiply(left, operand, out, /*accumulate=*/true);
  EXPECT_LT(relative_difference(out, 2 * expected), 1e-6);
}

struct LayerResult {
  std::vector<torch::Tensor> tensors;  // output, input's, weight's and bias's gradients
};

LayerResult layer(bool tiles, const torch::Tensor& input, const torch::Tensor& weight, const torch::Tensor& bias,
                  const torch::Tensor& upstream) {
  set_bf16_matmuls(true);
  set_tile_products(tiles);
  for (auto t : {input, weight, bias}) t.mutable_grad().reset();
  auto output = normlab::linear(input, weight, bias);
  output.backward(upstream);
  return {{output.detach(), input.grad(), weight.grad(), bias.grad()}};
}

// On tiles a layer's output and its input's and weight's gradients are the fp32 products of
// its rounded operands (the inner-product path rounds them to bf16 once more); the bias's
// gradient is summed as there.
TEST_F(TileProductsTest, ALayerOnTilesMultipliesTheRoundedOperandsInFp32) {
  torch::manual_seed(3);
  auto input = torch::randn({2, 64, 128}).requires_grad_();
  auto weight = (torch::randn({384, 128}) * 0.05).requires_grad_();
  auto bias = torch::randn({384}).requires_grad_();
  const auto upstream = torch::randn({2, 64, 384});
  const auto tiles = layer(true, input, weight, bias, upstream);
  const auto inner = layer(false, input, weight, bias, upstream);
  const auto output = torch::matmul(rounded(input), rounded(weight).t()) + bias;
  const auto input_gradient = torch::matmul(rounded(upstream), rounded(weight));
  const auto weight_gradient = torch::mm(rounded(upstream).reshape({-1, 384}).t(), rounded(input).reshape({-1, 128}));
  EXPECT_LT(relative_difference(tiles.tensors[0], output), 1e-6);
  EXPECT_LT(relative_difference(tiles.tensors[1], input_gradient), 1e-6);
  EXPECT_LT(relative_difference(tiles.tensors[2], weight_gradient), 1e-6);
  EXPECT_GT(relative_difference(inner.tensors[0], output), 1e-4) << "the other path rounds its output";
  EXPECT_GT(relative_difference(inner.tensors[2], weight_gradient), 1e-4) << "and its weight's gradient";
  EXPECT_TRUE(torch::equal(tiles.tensors[3], inner.tensors[3]));
}

// The packed weight follows the weight: after an in-place update the layer multiplies with the
// new values (as the bf16 copy does, ABf16WeightCopyIsMadeAgainAfterTheWeightChanges).
TEST_F(TileProductsTest, APackedWeightIsMadeAgainAfterTheWeightChanges) {
  set_bf16_matmuls(true);
  auto weight = torch::ones({16, 32});
  const auto input = torch::ones({2, 32});
  torch::NoGradGuard no_grad;
  EXPECT_EQ(normlab::linear(input, weight)[0][0].item<float>(), 32.0f);
  weight.mul_(2);
  EXPECT_EQ(normlab::linear(input, weight)[1][15].item<float>(), 64.0f);
}

// The fused loss on tiles is the inner-product path's within bf16 rounding, its loss closer.
TEST_F(TileProductsTest, TheFusedLossOnTilesIsTheOtherPathsWithinBf16Rounding) {
  torch::manual_seed(4);
  auto hidden = torch::randn({2, 300, 64}).requires_grad_();
  auto weight = (torch::randn({1024, 64}) * 0.3).requires_grad_();
  const auto targets = torch::randint(1024, {2, 300});
  auto run = [&](bool tiles) {
    set_bf16_matmuls(true);
    set_tile_products(tiles);
    hidden.mutable_grad().reset();
    weight.mutable_grad().reset();
    auto loss = output_loss(hidden, weight, targets);
    loss.backward();
    return std::vector<torch::Tensor>{loss.detach(), hidden.grad(), weight.grad()};
  };
  const auto tiles = run(true), inner = run(false);
  set_bf16_matmuls(false);
  const auto exact = torch::nn::functional::cross_entropy(
      torch::matmul(rounded(hidden), rounded(weight).t()).reshape({-1, 1024}), targets.reshape({-1}));
  EXPECT_NEAR(tiles[0].item<double>(), exact.item<double>(), 1e-5);
  for (int i = 1; i < 3; ++i) {
    SCOPED_TRACE(i);
    EXPECT_LT(relative_difference(tiles[i], inner[i]), 1e-2);
    EXPECT_EQ(tiles[i].sizes(), inner[i].sizes());
  }
}

}  // namespace
}  // namespace normlab::test
