// normlab-cli: the whole experiment without a window.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "atomic_file.h"
#include "bench.h"
#include "checkpoint.h"
#include "cli_gpu.h"
#include "cli_run.h"
#include "config.h"
#include "config_fields.h"
#include "cuda_backend.h"
#include "layer_stats.h"
#include "memory.h"
#include "presets.h"
#include "seeds.h"
#include "side_by_side.h"
#include "run_record.h"
#include "run_text.h"
#include "slurm.h"
#include "stop_signals.h"
#include "sweep.h"
#include "trainer.h"

namespace fs = std::filesystem;
using namespace normlab;

namespace normlab::cli {

std::atomic<bool> g_cancel{false};


constexpr const char* kAbout =
    "normlab-cli: train a small GPT with its norms placed pre, post, peri, DeepNorm or mixed, and record every point.";

constexpr const char* kFooter = R"(
Examples:
  normlab-cli train --preset workshop --scale cpu   the course's five runs, CPU-sized
  normlab-cli train --norm post --lr 6e-3           one run
  normlab-cli train --resume normlab-runs/post-norm_lr_6e-3_warmup_30.json
                                                    go on with a killed or stopped run
  normlab-cli train --preset workshop --seeds 3     the five runs, each with 3 seeds: mean and range
  normlab-cli sweep --preset depth                   pre and post over 2 to 16 layers (CPU scale without a GPU)
  normlab-cli sweep --vary lr --values 1e-3,6e-3 --placements pre,peri --seeds 3
  normlab-cli sweep --preset depth --scale full --out runs --slurm --partition gpu --gres gpu:1
                                                    the same points as a Slurm job array; --status then says
                                                    where each stands
  normlab-cli bench --device cuda --json            time training steps

Each run writes DIR/<name>.json (the full record) and DIR/<name>.csv (one row per
step), rewritten atomically at every evaluation and at least every %g seconds, so a
killed run keeps its points up to then (the app shows it as interrupted).
Ctrl-C, or the SIGTERM a scheduler sends, stops the current run after its step and keeps
what it has.
Beside them, DIR/<name>.ckpt holds the run's whole training state, written with a save
every --checkpoint-interval seconds (default %d) and as a run stops; a run that is done
drops it unless --final-checkpoint keep. train --resume DIR/<name>.json goes on from it,
with the numbers the run would have had uninterrupted on the same device and threads.)";


std::string field_type_name(const ConfigField& field) {
  const TrainConfig any;
  return visit_field(field, any, [&](const auto& value) -> std::string {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_integral_v<T>) return "N";
    else if constexpr (std::is_floating_point_v<T>) return "X";
    else return field.widget == Widget::File ? "FILE" : "NAME";
  });
}

// One option per config field, from the field table: its flag, help, default and range,
// checked as the engine checks it.
void add_config_options(CLI::App& command, Options& options) {
  const TrainConfig defaults;
  for (const ConfigField& field : config_fields()) {
    std::string help = field.help;
    for (const Choice& choice : field.choices) {  // each design's formula, from its table row
      if (!choice.formula.empty()) help += "; " + choice.name + ": " + choice.formula;
    }
    help += " [" + accepted_values(field);
    const std::string shown_default = field_text(field, defaults);
    if (!shown_default.empty()) help += "; default " + shown_default;
    help += "]";
    auto check = [f = &field](std::string& text) -> std::string {
      TrainConfig scratch;
      try {
        set_field_text(*f, scratch, text);
        check_field(*f, scratch);
      } catch (const UserError& error) {
        return error.what();
      }
      return {};
    };
    command.add_option_function<std::string>(
               "--" + field.flag, [&options, key = field.key](const std::string& text) { options.settings[key] = text; },
               help)
        ->type_name(field_type_name(field))
        ->check(CLI::Validator(check, ""));
  }
  command.add_option("--name", options.name, "run name (default from norm, lr and warmup)");
  command.add_option("--scale", options.scale,
                     "full: 3000 steps of 32 x 128 tokens (GPU minutes); cpu: 600 steps of 8 x 64 tokens "
                     "(CPU minutes). Options given explicitly override the scale")
      ->check(CLI::IsMember({"full", "gpu", "cpu"}));
}

