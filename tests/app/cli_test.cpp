// Runs the normlab-cli binary (NORMLAB_CLI, set by CMake) as a user would.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <signal.h>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "core/runs/config.h"
#include "core/runs/config_fields.h"
#include "core/runs/run_record.h"
#include "core/runs/verdict.h"
#include "core/sweeps/sweep.h"
#include "core/training/checkpoint.h"
#include "core/training/trainer.h"
#include "core/training/weights.h"
#include "tests/core/test_support.h"
#include "tests/support/same_losses.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

class CliTest : public CacheTest {
 protected:
  // Exit status of `normlab-cli args`, run in the temp folder; output in out_ and err_.
  int run(const std::string& args) {
    const std::string command =
        "cd '" + temp_.path().string() + "' && '" NORMLAB_CLI "' " + args + " > stdout.txt 2> stderr.txt";
    const int status = std::system(command.c_str());
    out_ = read_file(temp_ / "stdout.txt");
    err_ = read_file(temp_ / "stderr.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  // Starts `normlab-cli args` in the temp folder without waiting for it; output in
  // stdout.txt and stderr.txt there.
  pid_t start(const std::string& args) { return start_cli(temp_.path(), args); }

  // Waits up to two minutes for `file` to appear (a started run's first checkpoint).
  static bool appears(const fs::path& file) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!fs::exists(file) && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return fs::exists(file);
  }

  std::string out_, err_;
};

TEST_F(CliTest, TrainWritesRunFiles) {
  const fs::path corpus = corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 32 --heads 2 "
                "--context 16 --batch 4 --vocab 256 --steps 12 --warmup 3 --eval-interval 5 "
                "--eval-batches 2 --lr 3e-3 --name 'tiny, run' --out runs --layers-summary"),
            0)
      << out_ << err_;
  EXPECT_EQ(err_, "");
  EXPECT_THAT(out_, HasSubstr("step 12/12"));
  EXPECT_THAT(out_, HasSubstr("baseline"));
  EXPECT_THAT(out_, HasSubstr("layer statistics at step 5, layer 1 first:\n    grad_norm "));
  EXPECT_THAT(out_, HasSubstr("layer statistics at step 12,"));
  EXPECT_THAT(out_, ::testing::ContainsRegex("attention_grad_norm +[-0-9.e]+ +[-0-9.e]+  \\(L2 norm\\)"));

  const fs::path json_file = temp_ / "runs" / "tiny__run.json";
  ASSERT_TRUE(fs::exists(json_file)) << out_;
  const auto j = nlohmann::json::parse(read_file(json_file));
  EXPECT_EQ(j["schema"], "normlab.run");
  EXPECT_EQ(j["name"], "tiny, run");
  EXPECT_EQ(j["status"], "done");
  EXPECT_EQ(j["config"]["layers"], 2);
  EXPECT_EQ(j["steps"]["step"].size(), 12u);
  EXPECT_EQ(j["evals"]["step"], nlohmann::json({0, 5, 10, 12}));
  // Seen: each line per evaluation gave the evaluation before it. The line for step 5 holds
  // step 5's held-out loss, and the last line gives the training loss and the gap.
  const auto held_out_text = [&](int i) {
    char text[32];
    std::snprintf(text, sizeof text, "%.3f", j["evals"]["val_loss"][std::size_t(i)].get<double>());
    return std::string(text);
  };
  EXPECT_THAT(out_,
              ::testing::ContainsRegex("step 5/12  lr [-0-9.e+]+  train [0-9.]+  held-out " + held_out_text(1) + " "));
  EXPECT_THAT(out_,
              ::testing::ContainsRegex("step 12/12  lr [-0-9.e+]+  train [0-9.]+  held-out " + held_out_text(3) + " "));
  EXPECT_THAT(out_, ::testing::ContainsRegex("final held-out " + held_out_text(3) +
                                             " nats \\(training [0-9.]+, gap -?[0-9.]+;"));

  const auto csv = read_lines(temp_ / "runs" / "tiny__run.csv");
  ASSERT_EQ(csv.size(), 14u);  // the header, step 0's evaluation, 12 steps
  EXPECT_EQ(csv[0].rfind("run,step,wall_s,lr,train_loss,val_loss,context_use,frequency_mismatch,grad_norm,"
                         "attention_grad_norm[0],attention_grad_norm[1],",
                         0),
            0u)
      << csv[0];
  EXPECT_EQ(csv[1].rfind("\"tiny, run\",0,", 0), 0u) << csv[1];
  EXPECT_EQ(csv[13].rfind("\"tiny, run\",12,", 0), 0u) << csv[13];

  // Only the run files and the final weights: no temp files left next to them, and the
  // checkpoint dropped as the run is done.
  EXPECT_EQ(std::distance(fs::directory_iterator(temp_ / "runs"), fs::directory_iterator()), 3);
  EXPECT_TRUE(fs::exists(weights_path(json_file)));
  // The tokenizer went to this test's cache.
  EXPECT_FALSE(fs::is_empty(cache_dir() / "tokenizers"));
}

