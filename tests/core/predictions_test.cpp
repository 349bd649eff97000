// Context use and frequency mismatch (core/training/predictions.h) on logits whose answer
// is known, in float64.
#include <cmath>
#include <torch/torch.h>

#include "core/runs/run_title.h"
#include "core/runs/verdict.h"
#include "core/training/prediction_tally.h"

#include "test_support.h"

namespace normlab::test {
namespace {

constexpr int kVocab = 50;

// A unigram over kVocab tokens, uneven, as log probabilities.
torch::Tensor some_unigram() {
  const auto weights = torch::arange(1, kVocab + 1, torch::kFloat64).pow(-1.1);
  return (weights / weights.sum()).log();
}

TEST(Predictions, TheSamePredictionEverywhereUsesNoContext) {
  PredictionTally tally(some_unigram());
  const auto one = torch::randn({kVocab}, torch::kFloat32) * 3;
  tally.add(one.expand({4, 300, kVocab}));
  const PredictionStats stats = tally.result();
  EXPECT_LT(std::abs(stats.context_use), 1e-6);
  EXPECT_GT(stats.frequency_mismatch, 0.1) << "random logits are not the unigram";
}

TEST(Predictions, TheUnigramItselfMatchesTheFrequencies) {
  const auto log_u = some_unigram();
  PredictionTally tally(log_u);
  tally.add(log_u.to(torch::kFloat32).expand({2500, kVocab}));  // more than one block of rows
  const PredictionStats stats = tally.result();
  EXPECT_LT(std::abs(stats.frequency_mismatch), 1e-6);
  EXPECT_LT(std::abs(stats.context_use), 1e-6);
}

// Two contexts, each sure of its own token: the prediction is a fair coin's worth of
// information about the context, log 2 nats.
TEST(Predictions, TwoSurePredictionsUseOneBitOfContext) {
  PredictionTally tally(some_unigram());
  auto logits = torch::full({2, kVocab}, -60.0f);
  logits[0][3] = 60;
  logits[1][7] = 60;
  tally.add(logits.repeat({600, 1}));
  EXPECT_NEAR(tally.result().context_use, std::log(2.0), 1e-9);
}

// Context use is the mean KL of each prediction from their mean, computed another way.
TEST(Predictions, ContextUseIsTheMeanDivergenceFromTheMeanPrediction) {
  torch::manual_seed(3);
  const auto logits = torch::randn({3, 700, kVocab}, torch::kFloat64) * 2;
  PredictionTally tally(some_unigram());
  tally.add(logits.to(torch::kFloat32));
  const auto log_q = torch::log_softmax(logits.to(torch::kFloat32).to(torch::kFloat64).view({-1, kVocab}), -1);
  const auto q_mean = log_q.exp().mean(0);
  const double mean_kl = (log_q.exp() * (log_q - q_mean.log())).sum(-1).mean().item<double>();
  const auto u = some_unigram().exp();
  const double mismatch = (q_mean * (q_mean.log() - u.log())).sum().item<double>();
  const PredictionStats stats = tally.result();
  EXPECT_NEAR(stats.context_use, mean_kl, 1e-9);
  EXPECT_NEAR(stats.frequency_mismatch, mismatch, 1e-9);
}

TEST(Predictions, Bf16LogitsAreReadInFloat64) {
  torch::manual_seed(4);
  const auto logits = (torch::randn({500, kVocab}) * 2).to(torch::kBFloat16);
  PredictionTally from_bf16(some_unigram()), from_float(some_unigram());
  from_bf16.add(logits);
  from_float.add(logits.to(torch::kFloat32));
  EXPECT_EQ(from_bf16.result().context_use, from_float.result().context_use);
  EXPECT_GT(from_bf16.result().context_use, 0.1);
}

TEST(Predictions, EachStatisticIsOnePointAtTheStep) {
  const auto points = prediction_points({0.5, 0.25}, 40);
  ASSERT_EQ(points.size(), prediction_statistics().size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(points[i].series, prediction_statistics()[i].name);
    EXPECT_EQ(points[i].step, 40);
    EXPECT_EQ(points[i].layers, 0);
  }
  EXPECT_EQ(points[0].values, std::vector<double>{0.5});
  EXPECT_EQ(points[1].values, std::vector<double>{0.25});
}

}  // namespace
}  // namespace normlab::test
