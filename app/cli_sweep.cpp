// normlab-cli sweep: a sweep's points trained side by side (reading back what is done),
// one point as a Slurm array task, the whole sweep submitted as a job array, or where
// each point stands.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/runs/presets.h"
#include "core/runs/run_text.h"
#include "core/runs/verdict.h"
#include "core/sweeps/point_fate.h"
#include "core/sweeps/slurm.h"
#include "core/sweeps/sweep.h"
#include "core/sweeps/sweep_chart.h"
#include "core/system/atomic_file.h"
#include "core/system/process.h"
#include "core/training/checkpoint.h"
#include "core/training/side_by_side.h"
#include "core/training/trainer.h"

#include "cli_run.h"

namespace normlab::cli {

namespace fs = std::filesystem;

namespace {

// The runs already in a folder, read once at the first point asked about: what core's one
// rule for a point's fate (point_fate) chooses from, as the window's store is for the
// window. So a one-seed sweep reads back the "seed 1337" runs of a --seeds sweep with the
// same settings instead of training them again, and a cut-short run goes on from its
// checkpoint. Thread-safe: runs side by side ask at once.
class FolderRuns {
 public:
  explicit FolderRuns(fs::path folder) : folder_(std::move(folder)) {}

  struct Picked {
    PointFate fate;
    fs::path file;                 // the run file of fate.run, if any
    std::optional<RunRecord> run;  // its record
    double age_s = 0;              // how long ago its file last changed
  };

  // The point's fate among the folder's runs. An array task `owns` its point (the
  // scheduler runs one task i at a time), so its own file still saying running is its
  // earlier attempt, killed before it could say so: cut short.
  Picked fate_of(const TrainConfig& config, bool owned = false) {
    std::lock_guard lock(mutex_);
    if (!read_) read_all();
    if (owned) {
      for (std::size_t i = 0; i < runs_.size(); ++i) {
        if (files_[i] == run_file(folder_, config.name)) mark_interrupted(runs_[i], "its task ended while it trained");
      }
    }
    Picked picked;
    picked.fate = point_fate(config, records_, [&](std::size_t i) {
      try {
        return CheckpointAnswer{resumable_checkpoint(checkpoint_path(files_[i]), config).step, ""};
      } catch (const UserError& refused) {
        return CheckpointAnswer{-1, refused.what()};
      }
    });
    if (picked.fate.run >= 0) {
      const auto i = std::size_t(picked.fate.run);
      picked.file = files_[i];
      picked.run = runs_[i];
      picked.age_s = ages_[i];
    }
    return picked;
  }

 private:
  static bool ends_with(const std::string& text, const std::string& end) {
    return text.size() >= end.size() && text.compare(text.size() - end.size(), end.size(), end) == 0;
  }

  void read_all() {
    read_ = true;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(folder_, error)) {
      const std::string name = entry.path().filename().string();
      if (!ends_with(name, ".json") || ends_with(name, kSweepDescriptionSuffix) || ends_with(name, kSlurmJobsSuffix)) {
        continue;
      }
      try {
        runs_.push_back(read_json(entry.path()));
        files_.push_back(entry.path());
        const auto changed = fs::last_write_time(entry.path(), error);
        ages_.push_back(error ? 0 : std::chrono::duration<double>(fs::file_time_type::clock::now() - changed).count());
      } catch (const UserError&) {
        // not a run file, or a damaged one: it answers nothing
      }
    }
    for (const RunRecord& run : runs_) records_.push_back(&run);
  }