// kill -9 mid-run: the files on disk are whole and hold every step up to the last save,
// which is never more than kSaveIntervalSeconds old (evaluations are too rare to help here).
TEST_F(CliTest, KilledRunKeepsItsPointsUpToTheLastSave) {
  corpus_file(synthetic_corpus());
  const pid_t pid = start(
      "train --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 "
      "--context 8 --batch 2 --vocab 256 --steps 10000000 --eval-interval 10000000 "
      "--eval-batches 1 --name killed --out runs");
  ASSERT_GE(pid, 0);
  using Clock = std::chrono::steady_clock;
  const fs::path json_file = temp_ / "runs" / "killed.json";
  auto saved = [&]() -> std::optional<RunRecord> {
    try {
      return read_json(json_file);
    } catch (const UserError&) {
      return std::nullopt;  // not written yet: every write is atomic, so never half a file
    }
  };
  // Polls until `done(run)` or `seconds` pass; the last run read, if any.
  std::optional<RunRecord> last;
  auto wait_for = [&](double seconds, auto done) {
    for (const auto until = Clock::now() + std::chrono::duration<double>(seconds); Clock::now() < until;) {
      if (auto run = saved()) {
        last = run;
        if (done(*run)) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return false;
  };
  auto steps_of = [](const RunRecord& run) { return run.steps.empty() ? 0 : run.steps.back().step; };

  // The first save follows the step-0 evaluation, when training starts.
  const bool started = wait_for(120, [](const RunRecord&) { return true; });
  const auto training_started = Clock::now();
  ASSERT_TRUE(started) << read_file(temp_ / "stderr.txt");
  ASSERT_EQ(steps_of(*last), 0);
  // Two saves by time, with no evaluation between them.
  ASSERT_TRUE(wait_for(kSaveIntervalSeconds + 10, [&](const RunRecord& run) { return steps_of(run) > 0; }));
  const RunRecord first = *last;
  ASSERT_TRUE(
      wait_for(kSaveIntervalSeconds + 10, [&](const RunRecord& run) { return steps_of(run) > steps_of(first); }));
  const RunRecord second = *last;
  // Saved after the first step that ended once the interval had passed, not later: on a
  // busy machine that step itself may be slow. (The step's report runs between the
  // trainer's two clock readings; 0.2 s allows for it on a loaded machine.)
  const double since_last_save = second.steps.back().wall_s - first.steps.back().wall_s;
  const double one_step_earlier = second.steps.end()[-2].wall_s - first.steps.back().wall_s;
  EXPECT_GT(since_last_save, kSaveIntervalSeconds - 0.2);
  EXPECT_LT(one_step_earlier, kSaveIntervalSeconds + 0.2) << "a save by time came late";

  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // half way to the next save
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  const double killed_at = std::chrono::duration<double>(Clock::now() - training_started).count();
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));

  const RunRecord kept = read_json(json_file);
  EXPECT_EQ(kept.status, RunStatus::Running);  // as saved: readers show it as interrupted
  ASSERT_GE(steps_of(kept), steps_of(second));
  for (std::size_t i = 0; i < kept.steps.size(); ++i) ASSERT_EQ(kept.steps[i].step, int(i) + 1);
  ASSERT_EQ(kept.evals.size(), 1u);
  // Lost: the training time between the last save and the kill (short by the step-0
  // evaluation and one poll, a few milliseconds, as training_started is seen after them).
  EXPECT_LT(killed_at - kept.steps.back().wall_s, kSaveIntervalSeconds + 1);
  // The CSV was saved with it: a header, step 0's evaluation and one row per step.
  EXPECT_EQ(read_lines(temp_ / "runs" / "killed.csv").size(), kept.steps.size() + 2);
  // Nothing half-written beside them.
  EXPECT_EQ(std::distance(fs::directory_iterator(temp_ / "runs"), fs::directory_iterator()), 2);
}

// kill -9 at a random step after a checkpoint exists, then --resume: every loss is the
// uninterrupted run's, to the bit, on one CPU thread. Checkpoints come every second and the
// run file at every evaluation, so the file is usually ahead of the checkpoint when killed
// and is cut back to it.
TEST_F(CliTest, KilledRunResumesWithTheUninterruptedNumbers) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "--corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 32 --heads 2 --context 16 --batch 4 "
      "--vocab 256 --steps 4000 --warmup 3 --eval-interval 50 --eval-batches 2 --lr 3e-3 --out runs ";
  ASSERT_EQ(run("train " + tiny + "--name whole"), 0) << out_ << err_;
  const RunRecord whole = read_json(temp_ / "runs" / "whole.json");

  const fs::path checkpoint = temp_ / "runs" / "cut.ckpt";
  const pid_t pid = start("train " + tiny + "--name cut --checkpoint-interval 1");
  ASSERT_GE(pid, 0);
  ASSERT_TRUE(appears(checkpoint)) << read_file(temp_ / "stderr.txt");
  const int delay_ms = std::random_device()() % 1000;
  SCOPED_TRACE("killed " + std::to_string(delay_ms) + " ms after the first checkpoint");
  std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "the run ended before the kill: give it more steps";
  const int checkpoint_step = read_checkpoint_header(checkpoint).step;
  const RunRecord killed = read_json(temp_ / "runs" / "cut.json");
  SCOPED_TRACE("checkpoint at step " + std::to_string(checkpoint_step) + ", run file at step " +
               std::to_string(killed.steps.size()));
  ASSERT_GT(checkpoint_step, 0);
  ASSERT_LT(checkpoint_step, 4000);

  ASSERT_EQ(run("train --resume runs/cut.json"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("resumed after step " + std::to_string(checkpoint_step)));
  const RunRecord resumed = read_json(temp_ / "runs" / "cut.json");
  EXPECT_EQ(resumed.status, RunStatus::Done);
  EXPECT_EQ(resumed.config.name, "cut");
  ASSERT_EQ(resumed.steps.size(), whole.steps.size());
  ASSERT_EQ(resumed.evals.size(), whole.evals.size());
  expect_same_losses(resumed, whole);
  // Done: the checkpoint is dropped, and the CSV holds every row once.
  EXPECT_FALSE(fs::exists(checkpoint));
  EXPECT_EQ(read_lines(temp_ / "runs" / "cut.csv").size(), read_lines(temp_ / "runs" / "whole.csv").size());
}

