// Every test runs LibTorch on one thread: the suite shares two busy cores, where
// torch's thread pool would spin against itself and other jobs (10x slower here).
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace {

struct OneThread : ::testing::Environment {
  void SetUp() override { torch::set_num_threads(1); }
};

const auto* const one_thread = ::testing::AddGlobalTestEnvironment(new OneThread);

}  // namespace