  fs::path folder_;
  std::mutex mutex_;
  bool read_ = false;
  std::vector<RunRecord> runs_;
  std::vector<fs::path> files_;            // runs_[i]'s file
  std::vector<double> ages_;               // seconds since runs_[i]'s file changed
  std::vector<const RunRecord*> records_;  // into runs_, as point_fate takes them
};

// Trains the point, or reads back or resumes the run the rule picks for it, saying which
// and why in a line. An earlier sweep or train into `out` counts, so a sweep stopped or
// extended later trains only what it lacks.
RunRecord settle_point(const TrainConfig& config, const fs::path& out, const std::string& label, FolderRuns& folder,
                       const Options::Shown& shown, bool alone, bool owned = false) {
  const FolderRuns::Picked picked = folder.fate_of(config, owned);
  const std::string said = label + "  " + config.name + ": " + picked.fate.reason;
  switch (picked.fate.fate) {
    case Fate::Reuse: std::printf("%s; read back from %s\n", said.c_str(), picked.file.c_str()); return *picked.run;
    case Fate::Resume: {
      std::printf("%s\n", said.c_str());
      TrainConfig resumed = config;  // into the cut-short run's own file, under its name
      resumed.name = picked.run->config.name;
      resumed.label = picked.run->config.label;
      return train_with_progress(resumed, picked.file, label, shown, /*resuming=*/true, alone);
    }
    case Fate::Wait:
      // No process of this sweep trains it: a file left saying running or queued.
      std::printf("%s, but not by this sweep: trained afresh\n", said.c_str());
      break;
    case Fate::Train:
      if (picked.fate.run >= 0) std::printf("%s\n", said.c_str());
      break;
  }
  return train_with_progress(config, run_file(out, config.name), label, shown, /*resuming=*/false, alone);
}

// The sweep the options describe: a preset, or --vary and --values, with --placements
// and --seeds; settings given explicitly override what the preset fixes.
Sweep build_sweep(const Options& options) {
  const Scale scale = chosen_scale(options, /*say=*/!options.status);
  const TrainConfig base = scaled(TrainConfig{}, scale);
  Sweep sweep;
  if (!options.preset.empty()) {
    sweep = sweep_preset(parse_sweep_preset(options.preset), base, scale);
  } else {
    if (options.vary.empty() || options.values.empty()) {
      throw UserError("a sweep needs --preset, or --vary and --values");
    }
    sweep.base = base;
    sweep.placements = {NormPlacement::Pre, NormPlacement::Post};
  }
  if (!options.vary.empty()) sweep.setting = sweep_setting(options.vary).key;
  if (!options.values.empty()) sweep.values = options.values;
  if (!options.placements.empty()) {
    sweep.placements.clear();
    for (const std::string& name : options.placements) sweep.placements.push_back(parse_norm(name));
  }
  sweep.seeds = options.seeds;
  if (sweep.name.empty()) sweep.name = config_field(sweep.setting).flag + "-sweep";
  // What the sweep sets per run would be silently lost.
  for (const std::string& per_run : {sweep.setting, std::string("norm")}) {
    if (options.settings.count(per_run)) {
      throw UserError("--" + config_field(per_run).flag + " is set per run by the sweep; leave it out");
    }
  }
  if (!options.name.empty()) throw UserError("--name is set per run by the sweep; leave it out");
  sweep.base = with_given_settings(sweep.base, options);
  return sweep;
}

// A sweep's files in its folder: the runs, and beside them the summary CSV, the chart and
// the description (written first, so array tasks and a following window can rebuild it).
struct SweepFolder {
  fs::path out, summary, picture, description, jobs, script;
  SweepFolder(const Sweep& sweep, const fs::path& folder)
      : out(folder),
        summary(folder / (file_stem(sweep.name) + ".csv")),
        picture(folder / (file_stem(sweep.name) + ".svg")),
        description(sweep_description_path(folder, sweep.name)),
        jobs(folder / (file_stem(sweep.name) + kSlurmJobsSuffix)),
        script(folder / (file_stem(sweep.name) + ".slurm.sh")) {}
};

// The summary CSV, the description with its results and the chart, each atomically.
void write_sweep_outputs(const Sweep& sweep, const std::vector<SweepResult>& results, const SweepFolder& files) {
  write_summary_csv(sweep.setting, results, files.summary);
  write_file_atomically(files.description, sweep_json_text(sweep, results));
  SweepChart chart;
  chart.title = sweep_chart_title(sweep);
  chart.setting = sweep.setting;
  chart.results = results;
  write_file_atomically(files.picture, sweep_chart_svg(chart));
}

void print_sweep_table(const Sweep& sweep, const std::vector<SweepResult>& results, const SweepFolder& files) {
  std::printf("\n%-10s %-9s %6s %10s %10s  %s\n", config_field(sweep.setting).flag.c_str(), "placement", "seed",
              "held-out", "best", "outcome");
  for (const SweepResult& r : results) {
    std::printf("%-10s %-9s %6llu %10.3f %10.3f  %s\n", r.value.c_str(), to_string(r.placement).c_str(),
                static_cast<unsigned long long>(r.seed), r.final_val, r.best_val, info(r.outcome).name);
  }
  if (!results.empty()) {
    std::printf("unigram baseline %.3f nats; wrote %s, %s and %s\n", results.front().baseline, files.summary.c_str(),
                files.description.c_str(), files.picture.c_str());
  }
}

// Slurm's states of the sweep's tasks by task index, for the job each was last submitted
// in: from squeue while Slurm remembers the job (ended ones too, for MinJobAge), else
// from sacct where accounting answers.
std::map<int, std::string> slurm_states(const std::map<int, std::string>& job_of_task) {
  std::map<int, std::string> states;
  if (job_of_task.empty()) return states;
  std::string job_ids;
  for (const auto& [task, job] : job_of_task) {
    if (job_ids.find(job + ",") == std::string::npos) job_ids += job + ",";
  }
  job_ids.pop_back();
  std::string answers;
  if (const auto squeue = find_program("squeue")) {
    const ProgramOutput listed =
        run_program(*squeue, {"--me", "--noheader", "--array", "--states=all", "--format=%i|%T"}, Errors::Dropped);
    if (listed.exit_code == 0) answers += listed.out;
  }
  if (const auto sacct = find_program("sacct")) {
    // Without accounting storage sacct says so and fails: then squeue and the files tell.
    const ProgramOutput listed =
        run_program(*sacct, {"--noheader", "--parsable2", "--allocations", "--format=JobID,State", "--jobs=" + job_ids},
                    Errors::Dropped);
    if (listed.exit_code == 0) answers += listed.out;
  }
  for (const auto& [task, job] : job_of_task) {
    const std::map<int, std::string> of_job = slurm_task_states(answers, job);  // squeue's lines come first
    if (auto found = of_job.find(task); found != of_job.end()) states[task] = found->second;
  }
  return states;
}

std::map<int, std::string> read_jobs(const SweepFolder& files) {
  std::error_code error;
  return fs::exists(files.jobs, error) ? slurm_jobs_from_json_text(read_whole_file(files.jobs))
                                       : std::map<int, std::string>{};
}

// Where each point stands: the run the rule (point_fate) picks for it in the folder, as
// training would, and Slurm's word for the tasks submitted.
std::vector<PointState> point_states(const std::vector<SweepRun>& runs, const SweepFolder& files,
                                     std::vector<std::optional<RunRecord>>* records) {
  const std::map<int, std::string> slurm = slurm_states(read_jobs(files));
  FolderRuns folder(files.out);
  std::vector<PointState> states;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    PointEvidence evidence;
    FolderRuns::Picked picked = folder.fate_of(runs[i].config);
    records->push_back(std::move(picked.run));
    evidence.file_age_s = picked.age_s;
    if (records->back()) evidence.run = &*records->back();
    if (auto found = slurm.find(int(i)); found != slurm.end()) evidence.slurm_state = found->second;
    states.push_back(point_state(evidence, runs[i].config));
  }
  return states;
}

