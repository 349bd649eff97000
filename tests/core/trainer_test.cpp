#include "core/training/trainer.h"

#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <torch/torch.h>
#include <vector>

#include "core/system/host.h"
#include "core/training/learner.h"
#include "core/training/run_data.h"
#include "core/training/text_samples.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class TrainerTest : public CacheTest {
 protected:
  TrainConfig config_ = tiny_config(corpus_file(synthetic_corpus()));
};

std::vector<double> train_losses(const RunRecord& run) {
  std::vector<double> losses;
  for (const auto& s : run.steps) losses.push_back(s.train_loss);
  return losses;
}

TEST_F(TrainerTest, PreNormLearnsBelowBaseline) {
  const RunRecord run = train(config_);
  EXPECT_EQ(run.status, RunStatus::Done);
  ASSERT_EQ(run.steps.size(), 150u);
  ASSERT_GE(run.evals.size(), 2u);
  const double initial = run.evals.front().val_loss, final = run.final_val_loss();
  EXPECT_NEAR(initial, std::log(256.0), 0.1);
  EXPECT_GT(run.baseline_loss, 1.0);
  EXPECT_LT(run.baseline_loss, initial);
  EXPECT_LT(final, run.baseline_loss - 0.3) << "initial " << initial;
}

// The baseline is measured on the run's own held-out batches, where its held-out loss is.
TEST_F(TrainerTest, TheBaselineIsOnTheEvaluatedPositions) {
  config_.steps = 2;
  config_.eval_batches = 3;
  const RunRecord run = train(config_);
  const RunData prepared = prepare_run_data(config_);
  const Dataset& data = prepared.data;
  EXPECT_DOUBLE_EQ(run.baseline_loss, data.unigram_loss(data.heldout_batches(config_.batch_size, 3)));
}

// Two runs of the course's pre-norm design at two rates, stacked: each record is the one
// train() gives that run alone. The first 100 steps record layer statistics and are each
// taken alone (on the stack's tensors); the later ones, but for every tenth and the
// evaluations, by the stack.
TEST_F(TrainerTest, TrainStackedGivesEachRunItsRecordAlone) {
  TrainConfig slow = config_;
  slow.peak_lr = 1e-3;
  slow.warmup_steps = 30;
  slow.seed = 7;
  const std::vector<TrainConfig> configs{config_, slow};
  std::vector<int> evaluations(2, 0);
  std::vector<TrainCallbacks> callbacks(2);
  for (std::size_t r = 0; r < 2; ++r)
    callbacks[r].on_eval = [&, r](const EvalMetrics&, const RunRecord&) { ++evaluations[r]; };
  const std::vector<RunRecord> stacked = train_stacked(configs, callbacks);
  ASSERT_EQ(stacked.size(), 2u);
  for (std::size_t r = 0; r < 2; ++r) {
    const RunRecord alone = train(configs[r]);
    const RunRecord& run = stacked[r];
    EXPECT_EQ(run.status, RunStatus::Done);
    EXPECT_EQ(run.config.name, alone.config.name);
    EXPECT_EQ(run.environment.device, alone.environment.device);
    EXPECT_EQ(run.environment.precision, alone.environment.precision);
    EXPECT_EQ(run.parameters, alone.parameters);
    EXPECT_EQ(run.baseline_loss, alone.baseline_loss);
    ASSERT_EQ(run.steps.size(), alone.steps.size());
    for (std::size_t i = 0; i < run.steps.size(); ++i) {
      EXPECT_EQ(run.steps[i].step, alone.steps[i].step);
      EXPECT_EQ(run.steps[i].lr, alone.steps[i].lr);
      EXPECT_NEAR(run.steps[i].train_loss, alone.steps[i].train_loss, 1e-4) << "run " << r << ", step " << i + 1;
    }
    ASSERT_EQ(run.evals.size(), alone.evals.size());
    EXPECT_EQ(evaluations[r], int(run.evals.size()));
    for (std::size_t i = 0; i < run.evals.size(); ++i) {
      EXPECT_EQ(run.evals[i].step, alone.evals[i].step);
      EXPECT_NEAR(run.evals[i].val_loss, alone.evals[i].val_loss, 1e-4) << "run " << r << ", evaluation " << i;
    }
    ASSERT_EQ(run.series.size(), alone.series.size());
    for (std::size_t i = 0; i < run.series.size(); ++i) {
      EXPECT_EQ(run.series[i].name, alone.series[i].name);
      EXPECT_EQ(run.series[i].steps, alone.series[i].steps);
      ASSERT_EQ(run.series[i].values.size(), alone.series[i].values.size());
      for (std::size_t j = 0; j < run.series[i].values.size(); ++j) {
        const double a = run.series[i].values[j], b = alone.series[i].values[j];
        EXPECT_NEAR(a, b, 1e-4 * (1 + std::abs(b))) << run.series[i].name << " value " << j;
      }
    }
    ASSERT_EQ(run.text.samples.size(), alone.text.samples.size());
    for (std::size_t i = 0; i < run.text.samples.size(); ++i) {
      EXPECT_EQ(run.text.samples[i].greedy, alone.text.samples[i].greedy) << "run " << r << ", sample " << i;
    }
  }
}

