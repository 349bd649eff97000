// The fused CPU attention (core/model/causal_attention.h) against an fp64 reference and
// against ATen's scaled_dot_product_attention inside the model.
#include "core/model/causal_attention.h"

#include <cmath>

#include "core/model/linear.h"
#include "core/model/model.h"

#include "test_support.h"

namespace normlab::test {
namespace {

// Restores the calling thread's choice, whatever a test set.
class CausalAttentionTest : public ::testing::Test {
 protected:
  void TearDown() override { set_fused_attention(true); }
};

// softmax(q kᵀ/√d + causal mask) v per head, written out in fp64: (B, T, C).
torch::Tensor reference(const torch::Tensor& qkv, std::int64_t heads) {
  const auto batch = qkv.size(0), time = qkv.size(1), width = qkv.size(2) / 3;
  const auto split = qkv.view({batch, time, 3, heads, width / heads}).permute({2, 0, 3, 1, 4});
  const auto q = split[0], k = split[1], v = split[2];
  const auto scores = torch::matmul(q, k.transpose(-2, -1)) / std::sqrt(double(width / heads));
  const auto future = torch::ones({time, time}, torch::kBool).triu(1);
  const auto p = torch::softmax(scores.masked_fill(future, -INFINITY), -1);
  return torch::matmul(p, v).transpose(1, 2).reshape({batch, time, width});
}

struct Shape {
  std::int64_t batch, time, heads, head_width;
};

// Every head width it takes, lengths that are and are not multiples of its 4-row strips
// and 16-float vectors, one position alone, and the model's own (4 heads of 32, T 128).
TEST_F(CausalAttentionTest, EqualsAnFp64ReferenceWithinFp32Rounding) {
  torch::manual_seed(5);
  for (const Shape s : {Shape{2, 1, 2, 16}, Shape{1, 7, 1, 32}, Shape{2, 37, 3, 48}, Shape{1, 64, 2, 64},
                        Shape{3, 128, 4, 32}, Shape{1, 130, 1, 16}}) {
    const auto width = s.heads * s.head_width;
    const auto qkv = (torch::randn({s.batch, s.time, 3 * width}) * 1.5).requires_grad_();
    const auto y = fused_causal_attention(qkv, s.heads);
    ASSERT_EQ(y.has_value(), cpu_has_avx512()) << "T " << s.time << ", head width " << s.head_width;
    if (!y) continue;
    const auto wide = qkv.detach().to(torch::kDouble).requires_grad_();
    const auto expected = reference(wide, s.heads);
    EXPECT_LT((y->to(torch::kDouble) - expected).abs().max().item<double>(), 2e-5)
        << "T " << s.time << ", head width " << s.head_width;
    const auto dy = torch::randn({s.batch, s.time, width});
    y->backward(dy);
    expected.backward(dy.to(torch::kDouble));
    const auto error = (qkv.grad().to(torch::kDouble) - wide.grad()).abs().max().item<double>();
    EXPECT_LT(error, 5e-5 * std::max(1.0, wide.grad().abs().max().item<double>()))
        << "T " << s.time << ", head width " << s.head_width;
  }
}

// Each (sequence, head) is one task whichever thread takes it: the same bits at any count.
TEST_F(CausalAttentionTest, GivesTheSameBitsAtAnyThreadCount) {
  torch::manual_seed(6);
  const auto qkv = torch::randn({4, 96, 3 * 128});
  if (!cpu_has_avx512()) {  // ATen's attention runs instead, whose threads are its own affair
    EXPECT_FALSE(fused_causal_attention(qkv, 4));
    return;
  }
  const auto dy = torch::randn({4, 96, 128});
  const auto run = [&](int threads) {
    TorchThreads guard(threads);
    const auto input = qkv.clone().requires_grad_();
    const auto y = *fused_causal_attention(input, 4);
    y.backward(dy);
    return std::make_pair(y.detach(), input.grad());
  };
  const auto one = run(1), two = run(2);
  EXPECT_TRUE(one.first.equal(two.first));
  EXPECT_TRUE(one.second.equal(two.second));
}

TEST_F(CausalAttentionTest, DeclinesWhatItDoesNotTake) {
  const auto qkv = torch::randn({2, 16, 3 * 64});
  EXPECT_FALSE(fused_causal_attention(qkv.to(torch::kDouble), 2)) << "fp64";
  EXPECT_FALSE(fused_causal_attention(qkv.to(torch::kBFloat16), 2)) << "bf16, as under autocast";
  EXPECT_FALSE(fused_causal_attention(qkv, 8)) << "heads of 8";
  EXPECT_FALSE(fused_causal_attention(qkv, 5)) << "64 is no multiple of 5 heads";
  EXPECT_FALSE(fused_causal_attention(torch::randn({1, kFusedAttentionMaxTime + 1, 3 * 32}), 2)) << "too long";
  EXPECT_FALSE(fused_causal_attention(qkv.view({32, 3 * 64}), 2)) << "not (B, T, 3C)";
  set_fused_attention(false);
  EXPECT_FALSE(fused_causal_attention(qkv, 2)) << "off for this thread";
  set_fused_attention(true);
  EXPECT_EQ(fused_causal_attention(qkv, 2).has_value(), cpu_has_avx512()) << "takes it again";
}

struct LossAndGradients {
  double loss;
  std::vector<torch::Tensor> gradients;
};

LossAndGradients model_loss(bool fused) {
  set_fused_attention(fused);
  torch::manual_seed(7);
  ModelConfig m;
  m.layers = 2;
  m.d_model = 64;
  m.heads = 2;
  m.context = 48;
  m.vocab = 300;
  Gpt model(m);
  const auto ids = torch::randint(300, {3, 48});
  const auto targets = torch::randint(300, {3, 48});
  const auto loss = model->loss(ids, targets);
  loss.backward();
  LossAndGradients out{loss.item<double>(), {}};
  for (const auto& p : model->parameters()) out.gradients.push_back(p.grad().clone());
  return out;
}

// The same model's loss and every gradient with the kernel and with ATen's attention: equal
// within fp32 rounding, and not to the bit where the kernel ran (so it did run).
TEST_F(CausalAttentionTest, TheModelLearnsTheSameWithItAsWithAtensAttention) {
  const LossAndGradients fused = model_loss(true), aten = model_loss(false);
  EXPECT_NEAR(fused.loss, aten.loss, 1e-5 * aten.loss);
  ASSERT_EQ(fused.gradients.size(), aten.gradients.size());
  bool all_equal = true;
  for (std::size_t i = 0; i < aten.gradients.size(); ++i) {
    const auto& a = fused.gradients[i];
    const auto& b = aten.gradients[i];
    EXPECT_LT(((a - b).norm() / (b.norm() + 1e-12)).item<double>(), 1e-5) << "parameter " << i;
    all_equal = all_equal && a.equal(b);
  }
  EXPECT_EQ(all_equal, !cpu_has_avx512()) << "the kernel ran where the CPU has AVX-512, and only there";
}

}  // namespace
}  // namespace normlab::test
