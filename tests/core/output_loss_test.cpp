// The fused, chunked output loss against the unfused one, and linear layers that multiply in
// bf16: the same numbers within their rounding, the same learning within a run's noise.
#include "core/model/output_loss.h"

#include <cmath>

#include "core/model/linear.h"
#include "core/system/user_error.h"
#include "core/training/adamw.h"
#include "core/training/learner.h"
#include "core/training/trainer.h"
#include "tests/support/synthetic_corpus.h"
#include "tests/support/tiny_config.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

// Restores the calling thread's choices, whatever a test set.
class OutputLossTest : public ::testing::Test {
 protected:
  void TearDown() override {
    set_fused_loss(true);
    set_bf16_matmuls(false);
    set_onednn_matmuls(true);
  }
};

struct LossAndGradients {
  double loss;
  torch::Tensor hidden_gradient, weight_gradient;
};

// 2 x 300 positions: two whole chunks of 256 and a part of one, a vocabulary of 1000.
LossAndGradients loss_of(bool fused) {
  set_fused_loss(fused);
  torch::manual_seed(3);
  auto hidden = torch::randn({2, 300, 64}).requires_grad_();
  auto weight = (torch::randn({1000, 64}) * 0.3).requires_grad_();
  const auto targets = torch::randint(1000, {2, 300});
  auto loss = output_loss(hidden, weight, targets);
  loss.backward();
  return {loss.item<double>(), hidden.grad(), weight.grad()};
}

double relative_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return ((a - b).norm() / b.norm()).item<double>();
}

TEST_F(OutputLossTest, FusedEqualsUnfusedWithinFp32Rounding) {
  const LossAndGradients fused = loss_of(true), unfused = loss_of(false);
  EXPECT_GT(unfused.loss, 3.0);  // a real loss, near log 1000 = 6.9 for random weights
  EXPECT_NEAR(fused.loss, unfused.loss, 1e-5 * unfused.loss);
  EXPECT_LT(relative_difference(fused.hidden_gradient, unfused.hidden_gradient), 1e-5);
  EXPECT_LT(relative_difference(fused.weight_gradient, unfused.weight_gradient), 1e-5);
  EXPECT_EQ(fused.hidden_gradient.sizes(), unfused.hidden_gradient.sizes());
}

// Each CPU kernel sums the weight's gradient over the chunks its own way (oneDNN as the
// transpose, LibTorch's addmm_ in place): both give the unfused gradient, laid out as the
// weight, so the optimiser and the tied embedding's sum take it as they take any other.
TEST_F(OutputLossTest, EveryKernelSumsTheWeightsGradientAsTheUnfusedLossDoes) {
  const LossAndGradients unfused = loss_of(false);
  for (const bool onednn : {true, false}) {
    SCOPED_TRACE(onednn ? "oneDNN" : "LibTorch");
    set_onednn_matmuls(onednn);
    const LossAndGradients fused = loss_of(true);
    EXPECT_LT(relative_difference(fused.weight_gradient, unfused.weight_gradient), 1e-5);
    EXPECT_LT(relative_difference(fused.hidden_gradient, unfused.hidden_gradient), 1e-5);
    EXPECT_TRUE(fused.weight_gradient.is_contiguous());
    EXPECT_EQ(fused.weight_gradient.sizes(), unfused.weight_gradient.sizes());
  }
}

// The gradients are made in the forward pass and scaled by the loss's own gradient.
TEST_F(OutputLossTest, TheLossesGradientScalesTheKeptGradients) {
  torch::manual_seed(4);
  auto hidden = torch::randn({300, 32}).requires_grad_();
  auto weight = torch::randn({500, 32}).requires_grad_();
  const auto targets = torch::randint(500, {300});
  (3 * output_loss(hidden, weight, targets)).backward();
  const auto tripled = hidden.grad().clone();
  hidden.mutable_grad().reset();
  output_loss(hidden, weight, targets).backward();
  EXPECT_TRUE(torch::allclose(tripled, 3 * hidden.grad(), 1e-5, 1e-7));
}

// Evaluation: no gradients, and each chunk's logits seen in order, all positions once.
TEST_F(OutputLossTest, WithoutGradientsItGivesTheLossAndEveryChunksLogits) {
  torch::manual_seed(5);
  const auto hidden = torch::randn({2, 300, 64});
  const auto weight = torch::randn({1000, 64}) * 0.3;
  const auto targets = torch::randint(1000, {2, 300});
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> chunks;
  const double loss = output_loss(hidden, weight, targets, [&](const torch::Tensor& logits) {
                        chunks.push_back(logits.clone());
                      }).item<double>();
  ASSERT_EQ(chunks.size(), 3u);
  EXPECT_EQ(chunks[2].size(0), 600 - 2 * kLossChunkPositions);
  const auto logits = torch::matmul(hidden.reshape({-1, 64}), weight.t());
  EXPECT_TRUE(torch::allclose(torch::cat(chunks), logits, 1e-4, 1e-4));
  const double reference = torch::nn::functional::cross_entropy(logits, targets.reshape({-1})).item<double>();
  EXPECT_NEAR(loss, reference, 1e-5 * reference);
}

