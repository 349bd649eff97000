// A CPU step that gives each thread a slice of the batch (--cpu-parallel batch; learner.h,
// slice_workers.h).
#include <atomic>
#include <gtest/gtest.h>
#include <stdexcept>
#include <torch/torch.h>

#include "core/training/learner.h"
#include "core/training/slice_workers.h"

#include "test_support.h"

namespace normlab::test {
namespace {

TEST(BatchSlices, TheMostSlicesUpToOneAThreadThatDivideTheBatch) {
  TrainConfig config;
  config.batch_size = 8;
  EXPECT_EQ(batch_slices(config, 2), 2);
  EXPECT_EQ(batch_slices(config, 3), 2) << "three do not divide 8";
  EXPECT_EQ(batch_slices(config, 16), 8) << "never more than a sequence a slice";
  EXPECT_EQ(batch_slices(config, 1), 1);
  config.batch_size = 6;
  EXPECT_EQ(batch_slices(config, 4), 3);
  config.batch_size = 7;
  EXPECT_EQ(batch_slices(config, 2), 1) << "a prime batch is taken whole";
  config.batch_size = 8;
  config.cpu_parallel = "operators";
  EXPECT_EQ(batch_slices(config, 2), 1);
}

TrainConfig sliced_config(const std::string& parallel) {
  TrainConfig config = tiny_config("unused");
  config.batch_size = 4;
  config.cpu_parallel = parallel;
  config.fused_loss = "on";
  return config;
}

std::vector<Batch> random_batches(const TrainConfig& config, int count) {
  torch::manual_seed(11);
  std::vector<Batch> batches;
  for (int i = 0; i < count; ++i) {
    batches.push_back(split_windows(
        torch::randint(config.model.vocab, {config.batch_size, config.model.context + 1}, torch::kInt64)));
  }
  return batches;
}

// The mean loss's gradients are the slices' summed: the same gradients as the whole
// batch's up to the order of sums, and the same losses step after step. (Not the same
// parameters to a tolerance: AdamW's first steps move a parameter by about the rate
// whatever the size of its gradient, so a near-zero gradient's rounding moves it far.)
TEST(BatchSlices, AStepInSlicesIsTheWholeBatchsStep) {
  const TorchThreads two(2);  // as a run at two threads has
  const TrainConfig whole_config = sliced_config("operators"), sliced = sliced_config("batch");
  Learner whole(whole_config, whole_config.model.vocab, torch::kCPU);
  Learner in_slices(sliced, sliced.model.vocab, torch::kCPU);
  const auto batches = random_batches(sliced, 6);
  EXPECT_NEAR(in_slices.step(batches[0], 3e-3).item<double>(), whole.step(batches[0], 3e-3).item<double>(), 1e-6);
  const auto a = whole.model()->parameters(), b = in_slices.model()->parameters();
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_TRUE(b[i].grad().defined()) << "parameter " << i;
    const double scale = a[i].grad().abs().max().item<double>();
    EXPECT_TRUE(torch::allclose(b[i].grad(), a[i].grad(), 1e-4, 1e-5 * scale)) << "parameter " << i << "'s gradient";
  }
  for (std::size_t i = 1; i < batches.size(); ++i)
    EXPECT_NEAR(in_slices.step(batches[i], 3e-3).item<double>(), whole.step(batches[i], 3e-3).item<double>(), 1e-4);
}

// Whichever slice's thread finishes first, the sums are made in slice order: two runs in
// slices are the same to the last bit.
TEST(BatchSlices, StepsInSlicesRepeatToTheLastBit) {
  const TorchThreads two(2);  // as a run at two threads has
  const TrainConfig config = sliced_config("batch");
  Learner first(config, config.model.vocab, torch::kCPU);
  Learner second(config, config.model.vocab, torch::kCPU);
  for (const Batch& batch : random_batches(config, 6)) {
    EXPECT_EQ(first.step(batch, 3e-3).item<double>(), second.step(batch, 3e-3).item<double>());
  }
  const auto a = first.state(), b = second.state();
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_TRUE(torch::equal(a[i], b[i])) << "tensor " << i;
}

// Every slice runs on its own thread at one LibTorch thread, the caller's count comes back
// afterwards, and a slice's error reaches the caller without stopping the next round.
TEST(SliceWorkers, EachSliceRunsOnceAtOneThreadAndErrorsReachTheCaller) {
  const TorchThreads two(2);  // as a run at two threads has
  SliceWorkers workers(3);
  ASSERT_EQ(workers.slices(), 3);
  std::atomic<int> ran{0}, at_one_thread{0};
  workers.run([&](int slice) {
    ran += 1 << slice;
    at_one_thread += torch::get_num_threads() == 1;
  });
  EXPECT_EQ(ran, 1 + 2 + 4) << "each slice once";
  EXPECT_EQ(at_one_thread, 3);
  EXPECT_EQ(torch::get_num_threads(), 2) << "the caller's count restored";
  EXPECT_THROW(workers.run([](int slice) {
    if (slice == 2) throw std::runtime_error("slice 2 failed");
  }),
               std::runtime_error);
  EXPECT_EQ(torch::get_num_threads(), 2);
  ran = 0;
  workers.run([&](int slice) { ran += 1 << slice; });
  EXPECT_EQ(ran, 7) << "the workers go on after an error";
}

}  // namespace
}  // namespace normlab::test
