// The same run on the CPU and on a CUDA GPU, compared step by step. Runs only where
// LibTorch sees a GPU; elsewhere each test says plainly that it was skipped.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "core/device/cuda_backend.h"
#include "core/training/bench.h"
#include "core/training/learner.h"
#include "core/training/stacked_learner.h"
#include "core/training/text_samples.h"
#include "core/training/trainer.h"

#include "test_support.h"

namespace normlab::test {
namespace {

class CudaTest : public CacheTest {
 protected:
  void SetUp() override {
    CacheTest::SetUp();
    if (describe_device("auto").device == "cuda") return;
    // On the GPU machine (scripts/gpu-check.sh) a skip would pass for a check made.
    if (std::getenv("NORMLAB_REQUIRE_CUDA")) FAIL() << "NORMLAB_REQUIRE_CUDA is set and no CUDA GPU was found";
    GTEST_SKIP() << "no CUDA GPU here: CPU/CUDA agreement not checked";
  }
  // The GPU, set up on this thread with config_'s settings and TF32 off, so both sides of
  // a comparison compute in fp32.
  torch::Device prepare_cuda() {
    config_.device = "cuda";
    config_.tf32 = "off";
    Environment environment = describe_device(config_.device, config_.threads);
    return prepare_device(config_, environment);
  }
  TrainConfig config_ = tiny_config(corpus_file(synthetic_corpus()));
};

// Tolerance: both sides compute in fp32 (TF32 off) from the same weights and batches and
// differ only in summation order, about 1e-6 relative per reduction, so the first loss
// (about 5.5 nats) agrees to 1e-4. Each AdamW update divides by the gradient's own scale,
// so those rounding differences enter the weights at up to lr × 1e-6 per step and the
// losses drift apart slowly: at lr 1e-3, pre-norm, 50 steps, 2e-3 nats leaves 20× room
// over that estimate while still failing on a wrong kernel or a batch off by one token.
TEST_F(CudaTest, SameRunOnCpuAndCudaAgreesOverFiftySteps) {
  config_.steps = 50;
  config_.eval_interval = 25;
  config_.peak_lr = 1e-3;
  config_.tf32 = "off";
  config_.device = "cpu";
  const RunRecord cpu = train(config_);
  config_.device = "cuda";
  const RunRecord cuda = train(config_);
  ASSERT_EQ(cuda.environment.precision, "fp32");
  ASSERT_EQ(cpu.steps.size(), 50u);
  ASSERT_EQ(cuda.steps.size(), 50u);
  EXPECT_NEAR(cpu.steps[0].train_loss, cuda.steps[0].train_loss, 1e-4);
  double worst = 0;
  for (std::size_t i = 0; i < cpu.steps.size(); ++i) {
    worst = std::max(worst, std::abs(cpu.steps[i].train_loss - cuda.steps[i].train_loss));
  }
  EXPECT_LT(worst, 2e-3);
  ASSERT_EQ(cpu.evals.size(), cuda.evals.size());
  for (std::size_t i = 0; i < cpu.evals.size(); ++i) {
    EXPECT_NEAR(cpu.evals[i].val_loss, cuda.evals[i].val_loss, 2e-3) << "evaluation " << i;
  }
}

// The graph replays the same kernels on the same tensors; only the learning rate differs
// in form (a float32 tensor against a double), a relative 3e-8 of each update, far below
// the 1e-5 nats allowed over 20 steps. A step that records statistics in the middle runs
// eagerly between replays and must leave the graph's tensors as the next replay expects.
TEST_F(CudaTest, GraphedStepsGiveTheLossesOfEagerOnes) {
  const torch::Device device = prepare_cuda();
  Learner eager(config_, 256, device, /*cuda_graph=*/false);
  Learner graphed(config_, 256, device, /*cuda_graph=*/true);
  torch::manual_seed(7);
  for (int step = 1; step <= 20; ++step) {
    const auto windows = torch::randint(256, {config_.batch_size, config_.model.context + 1}, torch::kInt64);
    const Batch batch = to_device(split_windows(windows), device);
    const double lr = 1e-3 * step / 20;
    std::vector<SeriesPoint> statistics;
    std::vector<SeriesPoint>* recording = step == 12 ? &statistics : nullptr;
    const double eager_loss = eager.step(batch, lr, recording).item<double>();
    const double graphed_loss = graphed.step(batch, lr, recording).item<double>();
    EXPECT_NEAR(eager_loss, graphed_loss, 1e-5) << "step " << step;
  }
  EXPECT_EQ(graphed.cuda_graph_state(), "replayed");
  EXPECT_EQ(eager.cuda_graph_state(), "eager");
}

// Steps that record the layer statistics replay a graph of their own once the first few
// have run eagerly: its statistics and losses are the eager steps', with plain steps (the
// other graph) between them. Tolerance as above; the statistics are norms and means of the
// same tensors, and the update ratio carries the learning rate's float32 form.
TEST_F(CudaTest, GraphedRecordingStepsGiveTheStatisticsOfEagerOnes) {
  const torch::Device device = prepare_cuda();
  Learner eager(config_, 256, device, /*cuda_graph=*/false);
  Learner graphed(config_, 256, device, /*cuda_graph=*/true);
  torch::manual_seed(7);
  for (int step = 1; step <= 16; ++step) {
    const auto windows = torch::randint(256, {config_.batch_size, config_.model.context + 1}, torch::kInt64);
    const Batch batch = to_device(split_windows(windows), device);
    const double lr = 1e-3 * step / 16;
    if (step % 4 == 3) {  // a plain step between
      EXPECT_NEAR(eager.step(batch, lr).item<double>(), graphed.step(batch, lr).item<double>(), 1e-5);
      continue;
    }
    std::vector<SeriesPoint> eager_points, graphed_points;
    const double eager_loss = eager.step(batch, lr, &eager_points).item<double>();
    const double graphed_loss = graphed.step(batch, lr, &graphed_points).item<double>();
    EXPECT_NEAR(eager_loss, graphed_loss, 1e-5) << "step " << step;
    ASSERT_EQ(graphed_points.size(), eager_points.size());
    for (std::size_t i = 0; i < eager_points.size(); ++i) {
      ASSERT_EQ(graphed_points[i].series, eager_points[i].series);
      ASSERT_EQ(graphed_points[i].values.size(), eager_points[i].values.size());
      for (std::size_t k = 0; k < eager_points[i].values.size(); ++k) {
        const double expected = eager_points[i].values[k];
        EXPECT_NEAR(graphed_points[i].values[k], expected, 1e-4 * std::abs(expected) + 1e-7)
            << eager_points[i].series << " value " << k << " at step " << step;
      }
    }
  }
  EXPECT_EQ(graphed.recording_graph_state(), "replayed");
  EXPECT_EQ(eager.recording_graph_state(), "eager");
}

// The text on the GPU (continue_prompts_on_device): the same model's greedy text as on the
// CPU (fp32 both sides; a tiny model's logits are far from ties), samples that repeat for
// their seeds, and one read from the device for prompts of two lengths.
TEST_F(CudaTest, TextOnTheGpuIsTheCpusGreedyTextReadOnce) {
  config_.model.context = 16;
  const torch::Device device = prepare_cuda();
  Learner on_cpu(config_, 256, torch::kCPU);
  Learner on_gpu(config_, 256, device);
  const std::vector<std::vector<int>> prompts{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11}, {17, 18, 19, 20, 21, 22, 23, 24}};
  const std::vector<std::uint64_t> seeds{1, 2, 3};
  const auto cpu = continue_prompts(on_cpu.decoder(), prompts, kContinuationTokens, 1.0, seeds, torch::kCPU);
  int reads = 0;
  const auto gpu =
      continue_prompts_on_device(on_gpu.decoder(), prompts, kContinuationTokens, 1.0, seeds, device, &reads);
  const auto again = continue_prompts(on_gpu.decoder(), prompts, kContinuationTokens, 1.0, seeds, device);
  EXPECT_EQ(reads, 1);
  for (std::size_t i = 0; i < prompts.size(); ++i) {
    EXPECT_EQ(gpu[i].greedy, cpu[i].greedy) << "prompt " << i;
    EXPECT_EQ(gpu[i].sampled.size(), std::size_t(kContinuationTokens));
    EXPECT_EQ(again[i].sampled, gpu[i].sampled) << "continue_prompts takes the device path on CUDA";
  }
}

// Issue 52: the decoder's step replayed as a CUDA graph (graphed_decode.h) writes the text
// the eager decoder writes (greedy: the same logits up to the order of sums, far from
// ties in a tiny model), over two recordings and prompts of two lengths (two row counts,
// two graphs), and a replay past the first token is what ran.
TEST_F(CudaTest, TheGraphedDecoderWritesTheEagerDecodersText) {
  config_.model.context = 16;
  const torch::Device device = prepare_cuda();
  Learner eager(config_, 256, device, /*cuda_graph=*/false);
  Learner graphed(config_, 256, device, /*cuda_graph=*/true);
  const std::vector<std::vector<int>> prompts{{1, 2, 3, 4, 5, 6, 7, 8}, {9, 10, 11}, {17, 18, 19, 20, 21, 22, 23, 24}};
  const std::vector<std::uint64_t> seeds{1, 2, 3};
  const auto expected = continue_prompts(eager.decoder(), prompts, kContinuationTokens, 1.0, seeds, device);
  EXPECT_EQ(graphed.decode_graph_state(), "eager") << "nothing decoded yet";
  for (int recording = 0; recording < 2; ++recording) {
    const auto text = continue_prompts(graphed.decoder(), prompts, kContinuationTokens, 1.0, seeds, device);
    for (std::size_t i = 0; i < prompts.size(); ++i)
      EXPECT_EQ(text[i].greedy, expected[i].greedy) << "prompt " << i << ", recording " << recording;
  }
  EXPECT_EQ(graphed.decode_graph_state(), "replayed");
  EXPECT_EQ(eager.decode_graph_state(), "eager");
}

TEST_F(CudaTest, Tf32IsOnByDefaultOnGpusThatHaveIt) {
  config_.steps = 2;
  config_.device = "cuda";
  const RunRecord run = train(config_);
  EXPECT_EQ(run.environment.precision, cuda_compute_capability_major() >= 8 ? "tf32 matmuls" : "fp32");
}

// Issue 52: the GPU check's bench times the steps that record the layer statistics as
// their own graph replays (learner.h), and says so.
TEST_F(CudaTest, TheBenchTimesRecordingStepsAsTheirOwnGraph) {
  config_.device = "cuda";
  config_.layer_stats_every = 1;
  config_.text_every = 0;
  const BenchResult r = benchmark(config_, 4, 10, /*cuda_graph=*/true);
  EXPECT_EQ(r.cuda_graph, "replayed");
  EXPECT_EQ(r.cuda_graph_recording, "replayed");
  EXPECT_GT(r.median_ms_per_recorded_step, 0);
}

// The GPU check's kernel count: a graphed step's kernels seen inside its one launch (the
// profiler reads them from CUPTI), the optimiser's among them, sorted by time, and their
// summed time within the steps' wall time.
TEST_F(CudaTest, AGraphedStepsProfileCountsItsKernels) {
  config_.device = "cuda";
  config_.layer_stats_every = 0;
  config_.text_every = 0;
  const BenchResult r = benchmark(config_, 5, 2, /*cuda_graph=*/true, 3);
  ASSERT_EQ(r.cuda_graph, "replayed");
  ASSERT_EQ(r.profile.steps, 3);
  // Forward, backward and update of 2 blocks are far more than a few dozen kernels.
  EXPECT_GT(r.profile.gpu_kernels_per_step, 50);
  EXPECT_GT(r.profile.gpu_busy_ms_per_step, 0);
  EXPECT_LE(r.profile.gpu_busy_ms_per_step, r.profile.ms_per_step);
  ASSERT_FALSE(r.profile.gpu_kernels.empty());
  for (std::size_t i = 1; i < r.profile.gpu_kernels.size(); ++i)
    EXPECT_GE(r.profile.gpu_kernels[i - 1].ms_per_step, r.profile.gpu_kernels[i].ms_per_step);
  const bool adamw = std::any_of(r.profile.gpu_kernels.begin(), r.profile.gpu_kernels.end(),
                                 [](const ProfiledKernel& k) { return k.name.find("adam") != std::string::npos; });
  EXPECT_TRUE(adamw) << "the fused AdamW kernel is among the graph's";
}

// Issue 52: two runs stacked on the GPU, the stack's update replayed as one CUDA graph
// after its eager steps, against each run's eager Learner. fp32 (TF32 off) in both, so
// only the order of sums differs, as in the CPU test (stacked_test.cpp); a graph that
// read a stale rate or batch would be off by far more than 1e-4.
TEST_F(CudaTest, StackedRunsReplayedAsOneGraphFollowTheirRunsAlone) {
  const torch::Device device = prepare_cuda();
  TrainConfig fast = config_;
  fast.peak_lr = 6e-3;
  fast.seed = 2;
  const std::vector<TrainConfig> configs{config_, fast};
  std::vector<std::unique_ptr<Learner>> alone, in_stack;
  for (const auto& config : configs) {
    alone.push_back(std::make_unique<Learner>(config, 256, device, /*cuda_graph=*/false));
    in_stack.push_back(std::make_unique<Learner>(config, 256, device, /*cuda_graph=*/false));
  }
  StackedLearner stacked({in_stack[0].get(), in_stack[1].get()}, device, /*cuda_graph=*/true);
  torch::manual_seed(7);
  for (int step = 1; step <= 20; ++step) {
    std::vector<Batch> batches;
    std::vector<double> lrs;
    for (const auto& config : configs) {
      const auto windows = torch::randint(256, {config.batch_size, config.model.context + 1}, torch::kInt64);
      batches.push_back(to_device(split_windows(windows), device));
      lrs.push_back(config.peak_lr * step / 20);
    }
    const auto losses = stacked.step(batches, lrs).cpu();
    for (std::size_t r = 0; r < configs.size(); ++r) {
      EXPECT_NEAR(losses[std::int64_t(r)].item<double>(), alone[r]->step(batches[r], lrs[r]).item<double>(), 1e-4)
          << "run " << r << ", step " << step;
    }
  }
  EXPECT_EQ(stacked.cuda_graph_state(), "replayed");
}

}  // namespace
}  // namespace normlab::test