// A layer in bf16 is the fp32 layer within bf16's rounding (8 bits of mantissa), forward
// and backward, and its outputs and gradients come out in fp32.
TEST_F(OutputLossTest, Bf16LinearIsTheFp32LayerWithinBf16Rounding) {
  torch::manual_seed(6);
  auto input = torch::randn({2, 64, 128}).requires_grad_();
  auto weight = (torch::randn({384, 128}) * 0.05).requires_grad_();
  auto bias = torch::randn({384}).requires_grad_();
  const auto upstream = torch::randn({2, 64, 384});
  auto run = [&](bool bf16) {
    set_bf16_matmuls(bf16);
    input.mutable_grad().reset();
    weight.mutable_grad().reset();
    bias.mutable_grad().reset();
    auto output = normlab::linear(input, weight, bias);
    output.backward(upstream);
    return std::vector<torch::Tensor>{output.detach(), input.grad(), weight.grad(), bias.grad()};
  };
  const auto fp32 = run(false), bf16 = run(true);
  for (std::size_t i = 0; i < fp32.size(); ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(bf16[i].scalar_type(), torch::kFloat);
    const double difference = relative_difference(bf16[i], fp32[i]);
    EXPECT_LT(difference, 1e-2);
    if (i < 3) EXPECT_GT(difference, 1e-6) << "the products did not run in bf16";  // the bias's gradient is fp32
  }
}

// The bf16 copy of a weight follows the weight: after an in-place update (the optimiser's)
// the layer multiplies with the new values.
TEST_F(OutputLossTest, ABf16WeightCopyIsMadeAgainAfterTheWeightChanges) {
  set_bf16_matmuls(true);
  auto weight = torch::ones({4, 8});
  const auto input = torch::ones({2, 8});
  torch::NoGradGuard no_grad;
  EXPECT_EQ(normlab::linear(input, weight)[0][0].item<float>(), 8.0f);
  EXPECT_EQ(normlab::linear(input, weight)[0][0].item<float>(), 8.0f);
  weight.mul_(2);
  EXPECT_EQ(normlab::linear(input, weight)[0][0].item<float>(), 16.0f);
  auto other = torch::full({4, 8}, 3.0);  // another weight, perhaps where a freed one lay
  EXPECT_EQ(normlab::linear(input, other)[0][0].item<float>(), 24.0f);
  // ATen's fused AdamW writes in place without bumping the version: AdamWGroup bumps it.
  AdamWGroup optimiser({other}, AdamWSettings{});
  other.mutable_grad() = torch::ones({4, 8});
  optimiser.step(0.5);
  EXPECT_EQ(normlab::linear(input, other)[0][0].item<float>(), 20.0f);  // each weight 3 - 0.5
}

class Bf16RunTest : public CacheTest {
 protected:
  TrainConfig config_ = [this] {
    TrainConfig c = tiny_config(corpus_file(synthetic_corpus()));
    c.peak_lr = 1e-3 * 3;  // the engine's tiny run: learns steadily
    return c;
  }();
};

// What a run says it multiplied in: bf16 where this CPU has the units, and where it has none
// it says so and keeps fp32.
TEST_F(Bf16RunTest, TheRunSaysWhatItMultipliedIn) {
  config_.cpu_precision = "bf16";
  config_.steps = 10;
  const RunRecord run = train(config_);
  if (cpu_has_bf16_units()) {
    EXPECT_THAT(run.environment.precision, HasSubstr("bf16 matmuls"));
  } else {
    EXPECT_THAT(run.environment.precision, HasSubstr("no bf16 units"));
  }
  config_.cpu_precision = "fp32";
  EXPECT_THAT(train(config_).environment.precision, ::testing::Not(HasSubstr("bf16")));
}

// A steadily learning run in bf16 ends where its fp32 twin does, within 0.05 nats.
TEST_F(Bf16RunTest, ASteadyRunInBf16EndsWithinAFewHundredthsOfItsFp32Twin) {
  const RunRecord fp32 = train(config_);
  config_.cpu_precision = "bf16";
  const RunRecord bf16 = train(config_);
  ASSERT_FALSE(fp32.evals.empty());
  ASSERT_EQ(bf16.evals.size(), fp32.evals.size());
  const double first = fp32.evals.front().val_loss, last = fp32.evals.back().val_loss;
  EXPECT_LT(last, first - 0.3) << "the fp32 twin should learn";
  EXPECT_NEAR(bf16.evals.back().val_loss, last, 0.05);
  if (cpu_has_bf16_units()) EXPECT_NE(bf16.evals.back().val_loss, last) << "bf16 changed nothing";
}

// The fused loss off gives the numbers runs before it gave: the logits made whole and
// cross_entropy, which the fused one matches within rounding.
TEST_F(Bf16RunTest, TheFusedLossSwitchedOffAndOnTrainAlike) {
  config_.steps = 50;
  config_.eval_interval = 25;
  const RunRecord fused = train(config_);
  config_.fused_loss = "off";
  const RunRecord unfused = train(config_);
  EXPECT_THAT(unfused.environment.precision, HasSubstr("unfused loss"));
  ASSERT_EQ(fused.steps.size(), unfused.steps.size());
  EXPECT_NEAR(fused.steps.front().train_loss, unfused.steps.front().train_loss, 1e-5);
  EXPECT_NEAR(fused.evals.back().val_loss, unfused.evals.back().val_loss, 1e-3);
}

}  // namespace
}  // namespace normlab::test
