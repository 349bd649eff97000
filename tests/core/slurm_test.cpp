// The pure parts of a sweep as a Slurm job array: quoting, the array and the script, the
// states from squeue and sacct, and where each point stands. The real Slurm is
// scripts/slurm-check.sh's; the job script itself runs here under bash, as a node runs it.
#include "core/sweeps/slurm.h"

#include <cstdlib>
#include <sys/wait.h>

#include "core/runs/config_fields.h"
#include "core/sweeps/sweep.h"
#include "core/system/atomic_file.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// What /bin/sh makes of `word` as one argument.
std::string through_shell(const std::string& word, const TempDir& temp) {
  const std::string command = "cd '" + temp.path().string() + "' && printf %s " + word + " > said.txt";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return read_file(temp / "said.txt");
}

TEST(Slurm, ShellQuotingKeepsEveryCharacterAndRunsNothing) {
  TempDir temp;
  for (const std::string& text :
       {std::string("plain"), std::string("two words"), std::string("it's"), std::string("'"), std::string("''\\'"),
        std::string("$(touch pwned)"), std::string("`touch pwned`"), std::string("$HOME ${PATH} \"quoted\""),
        std::string("line\nbreak;touch pwned"), std::string("*?[a] ~ & | > <"), std::string("")}) {
    EXPECT_EQ(through_shell(shell_quoted(text), temp), text);
  }
  EXPECT_FALSE(fs::exists(temp / "pwned"));
  EXPECT_THAT(user_error([] { shell_quoted(std::string("a\0b", 3)); }), HasSubstr("NUL"));
}

TEST(Slurm, ArraySpecJoinsRunsOfTasks) {
  EXPECT_EQ(array_spec({0, 1, 2, 5, 7, 8}, 0), "0-2,5,7-8");
  EXPECT_EQ(array_spec({8, 7, 3, 3}, 2), "3,7-8%2");
  EXPECT_EQ(array_spec({4}, 0), "4");
}

JobScript some_job() {
  JobScript job;
  job.job_name = "normlab-depth";
  job.cli = "/opt/normlab/bin/normlab-cli";
  job.description = "/scratch/my runs/depth.sweep.json";
  job.log_folder = "slurm";
  job.tasks = {0, 1, 2, 5};
  job.points = 8;
  job.options.partition = "gpu";
  job.options.gres = "gpu:a100:1";
  job.options.time = "1-00:00:00";
  job.options.throttle = 4;
  return job;
}