// Trains point `task` alone, as array task `task` does: its answer from before, its
// checkpoint when it was cut short, or afresh. Non-zero when it ends without a result.
int run_sweep_task(const std::vector<SweepRun>& runs, int task, const fs::path& out, const Options::Shown& shown) {
  if (task < 0 || std::size_t(task) >= runs.size()) {
    throw UserError("--task " + std::to_string(task) + " is out of range: the sweep has " +
                    std::to_string(runs.size()) + " points, 0 to " + std::to_string(runs.size() - 1));
  }
  const TrainConfig& config = runs[std::size_t(task)].config;
  const std::string label = "[task " + std::to_string(task) + "]";
  FolderRuns folder(out);
  const RunRecord run = settle_point(config, out, label, folder, shown, /*alone=*/true, /*owned=*/true);
  if (g_cancel) return 130;
  return progress_of(run.status) == RunProgress::Result ? 0 : 1;
}

// Prints where each point stands; with every point done, the summary too (and writes it).
int print_sweep_status(const Sweep& sweep, const std::vector<SweepRun>& runs, const SweepFolder& files) {
  std::vector<std::optional<RunRecord>> records;
  const std::vector<PointState> states = point_states(runs, files, &records);
  std::map<PointState, int> counts;
  std::printf("%-6s %-10s %-9s %-8s %-13s  %s\n", "point", config_field(sweep.setting).flag.c_str(), "placement",
              "state", "verdict", "run");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ++counts[states[i]];
    // The run's name in files, then what the user called it and noted, if anything.
    std::string words;
    if (records[i] && !records[i]->config.label.empty()) words += " \u201c" + records[i]->config.label + "\u201d";
    if (records[i] && !records[i]->config.note.empty()) words += " (" + records[i]->config.note + ")";
    // What it is doing, from its file as it stands (a point not yet trained has not started).
    const char* verdict = info(records[i] ? judge(*records[i]).verdict : Verdict::NotStarted).name;
    std::printf("%-6zu %-10s %-9s %-8s %-13s  %s%s\n", i, runs[i].value.c_str(), to_string(runs[i].placement).c_str(),
                name_of(states[i]), verdict, runs[i].config.name.c_str(), words.c_str());
  }
  std::string tally;
  for (const PointStateInfo& state : kPointStates) {
    tally += (tally.empty() ? "" : ", ") + std::to_string(counts[state.value]) + " " + state.name;
  }
  std::printf("%s: %s\n", sweep.name.c_str(), tally.c_str());
  if (counts[PointState::Done] != int(runs.size())) return 0;
  std::vector<SweepResult> results;
  for (std::size_t i = 0; i < runs.size(); ++i) results.push_back(summarise(runs[i], *records[i]));
  write_sweep_outputs(sweep, results, files);
  print_sweep_table(sweep, results, files);
  return 0;
}

