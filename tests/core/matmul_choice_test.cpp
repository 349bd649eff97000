// `--cpu-matmul auto`: the kernel is measured once per machine and shape, kept in the
// cache, and what the cache says is what a run then uses and records.
#include "core/training/matmul_choice.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/model/linear.h"
#include "core/training/learner.h"
#include "core/training/trainer.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class MatmulChoiceTest : public CacheTest {
 protected:
  void SetUp() override {
    CacheTest::SetUp();
    fs::create_directories(cache_dir());
    config_.cpu_matmul = "auto";
  }
  void TearDown() override {
    set_onednn_matmuls(true);  // as threads start
    CacheTest::TearDown();
  }
  // Prepares the CPU for config_ as a run would; returns the precision it records.
  std::string prepare() {
    Environment environment = describe_device(config_.device, config_.threads);
    prepare_device(config_, environment);
    return environment.precision;
  }
  void write_cache(const std::string& kernel) {
    const nlohmann::json cache = {
        {matmul_choice_key(config_), {{"kernel", kernel}, {"onednn_ms", 10.0}, {"libtorch_ms", 20.0}}}};
    write_file(cache_dir() / "cpu-matmul.json", cache.dump());
  }
  nlohmann::json read_cache() const { return nlohmann::json::parse(read_file(cache_dir() / "cpu-matmul.json")); }
  TrainConfig config_ = tiny_config("unused");
};

TEST_F(MatmulChoiceTest, AutoUsesAndRecordsTheKernelTheCacheNames) {
  write_cache("libtorch");
  EXPECT_THAT(prepare(), HasSubstr("LibTorch matmuls, auto: oneDNN 10 ms a step, LibTorch 20"));
  EXPECT_FALSE(onednn_matmuls());
  write_cache("onednn");
  EXPECT_THAT(prepare(), HasSubstr("oneDNN matmuls, auto:"));
  EXPECT_TRUE(onednn_matmuls());
}

TEST_F(MatmulChoiceTest, AnExplicitKernelIsTakenWhateverTheCacheSays) {
  write_cache("libtorch");
  config_.cpu_matmul = "onednn";
  EXPECT_EQ(prepare(), "fp32, oneDNN matmuls");
  EXPECT_TRUE(onednn_matmuls());
  write_cache("onednn");
  config_.cpu_matmul = "libtorch";
  EXPECT_EQ(prepare(), "fp32");
  EXPECT_FALSE(onednn_matmuls());
}

// Without an entry the kernels are timed; the choice follows the rule from the times it
// keeps, and the next run reads it instead of timing again.
TEST_F(MatmulChoiceTest, MeasuresOnceAndKeepsItsChoice) {
  const MatmulChoice first = choose_cpu_matmul(config_);
  EXPECT_TRUE(first.measured_now);
  EXPECT_GT(first.onednn_ms, 0);
  EXPECT_GT(first.libtorch_ms, 0);
  EXPECT_EQ(first.onednn, onednn_wins(first.onednn_ms, first.libtorch_ms));
  const auto kept = read_cache().at(matmul_choice_key(config_));
  EXPECT_EQ(kept.at("kernel"), first.onednn ? "onednn" : "libtorch");
  const MatmulChoice again = choose_cpu_matmul(config_);
  EXPECT_FALSE(again.measured_now);
  EXPECT_EQ(again.onednn, first.onednn);
  EXPECT_EQ(again.onednn_ms, first.onednn_ms);
}

// Another shape, thread count or way of sharing the threads is another entry: the faster
// kernel can differ.
TEST_F(MatmulChoiceTest, EachShapeThreadCountAndSlicingHasItsOwnEntry) {
  const std::string key = matmul_choice_key(config_);
  TrainConfig wider = config_;
  wider.model.d_model *= 2;
  EXPECT_NE(matmul_choice_key(wider), key);
  TrainConfig longer = config_;
  longer.batch_size *= 2;
  EXPECT_NE(matmul_choice_key(longer), key);
  {
    const TorchThreads more(torch::get_num_threads() + 1);
    EXPECT_NE(matmul_choice_key(config_), key);
  }
  EXPECT_EQ(matmul_choice_key(config_), key);
  // At two threads a step in slices of the batch is another entry than one of whole batches.
  const TorchThreads two(2);
  TrainConfig sliced = config_, whole = config_;
  sliced.batch_size = whole.batch_size = 4;
  sliced.cpu_parallel = "batch";
  whole.cpu_parallel = "operators";
  EXPECT_NE(matmul_choice_key(sliced), matmul_choice_key(whole));
}

TEST_F(MatmulChoiceTest, ADamagedCacheIsMeasuredOver) {
  write_file(cache_dir() / "cpu-matmul.json", "{\"half a file");
  const MatmulChoice choice = choose_cpu_matmul(config_);
  EXPECT_TRUE(choice.measured_now);
  EXPECT_TRUE(read_cache().contains(matmul_choice_key(config_)));
}

// LibTorch's kernel only when clearly faster: a near tie keeps oneDNN's, whose numbers the
// figures show.
TEST(MatmulChoiceRule, LibTorchsKernelOnlyWhenFivePercentFaster) {
  EXPECT_TRUE(onednn_wins(100, 200));
  EXPECT_TRUE(onednn_wins(100, 100));
  EXPECT_TRUE(onednn_wins(100, 96));
  EXPECT_FALSE(onednn_wins(100, 94));
  EXPECT_FALSE(onednn_wins(100, 50));
}

}  // namespace
}  // namespace normlab::test
