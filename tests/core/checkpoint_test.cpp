// Checkpoints in-process: what the trainer writes, that a resumed run repeats the
// uninterrupted one exactly, and every checkpoint that cannot continue a run refused with
// one line. The command line's side, with real processes killed, is in cli_test.cpp.
#include "core/training/checkpoint.h"

#include <atomic>
#include <nlohmann/json.hpp>

#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/system/atomic_file.h"
#include "core/training/trainer.h"
#include "tests/support/same_losses.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

void expect_same_points(const RunRecord& resumed, const RunRecord& whole) {
  ASSERT_EQ(resumed.steps.size(), whole.steps.size());
  ASSERT_EQ(resumed.evals.size(), whole.evals.size());
  expect_same_losses(resumed, whole);
  for (std::size_t i = 0; i < whole.steps.size(); ++i) {
    EXPECT_EQ(resumed.steps[i].lr, whole.steps[i].lr) << "step " << whole.steps[i].step;
  }
  ASSERT_EQ(resumed.series.size(), whole.series.size());
  for (std::size_t i = 0; i < whole.series.size(); ++i) {
    EXPECT_EQ(resumed.series[i].name, whole.series[i].name);
    EXPECT_EQ(resumed.series[i].steps, whole.series[i].steps) << whole.series[i].name;
    EXPECT_EQ(resumed.series[i].values, whole.series[i].values) << whole.series[i].name;
  }
  // The text too: its samples are drawn from generators of their own, seeded by the step.
  EXPECT_EQ(resumed.text.prompts, whole.text.prompts);
  ASSERT_EQ(resumed.text.samples.size(), whole.text.samples.size());
  for (std::size_t i = 0; i < whole.text.samples.size(); ++i) {
    EXPECT_EQ(resumed.text.samples[i].step, whole.text.samples[i].step);
    EXPECT_EQ(resumed.text.samples[i].greedy, whole.text.samples[i].greedy) << "step " << whole.text.samples[i].step;
    EXPECT_EQ(resumed.text.samples[i].sampled, whole.text.samples[i].sampled) << "step " << whole.text.samples[i].step;
  }
}

class CheckpointTest : public CacheTest {
 protected:
  // Trains config_ and keeps every checkpoint it hands over, in order.
  RunRecord train_keeping_checkpoints(const std::atomic<bool>* cancel = nullptr) {
    TrainCallbacks callbacks;
    callbacks.on_checkpoint_due = [this](const std::string& bytes) { checkpoints_.push_back(bytes); };
    return train(config_, callbacks, cancel);
  }
  // Checkpoint `i` as the file a caller writes; its header as read back.
  CheckpointHeader file_of(std::size_t i) {
    write_file_atomically(checkpoint_, checkpoints_.at(i));
    return read_checkpoint_header(checkpoint_);
  }
  // Rewrites the header line of the checkpoint file, keeping its payload.
  void edit_header(const std::function<void(json&)>& edit) {
    const std::string bytes = read_file(checkpoint_);
    const std::size_t end = bytes.find('\n');
    json header = json::parse(bytes.substr(0, end));
    edit(header);
    write_file(checkpoint_, header.dump() + bytes.substr(end));
  }
  // Why resuming config_ from the checkpoint file is refused; asserts it is one line.
  std::string refusal() {
    const std::string why = user_error([&] { resume(config_, checkpoint_); });
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
    return why;
  }

  TrainConfig config_ = [this] {
    TrainConfig c = tiny_config(corpus_file(synthetic_corpus()));
    c.steps = 100;
    c.eval_interval = 25;
    c.checkpoint_interval = 0;  // at every save: here, every evaluation
    return c;
  }();
  std::vector<std::string> checkpoints_;
  fs::path checkpoint_ = temp_ / "run.ckpt";
};