// Writes the job script and submits one job array of the points not done, queued or
// running; the record of which job holds each task goes beside the runs.
int submit_to_slurm(const Sweep& sweep, const std::vector<SweepRun>& runs, const SweepFolder& files,
                    const SlurmOptions& slurm_options) {
  const std::optional<fs::path> sbatch = find_program("sbatch");
  if (!sbatch) throw UserError("--slurm needs Slurm's sbatch on PATH; without --slurm the sweep trains here");
  std::vector<std::optional<RunRecord>> records;
  const std::vector<PointState> states = point_states(runs, files, &records);
  std::vector<int> tasks;
  std::vector<SweepResult> results;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (states[i] == PointState::Failed || states[i] == PointState::Missing) tasks.push_back(int(i));
    if (states[i] == PointState::Done) results.push_back(summarise(runs[i], *records[i]));
  }
  if (tasks.empty()) {
    std::printf("%s: nothing to submit, each of its %zu points is done, queued or running; see --status\n",
                sweep.name.c_str(), runs.size());
    return 0;
  }
  const fs::path log_folder = "slurm";
  fs::create_directories(files.out / log_folder);
  write_file_atomically(files.description, sweep_json_text(sweep, results));
  JobScript job;
  job.job_name = "normlab-" + file_stem(sweep.name);
  job.cli = fs::read_symlink("/proc/self/exe");
  job.description = fs::absolute(files.description);
  job.log_folder = log_folder;
  job.tasks = tasks;
  job.points = int(runs.size());
  job.options = slurm_options;
  write_file_atomically(files.script, job_script(job));
  // No shell between here and sbatch: the folder goes to it as one argument.
  const ProgramOutput submitted = run_program(
      *sbatch, {"--parsable", "--chdir=" + fs::absolute(files.out).string(), fs::absolute(files.script).string()});
  const std::string job_id = submitted.out.substr(0, submitted.out.find_first_of(";\n"));
  if (submitted.exit_code != 0 || job_id.empty()) {
    throw UserError("sbatch refused " + files.script.string() + " (exit status " + std::to_string(submitted.exit_code) +
                    "); nothing was submitted");
  }
  std::map<int, std::string> jobs = read_jobs(files);
  for (const int task : tasks) jobs[task] = job_id;
  write_file_atomically(files.jobs, slurm_jobs_json_text(jobs));
  std::printf("%s: submitted job array %s, %zu of the sweep's %zu points (tasks %s), into %s\n", sweep.name.c_str(),
              job_id.c_str(), tasks.size(), runs.size(), array_spec(tasks, 0).c_str(), files.out.c_str());
  std::printf(
      "follow it: the same sweep command with --status instead of --slurm; squeue -j %s; "
      "or the app: normlab --follow %s\n",
      job_id.c_str(), shell_quoted(fs::absolute(files.out).string()).c_str());
  return 0;
}