// A stacked run's tensors are views of the stack's: its files hold its own tensors only.
// Five steps that all record layer statistics are each taken alone, with the arithmetic
// of train(), so the weights come out to the byte.
TEST_F(TrainerTest, TrainStackedWritesEachRunsOwnWeightsAndCheckpoints) {
  config_.steps = 5;
  config_.eval_interval = 2;
  config_.checkpoint_interval = 0;  // a checkpoint at every save
  TrainConfig other = config_;
  other.seed = 9;
  const std::vector<TrainConfig> configs{config_, other};
  std::vector<std::string> weights(2), checkpoints(2);
  std::vector<TrainCallbacks> callbacks(2);
  for (std::size_t r = 0; r < 2; ++r) {
    callbacks[r].on_weights_due = [&, r](const std::string& bytes) { weights[r] = bytes; };
    callbacks[r].on_checkpoint_due = [&, r](const std::string& bytes) { checkpoints[r] = bytes; };
  }
  train_stacked(configs, callbacks);
  for (std::size_t r = 0; r < 2; ++r) {
    std::string alone_weights, alone_checkpoint;
    TrainCallbacks alone;
    alone.on_weights_due = [&](const std::string& bytes) { alone_weights = bytes; };
    alone.on_checkpoint_due = [&](const std::string& bytes) { alone_checkpoint = bytes; };
    train(configs[r], alone);
    ASSERT_FALSE(alone_weights.empty());
    EXPECT_TRUE(weights[r] == alone_weights)
        << "run " << r << ": " << weights[r].size() << " bytes against " << alone_weights.size();
    // The record inside differs in its times; the tensors, which would double, do not.
    EXPECT_LT(double(checkpoints[r].size()), 1.05 * double(alone_checkpoint.size())) << "run " << r;
    EXPECT_GT(double(checkpoints[r].size()), 0.95 * double(alone_checkpoint.size())) << "run " << r;
  }
}

// Stopped, a stacked run keeps a checkpoint of its own, from which it goes on alone to
// the numbers it gets trained alone throughout.
TEST_F(TrainerTest, AStoppedStackedRunResumesAlone) {
  config_.steps = 120;  // steps 101 to 120 but the statistics' are stacked
  config_.eval_interval = 40;
  config_.checkpoint_interval = 3600;
  TrainConfig other = config_;
  other.peak_lr = 1e-3;
  other.seed = 9;
  std::atomic<bool> cancel{false};
  std::vector<TrainCallbacks> callbacks(2);
  callbacks[0].on_step = [&](const StepMetrics& s) { cancel = s.step == 107; };
  callbacks[0].on_checkpoint_due = [&](const std::string& bytes) { write_file(temp_ / "run.ckpt", bytes); };
  const std::vector<RunRecord> stopped = train_stacked({config_, other}, callbacks, &cancel);
  ASSERT_EQ(stopped[0].status, RunStatus::Stopped);
  ASSERT_EQ(stopped[0].steps.size(), 107u);
  const RunRecord resumed = resume(config_, temp_ / "run.ckpt");
  const RunRecord whole = train(config_);
  EXPECT_EQ(resumed.status, RunStatus::Done);
  ASSERT_EQ(resumed.steps.size(), whole.steps.size());
  for (std::size_t i = 0; i < whole.steps.size(); ++i)
    EXPECT_NEAR(resumed.steps[i].train_loss, whole.steps[i].train_loss, 1e-4) << "step " << i + 1;
  EXPECT_NEAR(resumed.final_val_loss(), whole.final_val_loss(), 1e-4);
}

TEST_F(TrainerTest, TrainStackedRefusesRunsThatCannotStack) {
  TrainConfig wider = config_;
  wider.model.d_model = 64;
  EXPECT_EQ(user_error([&] {
              train_stacked({config_, wider});
            }),
            "these runs cannot train as one stack: run 2 differs from run 1 in d_model");
}