// Every setting given explicitly, over `c`.
void add_side_by_side_option(CLI::App& command, Options& options) {
  command.add_option("--side-by-side", options.side_by_side,
                     "runs that train at once, the CPU cores divided between them (each keeps its threads to its "
                     "end); 0 = two on a CPU (one per two cores where there are more), eight on a GPU")
      ->check(CLI::Range(0, 64))
      ->capture_default_str();
}

TrainConfig with_given_settings(TrainConfig c, const Options& options) {
  for (const ConfigField& field : config_fields()) {
    if (auto given = options.settings.find(field.key); given != options.settings.end()) {
      set_field_text(field, c, given->second);
    }
  }
  return c;
}

// Defaults, then the scale, then every setting given explicitly.
TrainConfig build_config(const Options& options) {
  TrainConfig c;
  if (!options.scale.empty()) c = scaled(c, parse_scale(options.scale));
  c = with_given_settings(c, options);
  c.name = options.name;
  validate(c);
  return c;
}

// DIR/<name>.json; its CSV and checkpoint go beside it.
fs::path run_file(const fs::path& out, const std::string& name) { return out / (file_stem(name) + ".json"); }

void save(const RunRecord& run, const fs::path& file) {
  write_json(run, file);
  write_csv({run}, fs::path(file).replace_extension(".csv"));
}

// Trains one run into `file` with a progress line, or with `resuming` goes on with the run
// from its checkpoint; files are refreshed whenever the trainer says. The line is redrawn
// in place on a terminal when the run trains alone (`alone`); else a line per evaluation.
// With `layers_summary`, each evaluation also prints the latest per-layer statistics.
RunRecord train_with_progress(const TrainConfig& config, const fs::path& file, const std::string& label,
                              bool layers_summary, bool resuming, bool alone) {
  const fs::path checkpoint = checkpoint_path(file);
  const bool tty = alone && isatty(STDOUT_FILENO);
  double last_val = std::nan(""), last_print = -1;
  TokenRate token_rate;
  TrainCallbacks callbacks;
  callbacks.on_stage = [&](const std::string& stage) {
    if (stage != "Training") std::printf("%s  %s\n", label.c_str(), stage.c_str());
    std::fflush(stdout);
  };
  callbacks.on_start = [&](const RunRecord& run) {
    last_val = run.final_val_loss();  // a resumed run's last evaluation, until the next
    std::printf("%s  %s on %s (%s); %lld parameters; %lld training / %lld held-out tokens; "
                "unigram baseline %.3f nats%s\n",
                label.c_str(), run.config.name.c_str(), run.environment.device_name.c_str(),
                run.environment.precision.c_str(),
                static_cast<long long>(run.parameters), static_cast<long long>(run.train_tokens),
                static_cast<long long>(run.heldout_tokens), run.baseline_loss,
                resuming ? ("; resumed after step " + std::to_string(run.steps.size())).c_str() : "");
    std::fflush(stdout);
  };
  callbacks.on_step = [&](const StepMetrics& s) {
    token_rate.add(s.wall_s, double(config.batch_size) * config.model.context);
    const bool last = s.step == config.steps;
    if (tty ? (s.wall_s - last_print < 0.25 && !last) : (s.step % config.eval_interval != 0 && !last)) return;
    last_print = s.wall_s;
    const double eta = s.wall_s / s.step * (config.steps - s.step);
    std::printf("%s%s  step %d/%d  lr %.2e  train %.3f  held-out %.3f  %.0f tok/s  ETA %s%s",
                tty ? "\r\033[K" : "", label.c_str(), s.step, config.steps, s.lr, s.train_loss,
                last_val, token_rate.value(), duration_text(eta).c_str(), tty ? "" : "\n");
    std::fflush(stdout);
  };
  callbacks.on_eval = [&](const EvalMetrics& e, const RunRecord& run) {
    last_val = e.val_loss;
    if (!layers_summary) return;
    const std::string summary = normlab::layers_summary(run);
    std::printf("%s%s", tty && !summary.empty() ? "\n" : "", summary.c_str());
    std::fflush(stdout);
  };
  callbacks.on_save_due = [&](const RunRecord& run) { save(run, file); };
  callbacks.on_checkpoint_due = [&](const std::string& bytes) { write_file_atomically(checkpoint, bytes); };
  RunRecord run = resuming ? resume(config, checkpoint, callbacks, &g_cancel) : train(config, callbacks, &g_cancel);
  if (tty) std::printf("\n");
  save(run, file);
  std::error_code error;
  if (!keeps_checkpoint(run)) fs::remove(checkpoint, error);
  std::printf("%s  %s: %s, final held-out %.3f nats (baseline %.3f); wrote %s.{json,csv}\n",
              label.c_str(), run.config.name.c_str(), to_string(run.status).c_str(),
              run.final_val_loss(), run.baseline_loss, fs::path(file).replace_extension().c_str());
  if (!run.message.empty()) std::printf("%s  %s\n", label.c_str(), run.message.c_str());
  if (run.status == RunStatus::Stopped && fs::exists(checkpoint, error)) {
    std::printf("%s  go on with: normlab-cli train --resume '%s'\n", label.c_str(), file.c_str());
  }
  return run;
}

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