// The sweep in a description file (--sweep-file), or the one the options describe.
Sweep sweep_of(const Options& options) {
  if (options.sweep_file.empty()) return build_sweep(options);
  if (!options.settings.empty()) throw UserError("--sweep-file fixes every setting; leave the others out");
  return sweep_from_json_text(read_whole_file(options.sweep_file));
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, Options& options) {
  CLI::App* sweep =
      app.add_subcommand("sweep", "final loss against one setting, per placement: runs plus a summary CSV");
  add_config_options(*sweep, options);
  std::string preset_help = "a built-in sweep:";
  for (const auto& preset : kSweepPresets) preset_help += std::string(" ") + preset.name + " (" + preset.help + ");";
  preset_help += " --vary, --values and --placements override its own";
  std::vector<std::string> preset_names, setting_flags, placement_names;
  for (const auto& preset : kSweepPresets) preset_names.push_back(preset.name);
  for (const auto& setting : kSweepSettings) setting_flags.push_back(config_field(setting.key).flag);
  for (const auto& placement : kPlacements) placement_names.push_back(placement.name);
  sweep->add_option("--preset", options.preset, preset_help)->check(CLI::IsMember(preset_names));
  sweep->add_option("--vary", options.vary, "the setting to vary")->check(CLI::IsMember(setting_flags));
  sweep->add_option("--values", options.values, "its values, comma-separated: 2,4,8 or 3e-4,1e-3")
      ->delimiter(',')
      ->type_name("LIST");
  sweep->add_option("--placements", options.placements, "comma-separated placements (default pre,post)")
      ->delimiter(',')
      ->check(CLI::IsMember(placement_names))
      ->type_name("LIST");
  sweep->add_option("--seeds", options.seeds, "runs per point, seeds --seed, --seed + 1, ...")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  CLI::Option* out_option =
      sweep->add_option("--out", options.out, "where run files and the summary CSV go")->capture_default_str();
  CLI::Option* sweep_file =
      sweep
          ->add_option("--sweep-file", options.sweep_file,
                       "the sweep described in this file (DIR/SWEEP.sweep.json, written beside its runs), "
                       "trained into its folder")
          ->type_name("FILE");
  for (const char* described : {"--preset", "--vary", "--values", "--placements", "--seeds", "--scale", "--name"}) {
    sweep_file->excludes(sweep->get_option(described));
  }
  sweep_file->excludes(out_option);
  CLI::Option* task =
      sweep->add_option("--task", options.task, "train only point N (0 for the first), as Slurm's array task N does")
          ->type_name("N");
  CLI::Option* slurm = sweep->add_flag("--slurm", options.slurm,
                                       "submit the points not done to Slurm as one job array (sbatch), "
                                       "writing its job script beside the runs");
  CLI::Option* status = sweep->add_flag("--status", options.status,
                                        "say which points are done, queued, running, failed or missing (from "
                                        "squeue or sacct, else the run files); with all done, the summary");
  task->excludes(slurm)->excludes(status);
  slurm->excludes(status);
  const std::pair<const char*, std::string*> passed[] = {{"--partition", &options.slurm_options.partition},
                                                         {"--account", &options.slurm_options.account},
                                                         {"--time", &options.slurm_options.time},
                                                         {"--gres", &options.slurm_options.gres}};
  for (const auto& [flag, value] : passed) {
    sweep->add_option(flag, *value, std::string("with --slurm: sbatch's ") + flag)->needs(slurm)->type_name("TEXT");
  }
  sweep
      ->add_option("--throttle", options.slurm_options.throttle,
                   "with --slurm: at most N of the array's tasks at once (sbatch --array=...%N)")
      ->needs(slurm)
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  add_side_by_side_option(*sweep, options);
  return sweep;
}

int run_sweep(const Options& options) {
  const Sweep sweep = sweep_of(options);
  const std::vector<SweepRun> runs = expand(sweep);
  const fs::path out = options.sweep_file.empty() ? fs::path(options.out) : fs::path(options.sweep_file).parent_path();
  if (std::error_code error; fs::exists(out, error) && !fs::is_directory(out, error)) {
    throw UserError("output folder " + out.string() + " is a file");
  }
  const SweepFolder files(sweep, out);
  if (options.task >= 0) return run_sweep_task(runs, options.task, out, options.shown);
  if (options.status) return print_sweep_status(sweep, runs, files);
  if (options.slurm) return submit_to_slurm(sweep, runs, files, options.slurm_options);
  std::printf("%s: %zu runs (%zu values of %s x %zu placements x %d seeds), %d steps each\n", sweep.name.c_str(),
              runs.size(), sweep.values.size(), config_field(sweep.setting).noun.c_str(), sweep.placements.size(),
              sweep.seeds, sweep.base.steps);
  std::vector<TrainConfig> configs;
  for (const SweepRun& run : runs) configs.push_back(run.config);
  const int at_once = share_the_machine(configs, options);
  std::vector<std::optional<SweepResult>> ended(runs.size());
  std::vector<SweepResult> results;  // of the runs ended so far, in the sweep's order
  std::mutex summary_mutex;
  FolderRuns folder(out);
  train_side_by_side(runs.size(), at_once, [&](std::size_t i) {
    if (g_cancel) return;
    const std::optional<RunRecord> run =
        settle_point(configs[i], out, label_of(i, runs.size()), folder, options.shown, at_once == 1);
    // Kept up to date, so a stopped sweep keeps its rows.
    std::lock_guard lock(summary_mutex);
    ended[i] = summarise(runs[i], *run);
    results.clear();
    for (const auto& result : ended) {
      if (result) results.push_back(*result);
    }
    write_sweep_outputs(sweep, results, files);
  });
  print_sweep_table(sweep, results, files);
  return g_cancel ? 130 : 0;
}

}  // namespace normlab::cli