TEST_F(TrainerTest, RecordDescribesTheRun) {
  config_.steps = 5;
  const RunRecord run = train(config_);
  EXPECT_EQ(run.config.name, "pre-norm lr 3e-3 warmup 10 layers 2");  // not the course's 8 layers: said
  EXPECT_EQ(run.environment.device, "cpu");
  EXPECT_EQ(run.environment.libtorch_version, TORCH_VERSION);
  EXPECT_EQ(run.corpus_name, "corpus.txt");  // the corpus it read, by name and content
  EXPECT_EQ(run.corpus_hash, content_hash(synthetic_corpus()));
  EXPECT_EQ(run.environment.app_version, NORMLAB_VERSION);
  EXPECT_EQ(run.environment.threads, 1);
  EXPECT_THAT(run.environment.device_name, HasSubstr("1 thread"));
  EXPECT_EQ(run.environment.engine, engine_commit());  // host_test holds them to git and the CPU
  EXPECT_EQ(run.environment.cpu, cpu_model());
  EXPECT_GT(run.train_tokens, 8 * run.heldout_tokens);
  EXPECT_GT(run.heldout_tokens, 1000);
  Gpt expected(config_.model);
  EXPECT_EQ(run.parameters, expected->parameter_count());
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const auto& s = run.steps[i];
    EXPECT_EQ(s.step, int(i) + 1);
    EXPECT_DOUBLE_EQ(s.lr, config_.peak_lr * (i + 1) / config_.warmup_steps);
    EXPECT_GT(s.tokens_per_s, 0);
    EXPECT_TRUE(std::isfinite(s.train_loss));
    if (i > 0) {
      EXPECT_GE(s.wall_s, run.steps[i - 1].wall_s);
    }
  }
}

TEST_F(TrainerTest, SeedDecidesLosses) {
  config_.steps = 20;
  config_.eval_interval = 10;
  const RunRecord a = train(config_), b = train(config_);
  EXPECT_EQ(train_losses(a), train_losses(b));
  ASSERT_EQ(a.evals.size(), b.evals.size());
  for (std::size_t i = 0; i < a.evals.size(); ++i) EXPECT_EQ(a.evals[i].val_loss, b.evals[i].val_loss);

  config_.seed += 1;
  const RunRecord c = train(config_);
  EXPECT_NE(train_losses(a), train_losses(c));
  EXPECT_NE(a.evals.front().val_loss, c.evals.front().val_loss);  // different initial weights
}

TEST_F(TrainerTest, CallbacksCalled) {
  config_.steps = 10;
  config_.eval_interval = 4;
  int starts = 0;
  std::vector<int> steps, evals;
  std::vector<std::string> stages;
  TrainCallbacks callbacks;
  callbacks.on_stage = [&](const std::string& stage) { stages.push_back(stage); };
  callbacks.on_start = [&](const RunRecord& run) {
    ++starts;
    EXPECT_EQ(run.status, RunStatus::Running);
    EXPECT_GT(run.baseline_loss, 0);
    EXPECT_TRUE(run.steps.empty());
  };
  callbacks.on_step = [&](const StepMetrics& s) { steps.push_back(s.step); };
  callbacks.on_eval = [&](const EvalMetrics& e, const RunRecord& run) {
    evals.push_back(e.step);
    EXPECT_EQ(run.evals.back().step, e.step);
    EXPECT_EQ(int(run.steps.size()), e.step);
  };
  // A short run saves after each evaluation only (saves by time are tested on the CLI),
  // and the record it gets is current.
  std::vector<int> saves;
  callbacks.on_save_due = [&](const RunRecord& run) {
    saves.push_back(run.evals.back().step);
    EXPECT_EQ(int(run.steps.size()), run.evals.back().step);
  };
  const RunRecord run = train(config_, callbacks);
  EXPECT_EQ(starts, 1);
  EXPECT_EQ(steps, (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}));
  EXPECT_EQ(evals, (std::vector<int>{0, 4, 8, 10}));
  EXPECT_EQ(saves, evals);
  EXPECT_FALSE(stages.empty());
  EXPECT_EQ(run.evals.size(), 4u);

  // A last step on the interval is evaluated once.
  config_.steps = 8;
  evals.clear();
  train(config_, callbacks);
  EXPECT_EQ(evals, (std::vector<int>{0, 4, 8}));
}