std::string label_of(std::size_t i, std::size_t count) {
  return "[" + std::to_string(i + 1) + "/" + std::to_string(count) + "]";
}

// How many of `configs` train at once (--side-by-side, else the device's default, never
// more than there are), and each one's CPU threads where it names none: the cores
// divided between the runs of its wave (threads_in_wave; a run alone keeps LibTorch's
// default). Says so when it is more than one.
int share_the_machine(std::vector<TrainConfig>& configs, const Options& options) {
  if (configs.empty()) return 1;
  const int asked = options.side_by_side > 0 ? options.side_by_side
                                             : default_side_by_side(describe_device(configs.front().device).device);
  const int at_once = std::max(1, std::min<int>(asked, int(configs.size())));
  if (at_once > 1) {
    for (std::size_t i = 0; i < configs.size(); ++i) {
      if (configs[i].threads == 0) configs[i].threads = threads_in_wave(i, configs.size(), at_once);
    }
    const int first = configs.front().threads, last = configs.back().threads;
    const std::string last_wave =
        last == first ? "" : "; the last " + std::to_string(configs.size() % at_once) + ", fewer at once, " +
                                 std::to_string(last) + " each";
    std::printf("%d runs side by side, %d CPU thread%s each%s (--side-by-side 1: one after another)\n", at_once,
                first, first == 1 ? "" : "s", last_wave.c_str());
  }
  return at_once;
}

// Goes on with the run in options.resume from its checkpoint. The run file says what the
// run is; settings given explicitly may change how it goes on (threads, checkpoints), and
// the checkpoint refuses any that would change its result.
int run_resume(const Options& options) {
  const fs::path file = options.resume;
  const TrainConfig config = with_given_settings(read_json(file).config, options);
  validate(config);
  train_with_progress(config, file, "[1/1]", options.layers_summary, /*resuming=*/true);
  return g_cancel ? 130 : 0;
}

int run_train(const Options& options) {
  if (!options.resume.empty()) return run_resume(options);
  const TrainConfig base = build_config(options);
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

  const int at_once = share_the_machine(configs, options);
  std::vector<std::optional<RunRecord>> trained(configs.size());
  train_side_by_side(configs.size(), at_once, [&](std::size_t i) {
    if (g_cancel) return;
    trained[i] = train_with_progress(configs[i], run_file(out, configs[i].name), label_of(i, configs.size()),
                                     options.layers_summary, /*resuming=*/false, at_once == 1);
  });
  std::vector<RunRecord> runs;
  for (auto& run : trained) {
    if (run) runs.push_back(std::move(*run));
  }
  if (runs.size() > 1) {
    write_csv(runs, out / (options.preset.empty() ? "seeds.csv" : "workshop.csv"));  // every run, one table
    std::printf("\n%-40s %-9s %10s\n", "run", "status", "held-out");
    for (const auto& run : runs) {
      std::printf("%-40s %-9s %10.3f\n", run.config.name.c_str(), to_string(run.status).c_str(),
                  run.final_val_loss());
    }
    std::printf("%-40s %-9s %10.3f\n", "unigram baseline", "", runs.front().baseline_loss);
  }
  if (options.seeds > 1) print_seed_summary(runs);
  return g_cancel ? 130 : 0;
}

