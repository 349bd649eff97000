// normlab-cli: the whole experiment without a window. main() builds the commands (each
// in its own file: cli_train, cli_sweep, cli_bench, cli_sample, cli_explain, cli_corpora, cli_gpu) and runs the one
// asked for.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <string>

#include "core/device/cuda_backend.h"
#include "core/runs/config.h"
#include "core/system/memory.h"
#include "core/system/stop_signals.h"
#include "core/training/trainer.h"

#include "cli_gpu.h"
#include "cli_run.h"

namespace normlab::cli {
namespace {

// "a, b or c", from an engine table's names.
template <typename Row, std::size_t N>
std::string names_of(const Row (&table)[N]) {
  std::string said;
  for (std::size_t i = 0; i < N; ++i) said += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(table[i].name);
  return said;
}

// --help's first line, from the engine's tables: a placement or norm type added there is
// named here with no change to this file.
std::string about() {
  return "normlab-cli: train a small GPT with its norms placed " + names_of(kPlacements) + " (--norm), of type " +
         names_of(kNormTypes) + " (--norm-type), and record every point.";
}

constexpr const char* kFooter = R"(
Examples:
  normlab-cli train --norm post --lr 6e-3           one run (CPU-sized without a GPU: a few minutes)
  normlab-cli train --preset workshop               the course's five runs (CPU-sized without a GPU)
  normlab-cli train --resume normlab-runs/post-norm_lr_6e-3_warmup_30.json
                                                    go on with a killed or stopped run
  normlab-cli train --preset workshop --seeds 3     the five runs, each with 3 seeds: mean and range
  normlab-cli sweep --preset depth                   pre and post over 2 to 16 layers (CPU scale without a GPU)
  normlab-cli sweep --vary lr --values 1e-3,6e-3 --placements pre,peri --seeds 3
  normlab-cli sweep --preset depth --scale full --out runs --slurm --partition gpu --gres gpu:1
                                                    the same points as a Slurm job array; --status then says
                                                    where each stands
  normlab-cli bench --device cuda --json            time training steps
  normlab-cli sample normlab-runs/pre-norm_lr_1e-3_warmup_30.json --prompt "In the beginning" --top 10
                                                    a done or stopped run continues the text; its next-token
                                                    guesses beside the unigram's
  normlab-cli explain normlab-runs                  what each run is doing and why, in a sentence
  normlab-cli corpora                               the corpora --corpus names: size, tokens, baseline
  normlab-cli train --preset workshop --corpus bookshelf
                                                    the course's five runs on the 59 MB bookshelf
  normlab-cli explain normlab-runs/pre-norm_lr_6e-3_warmup_30.json normlab-runs/post-norm_lr_6e-3_warmup_30.json
                                                    two runs compared

Each run writes DIR/<name>.json (the full record) and DIR/<name>.csv (one row per
step), rewritten atomically at every evaluation and at least every %g seconds, so a
killed run keeps its points up to then (the app shows it as interrupted).
Ctrl-C, or the SIGTERM a scheduler sends, stops the current run after its step and keeps
what it has.
Beside them, DIR/<name>.ckpt holds the run's whole training state, written with a save
every --checkpoint-interval seconds (default %d) and as a run stops; a run that is done
drops it unless --final-checkpoint keep. train --resume DIR/<name>.json goes on from it,
with the numbers the run would have had uninterrupted on the same device and threads.
A done run keeps its final weights, DIR/<name>.weights (about 10.6 MB at the course's
shape), for `sample`, unless --final-weights drop.)";

// CLI11's messages on one line, as every other error of this program.
std::string one_line(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

}  // namespace
}  // namespace normlab::cli

using namespace normlab;
using namespace normlab::cli;

int main(int argc, char** argv) {
  // Ctrl-C, and Slurm's SIGTERM on scancel, preemption or a time limit: the run stops
  // after its step, saved with a checkpoint to go on from. First, before any thread starts.
  route_stop_signals([](int) { g_cancel = true; });
  Options options;
  CLI::App app(about(), "normlab-cli");
  char footer[4096];
  std::snprintf(footer, sizeof footer, kFooter, kSaveIntervalSeconds, TrainConfig{}.checkpoint_interval);
  app.footer(footer);
  app.set_help_all_flag("--help-all", "Print the help of every command (the man page is made from it)");
  app.set_version_flag("--version",
                       std::string("normlab-cli ") + NORMLAB_VERSION + " (LibTorch " + libtorch_version() + ")");
  CLI::App* train = add_train_command(app, options);
  CLI::App* sweep = add_sweep_command(app, options);
  CLI::App* bench = add_bench_command(app, options);
  CLI::App* sample = add_sample_command(app, options);
  CLI::App* explain = add_explain_command(app, options);
  CLI::App* corpora = add_corpora_command(app, options);
  GpuOptions gpu_options;
  CLI::App* gpu = add_gpu_command(app, gpu_options);

  try {
    app.parse(argc, argv);
    if (app.got_subcommand(train)) options.command = "train";
    if (app.got_subcommand(sweep)) options.command = "sweep";
    if (app.got_subcommand(bench)) options.command = "bench";
    if (app.got_subcommand(sample)) options.command = "sample";
    if (app.got_subcommand(explain)) options.command = "explain";
    if (app.got_subcommand(gpu)) options.command = "gpu";
    if (app.got_subcommand(corpora)) options.command = "corpora";
    if (options.command.empty())
      throw UserError(
          "no command: say 'train', 'sweep', 'bench', 'sample', 'explain', 'corpora' or 'gpu' (see --help)");
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
    if (options.command == "sample") return run_sample(options);
    if (options.command == "explain") return run_explain(options);
    if (options.command == "corpora") return run_corpora(options);
    return run_bench(options);
  } catch (const UserError& error) {
    std::fprintf(stderr, "normlab-cli: %s\n", error.what());
    return 2;
  } catch (const std::exception& error) {
    // LibTorch's errors (an allocation that failed, say) carry a C++ backtrace after their
    // first line: the user gets that line alone, as every other error of this program.
    const std::string what = error.what();
    std::fprintf(stderr, "normlab-cli: error: %s\n", what.substr(0, what.find('\n')).c_str());
    return 2;
  }
}
