// What normlab-cli's commands share (cli_run.h): the cancel flag, the config options and
// the config they give, and one run trained with its progress line.
#include "cli_run.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <type_traits>
#include <unistd.h>

#include "core/data/corpora.h"
#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/runs/presets.h"
#include "core/runs/run_cost.h"
#include "core/runs/run_text.h"
#include "core/runs/verdict.h"
#include "core/system/atomic_file.h"
#include "core/system/memory.h"
#include "core/training/checkpoint.h"
#include "core/training/layer_stats.h"
#include "core/training/predictions.h"
#include "core/training/side_by_side.h"
#include "core/training/trainer.h"
#include "core/training/weights.h"

namespace normlab::cli {
namespace fs = std::filesystem;

std::atomic<bool> g_cancel{false};

namespace {

std::string field_type_name(const ConfigField& field) {
  const TrainConfig any;
  return visit_field(field, any, [&](const auto& value) -> std::string {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_integral_v<T>) return "N";
    else if constexpr (std::is_floating_point_v<T>) return "X";
    else return field.widget == Widget::File ? "NAME|FILE" : "NAME";
  });
}

}  // namespace

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
        if (f->key == "corpus") check_corpus_choice(text);  // a name, or a file that exists
      } catch (const UserError& error) {
        return error.what();
      }
      return {};
    };
    command
        .add_option_function<std::string>(
            "--" + field.flag, [&options, key = field.key](const std::string& text) { options.settings[key] = text; },
            help)
        ->type_name(field_type_name(field))
        ->check(CLI::Validator(check, ""));
  }
  command.add_option("--name", options.name,
                     "run name, in its file's name and as it is shown (default: the file's from norm, lr and "
                     "warmup, shown as what differs from the scale's defaults)");
  command.add_option("--note", options.note, "a note kept in the run file, shown with the run and in its CSV");
  command
      .add_option("--scale", options.scale,
                  "full: 3000 steps of 32 x 128 tokens (GPU minutes); cpu: 600 steps of 8 x 64 tokens "
                  "(CPU minutes). Options given explicitly override the scale")
      ->check(CLI::IsMember({"full", "gpu", "cpu"}));
}

