// Runs of one shape trained as one stacked model: each run's loss, gradients and training
// are its own, as if it were trained alone.
#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <random>

#include "core/model/stacked_model.h"
#include "core/training/learner.h"
#include "core/training/schedule.h"
#include "core/training/stacked_learner.h"

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

// The course's two pre-norm rates at a small shape.
TrainConfig course_run(double lr, std::uint64_t seed) {
  TrainConfig c;
  c.model.layers = 2;
  c.model.d_model = 32;
  c.model.heads = 2;
  c.model.context = 16;
  c.model.vocab = 256;
  c.batch_size = 4;
  c.steps = 50;
  c.warmup_steps = 30;
  c.peak_lr = lr;
  c.seed = seed;
  c.device = "cpu";
  return c;
}

// Windows of a fixed 40-token text, at offsets drawn from `rng`: a text the model learns
// within the steps, so the updates are far from small.
Batch text_batch(const TrainConfig& config, std::mt19937_64& rng) {
  static const auto text = [] {
    torch::manual_seed(11);
    return torch::randint(256, {40}, torch::kInt64).repeat({8});
  }();
  std::vector<torch::Tensor> windows;
  for (int i = 0; i < config.batch_size; ++i) {
    const auto start = std::int64_t(rng() % 200);
    windows.push_back(text.narrow(0, start, config.model.context + 1));
  }
  return split_windows(torch::stack(windows));
}

// Tolerance: the stack computes each run's step in another order (batched products, a
// materialised loss), about 1e-7 relative per sum; AdamW divides each gradient by its
// own scale, so these enter the weights at up to lr x 1e-7 a step. 1e-4 nats over 50
// steps at 6e-3 still fails on a wrong rate, batch or moment by orders of magnitude.
TEST(StackedLearner, CourseRunsStackedFollowTheirRunsAlone) {
  const std::vector<TrainConfig> configs{course_run(1e-3, 1), course_run(6e-3, 2)};
  ASSERT_EQ(stack_refusal(configs), "");
  std::vector<std::unique_ptr<Learner>> alone, in_stack;
  for (const auto& config : configs) {
    alone.push_back(std::make_unique<Learner>(config, 256, torch::kCPU));
    in_stack.push_back(std::make_unique<Learner>(config, 256, torch::kCPU, /*cuda_graph=*/false));
  }
  StackedLearner stacked({in_stack[0].get(), in_stack[1].get()}, torch::kCPU);
  std::vector<std::mt19937_64> rngs{std::mt19937_64(1), std::mt19937_64(2)};
  double worst = 0;
  for (int step = 1; step <= 50; ++step) {
    std::vector<Batch> batches;
    std::vector<double> lrs;
    for (std::size_t r = 0; r < configs.size(); ++r) {
      batches.push_back(text_batch(configs[r], rngs[r]));
      lrs.push_back(learning_rate(step - 1, 50, configs[r].warmup_steps, configs[r].peak_lr));
    }
    // A step that records layer statistics runs each run alone, on the stack's tensors.
    const bool statistics = step == 20;
    std::vector<SeriesPoint> ignored;
    torch::Tensor losses;
    if (statistics) {
      losses = torch::stack({in_stack[0]->step(batches[0], lrs[0], &ignored).reshape({}),
                             in_stack[1]->step(batches[1], lrs[1], &ignored).reshape({})});
    } else {
      losses = stacked.step(batches, lrs);
    }
    for (std::size_t r = 0; r < configs.size(); ++r) {
      const double own = alone[r]->step(batches[r], lrs[r], statistics ? &ignored : nullptr).item<double>();
      const double difference = std::abs(losses[std::int64_t(r)].item<double>() - own);
      worst = std::max(worst, difference);
      EXPECT_LT(difference, 1e-4) << "run " << r << ", step " << step;
    }
  }
  RecordProperty("worst_difference_nats", std::to_string(worst));
  std::cout << "largest difference from the runs alone: " << worst << " nats\n";
  // The trained weights are the stack's: evaluating either learner reads them.
  std::mt19937_64 heldout(7);
  const std::vector<Batch> batches{text_batch(configs[0], heldout), text_batch(configs[0], heldout)};
  for (std::size_t r = 0; r < configs.size(); ++r) {
    EXPECT_NEAR(in_stack[r]->evaluate(batches), alone[r]->evaluate(batches), 1e-4) << "run " << r;
    EXPECT_LT(alone[r]->evaluate(batches), 5.0)
        << "run " << r << " learnt some of the text (ln 256 = 5.55 at the start)";
  }
}

TEST(StackedLearner, RefusesInOneLineWhatCannotStack) {
  TrainConfig a = course_run(1e-3, 1), b = course_run(6e-3, 2);
  b.warmup_steps = 300;
  b.clip_grad_norm = 1.0;
  b.weight_decay = 0.0;
  EXPECT_EQ(stack_refusal(std::vector<TrainConfig>{a, b}), "");
  b.batch_size = 8;
  EXPECT_EQ(stack_refusal(std::vector<TrainConfig>{a, b}), "run 2 differs from run 1 in batch size");
  b = course_run(6e-3, 2);
  b.model.norm = NormPlacement::Post;
  EXPECT_EQ(stack_refusal(std::vector<TrainConfig>{a, b}), "run 2 differs from run 1 in the norm placement");
  b = course_run(6e-3, 2);
  b.autocast = "bf16";
  EXPECT_EQ(stack_refusal(std::vector<TrainConfig>{a, b}), "run 2 asks for bf16 autocast, which a stack does not do");
  EXPECT_EQ(stack_refusal(std::vector<TrainConfig>{}), "there are no runs to stack");
}

// Clipping is each run's own: a run that clips and one that does not, stacked.
TEST(StackedLearner, ClipsEachRunByItsOwnNorm) {
  TrainConfig a = course_run(3e-3, 1), b = course_run(3e-3, 2);
  a.clip_grad_norm = 0.05;  // far below the gradients' norm: every step clips
  const std::vector<TrainConfig> configs{a, b};
  std::vector<std::unique_ptr<Learner>> alone, in_stack;
  for (const auto& config : configs) {
    alone.push_back(std::make_unique<Learner>(config, 256, torch::kCPU));
    in_stack.push_back(std::make_unique<Learner>(config, 256, torch::kCPU, /*cuda_graph=*/false));
  }
  StackedLearner stacked({in_stack[0].get(), in_stack[1].get()}, torch::kCPU);
  std::mt19937_64 rng(3);
  for (int step = 1; step <= 10; ++step) {
    const std::vector<Batch> batches{text_batch(a, rng), text_batch(b, rng)};
    const auto losses = stacked.step(batches, {3e-3, 3e-3});
    for (int r = 0; r < 2; ++r) {
      EXPECT_NEAR(losses[r].item<double>(), alone[std::size_t(r)]->step(batches[std::size_t(r)], 3e-3).item<double>(),
                  1e-5)
          << "run " << r << ", step " << step;
    }
  }
}

}  // namespace
}  // namespace normlab::test