// A sweep stopped while a point trains (Ctrl-C, or a scheduler's SIGTERM) goes on with that
// point from its checkpoint when run again, and the point ends as if never stopped.
TEST_F(CliTest, AStoppedSweepResumesItsPointFromTheCheckpoint) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "sweep --vary layers --values 2 --placements pre --corpus corpus.txt --device cpu --threads 1 --d-model 32 "
      "--heads 2 --context 16 --batch 4 --vocab 256 --steps 3000 --warmup 3 --eval-interval 50 --eval-batches 2 "
      "--lr 3e-3 --checkpoint-interval 0 ";
  ASSERT_EQ(run(tiny + "--out whole"), 0) << out_ << err_;
  const fs::path point = temp_ / "cut" / "pre-norm_lr_3e-3_warmup_3_layers_2.json";
  const pid_t pid = start(tiny + "--out cut");
  ASSERT_GE(pid, 0);
  ASSERT_TRUE(appears(checkpoint_path(point))) << read_file(temp_ / "stderr.txt");
  ASSERT_EQ(::kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_EQ(read_json(point).status, RunStatus::Stopped) << "the run ended before it was stopped: give it more steps";

  ASSERT_EQ(run(tiny + "--out cut"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("stopped, goes on from its checkpoint at step"));
  const RunRecord resumed = read_json(point), whole = read_json(temp_ / "whole" / point.filename());
  EXPECT_EQ(resumed.status, RunStatus::Done);
  ASSERT_EQ(resumed.steps.size(), whole.steps.size());
  ASSERT_EQ(resumed.evals.size(), whole.evals.size());
  expect_same_losses(resumed, whole);
}

// A checkpoint that cannot continue the run is refused with one line and exit status 2
// before anything is written: the run's files stay as they were, the checkpoint too.
TEST_F(CliTest, RefusedResumeLeavesTheRunsFilesAlone) {
  corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 --context 8 "
                "--batch 2 --vocab 256 --steps 20 --eval-interval 10 --eval-batches 1 --lr 3e-3 --name kept "
                "--out runs --final-checkpoint keep"),
            0)
      << out_ << err_;
  const fs::path json_file = temp_ / "runs" / "kept.json", csv_file = temp_ / "runs" / "kept.csv",
                 checkpoint = temp_ / "runs" / "kept.ckpt";
  const std::string json_text = read_file(json_file), csv_text = read_file(csv_file), bytes = read_file(checkpoint);
  ASSERT_EQ(read_checkpoint_header(checkpoint).step, 20);
  auto refused = [&](const std::string& options, const std::string& why) {
    EXPECT_EQ(run("train --resume runs/kept.json" + options), 2) << out_;
    EXPECT_THAT(err_, HasSubstr(why));
    EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
    EXPECT_EQ(read_file(json_file), json_text);
    EXPECT_EQ(read_file(csv_file), csv_text);
  };

  write_file(checkpoint, bytes.substr(0, bytes.size() / 2));
  refused("", "normlab-cli: runs/kept.ckpt: truncated: " + std::to_string(bytes.size() / 2) + " of its " +
                  std::to_string(bytes.size()) + " bytes");
  EXPECT_EQ(read_file(checkpoint), bytes.substr(0, bytes.size() / 2)) << "kept, to be looked at";
  write_file(checkpoint, bytes);

  std::string other_version = bytes;
  other_version.replace(other_version.find("\"version\":1,"), 12, "\"version\":7,");
  write_file(checkpoint, other_version);
  refused("", "runs/kept.ckpt: checkpoint format version 7; this NormLab reads version 1");
  write_file(checkpoint, bytes);

  refused(" --lr 5e-3",
          "runs/kept.ckpt: a checkpoint of another experiment: its peak learning rate is '0.003', "
          "the run's '0.005'");
  // The same corpus file with other text: found once it is tokenized, still before any write.
  corpus_file(synthetic_corpus(90'000, 8));
  refused("", "runs/kept.ckpt: made from other training data");
  corpus_file(synthetic_corpus());
  fs::remove(checkpoint);
  refused("", "runs/kept.ckpt: no checkpoint");
  // --resume goes on with one run as its file says.
  EXPECT_EQ(run("train --resume runs/kept.json --seeds 2"), 2);
  EXPECT_THAT(err_, ::testing::AllOf(HasSubstr("--seeds"), HasSubstr("excludes"), HasSubstr("--resume")));
}

TEST_F(CliTest, LayerStatisticsOffLeaveTheCsvNarrow) {
  corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 32 --heads 2 --context 16 "
                "--batch 4 --vocab 256 --steps 4 --eval-interval 2 --eval-batches 1 --name off --out runs "
                "--layer-stats-every 0 --layers-summary"),
            0)
      << out_ << err_;
  EXPECT_THAT(out_, ::testing::Not(HasSubstr("layer statistics at step")));
  // The evaluations' own statistics stay (predictions.h).
  const std::string header = read_lines(temp_ / "runs" / "off.csv").at(0);
  EXPECT_EQ(
      header.substr(0, header.find(",config.")),
      "run,step,wall_s,lr,train_loss,val_loss,context_use,frequency_mismatch,display_name,note,verdict,verdict_step");
}