TEST_F(CheckpointTest, HeaderDescribesTheRunAtItsStep) {
  train_keeping_checkpoints();
  ASSERT_EQ(checkpoints_.size(), 3u) << "steps 25, 50 and 75: the last step's is dropped";
  const CheckpointHeader header = file_of(1);
  EXPECT_EQ(header.version, kCheckpointVersion);
  EXPECT_EQ(header.libtorch_version, libtorch_version());
  EXPECT_EQ(header.step, 50);
  EXPECT_EQ(header.config.name, "pre-norm lr 3e-3 warmup 10 layers 2");
  EXPECT_TRUE(same_experiment(header.config, config_));
  EXPECT_EQ(header.config.checkpoint_interval, 0);
  EXPECT_FALSE(header.data_fingerprint.empty());
  EXPECT_EQ(resumable_checkpoint(checkpoint_, config_).step, 50);
  EXPECT_EQ(checkpoint_path("runs/a run.json"), fs::path("runs/a run.ckpt"));
}

// The heart of it: from any checkpoint, every loss and statistic after it is the
// uninterrupted run's, to the bit, and the record is cut back to the checkpoint's step.
TEST_F(CheckpointTest, ResumedRunRepeatsTheUninterruptedOne) {
  const RunRecord whole = train_keeping_checkpoints();
  ASSERT_EQ(whole.status, RunStatus::Done);
  ASSERT_FALSE(whole.series.empty()) << "the layer statistics are compared too";
  const CheckpointHeader header = file_of(1);

  std::size_t points_at_start = 0;
  std::vector<int> saved_steps;
  TrainCallbacks callbacks;
  callbacks.on_start = [&](const RunRecord& run) { points_at_start = run.steps.size(); };
  callbacks.on_save_due = [&](const RunRecord& run) { saved_steps.push_back(int(run.steps.size())); };
  config_.checkpoint_interval = 3600;  // how checkpoints go on is the caller's to change
  const RunRecord resumed = resume(config_, checkpoint_, callbacks);
  EXPECT_EQ(resumed.status, RunStatus::Done);
  EXPECT_EQ(points_at_start, std::size_t(header.step));
  EXPECT_EQ(saved_steps, (std::vector<int>{50, 75, 100})) << "the files go back to the checkpoint's step first";
  expect_same_points(resumed, whole);
  // Its clock goes on from the checkpoint's.
  EXPECT_GE(resumed.steps[50].wall_s, resumed.steps[49].wall_s);
  EXPECT_EQ(resumed.steps[49].wall_s, whole.steps[49].wall_s);
}

// Stopping writes a checkpoint at the step it stopped, which a resume goes on from.
TEST_F(CheckpointTest, StoppedRunGoesOnFromWhereItStopped) {
  config_.checkpoint_interval = 3600;
  const RunRecord whole = train(config_);
  std::atomic<bool> cancel{false};
  TrainCallbacks callbacks;
  callbacks.on_step = [&](const StepMetrics& s) { cancel = s.step == 37; };
  callbacks.on_checkpoint_due = [&](const std::string& bytes) { checkpoints_.push_back(bytes); };
  const RunRecord stopped = train(config_, callbacks, &cancel);
  ASSERT_EQ(stopped.status, RunStatus::Stopped);
  EXPECT_TRUE(keeps_checkpoint(stopped));
  ASSERT_EQ(checkpoints_.size(), 1u);
  EXPECT_EQ(file_of(0).step, 37);
  expect_same_points(resume(config_, checkpoint_), whole);
}

TEST_F(CheckpointTest, DoneRunKeepsItsFinalWeightsOnlyWhenAsked) {
  config_.final_checkpoint = "keep";
  const RunRecord kept = train_keeping_checkpoints();
  EXPECT_TRUE(keeps_checkpoint(kept));
  EXPECT_EQ(file_of(checkpoints_.size() - 1).step, 100);
  // Resuming a run that is done trains nothing and changes nothing.
  expect_same_points(resume(config_, checkpoint_), kept);

  RunRecord done = kept;
  done.config.final_checkpoint = "drop";
  EXPECT_FALSE(keeps_checkpoint(done));
  done.status = RunStatus::Diverged;
  done.config.final_checkpoint = "keep";
  EXPECT_FALSE(keeps_checkpoint(done)) << "a diverged run has nothing to go on with";
}

