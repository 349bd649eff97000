#pragma once
// What normlab-cli's commands share (app/cli_run.cpp): the options parsed from the command
// line, the config they give, and training one run with its progress line; and each
// command's options and what runs it, one file each (cli_train, cli_sweep, cli_bench).
#include <CLI/CLI.hpp>
#include <atomic>
#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "core/runs/config.h"
#include "core/runs/presets.h"
#include "core/runs/run_record.h"
#include "core/sweeps/slurm.h"
#include "core/training/trained_model.h"

namespace normlab::cli {

// Ctrl-C or SIGTERM: the run in progress stops after its step, saved.
extern std::atomic<bool> g_cancel;

// What the command line asked for: the command, the settings given explicitly (as
// text, by field key) and the command's own options.
struct Options {
  std::string command;
  std::map<std::string, std::string> settings;
  std::string name, note, scale, preset, out = "normlab-runs";
  std::string resume;                           // train: the run file of the run to go on with
  std::string vary;                             // sweep: the varied setting's flag
  std::vector<std::string> values, placements;  // sweep
  int seeds = 1;                                // train and sweep
  int side_by_side = 0;                         // train and sweep: runs at once; 0 = the device's default
  std::string sweep_file;                       // sweep: the sweep its description file rebuilds
  int task = -1;                                // sweep: train only this point (an array task)
  bool slurm = false, status = false;           // sweep: submit to Slurm; say where each point stands
  SlurmOptions slurm_options;
  int bench_steps = 20, bench_warmup = 3;
  int bench_profile = 0;          // steps profiled after the timed ones; 0 = none
  std::string cuda_graph = "on";  // bench --cuda-graph
  int bench_stack = 0;            // bench --stack: runs stacked, timed against as many single steps; 0 = off
  std::string stack = "auto";     // train --stack: auto | on | off
  bool json = false;
  bool ignore_memory = false;             // train: start even when the memory estimate is over what is available
  std::string sample_run;                 // sample: the run file
  std::vector<std::string> explain_runs;  // explain: one or two run files, or a folder
  SampleRequest sample;
  std::string corpus_to_build;                   // corpora --build
  std::string corpus_packages;                   // corpora --packages
  int corpus_vocab = TrainConfig{}.model.vocab;  // corpora --vocab
  // What a run's progress also prints at each evaluation.
  struct Shown {
    bool layers_summary = false;  // every per-layer statistic's latest values
    bool text = false;            // the text it wrote, and its context use
  } shown;
};

// One option per config field (its flag, help, default and range, checked as the engine
// checks it), and --name, --note and --scale.
void add_config_options(CLI::App& command, Options& options);
void add_side_by_side_option(CLI::App& command, Options& options);
// Defaults, then the scale, then every setting given explicitly.
TrainConfig build_config(const Options& options);
// train's and sweep's scale: --scale, or without it the one the device fits, as the window
// chooses it: full on a GPU, else the CPU scale, said in one line so that a run on a CPU
// does not take an hour unannounced. (bench keeps its own defaults: its figures are at them.)
Scale chosen_scale(const Options& options, bool say = true);
// Every setting given explicitly, over `c`.
TrainConfig with_given_settings(TrainConfig c, const Options& options);
// DIR/<name>.json; its CSV and checkpoint go beside it.
std::filesystem::path run_file(const std::filesystem::path& out, const std::string& name);
// Trains one run into `file` with a progress line (see cli_run.cpp), or goes on with it
// from its checkpoint when `resuming`.
RunRecord train_with_progress(const TrainConfig& config, const std::filesystem::path& file, const std::string& label,
                              const Options::Shown& shown, bool resuming = false, bool alone = true);
// Trains runs of one shape as one stack (train_stacked), each into its file with its
// progress line (a line per evaluation) and its label.
std::vector<RunRecord> train_stacked_with_progress(const std::vector<TrainConfig>& configs,
                                                   const std::vector<std::filesystem::path>& files,
                                                   const std::vector<std::string>& labels, const Options::Shown& shown);
// "[3/12]"
std::string label_of(std::size_t i, std::size_t count);
// How many of `configs` train at once, setting each one's threads (see cli_run.cpp).
int share_the_machine(std::vector<TrainConfig>& configs, const Options& options);
// Prints the memory the runs `at_once` side by side are estimated to take on the CPU and what
// is available; UserError (exit 2) when it is more, unless `ignore_limit`.
void check_memory(const std::vector<TrainConfig>& configs, int at_once, bool ignore_limit);

// Each command with its options, filled into `options` as they are parsed; and what runs it.
CLI::App* add_train_command(CLI::App& app, Options& options);
CLI::App* add_sweep_command(CLI::App& app, Options& options);
CLI::App* add_bench_command(CLI::App& app, Options& options);
CLI::App* add_sample_command(CLI::App& app, Options& options);
CLI::App* add_explain_command(CLI::App& app, Options& options);
CLI::App* add_corpora_command(CLI::App& app, Options& options);
// normlab-cli train: one run, the course's five or seeds of them, or --resume.
int run_train(const Options& options);
// normlab-cli sweep: trains, submits to Slurm, or says where each point stands.
int run_sweep(const Options& options);
// normlab-cli bench: times training steps and prints the figures (or JSON).
int run_bench(const Options& options);
// normlab-cli sample: continues a text with a run's weights.
int run_sample(const Options& options);
// normlab-cli explain: a run's verdict, evidence and sentence; two compared; a folder's each.
int run_explain(const Options& options);
// normlab-cli corpora: lists the corpora, or builds one.
int run_corpora(const Options& options);

}  // namespace normlab::cli