// A sweep trains each point, writes its files, the summary CSV, JSON and chart, and a
// second sweep over more values reads back the runs the first one finished, though it
// trains with another thread count (which changes the speed, not the experiment).
TEST_F(CliTest, SweepWritesEveryRunAndASummary) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "--corpus corpus.txt --device cpu --d-model 32 --heads 2 --context 16 --batch 4 --vocab 256 "
      "--steps 8 --warmup 2 --eval-interval 4 --eval-batches 2 --out runs ";
  ASSERT_EQ(run("sweep --vary layers --values 1,2 --placements pre,deepnorm --threads 1 " + tiny), 0) << out_ << err_;
  EXPECT_EQ(err_, "");
  EXPECT_THAT(out_, HasSubstr("[4/4]"));
  const auto summary = read_lines(temp_ / "runs" / "layers-sweep.csv");
  ASSERT_EQ(summary.size(), 5u);
  EXPECT_EQ(summary[0], "layers,placement,seed,final_val_loss,best_val_loss,baseline_loss,outcome,run");
  EXPECT_EQ(summary[1].rfind("1,pre,1337,", 0), 0u) << summary[1];
  EXPECT_THAT(summary[2], HasSubstr(",\"deepnorm lr 1e-3 warmup 2 layers 1\""));
  EXPECT_TRUE(fs::exists(temp_ / "runs" / "deepnorm_lr_1e-3_warmup_2_layers_2.json"));
  EXPECT_EQ(read_file(temp_ / "runs" / "layers-sweep.svg").rfind("<svg", 0), 0u);
  const auto described = nlohmann::json::parse(read_file(temp_ / "runs" / "layers-sweep.sweep.json"));
  EXPECT_EQ(described.at("setting"), "layers");
  EXPECT_EQ(described.at("placements"), nlohmann::json({"pre", "deepnorm"}));
  EXPECT_EQ(described.at("fixed").at("steps"), "8");
  EXPECT_FALSE(described.at("fixed").contains("layers"));
  ASSERT_EQ(described.at("results").size(), 4u);
  EXPECT_EQ(described.at("results")[3].at("run"), "deepnorm lr 1e-3 warmup 2 layers 2");

  ASSERT_EQ(run("sweep --vary layers --values 2,3 --placements pre --threads 2 " + tiny), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[1/2]  pre-norm lr 1e-3 warmup 2 layers 2: done before with the same settings"));
  EXPECT_THAT(out_, HasSubstr("[2/2]  pre-norm lr 1e-3 warmup 2 layers 3 on CPU"));

  // A run that diverged answers its point too, by the rule the window follows (core's
  // `answers`): training it again would diverge again. It used to be retrained here.
  const fs::path deep = temp_ / "runs" / "deepnorm_lr_1e-3_warmup_2_layers_1.json";
  RunRecord diverged = read_json(deep);
  diverged.status = RunStatus::Diverged;
  write_json(diverged, deep);
  ASSERT_EQ(run("sweep --vary layers --values 1 --placements deepnorm --threads 1 " + tiny), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[1/1]  deepnorm lr 1e-3 warmup 2 layers 1: diverged before with the same settings"));
  EXPECT_EQ(read_json(deep).status, RunStatus::Diverged) << "not trained again";
}

// A run answers a point whatever its file is called: a one-seed sweep after a --seeds
// sweep of the same settings reads back the seed-1337 runs ("… seed 1337"), as the window
// would, instead of training them again under the shorter name; --status says so too.
TEST_F(CliTest, SweepReadsBackARunOfTheSameSettingsUnderAnotherName) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "--corpus corpus.txt --device cpu --threads 1 --d-model 32 --heads 2 --context 16 --batch 4 --vocab 256 "
      "--layers 1 --steps 6 --warmup 2 --eval-interval 3 --eval-batches 1 --out runs ";
  ASSERT_EQ(run("sweep --vary lr --values 1e-3 --placements pre --seeds 2 " + tiny), 0) << out_ << err_;
  ASSERT_TRUE(fs::exists(temp_ / "runs" / "pre-norm_lr_1e-3_warmup_2_layers_1_seed_1337.json"));
  ASSERT_EQ(run("sweep --vary lr --values 1e-3 --placements pre --status " + tiny), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("lr-sweep: 1 done, 0 queued, 0 running, 0 failed, 0 missing"))
      << "--status counts the run that training would read back";
  ASSERT_EQ(run("sweep --vary lr --values 1e-3,2e-3 --placements pre " + tiny), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[1/2]  pre-norm lr 1e-3 warmup 2 layers 1: done before with the same settings as "
                              "\u201cpre-norm lr 1e-3 warmup 2 layers 1 seed 1337\u201d"));
  EXPECT_THAT(out_, HasSubstr("[2/2]  pre-norm lr 2e-3 warmup 2 layers 1 on CPU"));
  EXPECT_FALSE(fs::exists(temp_ / "runs" / "pre-norm_lr_1e-3_warmup_2_layers_1.json")) << "not trained again";
  const auto summary = read_lines(temp_ / "runs" / "lr-sweep.csv");
  ASSERT_EQ(summary.size(), 3u);
  EXPECT_THAT(summary[1], HasSubstr("\"pre-norm lr 1e-3 warmup 2 layers 1 seed 1337\""));
}

