// normlab-cli train: one run, the course's five, over seeds, or a stopped run resumed.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/runs/config_fields.h"
#include "core/runs/presets.h"
#include "core/runs/run_text.h"
#include "core/runs/seeds.h"
#include "core/training/side_by_side.h"
#include "core/training/trainer.h"

#include "cli_run.h"

namespace normlab::cli {
namespace fs = std::filesystem;

CLI::App* add_train_command(CLI::App& app, Options& options) {
  CLI::App* train = app.add_subcommand("train", "one run, or the course's five with --preset workshop");
  add_config_options(*train, options);
  train
      ->add_option("--preset", options.preset,
                   "workshop: five runs, pre and post at 1e-3 and 6e-3 with warmup 30, post at 1e-3 with "
                   "warmup 1000 (scaled with --steps)")
      ->check(CLI::IsMember({"workshop"}));
  train
      ->add_option("--seeds", options.seeds,
                   "train each run this many times, with seeds --seed, --seed + 1, ...; prints the mean and range")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  train->add_option("--out", options.out, "where run files go")->capture_default_str();
  train
      ->add_option("--stack", options.stack,
                   "train runs of one shape (the same model, batch and steps; other rates, warmups and seeds) as "
                   "one stacked model, every layer a batched product over the runs: auto stacks them on a CUDA "
                   "GPU, where one small run leaves it idle, and not on the CPU, where stacking gains little; on "
                   "stacks them anywhere; off trains each run as its own model")
      ->check(CLI::IsMember({"auto", "on", "off"}))
      ->capture_default_str();
  add_side_by_side_option(*train, options);
  train->add_flag("--ignore-memory", options.ignore_memory,
                  "start even when the memory estimate printed before training is over what is available");
  train->add_flag("--layers-summary", options.shown.layers_summary,
                  "at each evaluation, print every per-layer statistic's latest values (see --layer-stats-every)");
  train->add_flag("--show-text", options.shown.text,
                  "at each evaluation, print the run's context use and, when it records text (--text-every), "
                  "each prompt's greedy and sampled continuation");
  train
      ->add_option("--resume", options.resume,
                   "go on with the run in this run file from its checkpoint beside it (RUN.ckpt), as if it had "
                   "never stopped; its settings come from the file")
      ->type_name("RUN.json")
      ->excludes("--preset")
      ->excludes("--seeds")
      ->excludes("--name")
      ->excludes("--scale")
      ->excludes("--out");
  return train;
}

namespace {

// Per experiment, the final held-out loss over its seeds: mean, lowest and highest.
void print_seed_summary(const std::vector<RunRecord>& runs) {
  std::vector<const RunRecord*> records;
  for (const RunRecord& run : runs) records.push_back(&run);
  std::printf("\n%-40s %5s %10s %10s %10s\n", "over seeds", "runs", "mean", "lowest", "highest");
  for (const auto& group : seed_groups(records)) {
    std::vector<const RunRecord*> members;
    for (const std::size_t i : group) members.push_back(records[i]);
    const SeedSpread spread = seed_spread(members);
    const bool evaluated = !spread.mean.evals.empty();
    const double nan = std::nan("");
    std::printf("%-40s %5d %10.3f %10.3f %10.3f\n", seed_group_name(spread.mean.config).c_str(), spread.runs,
                evaluated ? spread.mean.evals.back().val_loss : nan, evaluated ? spread.low.back().val_loss : nan,
                evaluated ? spread.high.back().val_loss : nan);
  }
}

// Goes on with the run in options.resume from its checkpoint. The run file says what the
// run is; settings given explicitly may change how it goes on (threads, checkpoints), and
// the checkpoint refuses any that would change its result.
int run_resume(const Options& options) {
  const fs::path file = options.resume;
  const TrainConfig config = with_given_settings(read_json(file).config, options);
  validate(config);
  train_with_progress(config, file, "[1/1]", options.shown, /*resuming=*/true);
  return g_cancel ? 130 : 0;
}

// The runs grouped into jobs, in order: with --stack off (auto: off but on a CUDA GPU),
// each run its own; else each run joins the first earlier job it can stack with. Says
// which runs are stacked. --stack on where no two runs stack is refused with the reason.
std::vector<std::vector<std::size_t>> stacks(const std::vector<TrainConfig>& configs, const std::string& stack) {
  std::vector<std::vector<std::size_t>> jobs;
  const bool stacking = stack == "on" || (stack == "auto" && !configs.empty() &&
                                          describe_device(configs.front().device).device == "cuda");
  for (std::size_t i = 0; i < configs.size(); ++i) {
    auto joins = std::find_if(jobs.begin(), jobs.end(), [&](const std::vector<std::size_t>& job) {
      return stacking && stack_refusal(std::vector<TrainConfig>{configs[job.front()], configs[i]}).empty();
    });
    if (joins == jobs.end()) jobs.push_back({i});
    else joins->push_back(i);
  }
  if (stack == "on" && jobs.size() == configs.size()) {
    throw UserError("--stack on: no two runs stack" +
                    (configs.size() < 2 ? std::string(" (there is one run)")
                                        : ": " + stack_refusal(std::vector<TrainConfig>{configs[0], configs[1]})));
  }
  for (const auto& job : jobs) {
    if (job.size() < 2) continue;
    std::string members;
    for (const std::size_t i : job) members += (members.empty() ? "" : ", ") + label_of(i, configs.size());
    std::printf("Stacked as one model: %s\n", members.c_str());
  }
  std::fflush(stdout);
  return jobs;
}

}  // namespace

int run_train(const Options& options) {
  if (!options.resume.empty()) return run_resume(options);
  Options scaled_options = options;
  scaled_options.scale = to_string(chosen_scale(options));
  const TrainConfig base = build_config(scaled_options);
  const fs::path out = options.out;
  std::vector<TrainConfig> configs{base};
  if (!options.preset.empty()) {
    // The preset sets these per run; a value given for them would be silently lost.
    for (const char* fixed : {"norm", "peak_lr", "warmup_steps"}) {
      if (options.settings.count(fixed)) {
        throw UserError("--" + config_field(fixed).flag + " is set by --preset workshop; leave it out");
      }
    }
    if (!options.name.empty()) throw UserError("--name is set by --preset workshop; leave it out");
    configs = workshop_runs(base);
  }
  configs = repeat_over_seeds(configs, options.seeds);
  // Created by the first save, so a run refused for its corpus leaves no empty folder.
  if (std::error_code error; fs::exists(out, error) && !fs::is_directory(out, error)) {
    throw UserError("output folder " + out.string() + " is a file");
  }

  // Each job is one run, or a stack of runs of one shape; the jobs share the machine as
  // runs alone do, and every run of a stack takes its job's threads.
  const std::vector<std::vector<std::size_t>> jobs = stacks(configs, options.stack);
  std::vector<TrainConfig> job_configs;
  std::size_t largest = 1;
  for (const auto& job : jobs) {
    job_configs.push_back(configs[job.front()]);
    largest = std::max(largest, job.size());
  }
  const int at_once = share_the_machine(job_configs, options);
  for (std::size_t j = 0; j < jobs.size(); ++j) {
    for (const std::size_t i : jobs[j]) configs[i].threads = job_configs[j].threads;
  }
  check_memory(configs, int(std::min(configs.size(), std::size_t(at_once) * largest)), options.ignore_memory);
  std::vector<std::optional<RunRecord>> trained(configs.size());
  train_side_by_side(jobs.size(), at_once, [&](std::size_t j) {
    if (g_cancel) return;
    const auto& job = jobs[j];
    if (job.size() == 1) {
      const std::size_t i = job.front();
      trained[i] = train_with_progress(configs[i], run_file(out, configs[i].name), label_of(i, configs.size()),
                                       options.shown, /*resuming=*/false, at_once == 1);
      return;
    }
    std::vector<TrainConfig> stacked;
    std::vector<fs::path> files;
    std::vector<std::string> labels;
    for (const std::size_t i : job) {
      stacked.push_back(configs[i]);
      files.push_back(run_file(out, configs[i].name));
      labels.push_back(label_of(i, configs.size()));
    }
    auto runs = train_stacked_with_progress(stacked, files, labels, options.shown);
    for (std::size_t k = 0; k < job.size(); ++k) trained[job[k]] = std::move(runs[k]);
  });
  std::vector<RunRecord> runs;
  for (auto& run : trained) {
    if (run) runs.push_back(std::move(*run));
  }
  if (runs.size() > 1) {
    write_csv(runs, out / (options.preset.empty() ? "seeds.csv" : "workshop.csv"));  // every run, one table
    std::printf("\n%-40s %-9s %10s %10s %8s\n", "run", "status", "held-out", "training", "gap");
    for (const auto& run : runs) {
      std::printf("%-40s %-9s %10.3f %10.3f %8.3f\n", run.config.name.c_str(), to_string(run.status).c_str(),
                  run.final_val_loss(), run.final_train_loss(), run.generalisation_gap());
    }
    std::printf("%-40s %-9s %10.3f\n", "unigram baseline", "", runs.front().baseline_loss);
  }
  if (options.seeds > 1) print_seed_summary(runs);
  return g_cancel ? 130 : 0;
}

}  // namespace normlab::cli