TEST(Slurm, JobScriptAsksForWhatWasPassedAndRunsTheTask) {
  const std::string script = job_script(some_job());
  EXPECT_EQ(script.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_THAT(script, HasSubstr("#SBATCH --job-name=normlab-depth\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --array=0-2,5%4\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --output=slurm/%A_%a.out\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --partition=gpu\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --gres=gpu:a100:1\n"));
  EXPECT_THAT(script, HasSubstr("#SBATCH --time=1-00:00:00\n"));
  EXPECT_THAT(script, Not(HasSubstr("--account")));
  EXPECT_THAT(script,
              HasSubstr("\nexec '/opt/normlab/bin/normlab-cli' sweep --sweep-file '/scratch/my runs/depth.sweep.json' "
                        "--task \"$SLURM_ARRAY_TASK_ID\"\n"));
}

TEST(Slurm, JobScriptRefusesOptionsSbatchWouldReadOtherwise) {
  for (const char* bad : {"gpu debug", "gpu\n#SBATCH --x", "$(id)", "a'b", "a\"b", "a;b", "a#b"}) {
    JobScript job = some_job();
    job.options.account = bad;
    EXPECT_THAT(user_error([&] { job_script(job); }), HasSubstr("--account '" + std::string(bad) + "' is refused"))
        << bad;
  }
  JobScript job = some_job();
  job.job_name = "normlab-my sweep";
  EXPECT_THAT(user_error([&] { job_script(job); }), HasSubstr("--job-name"));
}

// The script a node runs, run here by bash as array task 1: the folder's name has spaces,
// quotes and command substitutions, and the point trains into it with nothing else run.
TEST(Slurm, JobScriptTrainsItsPointInAFolderWithAnyName) {
  TempDir temp;
  const fs::path corpus = temp / "corpus.txt";
  write_file(corpus, synthetic_corpus());
  const fs::path folder = temp / "runs, 'quoted' \"twice\" $(touch pwned) `touch pwned` $HOME";
  fs::create_directories(folder);
  Sweep sweep;
  sweep.name = "depth";
  sweep.setting = "layers";
  sweep.values = {"1", "2"};
  sweep.placements = {NormPlacement::Pre};
  sweep.base = tiny_config(corpus);
  sweep.base.steps = 10;
  sweep.base.eval_interval = 5;
  sweep.base.eval_batches = 1;
  const fs::path description = sweep_description_path(folder, sweep.name);
  write_file_atomically(description, sweep_json_text(sweep, {}));
  JobScript job;
  job.job_name = "normlab-depth";
  job.cli = NORMLAB_CLI;
  job.description = description;
  job.log_folder = "slurm";
  job.tasks = {0, 1};
  job.points = 2;
  const fs::path script = temp / "job.sh";
  write_file(script, job_script(job));
  const std::string command = "cd " + shell_quoted(folder.string()) +
                              " && SLURM_ARRAY_TASK_ID=1 NORMLAB_CACHE_DIR=" + shell_quoted((temp / "cache").string()) +
                              " bash " + shell_quoted(script.string()) + " > " +
                              shell_quoted((temp / "log.txt").string()) + " 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << read_file(temp / "log.txt");
  const RunRecord run = read_json(folder / "pre-norm_lr_3e-3_warmup_10_layers_2.json");
  EXPECT_EQ(run.status, RunStatus::Done);
  EXPECT_EQ(run.config.model.layers, 2);
  EXPECT_FALSE(fs::exists(folder / "pre-norm_lr_3e-3_warmup_10_layers_1.json")) << "task 1 trains point 1 alone";
  EXPECT_THAT(read_file(temp / "log.txt"), HasSubstr("[task 1]"));
  for (const fs::path& where : {temp.path(), folder, fs::current_path()}) EXPECT_FALSE(fs::exists(where / "pwned"));
}

TEST(Slurm, TaskStatesFromSqueueAndSacct) {
  const std::string squeue =
      "12_[4-6%2]|PENDING\n"  // the tasks not started, one line: not a task
      "12_3|RUNNING\n"
      "12_0|COMPLETED\n"
      "120_1|FAILED\n"  // another job
      "7_2|RUNNING\n";
  EXPECT_EQ(slurm_task_states(squeue, "12"), (std::map<int, std::string>{{0, "COMPLETED"}, {3, "RUNNING"}}));
  const std::string sacct = "12_1|CANCELLED by 0\n12_2|TIMEOUT\n12|COMPLETED\n";
  EXPECT_EQ(slurm_task_states(sacct, "12"), (std::map<int, std::string>{{1, "CANCELLED"}, {2, "TIMEOUT"}}));
  EXPECT_TRUE(slurm_task_states("slurm_load_jobs error: Invalid job id specified\n", "12").empty());
}

TEST(Slurm, JobsOfTasksComeBack) {
  const std::map<int, std::string> jobs{{0, "12"}, {3, "15"}};
  EXPECT_EQ(slurm_jobs_from_json_text(slurm_jobs_json_text(jobs)), jobs);
  EXPECT_THAT(user_error([] { slurm_jobs_from_json_text("{\"tasks\": [1"); }), HasSubstr("damaged"));
}

TEST(Slurm, PointStateFromSlurmThenTheRunFile) {
  TrainConfig wanted = scaled(TrainConfig{}, Scale::Cpu);
  wanted.name = "pre-norm";
  RunRecord run;
  run.config = wanted;
  auto state = [&](std::optional<RunStatus> status, double age, std::optional<std::string> slurm) {
    if (status) run.status = *status;
    return point_state({status ? &run : nullptr, age, std::move(slurm)}, wanted);
  };
  EXPECT_EQ(state(std::nullopt, 0, std::nullopt), PointState::Missing);
  EXPECT_EQ(state(std::nullopt, 0, "PENDING"), PointState::Queued);
  EXPECT_EQ(state(std::nullopt, 0, "RUNNING"), PointState::Running);
  EXPECT_EQ(state(std::nullopt, 0, "COMPLETED"), PointState::Failed) << "ended without a run file";
  EXPECT_EQ(state(RunStatus::Done, 500, std::nullopt), PointState::Done);
  EXPECT_EQ(state(RunStatus::Diverged, 500, "COMPLETED"), PointState::Done);
  EXPECT_EQ(state(RunStatus::Done, 0, "CANCELLED"), PointState::Done) << "its result came before the cancel";
  EXPECT_EQ(state(RunStatus::Running, 5, std::nullopt), PointState::Running);
  EXPECT_EQ(state(RunStatus::Running, kLostAfterSeconds + 1, std::nullopt), PointState::Failed) << "lost";
  EXPECT_EQ(state(RunStatus::Running, 5, "CANCELLED"), PointState::Failed);
  EXPECT_EQ(state(RunStatus::Running, 500, "RUNNING"), PointState::Running) << "Slurm's word over a quiet file";
  EXPECT_EQ(state(RunStatus::Stopped, 0, std::nullopt), PointState::Failed);
  EXPECT_EQ(state(RunStatus::Stopped, 0, "REQUEUED"), PointState::Queued);
  EXPECT_EQ(state(RunStatus::Failed, 0, "FAILED"), PointState::Failed);
  run.config.peak_lr *= 2;  // a run of another experiment under the same name answers nothing
  EXPECT_EQ(state(RunStatus::Done, 0, std::nullopt), PointState::Missing);
}

TEST(Slurm, SweepDescriptionRebuildsTheSweep) {
  Sweep sweep;
  sweep.name = "learning-rate";
  sweep.setting = "peak_lr";
  sweep.values = {"3e-4", "1e-2"};
  sweep.placements = {NormPlacement::Post, NormPlacement::DeepNorm};
  sweep.seeds = 2;
  sweep.base = scaled(TrainConfig{}, Scale::Cpu);
  sweep.base.threads = 3;
  sweep.base.corpus_path = "/data/my text.txt";
  const Sweep back = sweep_from_json_text(sweep_json_text(sweep, {}));
  EXPECT_EQ(back.name, sweep.name);
  EXPECT_EQ(back.setting, sweep.setting);
  EXPECT_EQ(back.values, sweep.values);
  EXPECT_EQ(back.placements, sweep.placements);
  EXPECT_EQ(back.seeds, 2);
  const auto runs = expand(sweep), rebuilt = expand(back);
  ASSERT_EQ(rebuilt.size(), runs.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    EXPECT_EQ(rebuilt[i].config.name, runs[i].config.name);
    for (const ConfigField& field : config_fields()) {
      EXPECT_EQ(field_text(field, rebuilt[i].config), field_text(field, runs[i].config)) << field.key;
    }
  }
  EXPECT_THAT(user_error([] { sweep_from_json_text("{\"sweep\": \"x\"}"); }), HasSubstr("not a sweep description"));
  EXPECT_THAT(user_error([&] {
                std::string text = sweep_json_text(sweep, {});
                text.replace(text.find("\"seed\""), 6, "\"sneed\"");
                sweep_from_json_text(text);
              }),
              HasSubstr("unknown setting"));
}

}  // namespace
}  // namespace normlab::test