// The course experiment over seeds: every run once per seed, each with its own files, and
// per experiment the mean and range of the final held-out loss.
// --status without Slurm reads the run files: done, missing, running while the file
// changes, failed once it has been quiet for a minute; with every point done, the summary.
TEST_F(CliTest, SweepStatusFromTheRunFiles) {
  corpus_file(synthetic_corpus());
  const std::string sweep =
      "sweep --vary layers --values 1,2 --placements pre --corpus corpus.txt --device cpu --threads 1 --d-model 32 "
      "--heads 2 --context 16 --batch 4 --vocab 256 --steps 8 --warmup 2 --eval-interval 4 --eval-batches 2 "
      "--out runs ";
  ASSERT_EQ(run(sweep + "--task 1"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[task 1]  pre-norm lr 1e-3 warmup 2 layers 2: done"));
  EXPECT_FALSE(fs::exists(temp_ / "runs" / "pre-norm_lr_1e-3_warmup_2_layers_1.json")) << "task 1 trains point 1 alone";
  // A point's row: its index, value, placement, state, what its run file says it is doing
  // (core/runs/verdict.h; a point without one has not started) and its run.
  const auto row = [](int point, const char* state, const char* verdict) {
    char text[160];
    std::snprintf(text, sizeof text, "%-6d %-10d %-9s %-8s %-13s  pre-norm lr 1e-3 warmup 2 layers %d\n", point,
                  point + 1, "pre", state, verdict, point + 1);
    return std::string(text);
  };
  const auto verdict_of = [&](const char* file) { return info(judge(read_json(temp_ / "runs" / file)).verdict).name; };
  ASSERT_EQ(run(sweep + "--status"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr(row(0, "missing", "not-started")));
  EXPECT_THAT(out_, HasSubstr(row(1, "done", verdict_of("pre-norm_lr_1e-3_warmup_2_layers_2.json"))));
  EXPECT_THAT(out_, HasSubstr("layers-sweep: 1 done, 0 queued, 0 running, 0 failed, 1 missing\n"));
  EXPECT_FALSE(fs::exists(temp_ / "runs" / "layers-sweep.csv")) << "no summary before every point is done";

  // Point 0 as a process would leave it, still saying running.
  const fs::path point = temp_ / "runs" / "pre-norm_lr_1e-3_warmup_2_layers_1.json";
  RunRecord running = read_json(temp_ / "runs" / "pre-norm_lr_1e-3_warmup_2_layers_2.json");
  running.config.model.layers = 1;
  running.config.name = "pre-norm lr 1e-3 warmup 2 layers 1";
  running.status = RunStatus::Running;
  write_json(running, point);
  ASSERT_EQ(run(sweep + "--status"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("1 done, 0 queued, 1 running, 0 failed, 0 missing"));
  fs::last_write_time(point, fs::file_time_type::clock::now() - std::chrono::seconds(61));
  ASSERT_EQ(run(sweep + "--status"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr(row(0, "failed", verdict_of("pre-norm_lr_1e-3_warmup_2_layers_1.json"))));

  ASSERT_EQ(run(sweep + "--task 0"), 0) << out_ << err_;
  ASSERT_EQ(run(sweep + "--status"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("2 done, 0 queued, 0 running, 0 failed, 0 missing"));
  EXPECT_THAT(out_, HasSubstr("unigram baseline"));
  EXPECT_EQ(read_lines(temp_ / "runs" / "layers-sweep.csv").size(), 3u);
  EXPECT_EQ(read_file(temp_ / "runs" / "layers-sweep.svg").rfind("<svg", 0), 0u);

  // The description beside the runs drives a task alone, as the job script does.
  ASSERT_EQ(run("sweep --sweep-file runs/layers-sweep.sweep.json --task 1"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[task 1]  pre-norm lr 1e-3 warmup 2 layers 2: done before with the same settings"));
}

// An array task stopped by Slurm (SIGTERM: scancel, preemption, a time limit) or killed
// outright goes on from its checkpoint when the task runs again, and ends as if never stopped.
TEST_F(CliTest, ATaskStoppedOrKilledResumesItsCheckpoint) {
  corpus_file(synthetic_corpus());
  const std::string sweep =
      "sweep --vary layers --values 2 --placements pre --corpus corpus.txt --device cpu --threads 1 --d-model 32 "
      "--heads 2 --context 16 --batch 4 --vocab 256 --steps 3000 --warmup 3 --eval-interval 50 --eval-batches 2 "
      "--lr 3e-3 --checkpoint-interval 0 ";
  ASSERT_EQ(run(sweep + "--out whole --task 0"), 0) << out_ << err_;
  const RunRecord whole = read_json(temp_ / "whole" / "pre-norm_lr_3e-3_warmup_3_layers_2.json");
  for (const int signal : {SIGTERM, SIGKILL}) {
    const std::string out = signal == SIGTERM ? "term" : "kill";
    const fs::path point = temp_ / out / "pre-norm_lr_3e-3_warmup_3_layers_2.json";
    const pid_t pid = start(sweep + "--out " + out + " --task 0");
    ASSERT_GE(pid, 0);
    ASSERT_TRUE(appears(checkpoint_path(point))) << read_file(temp_ / "stderr.txt");
    ASSERT_EQ(::kill(pid, signal), 0);
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_EQ(read_json(point).status, signal == SIGTERM ? RunStatus::Stopped : RunStatus::Running)
        << "the run ended before it was stopped: give it more steps";

    ASSERT_EQ(run(sweep + "--out " + out + " --task 0"), 0) << out_ << err_;
    EXPECT_THAT(out_, HasSubstr("goes on from its checkpoint at step")) << out;
    const RunRecord resumed = read_json(point);
    EXPECT_EQ(resumed.status, RunStatus::Done);
    ASSERT_EQ(resumed.steps.size(), whole.steps.size());
    expect_same_losses(resumed, whole);
  }
}

TEST_F(CliTest, WorkshopOverSeedsPrintsMeanAndRange) {
  corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --preset workshop --seeds 2 --corpus corpus.txt --device cpu --threads 1 --layers 1 "
                "--d-model 16 --heads 1 --context 8 --batch 2 --vocab 256 --steps 6 --eval-interval 3 "
                "--eval-batches 1 --out runs"),
            0)
      << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("[10/10]"));
  EXPECT_TRUE(fs::exists(temp_ / "runs" / "pre-norm_lr_6e-3_warmup_30_layers_1_seed_1338.json"));
  EXPECT_EQ(read_lines(temp_ / "runs" / "workshop.csv").size(), 1u + 10u * 7u);  // steps 0 (evaluated) to 6
  const auto at = out_.find("over seeds");
  ASSERT_NE(at, std::string::npos) << out_;
  const std::string summary = out_.substr(at);
  // One row per experiment, each over its two runs.
  EXPECT_THAT(summary,
              ::testing::ContainsRegex("\npre-norm lr 1e-3 warmup 30 layers 1 +2 +[0-9.]+ +[0-9.]+ +[0-9.]+\n"));
  EXPECT_THAT(summary, ::testing::ContainsRegex("\npost-norm lr 1e-3 warmup 2 layers 1 +2 "));
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'), 1 + 5) << summary;
}

// Issue 30: --name is what the run is called and --note a note on it; both are the run
// file's, and every CSV row carries them.
TEST_F(CliTest, NameAndNoteAreKeptWithTheRun) {
  corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 --context 8 "
                "--batch 2 --vocab 256 --steps 2 --eval-interval 2 --eval-batches 1 --out runs --name 'tiny, run' "
                "--note 'first \"try\"'"),
            0)
      << out_ << err_;
  const auto j = nlohmann::json::parse(read_file(temp_ / "runs" / "tiny__run.json"));
  EXPECT_EQ(j["name"], "tiny, run");
  EXPECT_EQ(j["label"], "tiny, run");
  EXPECT_EQ(j["note"], "first \"try\"");
  const auto csv = read_lines(temp_ / "runs" / "tiny__run.csv");
  ASSERT_GE(csv.size(), 2u);
  // Its words, then what it is doing (two steps: too early to tell, since no step), then its settings.
  EXPECT_NE(csv[1].find(",\"tiny, run\",\"first \"\"try\"\"\",too-early,,pre,"), std::string::npos) << csv[1];
}

// Issue 30: the course's five CSVs read back together group by their settings, as a user's
// pandas.concat(...).groupby(["config.norm", "config.peak_lr"]) would; here Python's csv module.
TEST_F(CliTest, CourseCsvsGroupByTheirSettings) {
  corpus_file(synthetic_corpus());
  ASSERT_EQ(run("train --preset workshop --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 "
                "--heads 1 --context 8 --batch 2 --vocab 256 --steps 4 --eval-interval 2 --eval-batches 1 --out runs"),
            0)
      << out_ << err_;
  write_file(temp_ / "group.py",
             "import collections, csv, glob\n"
             "runs = collections.defaultdict(set)\n"
             "for path in glob.glob('runs/*.csv'):\n"
             "    if path.endswith('workshop.csv'):\n"
             "        continue  # the five together; each run's own file is read\n"
             "    with open(path, newline='') as f:\n"
             "        for row in csv.DictReader(f):\n"
             "            runs[(row['config.norm'], float(row['config.peak_lr']))].add(row['run'])\n"
             "for (norm, lr), names in sorted(runs.items()):\n"
             "    print(norm, lr, len(names))\n");
  const std::string command = "cd '" + temp_.path().string() + "' && python3 group.py > groups.txt";
  ASSERT_EQ(std::system(command.c_str()), 0);
  EXPECT_EQ(read_file(temp_ / "groups.txt"), "post 0.001 2\npost 0.006 1\npre 0.001 1\npre 0.006 1\n");
}

// Issue 16: the course's five runs side by side give, run for run, the numbers they give
// one after another with the same thread count.
TEST_F(CliTest, WorkshopSideBySideGivesTheNumbersOfOneAfterAnother) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "train --preset workshop --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 "
      "--context 8 --batch 2 --vocab 256 --steps 12 --eval-interval 4 --eval-batches 1 ";
  ASSERT_EQ(run(tiny + "--side-by-side 1 --out serial"), 0) << out_ << err_;
  EXPECT_THAT(out_, ::testing::Not(HasSubstr("side by side")));
  ASSERT_EQ(run(tiny + "--side-by-side 3 --out together"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("3 runs side by side, 1 CPU thread each"));
  int files = 0;
  for (const auto& entry : fs::directory_iterator(temp_ / "serial")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const RunRecord serial = read_json(entry.path()),
                    together = read_json(temp_ / "together" / entry.path().filename());
    EXPECT_EQ(together.status, RunStatus::Done);
    ASSERT_EQ(together.steps.size(), serial.steps.size());
    ASSERT_EQ(together.evals.size(), serial.evals.size());
    expect_same_losses(together, serial);
  }
  EXPECT_EQ(files, 5);
}

// Issue 52: the course stacked (pre-norm's two runs as one model, post-norm's three as
// another) ends each run where training it as its own model does.
TEST_F(CliTest, WorkshopStackedGivesTheFinalLossesOfUnstacked) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "train --preset workshop --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 "
      "--context 8 --batch 2 --vocab 256 --steps 12 --eval-interval 4 --eval-batches 1 --side-by-side 1 ";
  ASSERT_EQ(run(tiny + "--stack off --out alone"), 0) << out_ << err_;
  EXPECT_THAT(out_, ::testing::Not(HasSubstr("Stacked")));
  ASSERT_EQ(run(tiny + "--stack on --out stacked"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("Stacked as one model: [1/5], [3/5]"));
  EXPECT_THAT(out_, HasSubstr("Stacked as one model: [2/5], [4/5], [5/5]"));
  int files = 0;
  for (const auto& entry : fs::directory_iterator(temp_ / "alone")) {
    if (entry.path().extension() != ".json") continue;
    ++files;
    const RunRecord alone = read_json(entry.path()), stacked = read_json(temp_ / "stacked" / entry.path().filename());
    EXPECT_EQ(stacked.status, RunStatus::Done);
    ASSERT_EQ(stacked.steps.size(), alone.steps.size());
    ASSERT_EQ(stacked.evals.size(), alone.evals.size());
    EXPECT_NEAR(stacked.final_train_loss(), alone.final_train_loss(), 1e-4) << entry.path();
    EXPECT_NEAR(stacked.final_val_loss(), alone.final_val_loss(), 1e-4) << entry.path();
  }
  EXPECT_EQ(files, 5);
  // --stack on where nothing stacks says why in one line.
  EXPECT_EQ(run("train --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 --context 8 "
                "--batch 2 --vocab 256 --steps 2 --stack on --out one"),
            2);
  EXPECT_THAT(err_, HasSubstr("--stack on: no two runs stack (there is one run)"));
}

// bench --stack times N runs stacked against N single steps and says the ratio.
TEST_F(CliTest, BenchStackTimesStackedAgainstSingleSteps) {
  ASSERT_EQ(run("bench --stack 2 --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 --context 8 --batch 2 "
                "--vocab 256 --bench-steps 2 --bench-warmup 1 --json"),
            0)
      << out_ << err_;
  const auto json = nlohmann::json::parse(out_);
  EXPECT_EQ(json["stack"]["runs"], 2);
  EXPECT_GT(json["stack"]["stacked_ms_per_step"].get<double>(), 0);
  EXPECT_GT(json["stack"]["single_ms_per_step"].get<double>(), 0);
  EXPECT_NEAR(json["stack"]["speedup"].get<double>(),
              json["stack"]["single_ms_per_step"].get<double>() / json["stack"]["stacked_ms_per_step"].get<double>(),
              1e-9);
}

// Issue 48: explain says what a run is doing from its file, compares two, explains a
// folder's each, and prints JSON; what is not a run gets one line and exit status 2.
TEST_F(CliTest, ExplainSaysWhatEachRunIsDoing) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "train --corpus corpus.txt --device cpu --threads 1 --layers 2 --d-model 32 --heads 2 --context 32 --batch 8 "
      "--vocab 256 --steps 100 --warmup 1 --eval-interval 25 --eval-batches 4 --text-every 0 --out runs ";
  ASSERT_EQ(run(tiny + "--lr 3e-3 --name learns"), 0) << out_ << err_;
  const RunRecord learns = read_json(temp_ / "runs" / "learns.json");
  const RunVerdict verdict = judge(learns);
  ASSERT_EQ(verdict.verdict, Verdict::Learning) << verdict.sentence;
  // The run's last line says it in words.
  EXPECT_THAT(out_, ::testing::EndsWith("[1/1]  " + verdict.sentence + "\n"));
  ASSERT_EQ(run(tiny + "--lr 1 --name collapses"), 0) << out_ << err_;  // Adam at lr 1: onto the baseline

  ASSERT_EQ(run("explain runs/learns.json"), 0) << err_;
  EXPECT_EQ(out_.substr(0, out_.find('\n')),
            "learns (done, step 100 of 100): learning since step " + std::to_string(verdict.since_step));
  EXPECT_THAT(out_, HasSubstr("\n  " + verdict.sentence + "\n"));
  EXPECT_THAT(out_, HasSubstr("  context use   "));
  EXPECT_THAT(out_, HasSubstr("  gradient      layer 1 / layer 2: "));

  ASSERT_EQ(run("explain runs/learns.json runs/collapses.json"), 0) << err_;
  const RunRecord collapses = read_json(temp_ / "runs" / "collapses.json");
  EXPECT_EQ(judge(collapses).verdict, Verdict::OnBaseline) << judge(collapses).sentence;
  EXPECT_THAT(out_, ::testing::EndsWith("\n" + compare_sentence(learns, collapses) + "\n"));
  EXPECT_THAT(out_, HasSubstr("Only the peak learning rate differs. The run at lr 3e-3 is below the baseline since "));
  EXPECT_THAT(out_, HasSubstr("; the run at lr 1 ended on it, there since step "));

  ASSERT_EQ(run("explain runs/learns.json --json"), 0) << err_;
  const auto json = nlohmann::json::parse(out_);
  EXPECT_EQ(json.at("verdict"), "learning");
  EXPECT_EQ(json.at("since_step"), verdict.since_step);
  EXPECT_EQ(json.at("sentence"), verdict.sentence);
  EXPECT_NEAR(json.at("evidence").at("heldout_loss").get<double>(), learns.final_val_loss(), 1e-12);
  ASSERT_EQ(run("explain runs/learns.json runs/collapses.json --json"), 0) << err_;
  EXPECT_EQ(nlohmann::json::parse(out_).at("runs").size(), 2u);
  EXPECT_EQ(nlohmann::json::parse(out_).at("comparison"), compare_sentence(learns, collapses));

  // A folder: each of its runs, passing over a sweep's description and other JSON with a word.
  write_file(temp_ / "runs" / "notes.json", "{\"mine\": 1}");
  ASSERT_EQ(run("explain runs"), 0) << err_;
  EXPECT_THAT(out_, HasSubstr("collapses (done, step 100 of 100): on-baseline since step "));
  EXPECT_THAT(out_, HasSubstr("learns (done, step 100 of 100): learning since step "));
  EXPECT_THAT(err_, HasSubstr("passed over"));
  EXPECT_THAT(err_, HasSubstr("notes.json"));

  // What is not a run: one line, exit status 2.
  write_file(temp_ / "broken.json", "{\"schema\": \"normlab.run\", ");
  for (const std::string& args : {"explain missing.json", "explain broken.json", "explain runs/learns.csv", "explain",
                                  "explain runs runs/learns.json", "explain empty-folder"}) {
    fs::create_directories(temp_ / "empty-folder");
    EXPECT_EQ(run(args), 2) << args << ": " << out_ << err_;
    EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << args << ": " << err_;
    EXPECT_EQ(err_.rfind("normlab-cli: ", 0), 0u) << args << ": " << err_;
    EXPECT_EQ(out_, "") << args;
  }
}

// Issue 47: the README's first command trained at full scale on a CPU for an hour without a
// word. Without --scale and on the CPU, train takes the CPU scale, as the window and
// sweep do, and says so in one line; --scale full and explicit options still win.
// `corpora --build` makes a corpus's tokens, and the listing then says its size, tokens and
// baseline as the engine counts them. A small text stands in for the King James text
// in the cache, so nothing runs `bible`.
TEST_F(CliTest, CorporaListsWhatABuildMade) {
  const fs::path kjv = cache_dir() / "corpus" / "kjv.txt";
  fs::create_directories(kjv.parent_path());
  write_file(kjv, synthetic_corpus());
  ASSERT_EQ(run("corpora --build kjv --vocab 256"), 0) << err_;
  EXPECT_EQ(err_, "");
  std::string bytes = std::to_string(synthetic_corpus().size());  // with thousands marked, as listed
  for (int at = int(bytes.size()) - 3; at > 0; at -= 3) bytes.insert(std::size_t(at), ",");
  EXPECT_THAT(out_, HasSubstr("Corpus kjv: " + bytes + " bytes in the cache"));
  EXPECT_THAT(out_, HasSubstr("Tokenizer trained in"));

  const Corpus corpus = load_corpus(kjv);
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus, 256);  // the one the build cached
  EXPECT_FALSE(tokenizer.was_trained());
  const std::vector<int> ids = tokenizer.encode(corpus.text);
  const Dataset data(ids, 256, 16);
  char row[200];
  std::snprintf(row, sizeof row, "%-10s %-6s %13s", "kjv", "yes", bytes.c_str());
  std::string line;
  for (std::istringstream lines(out_); std::getline(lines, line);)
    if (line.rfind(row, 0) == 0) break;
  ASSERT_EQ(line.rfind(row, 0), 0u) << out_;
  std::istringstream cells(line.substr(std::strlen(row)));
  std::string tokens, training;
  double baseline = 0;
  cells >> tokens >> training >> baseline;
  const auto plain = [](std::string s) {
    s.erase(std::remove(s.begin(), s.end(), ','), s.end());
    return std::stoll(s);
  };
  EXPECT_EQ(plain(tokens), std::int64_t(ids.size()));
  EXPECT_EQ(plain(training), data.train_tokens());
  EXPECT_NEAR(baseline, unigram_baseline(ids, 256), 0.0005);
  // The bookshelf is not built in this cache: the listing says how to build it.
  EXPECT_THAT(out_, HasSubstr("\nbookshelf  no "));
  EXPECT_THAT(out_, HasSubstr("normlab-cli corpora --build bookshelf"));
}

TEST_F(CliTest, TrainWithoutAScaleOnTheCpuTakesTheCpuScaleAndSaysSo) {
  corpus_file(synthetic_corpus());
  const std::string tiny =
      "train --corpus corpus.txt --device cpu --threads 1 --layers 1 --d-model 16 --heads 1 --vocab 256 "
      "--steps 2 --eval-interval 2 --eval-batches 1 --out runs ";
  ASSERT_EQ(run(tiny + "--name implied"), 0) << out_ << err_;
  EXPECT_THAT(out_, HasSubstr("On the CPU: the CPU scale, 600 steps of 8 x 64 tokens (--scale full for 3000 steps "
                              "of 32 x 128)\n"));
  const RunRecord implied = read_json(temp_ / "runs" / "implied.json");
  EXPECT_EQ(implied.config.batch_size, 8);
  EXPECT_EQ(implied.config.model.context, 64);
  EXPECT_EQ(implied.config.steps, 2) << "an explicit option overrides the scale";

  ASSERT_EQ(run(tiny + "--name full --scale full --context 16"), 0) << out_ << err_;
  EXPECT_EQ(out_.find("On the CPU"), std::string::npos);
  EXPECT_EQ(read_json(temp_ / "runs" / "full.json").config.batch_size, 32);
}

// Issue 47: a run that cannot fit is refused before it starts, in one line with the
// estimate and the limit; started anyway, LibTorch's failed allocation is one line too,
// without its C++ backtrace. An address-space limit stands in for a small machine.
TEST_F(CliTest, ARunThatCannotFitIsRefusedAndLibTorchsFailureIsOneLine) {
  corpus_file(synthetic_corpus());
  const std::string limited = "cd '" + temp_.path().string() +
                              "' && ulimit -v 3000000 && '" NORMLAB_CLI
                              "' train --corpus corpus.txt --device cpu --threads 1 --layers 4 --d-model 4096 "
                              "--heads 32 --context 16 --batch 4 --vocab 256 --steps 2 --out runs";
  auto run_limited = [&](const std::string& more) {
    const int status = std::system((limited + more + " > stdout.txt 2> stderr.txt").c_str());
    out_ = read_file(temp_ / "stdout.txt");
    err_ = read_file(temp_ / "stderr.txt");
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(run_limited(""), 2) << out_ << err_;
  EXPECT_THAT(err_, HasSubstr("this needs about 22.8 GB of memory (estimate) and "));
  EXPECT_THAT(err_, HasSubstr("--ignore-memory to start anyway"));
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
  EXPECT_THAT(out_, HasSubstr("Memory: about 22.8 GB estimated for 1 run at once"));

  EXPECT_EQ(run_limited(" --ignore-memory"), 2) << out_ << err_;
  EXPECT_THAT(err_, HasSubstr("can't allocate memory"));
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << "no backtrace: " << err_;
}

// Issue 47: --help's first line named five placements ("pre, post, peri, DeepNorm or
// mixed") when the engine had seven, and no norm type. It names every row of the engine's
// tables, and sweep --help every built-in sweep; train --help names every switch.
TEST_F(CliTest, HelpNamesEveryPlacementNormTypeSwitchAndSweepPreset) {
  ASSERT_EQ(run("--help"), 0) << err_;
  const std::string first = out_.substr(0, out_.find('\n'));
  for (const PlacementInfo& row : kPlacements) EXPECT_THAT(first, HasSubstr(std::string(" ") + row.name)) << row.name;
  for (const NormTypeInfo& row : kNormTypes) EXPECT_THAT(first, HasSubstr(std::string(" ") + row.name)) << row.name;
  ASSERT_EQ(run("train --help"), 0) << err_;
  for (const ConfigField& field : config_fields()) {
    if (std::holds_alternative<Member<Switch>>(field.member)) EXPECT_THAT(out_, HasSubstr("--" + field.flag));
  }
  ASSERT_EQ(run("sweep --help"), 0) << err_;
  for (const SweepPresetInfo& row : kSweepPresets) {
    EXPECT_THAT(out_, HasSubstr(std::string(row.name) + " (" + row.help + ")")) << row.name;
  }
}

TEST_F(CliTest, DeviceCuda) {
  corpus_file("", "empty.txt");
  const int status = run("train --device cuda --corpus empty.txt");
  EXPECT_EQ(status, 2);
  // Without a GPU the device is refused first; with one, training reaches the corpus.
  EXPECT_THAT(err_, HasSubstr(describe_device("auto").device == "cuda" ? "empty" : "cuda"));
  EXPECT_EQ(std::count(err_.begin(), err_.end(), '\n'), 1) << err_;
}

}  // namespace
}  // namespace normlab::test