// The text and the prediction statistics only read the model: a run that records them
// trains to the same numbers, to the last bit, as one that does not.
TEST_F(TrainerTest, RecordingTextChangesNoLoss) {
  config_.text_every = 0;
  const RunRecord silent = train(config_);
  config_.text_every = 1;
  const RunRecord writing = train(config_);
  EXPECT_EQ(train_losses(writing), train_losses(silent));
  ASSERT_EQ(writing.evals.size(), silent.evals.size());
  for (std::size_t i = 0; i < silent.evals.size(); ++i) EXPECT_EQ(writing.evals[i].val_loss, silent.evals[i].val_loss);
  EXPECT_TRUE(silent.text.prompts.empty());
  EXPECT_TRUE(silent.text.samples.empty());
  ASSERT_EQ(writing.text.prompts.size(), std::size_t(kPromptCount));
  ASSERT_EQ(writing.text.samples.size(), writing.evals.size()) << "text at every evaluation";
  for (const TextSample& sample : writing.text.samples) {
    ASSERT_EQ(sample.greedy.size(), writing.text.prompts.size());
    for (const std::string& text : sample.sampled) EXPECT_FALSE(text.empty()) << "step " << sample.step;
  }
  EXPECT_NE(writing.text.samples.front().greedy, writing.text.samples.back().greedy) << "it learnt something";
}

TEST_F(TrainerTest, TextEveryFewEvaluationsAndAtTheLast) {
  config_.steps = 120;
  config_.eval_interval = 20;  // evaluations at 0, 20, ..., 120
  config_.text_every = 4;
  const RunRecord run = train(config_);
  std::vector<int> steps;
  for (const TextSample& sample : run.text.samples) steps.push_back(sample.step);
  EXPECT_EQ(steps, (std::vector<int>{0, 80, 120}));
  EXPECT_EQ(text_recordings(config_), 3) << "what the bench charges a run for";
}

// Trained, the model's predictions depend on the context; untrained, they hardly do.
TEST_F(TrainerTest, ATrainedModelUsesItsContext) {
  const RunRecord run = train(config_);
  const Series* context_use = run.find_series("context_use");
  ASSERT_NE(context_use, nullptr);
  ASSERT_EQ(context_use->steps.size(), run.evals.size());
  EXPECT_LT(context_use->values.front(), 0.05) << "at initialisation";
  EXPECT_GT(context_use->values.back(), 0.5) << "after " << run.steps.size() << " steps";
}

// The held-out text after each prompt, and the chance the run gave each of its tokens: the
// mean grows as the run learns (its log is minus the loss on those few tokens).
TEST_F(TrainerTest, RecordsTheChanceOfTheTextAfterEachPrompt) {
  const RunRecord run = train(config_);
  ASSERT_EQ(run.text.references.size(), run.text.prompts.size());
  ASSERT_FALSE(run.text.references[0].empty());
  auto mean_log = [&](const TextSample& sample) {
    double sum = 0;
    int n = 0;
    for (std::size_t i = 0; i < sample.reference_probability.size(); ++i) {
      EXPECT_EQ(sample.reference_probability[i].size(), run.text.references[i].size());
      for (const double p : sample.reference_probability[i]) sum += std::log(std::max(p, 1e-4)), ++n;
    }
    return sum / n;
  };
  EXPECT_GT(mean_log(run.text.samples.back()), mean_log(run.text.samples.front()) + 0.5);
}

TEST_F(TrainerTest, CancelStopsWithinOneStep) {
  std::atomic<bool> cancel{false};
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const StepMetrics& s) {
    if (s.step == 7) cancel = true;
  };
  const RunRecord run = train(config_, callbacks, &cancel);
  EXPECT_EQ(run.status, RunStatus::Stopped);
  EXPECT_EQ(run.steps.size(), 7u);
  EXPECT_EQ(run.steps.back().step, 7);
  EXPECT_FALSE(run.evals.empty());
  EXPECT_THAT(run.message, HasSubstr("7"));

  const RunRecord early = train(config_, {}, &cancel);  // still set: stops before step 1
  EXPECT_EQ(early.status, RunStatus::Stopped);
  EXPECT_TRUE(early.steps.empty());
}

TEST_F(TrainerTest, NonFiniteLossEndsAsDiverged) {
  // Adam moves a weight by at most the learning rate per step, so at lr <= 1 this
  // model's loss stays finite for thousands of steps. A decoupled weight decay with
  // lr x decay > 2 multiplies every matrix by |1 - lr x decay| > 1 each step instead:
  // the weights overflow within a few steps.
  config_.peak_lr = 1.0;
  config_.warmup_steps = 1;
  config_.weight_decay = 1000;
  config_.steps = 50;
  config_.eval_interval = 1;
  int reported = 0;
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const StepMetrics&) { ++reported; };
  const RunRecord run = train(config_, callbacks);
  EXPECT_EQ(run.status, RunStatus::Diverged);
  ASSERT_FALSE(run.steps.empty());
  EXPECT_LT(run.steps.size(), 50u);
  EXPECT_FALSE(std::isfinite(run.steps.back().train_loss));
  for (std::size_t i = 0; i + 1 < run.steps.size(); ++i) EXPECT_TRUE(std::isfinite(run.steps[i].train_loss));
  EXPECT_EQ(reported, int(run.steps.size()));     // the last, non-finite step is reported too
  EXPECT_EQ(run.evals.size(), run.steps.size());  // evaluated after every finite step only
  EXPECT_THAT(run.message, HasSubstr("step " + std::to_string(run.steps.back().step)));
}