int run_bench(const Options& options) {
  const TrainConfig config = build_config(options);
  const int warmup = options.bench_warmup;
  const BenchResult r = benchmark(config, warmup, options.bench_steps);
  const CheckpointCost checkpoint = measure_checkpoint(config);
  if (options.json) {
    std::fputs(to_json_text(r, checkpoint, config).c_str(), stdout);
    return 0;
  }
  std::printf("device     %s, %s (LibTorch %s)\n", r.environment.device_name.c_str(),
              r.environment.precision.c_str(), r.environment.libtorch_version.c_str());
  std::printf("model      %s-norm, %d layers, d_model %d, %d heads, vocab %d: %lld parameters\n",
              to_string(config.model.norm).c_str(), config.model.layers, config.model.d_model,
              config.model.heads, config.model.vocab, static_cast<long long>(r.parameters));
  std::printf("batch      %d x %d tokens\n", config.batch_size, config.model.context);
  std::printf("speed      %.2f ms/step (median of %d, after %d warm-up), %.0f tokens/s\n",
              r.median_ms_per_step, r.measured_steps, warmup, r.tokens_per_s);
  std::printf("compute    %.2f GFLOP/step -> %.2f GFLOP/s = %.1f %% of this device's measured "
              "fp32 matmul rate (%.2f GFLOP/s)\n",
              r.model_flop_per_step / 1e9, r.achieved_flop_per_s / 1e9,
              100 * r.achieved_flop_per_s / r.matmul_flop_per_s, r.matmul_flop_per_s / 1e9);
  if (r.recorded_steps_per_run > 0) {
    const double extra = r.median_ms_per_recorded_step / r.median_ms_per_step - 1;
    std::printf("statistics %.2f ms/step while recording the layer statistics (%+.1f %%); a %d-step run records them "
                "at %d steps: %+.1f %% over the run\n",
                r.median_ms_per_recorded_step, 100 * extra, config.steps, r.recorded_steps_per_run,
                100 * extra * r.recorded_steps_per_run / config.steps);
  }
  // A checkpoint comes with a save, so at most as often as saves come.
  const double every_s = std::max<double>(config.checkpoint_interval, kSaveIntervalSeconds);
  const double checkpoint_ms = checkpoint.serialise_ms + checkpoint.write_ms;
  std::printf("checkpoint %.1f MB at the run's last step in %.0f ms (%.0f to make, %.0f to write); one every %g s "
              "costs %.2f %% of the run's time\n",
              checkpoint.bytes / 1e6, checkpoint_ms, checkpoint.serialise_ms, checkpoint.write_ms, every_s,
              100 * checkpoint_ms / 1e3 / every_s);
  return 0;
}

}  // namespace normlab::cli

using namespace normlab::cli;

// CLI11's messages on one line, as every other error of this program.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

