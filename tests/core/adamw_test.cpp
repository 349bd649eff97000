#include "adamw.h"

#include <gtest/gtest.h>

namespace normlab::test {
namespace {

// The fused group must take exactly LibTorch's AdamW steps, decay and bias correction included.
TEST(AdamW, MatchesLibTorchAdamW) {
  torch::manual_seed(7);
  auto reference = torch::randn({16, 8}, torch::requires_grad());
  auto ours = reference.detach().clone().requires_grad_();
  torch::optim::AdamW libtorch({reference},
                               torch::optim::AdamWOptions(0.01).betas({0.9, 0.95}).weight_decay(0.1));
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