TEST_F(CheckpointTest, SettingsThatDoNotShapeTheResultMayChange) {
  train_keeping_checkpoints();
  file_of(0);
  TrainConfig other = config_;
  other.name = "renamed";
  other.threads = 2;
  other.layer_stats_every = 0;
  other.final_checkpoint = "keep";
  EXPECT_NO_THROW(resumable_checkpoint(checkpoint_, other));
}

TEST_F(CheckpointTest, MissingOrForeignFilesAreRefused) {
  EXPECT_THAT(refusal(), HasSubstr("run.ckpt: no checkpoint"));
  write_file(checkpoint_, "{\"schema\": \"normlab.run\"}\n");
  EXPECT_THAT(refusal(), HasSubstr("run.ckpt: not a NormLab checkpoint"));
  write_file(checkpoint_, std::string(100'000, 'x'));
  EXPECT_THAT(refusal(), HasSubstr("not a NormLab checkpoint"));
}

TEST_F(CheckpointTest, TruncatedOrDamagedCheckpointIsRefused) {
  train_keeping_checkpoints();
  const std::string whole = checkpoints_.at(1);
  write_file(checkpoint_, whole.substr(0, whole.size() - 1000));
  EXPECT_THAT(refusal(), HasSubstr("truncated: " + std::to_string(whole.size() - 1000) + " of its " +
                                   std::to_string(whole.size()) + " bytes"));
  write_file(checkpoint_, whole.substr(0, 100));  // the header line cut too
  EXPECT_THAT(refusal(), HasSubstr("not a NormLab checkpoint"));
  std::string flipped = whole;
  flipped[flipped.size() / 2] ^= 1;
  write_file(checkpoint_, flipped);
  EXPECT_THAT(refusal(), HasSubstr("damaged: its bytes do not match their checksum"));
}

TEST_F(CheckpointTest, AnotherFormatVersionIsRefused) {
  train_keeping_checkpoints();
  file_of(0);
  edit_header([](json& header) { header["version"] = kCheckpointVersion + 1; });
  EXPECT_THAT(refusal(), HasSubstr("checkpoint format version " + std::to_string(kCheckpointVersion + 1) +
                                   "; this NormLab reads version " + std::to_string(kCheckpointVersion)));
  EXPECT_THAT(user_error([&] { read_checkpoint_header(checkpoint_); }), HasSubstr("format version"));
}

TEST_F(CheckpointTest, AnotherLibTorchIsRefused) {
  train_keeping_checkpoints();
  file_of(0);
  edit_header([](json& header) { header["libtorch_version"] = "1.0.0"; });
  EXPECT_EQ(read_checkpoint_header(checkpoint_).libtorch_version, "1.0.0");  // readable, but not resumable
  EXPECT_THAT(refusal(),
              HasSubstr("written with LibTorch 1.0.0, and this NormLab runs LibTorch " + libtorch_version()));
}

TEST_F(CheckpointTest, AnotherExperimentIsRefused) {
  train_keeping_checkpoints();
  file_of(0);
  config_.peak_lr = 6e-3;
  EXPECT_THAT(refusal(), HasSubstr("a checkpoint of another experiment: its peak learning rate is '0.003', "
                                   "the run's '0.006'"));
  config_.peak_lr = 3e-3;
  config_.seed += 1;
  EXPECT_THAT(refusal(), HasSubstr("its seed is '1337', the run's '1338'"));
  config_.seed -= 1;
  config_.cpu_precision = "bf16";  // another arithmetic: the run cannot go on exactly
  EXPECT_THAT(refusal(), HasSubstr("its CPU precision is 'fp32', the run's 'bf16'"));
}

// The same corpus file with other text: seen once it is tokenized, before training.
TEST_F(CheckpointTest, AnotherCorpusIsRefused) {
  train_keeping_checkpoints();
  file_of(0);
  corpus_file(synthetic_corpus(90'000, 8));
  bool started = false;
  TrainCallbacks callbacks;
  callbacks.on_start = [&](const RunRecord&) { started = true; };
  EXPECT_THAT(user_error([&] { resume(config_, checkpoint_, callbacks); }),
              HasSubstr("run.ckpt: made from other training data"));
  EXPECT_FALSE(started);
}

}  // namespace
}  // namespace normlab::test