int main(int argc, char** argv) {
  // Ctrl-C, and Slurm's SIGTERM on scancel, preemption or a time limit: the run stops
  // after its step, saved with a checkpoint to go on from. First, before any thread starts.
  route_stop_signals([](int) { g_cancel = true; });
  Options options;
  CLI::App app(kAbout, "normlab-cli");
  char footer[2048];
  std::snprintf(footer, sizeof footer, kFooter, kSaveIntervalSeconds, TrainConfig{}.checkpoint_interval);
  app.footer(footer);
  app.set_help_all_flag("--help-all", "Print the help of every command (the man page is made from it)");
  app.set_version_flag("--version", std::string("normlab-cli ") + NORMLAB_VERSION + " (LibTorch " + libtorch_version() + ")");
  CLI::App* train = app.add_subcommand("train", "one run, or the course's five with --preset workshop");
  CLI::App* sweep = app.add_subcommand("sweep", "final loss against one setting, per placement: runs plus a summary CSV");
  CLI::App* bench = app.add_subcommand("bench", "time training steps on a device");
  GpuOptions gpu_options;
  CLI::App* gpu = add_gpu_command(app, gpu_options);
  add_config_options(*train, options);
  train->add_option("--preset", options.preset,
                    "workshop: five runs, pre and post at 1e-3 and 6e-3 with warmup 30, post at 1e-3 with "
                    "warmup 1000 (scaled with --steps)")
      ->check(CLI::IsMember({"workshop"}));
  train->add_option("--seeds", options.seeds,
                    "train each run this many times, with seeds --seed, --seed + 1, ...; prints the mean and range")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  train->add_option("--out", options.out, "where run files go")->capture_default_str();
  add_side_by_side_option(*train, options);
  train->add_flag("--layers-summary", options.layers_summary,
                  "at each evaluation, print every per-layer statistic's latest values (see --layer-stats-every)");
  train->add_option("--resume", options.resume,
                    "go on with the run in this run file from its checkpoint beside it (RUN.ckpt), as if it had "
                    "never stopped; its settings come from the file")
      ->type_name("RUN.json")
      ->excludes("--preset")
      ->excludes("--seeds")
      ->excludes("--name")
      ->excludes("--scale")
      ->excludes("--out");
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
      sweep->add_option("--sweep-file", options.sweep_file,
                        "the sweep described in this file (DIR/SWEEP.sweep.json, written beside its runs), "
                        "trained into its folder")
          ->type_name("FILE");
  for (const char* described : {"--preset", "--vary", "--values", "--placements", "--seeds", "--scale", "--name"}) {
    sweep_file->excludes(sweep->get_option(described));
  }
  sweep_file->excludes(out_option);
  CLI::Option* task = sweep->add_option("--task", options.task,
                                        "train only point N (0 for the first), as Slurm's array task N does")
                          ->type_name("N");
  CLI::Option* slurm = sweep->add_flag("--slurm", options.slurm,
                                       "submit the points not done to Slurm as one job array (sbatch), "
                                       "writing its job script beside the runs");
  CLI::Option* status = sweep->add_flag("--status", options.status,
                                        "say which points are done, queued, running, failed or missing (from "
                                        "squeue or sacct, else the run files); with all done, the summary");
  task->excludes(slurm)->excludes(status);
  slurm->excludes(status);
  const std::pair<const char*, std::string*> passed[] = {
      {"--partition", &options.slurm_options.partition},
      {"--account", &options.slurm_options.account},
      {"--time", &options.slurm_options.time},
      {"--gres", &options.slurm_options.gres}};
  for (const auto& [flag, value] : passed) {
    sweep->add_option(flag, *value, std::string("with --slurm: sbatch's ") + flag)->needs(slurm)->type_name("TEXT");
  }
  sweep->add_option("--throttle", options.slurm_options.throttle,
                    "with --slurm: at most N of the array's tasks at once (sbatch --array=...%N)")
      ->needs(slurm)
      ->check(CLI::Range(1, 100000))
      ->type_name("N");
  add_side_by_side_option(*sweep, options);
  add_config_options(*bench, options);
  bench->add_option("--bench-steps", options.bench_steps, "timed steps")->check(CLI::Range(1, 100000))->capture_default_str();
  bench->add_option("--bench-warmup", options.bench_warmup, "untimed steps first")->check(CLI::Range(0, 100000))->capture_default_str();
  bench->add_flag("--json", options.json, "print the result as one JSON object");

  try {
    app.parse(argc, argv);
    if (app.got_subcommand(train)) options.command = "train";
    if (app.got_subcommand(sweep)) options.command = "sweep";
    if (app.got_subcommand(bench)) options.command = "bench";
    if (app.got_subcommand(gpu)) options.command = "gpu";
    if (options.command.empty()) throw UserError("no command: say 'train', 'sweep', 'bench' or 'gpu' (see --help)");
  } catch (const CLI::Success& done) {  // --help, --version
    return app.exit(done);
  } catch (const CLI::ParseError& error) {
    std::fprintf(stderr, "normlab-cli: %s\n", one_line(error.what()).c_str());
    return 2;
  } catch (const UserError& error) {
    std::fprintf(stderr, "normlab-cli: %s\n", error.what());
    return 2;
  }

  keep_freed_memory_for_reuse();
  try {
    if (options.command == "train") return run_train(options);
    if (options.command == "sweep") return run_sweep(options);
    if (options.command == "gpu") return run_gpu(*gpu, gpu_options, g_cancel);
    return run_bench(options);
  } catch (const UserError& error) {
    std::fprintf(stderr, "normlab-cli: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "normlab-cli: error: %s\n", error.what());
    return 1;
  }
}
