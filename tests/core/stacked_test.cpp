// Runs of one shape trained as one stacked model: each run's loss, gradients and training
// are its own, as if it were trained alone.
#include <algorithm>
#include <cmath>

#include "core/model/stacked_model.h"

#include "test_support.h"

namespace normlab::test {
namespace {

ModelConfig small(NormPlacement norm) {
  ModelConfig m;
  m.layers = 4;  // Mix then has a post-norm block and three pre-norm ones
  m.d_model = 32;
  m.heads = 2;
  m.context = 16;
  m.vocab = 64;
  m.norm = norm;
  return m;
}

// Each model as Learner builds it: torch seeded with the run's seed first.
std::vector<Gpt> models(const ModelConfig& config, const std::vector<std::uint64_t>& seeds) {
  std::vector<Gpt> built;
  for (const auto seed : seeds) {
    torch::manual_seed(seed);
    built.emplace_back(config);
  }
  return built;
}

// The stacked loss and gradients of three runs, each on its own batch, against each
// model's own: the same arithmetic in another order (batched products, a materialised
// output loss), so they agree to fp32 rounding.
void expect_runs_alone(const ModelConfig& config) {
  auto alone = models(config, {1, 2, 3});
  const int runs = 3, batch = 4, time = config.context;
  torch::manual_seed(9);
  const auto ids = torch::randint(config.vocab, {runs, batch, time}, torch::kInt64);
  const auto targets = torch::randint(config.vocab, {runs, batch, time}, torch::kInt64);
  StackedModel stacked(alone);
  const auto losses = stacked.loss(ids, targets);
  ASSERT_EQ(losses.sizes(), (std::vector<std::int64_t>{runs}));
  losses.sum().backward();
  for (int r = 0; r < runs; ++r) {
    const auto loss = alone[r]->loss(ids[r], targets[r]);
    loss.backward();
    EXPECT_TRUE(torch::allclose(losses[r], loss, 1e-5, 1e-5))
        << "run " << r << ": stacked " << losses[r].item<double>() << ", alone " << loss.item<double>();
    for (const auto& item : alone[r]->named_parameters()) {
      const auto stacked_gradient = stacked.parameter(item.key()).grad()[r];
      EXPECT_TRUE(torch::allclose(stacked_gradient, item.value().grad(), 1e-5, 1e-5))
          << "run " << r << ", " << item.key() << ": largest difference "
          << (stacked_gradient - item.value().grad()).abs().max().item<double>();
    }
  }
}

class StackedModelTest : public ::testing::TestWithParam<NormPlacement> {};

TEST_P(StackedModelTest, EachRunsLossAndGradientsAreItsModelsOwn) { expect_runs_alone(small(GetParam())); }

INSTANTIATE_TEST_SUITE_P(Placements, StackedModelTest,
                         ::testing::Values(NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri,
                                           NormPlacement::DeepNorm, NormPlacement::Mix, NormPlacement::LayerNormScaling,
                                           NormPlacement::ReZero),
                         [](const auto& info) { return std::string(normlab::info(info.param).name); });

TEST(StackedModel, RmsNormAndDytWithTheSwitchesStackToo) {
  ModelConfig rms = small(NormPlacement::Pre);
  rms.norm_type = NormType::RmsNorm;
  rms.qk_norm = Switch::On;
  expect_runs_alone(rms);
  ModelConfig dyt = small(NormPlacement::Peri);
  dyt.norm_type = NormType::Dyt;
  dyt.scaled_residual_init = Switch::On;
  expect_runs_alone(dyt);
}

TEST(StackedModel, StartsFromEachModelsWeightsAndSharesThem) {
  auto alone = models(small(NormPlacement::Pre), {5, 6});
  const auto before = alone[1]->named_parameters()["blocks.1.mlp.up.weight"].clone();
  StackedModel stacked(alone);
  const auto& stacked_up = stacked.parameter("blocks.1.mlp.up.weight");
  EXPECT_TRUE(torch::equal(stacked_up[1], before));
  EXPECT_FALSE(torch::equal(stacked_up[0], before));  // another seed, other weights
  {
    torch::NoGradGuard no_grad;
    stacked_up.add_(1.0);
  }
  EXPECT_TRUE(torch::equal(alone[1]->named_parameters()["blocks.1.mlp.up.weight"], before + 1.0));
}

TEST(StackedModel, RefusesModelsOfAnotherShape) {
  ModelConfig wider = small(NormPlacement::Pre);
  wider.d_model = 64;
  EXPECT_EQ(stack_refusal({small(NormPlacement::Pre), small(NormPlacement::Pre), wider}),
            "run 3 differs from run 1 in d_model");
  EXPECT_EQ(stack_refusal({small(NormPlacement::Pre), small(NormPlacement::Post)}),
            "run 2 differs from run 1 in the norm placement");
  EXPECT_EQ(stack_refusal({small(NormPlacement::Pre), small(NormPlacement::Pre)}), "");
  auto mixed = models(small(NormPlacement::Pre), {1});
  auto post = models(small(NormPlacement::Post), {1});
  mixed.push_back(post[0]);
  EXPECT_THROW(StackedModel{mixed}, std::invalid_argument);
}

}  // namespace
}  // namespace normlab::test