void add_side_by_side_option(CLI::App& command, Options& options) {
  command
      .add_option("--side-by-side", options.side_by_side,
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
  c.label = options.name;  // the user's name is what they call the run
  c.note = options.note;
  validate(c);
  return c;
}

Scale chosen_scale(const Options& options, bool say) {
  if (!options.scale.empty()) return parse_scale(options.scale);
  const std::string device = options.settings.count("device") ? options.settings.at("device") : TrainConfig{}.device;
  if (describe_device(device).device == "cuda") return Scale::Full;
  if (say) {
    const TrainConfig cpu = scaled(TrainConfig{}, Scale::Cpu), full = scaled(TrainConfig{}, Scale::Full);
    std::printf("On the CPU: the CPU scale, %d steps of %d x %d tokens (--scale full for %d steps of %d x %d)\n",
                cpu.steps, cpu.batch_size, cpu.model.context, full.steps, full.batch_size, full.model.context);
    std::fflush(stdout);
  }
  return Scale::Cpu;
}

// DIR/<name>.json; its CSV and checkpoint go beside it.
fs::path run_file(const fs::path& out, const std::string& name) { return out / (file_stem(name) + ".json"); }

namespace {

void save(const RunRecord& run, const fs::path& file) {
  write_json(run, file);
  write_csv({run}, fs::path(file).replace_extension(".csv"));
}

// One run's progress line and files: its callbacks print the line and refresh the files
// whenever the trainer says; finish() saves the record and prints how the run ended. The
// line is redrawn in place on a terminal when the run trains alone (`alone`); else a line
// per evaluation. With `shown`, each evaluation also prints the latest per-layer
// statistics and the text. Its callbacks hold `this`: it stays where it was made.
class RunProgress {
 public:
  RunProgress(const TrainConfig& config, const fs::path& file, const std::string& label, const Options::Shown& shown,
              bool resuming, bool alone);
  RunProgress(const RunProgress&) = delete;
  RunProgress& operator=(const RunProgress&) = delete;
  const TrainCallbacks& callbacks() const { return callbacks_; }
  fs::path checkpoint() const { return checkpoint_path(file_); }
  RunRecord finish(RunRecord run) const;

 private:
  void print_progress();

  const TrainConfig& config_;
  const fs::path file_;
  const std::string label_;
  const bool tty_;
  double last_val_ = std::nan(""), last_print_ = -1;
  std::string verdict_ = info(Verdict::NotStarted).name;  // the run's verdict at its last evaluation
  TokenRate token_rate_;
  StepPace pace_;
  StepMetrics last_step_;
  TrainCallbacks callbacks_;
};

RunProgress::RunProgress(const TrainConfig& config, const fs::path& file, const std::string& label,
                         const Options::Shown& shown, bool resuming, bool alone)
    : config_(config), file_(file), label_(label), tty_(alone && isatty(STDOUT_FILENO)) {
  callbacks_.on_stage = [this](const std::string& stage) {
    if (stage != "Training") std::printf("%s  %s\n", label_.c_str(), stage.c_str());
    std::fflush(stdout);
  };
  callbacks_.on_start = [this, resuming](const RunRecord& run) {
    last_val_ = run.final_val_loss();  // a resumed run's last evaluation, until the next
    verdict_ = info(judge(run).verdict).name;
    pace_ = StepPace::of(run);  // resumed: rate and time left from its own steps on
    token_rate_.reset(pace_.start_wall_s());
    std::printf(
        "%s  %s on %s (%s); %lld parameters; %lld training / %lld held-out tokens; "
        "unigram baseline %.3f nats%s\n",
        label_.c_str(), run.config.name.c_str(), run.environment.device_name.c_str(), run.environment.precision.c_str(),
        static_cast<long long>(run.parameters), static_cast<long long>(run.train_tokens),
        static_cast<long long>(run.heldout_tokens), run.baseline_loss,
        resuming ? ("; resumed after step " + std::to_string(run.steps.size())).c_str() : "");
    std::fflush(stdout);
  };
  // On a terminal the line is redrawn a few times a second; elsewhere (a log, runs side by
  // side) it is printed once per evaluation, with that evaluation's held-out loss.
  callbacks_.on_step = [this](const StepMetrics& s) {
    token_rate_.add(s.wall_s, double(config_.batch_size) * config_.model.context);
    last_step_ = s;
    if (tty_ && s.wall_s - last_print_ >= 0.25) print_progress();
  };
  callbacks_.on_eval = [this, shown](const EvalMetrics& e, const RunRecord& run) {
    last_val_ = e.val_loss;
    verdict_ = info(judge(run).verdict).name;
    if (e.step > 0) print_progress();
    std::string shown_text = shown.layers_summary ? normlab::layers_summary(run) : "";
    if (shown.text) shown_text += evaluation_text(run, e.step);
    std::printf("%s%s", tty_ && !shown_text.empty() ? "\n" : "", shown_text.c_str());
    std::fflush(stdout);
  };
  callbacks_.on_save_due = [this](const RunRecord& run) { save(run, file_); };
  callbacks_.on_checkpoint_due = [this](const std::string& bytes) { write_file_atomically(checkpoint(), bytes); };
  callbacks_.on_weights_due = [this](const std::string& bytes) { write_file_atomically(weights_path(file_), bytes); };
  std::error_code error;
  fs::remove(weights_path(file_), error);  // a run trained again is not the one they were
}

void RunProgress::print_progress() {
  const StepMetrics& s = last_step_;
  const double eta = pace_.seconds_left(s.step, s.wall_s, config_.steps);
  std::printf("%s%s  step %d/%d  lr %.2e  train %.3f  held-out %.3f %s  %.0f tok/s  ETA %s%s", tty_ ? "\r\033[K" : "",
              label_.c_str(), s.step, config_.steps, s.lr, s.train_loss, last_val_, verdict_.c_str(),
              token_rate_.value(), duration_text(eta).c_str(), tty_ ? "" : "\n");
  std::fflush(stdout);
  last_print_ = s.wall_s;
}

RunRecord RunProgress::finish(RunRecord run) const {
  std::error_code error;
  if (tty_) std::printf("\n");
  save(run, file_);
  if (!keeps_checkpoint(run)) fs::remove(checkpoint(), error);
  std::printf("%s  %s: %s, final held-out %.3f nats (training %.3f, gap %.3f; baseline %.3f); wrote %s.{json,csv}\n",
              label_.c_str(), run.config.name.c_str(), to_string(run.status).c_str(), run.final_val_loss(),
              run.final_train_loss(), run.generalisation_gap(), run.baseline_loss,
              fs::path(file_).replace_extension().c_str());
  if (!run.message.empty()) std::printf("%s  %s\n", label_.c_str(), run.message.c_str());
  if (run.status == RunStatus::Stopped && fs::exists(checkpoint(), error)) {
    std::printf("%s  go on with: normlab-cli train --resume '%s'\n", label_.c_str(), file_.c_str());
  }
  std::printf("%s  %s\n", label_.c_str(), judge(run).sentence.c_str());  // what it did, in words: its last line
  return run;
}

}  // namespace

RunRecord train_with_progress(const TrainConfig& config, const fs::path& file, const std::string& label,
                              const Options::Shown& shown, bool resuming, bool alone) {
  const RunProgress progress(config, file, label, shown, resuming, alone);
  return progress.finish(resuming ? resume(config, progress.checkpoint(), progress.callbacks(), &g_cancel)
                                  : train(config, progress.callbacks(), &g_cancel));
}

std::vector<RunRecord> train_stacked_with_progress(const std::vector<TrainConfig>& configs,
                                                   const std::vector<fs::path>& files,
                                                   const std::vector<std::string>& labels,
                                                   const Options::Shown& shown) {
  std::vector<std::unique_ptr<RunProgress>> progress;
  std::vector<TrainCallbacks> callbacks;
  for (std::size_t r = 0; r < configs.size(); ++r) {
    progress.push_back(std::make_unique<RunProgress>(configs[r], files[r], labels[r], shown, false, false));
    callbacks.push_back(progress.back()->callbacks());
  }
  std::vector<RunRecord> runs = train_stacked(configs, callbacks, &g_cancel);
  for (std::size_t r = 0; r < runs.size(); ++r) runs[r] = progress[r]->finish(std::move(runs[r]));
  return runs;
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
    const std::string last_wave = last == first ? ""
                                                : "; the last " + std::to_string(configs.size() % at_once) +
                                                      ", fewer at once, " + std::to_string(last) + " each";
    std::printf("%d runs side by side, %d CPU thread%s each%s (--side-by-side 1: one after another)\n", at_once, first,
                first == 1 ? "" : "s", last_wave.c_str());
  }
  return at_once;
}

void check_memory(const std::vector<TrainConfig>& configs, int at_once, bool ignore_limit) {
  if (configs.empty()) return;
  // On a GPU the tensors live in its memory: the estimate without the process, against
  // what the GPU has free (unknown: not checked).
  const bool gpu = describe_device(configs.front().device).device != "cpu";
  const MemoryCheck check =
      memory_check(configs, at_once, gpu, gpu ? cuda_free_memory_bytes() : available_memory_bytes());
  char limit[64] = "free memory unknown";
  if (check.limit > 0)
    std::snprintf(limit, sizeof limit, gpu ? "%.1f GB free on the GPU" : "%.1f GB available", check.limit / 1e9);
  std::printf("%s: about %.1f GB estimated for %d run%s at once; %s\n", gpu ? "GPU memory" : "Memory",
              check.needed / 1e9, at_once, at_once == 1 ? "" : "s", limit);
  std::fflush(stdout);
  if (check.over() && !ignore_limit) {
    throw UserError("this needs " + memory_shortfall(check) +
                    ": make the model, batch or context smaller, or give --ignore-memory to start anyway");
  }
}

}  // namespace normlab::cli
