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

// The runs already in a folder, read once when a point is not found under its own name:
// any run there that answers the point counts (core's `answers`, the rule the window
// applies to every run it holds), so a one-seed sweep reads back the "seed 1337" runs of a
// --seeds sweep with the same settings instead of training them again. Thread-safe: runs
// side by side ask at once.
class FolderRuns {
 public:
  explicit FolderRuns(fs::path folder) : folder_(std::move(folder)) {}

  // The file of a run in the folder that answers `config`, and its record: the run the
  // window would pick among the same runs (core's find_run, then answers).
  std::optional<std::pair<fs::path, RunRecord>> answering(const TrainConfig& config) {
    std::lock_guard lock(mutex_);
    if (!read_) read_all();
    const int found = find_run(config, records_);
    if (found < 0 || !answers(runs_[std::size_t(found)], config)) return std::nullopt;
    return std::pair{files_[std::size_t(found)], runs_[std::size_t(found)]};
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
  std::vector<const RunRecord*> records_;  // into runs_, as find_run takes them
};

// The run's record from an earlier sweep or train into `out`, when it answers the point
// (core's `answers`, the window's rule too): its own file first, then any other run file
// in `out` (FolderRuns). A sweep stopped or extended later trains only what it lacks.
std::optional<RunRecord> answered_before(const TrainConfig& config, const fs::path& out, const std::string& label,
                                         FolderRuns& others) {
  const fs::path file = run_file(out, config.name);
  std::optional<RunRecord> run;
  if (std::error_code error; fs::exists(file, error)) {
    try {
      run = read_json(file);
    } catch (const UserError&) {
      // unreadable: trained again, and its file rewritten
    }
  }
  if (run && answers(*run, config)) {
    std::printf("%s  %s: %s before with the same settings, final held-out %.3f nats; read back from %s\n",
                label.c_str(), config.name.c_str(), to_string(run->status).c_str(), run->final_val_loss(),
                file.c_str());
    return run;
  }
  auto other = others.answering(config);
  if (!other) return std::nullopt;
  std::printf(
      "%s  %s: %s before with the same settings as \u201c%s\u201d, final held-out %.3f nats; read back from %s\n",
      label.c_str(), config.name.c_str(), to_string(other->second.status).c_str(), other->second.config.name.c_str(),
      other->second.final_val_loss(), other->first.c_str());
  return std::move(other->second);
}

// Whether the point's run in `out` was cut short and its checkpoint can go on with it: a
// sweep stopped, killed or preempted goes on where its run was, as the window's does.
// An array task `owns` its point (the scheduler runs one task i at a time), so a file
// still saying running is its own earlier attempt, killed before it could say so.
bool resumes_before(const TrainConfig& config, const fs::path& out, const std::string& label, bool owned = false) {
  const fs::path file = run_file(out, config.name);
  std::error_code error;
  if (!fs::exists(file, error) || !fs::exists(checkpoint_path(file), error)) return false;
  try {
    RunRecord run = read_json(file);
    if (owned) mark_interrupted(run, "its task ended while it trained");
    if (progress_of(run.status) != RunProgress::CutShort || !same_experiment(run.config, config)) return false;
    const CheckpointHeader header = resumable_checkpoint(checkpoint_path(file), config);
    std::printf("%s  %s: %s, goes on from its checkpoint at step %d\n", label.c_str(), config.name.c_str(),
                to_string(run.status).c_str(), header.step);
    return true;
  } catch (const UserError& refused) {
    std::printf("%s  %s: trained afresh, %s\n", label.c_str(), config.name.c_str(), refused.what());
    return false;
  }
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

// The point's run file, when there is one that can be read, and how long ago it last changed.
std::optional<RunRecord> read_point(const TrainConfig& config, const fs::path& out, double* age_s) {
  const fs::path file = run_file(out, config.name);
  std::error_code error;
  const auto changed = fs::last_write_time(file, error);
  if (error) return std::nullopt;
  *age_s = std::chrono::duration<double>(fs::file_time_type::clock::now() - changed).count();
  try {
    return read_json(file);
  } catch (const UserError&) {
    return std::nullopt;  // half-written by hand or damaged: trained again
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

// Where each point stands: its run file, or another run in the folder that answers it
// (as training would read it back), and Slurm's word for the tasks submitted.
std::vector<PointState> point_states(const std::vector<SweepRun>& runs, const SweepFolder& files,
                                     std::vector<std::optional<RunRecord>>* records) {
  const std::map<int, std::string> slurm = slurm_states(read_jobs(files));
  FolderRuns others(files.out);
  std::vector<PointState> states;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    PointEvidence evidence;
    records->push_back(read_point(runs[i].config, files.out, &evidence.file_age_s));
    if (!records->back() || !answers(*records->back(), runs[i].config)) {
      if (auto other = others.answering(runs[i].config)) records->back() = std::move(other->second);
    }
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
  FolderRuns others(out);
  if (answered_before(config, out, label, others)) return 0;
  const bool resuming = resumes_before(config, out, label, /*owned=*/true);
  const RunRecord run = train_with_progress(config, run_file(out, config.name), label, shown, resuming);
  if (g_cancel) return 130;
  return progress_of(run.status) == RunProgress::Result ? 0 : 1;
}

// Prints where each point stands; with every point done, the summary too (and writes it).
int print_sweep_status(const Sweep& sweep, const std::vector<SweepRun>& runs, const SweepFolder& files) {
  std::vector<std::optional<RunRecord>> records;
  const std::vector<PointState> states = point_states(runs, files, &records);
  std::map<PointState, int> counts;
  std::printf("%-6s %-10s %-9s %-8s  %s\n", "point", config_field(sweep.setting).flag.c_str(), "placement", "state",
              "run");
  for (std::size_t i = 0; i < runs.size(); ++i) {
    ++counts[states[i]];
    // The run's name in files, then what the user called it and noted, if anything.
    std::string words;
    if (records[i] && !records[i]->config.label.empty()) words += " \u201c" + records[i]->config.label + "\u201d";
    if (records[i] && !records[i]->config.note.empty()) words += " (" + records[i]->config.note + ")";
    std::printf("%-6zu %-10s %-9s %-8s  %s%s\n", i, runs[i].value.c_str(), to_string(runs[i].placement).c_str(),
                name_of(states[i]), runs[i].config.name.c_str(), words.c_str());
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
  FolderRuns others(out);
  train_side_by_side(runs.size(), at_once, [&](std::size_t i) {
    if (g_cancel) return;
    const std::string label = label_of(i, runs.size());
    std::optional<RunRecord> run = answered_before(configs[i], out, label, others);
    if (!run) {
      const bool resuming = resumes_before(configs[i], out, label);
      run =
          train_with_progress(configs[i], run_file(out, configs[i].name), label, options.shown, resuming, at_once == 1);
    }
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
