#include "core/training/bench.h"

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "core/training/learner.h"
#include "core/training/text_samples.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

TEST(Bench, MeasuresATinyModel) {
  TrainConfig config = tiny_config("unused");
  const BenchResult r = benchmark(config, 1, 3);
  const ModelConfig& m = config.model;
  EXPECT_EQ(r.environment.device, "cpu");
  EXPECT_EQ(r.measured_steps, 3);
  EXPECT_GT(r.median_ms_per_step, 0);
  const double tokens = double(config.batch_size) * m.context;
  EXPECT_NEAR(r.tokens_per_s, tokens / (r.median_ms_per_step / 1e3), 1e-6 * r.tokens_per_s);
  // 6 flop per matmul weight and token (tied head included), plus attention's scores
  // and weighted sum: 2 x 2 T d per layer and token, tripled for the backward pass.
  const double weights = m.layers * 12.0 * m.d_model * m.d_model + double(m.vocab) * m.d_model;
  EXPECT_DOUBLE_EQ(r.model_flop_per_step, tokens * (6 * weights + 12.0 * m.layers * m.context * m.d_model));
  EXPECT_NEAR(r.achieved_flop_per_s, r.model_flop_per_step * r.tokens_per_s / tokens, 1e-6 * r.achieved_flop_per_s);
  EXPECT_GT(r.matmul_flop_per_s, 1e8);
  EXPECT_GT(r.parameters, 0);
  EXPECT_GT(r.median_ms_per_recorded_step, 0);   // the layer statistics are on by default
  EXPECT_EQ(r.recorded_steps_per_run, 100 + 5);  // of 150 steps: every one up to 100, then 110, 120 … 150
  config.text_every = 2;
  const BenchResult writing = benchmark(config, 1, 3);
  EXPECT_GT(writing.median_ms_per_text, 0);
  EXPECT_EQ(writing.text_recordings_per_run, text_recordings(config));
  config.layer_stats_every = 0;
  config.text_every = 0;
  const BenchResult quiet = benchmark(config, 1, 3);
  EXPECT_EQ(quiet.median_ms_per_recorded_step, 0);
  EXPECT_EQ(quiet.recorded_steps_per_run, 0);
  EXPECT_EQ(quiet.median_ms_per_text, 0);
  EXPECT_EQ(quiet.text_recordings_per_run, 0);

  EXPECT_THAT(user_error([&] { benchmark(config, 0, 0); }), HasSubstr("step"));
  config.model.heads = 3;
  EXPECT_THAT(user_error([&] { benchmark(config, 1, 1); }), HasSubstr("heads"));
}

// Issue 46 asks for few page faults a step after step 10: before it the heap is still
// growing. The faults count from the first block of timed steps that starts after the
// learner's tenth step, warm-up and recording steps included; with too few steps, over all.
TEST(Bench, CountsPageFaultsOnceTheFirstStepsAreBehind) {
  TrainConfig config = tiny_config("unused");
  config.text_every = 0;
  config.layer_stats_every = 0;
  EXPECT_EQ(benchmark(config, 3, 20).page_faults_from_step, 12);  // blocks of 4 from steps 4, 8, 12
  EXPECT_EQ(benchmark(config, 10, 5).page_faults_from_step, 11);
  const BenchResult short_one = benchmark(config, 1, 3);
  EXPECT_EQ(short_one.page_faults_from_step, 2);
  EXPECT_GE(short_one.page_faults_per_step, 0);
  config.layer_stats_every = 10;  // a recording step after each timed one: blocks from steps 4, 8, 12
  EXPECT_EQ(benchmark(config, 3, 10).page_faults_from_step, 12);
}

// A device name with a quote and a backslash still gives valid JSON.
TEST(Bench, JsonEscapesTheDeviceName) {
  BenchResult r;
  r.environment.device_name = "GPU \"Turbo\" \\ 2";
  r.environment.libtorch_version = "2.11.0";
  r.parameters = 1234;
  r.measured_steps = 20;
  r.median_ms_per_step = 1.5;
  TrainConfig config;
  const auto j = nlohmann::json::parse(to_json_text(r, CheckpointCost{}, config));
  EXPECT_EQ(j["device"], "GPU \"Turbo\" \\ 2");
  EXPECT_EQ(j["parameters"], 1234);
  EXPECT_EQ(j["batch"], config.batch_size);
  EXPECT_EQ(j["median_ms_per_step"], 1.5);
}

// The parameters and the optimiser's two moments, 4 bytes a number, and the record; the
// file written to measure it is gone afterwards.
class BenchTest : public CacheTest {};

TEST_F(BenchTest, MeasuresACheckpoint) {
  const TrainConfig config = tiny_config("unused");
  const CheckpointCost cost = measure_checkpoint(config, 2);
  Learner learner(config, config.model.vocab, torch::kCPU);
  const std::size_t state_bytes = 3 * 4 * std::size_t(learner.parameter_count());
  EXPECT_GT(cost.bytes, state_bytes);
  EXPECT_LT(cost.bytes, state_bytes + 1'000'000);
  EXPECT_GT(cost.serialise_ms, 0);
  EXPECT_GT(cost.write_ms, 0);
  EXPECT_TRUE(fs::is_empty(cache_dir()));
}