TEST_F(TrainerTest, Devices) {
  const Environment env = describe_device("auto");
  EXPECT_EQ(env.device, torch::cuda::is_available() ? "cuda" : "cpu");
  EXPECT_FALSE(env.device_name.empty());
  EXPECT_EQ(describe_device("cpu").device, "cpu");
  config_.device = "cuda";
  if (torch::cuda::is_available()) {
    EXPECT_EQ(describe_device("cuda").device, "cuda");
  } else {  // this machine: a clear error, before any work
    EXPECT_THAT(user_error([&] { train(config_); }), HasSubstr("cuda"));
    EXPECT_THAT(user_error([&] { describe_device("cuda"); }), HasSubstr("cuda"));
  }
}

TEST_F(TrainerTest, BadInputIsUserError) {
  const std::vector<std::pair<std::function<void(TrainConfig&)>, std::string>> cases = {
      {[](TrainConfig& c) { c.model.layers = 0; }, "layers"},    {[](TrainConfig& c) { c.model.heads = 5; }, "heads"},
      {[](TrainConfig& c) { c.peak_lr = -1; }, "learning rate"}, {[](TrainConfig& c) { c.steps = 0; }, "steps"},
      {[](TrainConfig& c) { c.batch_size = 0; }, "batch"},       {[](TrainConfig& c) { c.device = "tpu"; }, "device"},
  };
  for (const auto& [change, field] : cases) {
    TrainConfig bad = config_;
    change(bad);
    EXPECT_THAT(user_error([&] { train(bad); }), HasSubstr(field));
  }
  config_.corpus_path = corpus_file("", "empty.txt").string();
  EXPECT_THAT(user_error([&] { train(config_); }), HasSubstr("empty"));
}

TEST_F(TrainerTest, ClippingStillTrains) {
  config_.clip_grad_norm = 0.5;
  config_.steps = 60;
  const RunRecord run = train(config_);
  EXPECT_EQ(run.status, RunStatus::Done);
  EXPECT_LT(run.final_val_loss(), run.evals.front().val_loss - 0.5);
}

class LearnerTest : public ::testing::Test {
 protected:
  void SetUp() override { torch::manual_seed(11); }  // for the random batches
  TrainConfig config_ = tiny_config("unused");
};

TEST_F(LearnerTest, FitsOneBatch) {
  Learner learner(config_, 256, torch::kCPU);
  const Batch batch{torch::randint(256, {4, 32}, torch::kInt64), torch::randint(256, {4, 32}, torch::kInt64)};
  const double before = learner.evaluate({batch});
  for (int i = 0; i < 60; ++i) learner.step(batch, 1e-2);
  EXPECT_LT(learner.evaluate({batch}), before - 1.0);
}

TEST_F(LearnerTest, WeightDecayOnMatricesOnly) {
  // Two learners with the same weights and batch see the same gradients, so their
  // AdamW updates differ only by the decoupled decay lr * wd * w.
  const Batch batch{torch::randint(256, {2, 32}, torch::kInt64), torch::randint(256, {2, 32}, torch::kInt64)};
  const double lr = 0.1, decay = 0.5;
  config_.weight_decay = 0;
  Learner plain(config_, 256, torch::kCPU);
  config_.weight_decay = decay;
  Learner decayed(config_, 256, torch::kCPU);
  std::map<std::string, torch::Tensor> before;
  for (const auto& p : plain.model()->named_parameters()) before[p.key()] = p.value().detach().clone();
  plain.step(batch, lr);
  decayed.step(batch, lr);

  const auto decayed_params = decayed.model()->named_parameters();
  for (const auto& p : plain.model()->named_parameters()) {
    const auto difference = p.value() - decayed_params[p.key()];
    const auto expected = p.value().dim() >= 2 ? lr * decay * before[p.key()] : torch::zeros_like(difference);
    EXPECT_TRUE(torch::allclose(difference, expected, 1e-3, 1e-7)) << p.key();
  }
}

}  // namespace
}  // namespace normlab::test
