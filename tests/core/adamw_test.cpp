#include "core/training/adamw.h"

#include <gtest/gtest.h>

namespace normlab::test {
namespace {

// The fused group must take exactly LibTorch's AdamW steps, decay and bias correction included.
TEST(AdamW, MatchesLibTorchAdamW) {
  torch::manual_seed(7);
  auto reference = torch::randn({16, 8}, torch::requires_grad());
  auto ours = reference.detach().clone().requires_grad_();
  torch::optim::AdamW libtorch({reference}, torch::optim::AdamWOptions(0.01).betas({0.9, 0.95}).weight_decay(0.1));
  AdamWSettings settings;
  settings.weight_decay = 0.1;
  AdamWGroup group({ours}, settings);
  for (int step = 0; step < 5; ++step) {
    const auto target = torch::randn({16, 8});
    libtorch.zero_grad();
    group.zero_grad();
    (reference - target).pow(2).sum().backward();
    (ours - target).pow(2).sum().backward();
    libtorch.step();
    group.step(0.01);
    ASSERT_TRUE(torch::allclose(ours, reference, 1e-5, 1e-7)) << "step " << step;
  }
}

// A group given another's state (as a resumed run's is) takes the same steps, to the bit.
TEST(AdamW, CopiedStateTakesTheSameSteps) {
  torch::manual_seed(7);
  auto first = torch::randn({16, 8}, torch::requires_grad());
  AdamWSettings settings;
  settings.weight_decay = 0.1;
  AdamWGroup original({first}, settings);
  const auto target = torch::randn({16, 8});
  auto update = [&](AdamWGroup& group, torch::Tensor& weights) {
    group.zero_grad();
    (weights - target).pow(2).sum().backward();
    group.step(0.01);
  };
  for (int step = 0; step < 3; ++step) update(original, first);

  auto second = first.detach().clone().requires_grad_();
  AdamWGroup copy({second}, settings);
  const auto from = original.state(), to = copy.state();
  ASSERT_EQ(from.size(), 3u);  // moment, second moment, step count of the one parameter
  for (std::size_t i = 0; i < from.size(); ++i) to[i].copy_(from[i]);
  for (int step = 0; step < 3; ++step) {
    update(original, first);
    update(copy, second);
    ASSERT_TRUE(torch::equal(first, second)) << "step " << step;
  }
}

TEST(AdamW, SkipsParametersWithoutGradient) {
  auto used = torch::ones({4}, torch::requires_grad());
  auto unused = torch::ones({4}, torch::requires_grad());
  AdamWGroup group({used, unused}, AdamWSettings{});
  used.sum().backward();
  group.step(0.1);
  EXPECT_FALSE(torch::equal(used, torch::ones({4})));
  EXPECT_TRUE(torch::equal(unused, torch::ones({4})));
}

}  // namespace
}  // namespace normlab::test
