// The fused loss's one-exp pass (core/model/softmax_loss.h) against ATen's operators.
#include "core/model/softmax_loss.h"

#include <gtest/gtest.h>

#include "core/model/linear.h"

#include "test_support.h"

namespace normlab {
namespace {

struct Reference {
  double loss_sum;
  torch::Tensor gradient;
};

Reference reference(const torch::Tensor& logits, const torch::Tensor& targets) {
  const auto wide = logits.to(torch::kDouble);
  const auto log_probs = torch::log_softmax(wide, 1);
  auto gradient = log_probs.exp();
  gradient.scatter_add_(1, targets.unsqueeze(1), torch::full({targets.size(0), 1}, -1.0, gradient.options()));
  return {-log_probs.gather(1, targets.unsqueeze(1)).sum().item<double>(), gradient};
}

// Rows of every length modulo the vector width (a tail), logits spread far enough that an
// exp without the row's maximum taken out would overflow, and targets at both ends.
TEST(SoftmaxLoss, GivesTheLossAndGradientOfLogSoftmaxWithinFp32Rounding) {
  torch::manual_seed(3);
  for (const std::int64_t vocab : {8192, 37, 16, 5}) {
    auto logits = torch::randn({9, vocab}) * 30;
    logits[0].fill_(0);
    logits[1][0] = 200;
    auto targets = torch::randint(vocab, {9}, torch::kLong);
    targets[2] = 0;
    targets[3] = vocab - 1;
    const Reference expected = reference(logits, targets);
    auto in_place = logits.clone();
    const auto losses = softmax_loss_in_place(in_place, targets);
    ASSERT_EQ(losses.has_value(), cpu_has_avx512()) << "vocab " << vocab;
    if (!losses) {
      EXPECT_TRUE(in_place.equal(logits)) << "the logits changed where the pass does not apply";
      continue;
    }
    EXPECT_NEAR(*losses, expected.loss_sum, 1e-5 * std::abs(expected.loss_sum) + 1e-5) << "vocab " << vocab;
    const double error = (in_place.to(torch::kDouble) - expected.gradient).abs().max().item<double>();
    EXPECT_LT(error, 1e-5) << "vocab " << vocab;
    EXPECT_NEAR(in_place.sum(1).abs().max().item<double>(), 0, 1e-5) << "each row's gradient sums to 0";
  }
}

// Rows are summed in their order, so the loss is the same to the bit at any thread count.
TEST(SoftmaxLoss, SumsTheSameWhateverTheThreadCount) {
  torch::manual_seed(4);
  const auto logits = torch::randn({300, 1000}) * 4;
  const auto targets = torch::randint(1000, {300}, torch::kLong);
  test::TorchThreads guard;
  std::optional<double> at[2];
  torch::Tensor gradients[2];
  for (const int threads : {1, 2}) {
    torch::set_num_threads(threads);
    gradients[threads - 1] = logits.clone();
    at[threads - 1] = softmax_loss_in_place(gradients[threads - 1], targets);
  }
  ASSERT_EQ(at[0].has_value(), cpu_has_avx512());
  if (at[0]) {
    EXPECT_EQ(*at[0], *at[1]);
    EXPECT_TRUE(gradients[0].equal(gradients[1]));
  }
}

// The gradient rounded to bf16 in the same pass is the fp32 gradient cast, to the bit, tails
// and targets included; the loss is the same sum.
TEST(SoftmaxLoss, RoundsTheGradientAsACastOfItWould) {
  torch::manual_seed(5);
  for (const std::int64_t vocab : {8192, 37}) {
    const auto logits = torch::randn({9, vocab}) * 8;
    auto targets = torch::randint(vocab, {9}, torch::kLong);
    targets[3] = vocab - 1;
    auto fp32 = logits.clone(), in_bf16 = logits.clone();
    auto rounded = torch::empty({9, vocab}, torch::kBFloat16);
    const auto losses = softmax_loss_in_place(fp32, targets);
    const auto rounded_losses = softmax_loss_in_place(in_bf16, targets, &rounded);
    ASSERT_EQ(rounded_losses.has_value(), cpu_has_avx512());
    if (!losses) continue;
    EXPECT_EQ(*rounded_losses, *losses);
    EXPECT_TRUE(rounded.equal(fp32.to(torch::kBFloat16))) << "vocab " << vocab;
  }
}

TEST(SoftmaxLoss, LeavesWhatItDoesNotTakeToATen) {
  auto doubles = torch::randn({4, 64}, torch::kDouble);
  const auto kept = doubles.clone();
  EXPECT_FALSE(softmax_loss_in_place(doubles, torch::zeros({4}, torch::kLong)));
  EXPECT_TRUE(doubles.equal(kept));
  auto strided = torch::randn({64, 4}).t();
  EXPECT_FALSE(softmax_loss_in_place(strided, torch::zeros({4}, torch::kLong)));
}

// A target outside the vocabulary is an error, not a read out of the row; where the pass does
// not apply, ATen's gather says so instead.
TEST(SoftmaxLoss, RefusesATargetOutsideTheVocabulary) {
  auto logits = torch::randn({3, 16});
  for (const auto& targets : {torch::tensor({0, 16, 1}, torch::kLong), torch::tensor({0, -1, 1}, torch::kLong),
                              torch::tensor({0, 1}, torch::kLong)}) {
    if (cpu_has_avx512()) {
      EXPECT_THROW(softmax_loss_in_place(logits, targets), c10::Error);
    } else {
      EXPECT_FALSE(softmax_loss_in_place(logits, targets));
    }
  }
}

}  // namespace
}  // namespace normlab