// Where a step's time goes: every kind of work that a step does is found, and the kinds
// add up to the steps' wall time (what no operator covers counted apart).
TEST(Bench, AProfileSharesAStepsTimeByKind) {
  TrainConfig config = tiny_config("unused");
  config.layer_stats_every = 0;
  config.text_every = 0;
  const BenchResult r = benchmark(config, 1, 2, true, 5);
  ASSERT_EQ(r.profile.steps, 5);
  EXPECT_EQ(r.profile.threads, 1);
  ASSERT_EQ(r.profile.kinds.size(), std::size(kProfileKinds));
  double total = 0;
  std::map<std::string, double> share;
  for (const auto& kind : r.profile.kinds) {
    total += kind.share;
    share[kind.kind] = kind.share;
  }
  EXPECT_NEAR(total, 1.0, 0.02);
  for (const char* kind : {"matmuls", "attention", "loss", "norms", "element-wise", "optimiser", "embeddings"}) {
    EXPECT_GT(share[kind], 0) << kind;
  }
  EXPECT_LT(share["other"], 0.2) << "most operators are known by their kind";
  ASSERT_FALSE(r.profile.operators.empty());
  for (std::size_t i = 1; i < r.profile.operators.size(); ++i) {
    EXPECT_GE(r.profile.operators[i - 1].ms_per_step, r.profile.operators[i].ms_per_step);
  }
  const auto json = nlohmann::json::parse(to_json_text(r, CheckpointCost{}, config));
  ASSERT_EQ(json["profile"]["kinds"].size(), std::size(kProfileKinds));
  EXPECT_EQ(json["profile"]["kinds"][0]["kind"], kProfileKinds[0]);  // in the printed order
  EXPECT_NEAR(json["profile"]["kinds"][0]["share"].get<double>(), share[kProfileKinds[0]], 1e-12);
  EXPECT_EQ(json["page_faults_per_step"].get<double>(), r.page_faults_per_step);
  EXPECT_EQ(json["page_faults_from_step"].get<int>(), r.page_faults_from_step);
  EXPECT_TRUE(r.profile.gpu_kernels.empty()) << "a CPU step runs nothing on a GPU";
  EXPECT_EQ(json["profile"]["gpu_kernels_per_step"], 0);
}

// At two threads a step takes the batch in slices on threads of its own (slice_workers.h):
// the profile sees their operators too, per thread, so the kinds still add up to the step.
TEST(Bench, AProfileOfAStepInSlicesSeesEverySlicesOperators) {
  TrainConfig config = tiny_config("unused");
  config.layer_stats_every = 0;
  config.text_every = 0;
  config.threads = 2;
  config.batch_size = 4;
  const TorchThreads suites;  // the bench sets the run's 2 on this thread
  const BenchResult r = benchmark(config, 1, 2, true, 5);
  ASSERT_NE(r.environment.precision.find("batch in 2 slices"), std::string::npos) << r.environment.precision;
  EXPECT_EQ(r.profile.threads, 2) << "each slice's thread, not the caller that waits";
  double total = 0, matmuls = 0;
  for (const auto& kind : r.profile.kinds) {
    total += kind.share;
    if (kind.kind == "matmuls") matmuls = kind.share;
  }
  EXPECT_NEAR(total, 1.0, 0.05) << "the caller waiting is not counted on top of the slices";
  EXPECT_GT(matmuls, 0) << "the slices' products are counted";  // none were, before they ran under the caller's state
  const bool products =
      std::any_of(r.profile.operators.begin(), r.profile.operators.end(),
                  [](const ProfiledOperator& o) { return o.kind == "matmuls" && o.calls_per_step > 0; });
  EXPECT_TRUE(products);
}

TEST(Bench, AnOperatorsKindIsItsNamesOrItsRegions) {
  EXPECT_EQ(operator_kind("aten::mm"), "matmuls");
  EXPECT_EQ(operator_kind("mkldnn::_linear_pointwise"), "matmuls");
  EXPECT_EQ(operator_kind("aten::_foreach_add_"), "optimiser");
  EXPECT_EQ(operator_kind("aten::exp_"), "element-wise");
  EXPECT_EQ(operator_kind("aten::exp_", "loss"), "loss");              // inside the fused loss
  EXPECT_EQ(operator_kind("aten::mm", "loss"), "matmuls");             // its products stay matmuls
  EXPECT_EQ(operator_kind("normlab::causal_attention"), "attention");  // the fused CPU kernel
  EXPECT_EQ(operator_kind("normlab::causal_attention_backward"), "attention");
  EXPECT_EQ(operator_kind("aten::some_new_op"), "other");
}

}  // namespace
}  // namespace normlab::test
