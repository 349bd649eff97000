// normlab-cli bench: training steps timed on a device, and a checkpoint's cost.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>

#include "core/training/bench.h"
#include "core/training/trainer.h"

#include "cli_run.h"

namespace normlab::cli {

CLI::App* add_bench_command(CLI::App& app, Options& options) {
  CLI::App* bench = app.add_subcommand("bench", "time training steps on a device");
  add_config_options(*bench, options);
  bench->add_option("--bench-steps", options.bench_steps, "timed steps")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  bench->add_option("--bench-warmup", options.bench_warmup, "untimed steps first")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  bench
      ->add_option("--cuda-graph", options.cuda_graph,
                   "on a CUDA GPU, replay the training step as a CUDA graph after the first few (on), or launch "
                   "its kernels one by one (off), as training did before")
      ->check(CLI::IsMember({"on", "off"}))
      ->capture_default_str();
  bench
      ->add_option("--profile", options.bench_profile,
                   "after the timed steps, run this many more under LibTorch's profiler and print where a step's "
                   "time goes, by kind of work (matmuls, attention, loss, norms, ...) and by operator; on a GPU also "
                   "how many kernels a step runs (a graphed step's too) and the ten that take longest")
      ->check(CLI::Range(1, 1000))
      ->expected(0, 1)
      ->default_str("10");
  bench
      ->add_option("--stack", options.bench_stack,
                   "instead: time one step of this many runs stacked as one model (train --stack) against one step "
                   "of each run alone, one after another, and print the ratio (JSON: the field \"stack\")")
      ->check(CLI::Range(1, 64));
  bench->add_flag("--json", options.json, "print the result as one JSON object");
  return bench;
}

namespace {

void print_profile(const StepProfile& profile) {
  std::printf(
      "profile    %d more steps under LibTorch's profiler, %.2f ms/step with it on; each operator's own time%s:\n",
      profile.steps, profile.ms_per_step,
      profile.threads > 1
          ? (", per thread of the " + std::to_string(profile.threads) + " that take the batch's slices").c_str()
          : "");
  for (const auto& kind : profile.kinds) {
    std::printf("  %-20s %8.2f ms/step %5.1f %%\n", kind.kind.c_str(), kind.ms_per_step, 100 * kind.share);
  }
  std::printf("  the operators that take longest:\n");
  for (std::size_t i = 0; i < std::min<std::size_t>(12, profile.operators.size()); ++i) {
    const auto& op = profile.operators[i];
    std::printf("  %-44s %8.2f ms/step %5.1f %%  %lld a step (%s)\n", op.name.c_str(), op.ms_per_step,
                100 * op.ms_per_step / profile.ms_per_step, op.calls_per_step, op.kind.c_str());
  }
  if (profile.gpu_kernels.empty()) return;
  std::printf("  on the GPU: %.0f kernels, copies and fills a step, busy %.2f ms of the %.2f; the ten longest:\n",
              profile.gpu_kernels_per_step, profile.gpu_busy_ms_per_step, profile.ms_per_step);
  for (std::size_t i = 0; i < std::min<std::size_t>(10, profile.gpu_kernels.size()); ++i) {
    const auto& kernel = profile.gpu_kernels[i];
    std::printf("  %8.3f ms/step %5.1f %%  %4.0f a step  %.90s\n", kernel.ms_per_step,
                100 * kernel.ms_per_step / profile.gpu_busy_ms_per_step, kernel.calls_per_step, kernel.name.c_str());
  }
}

}  // namespace

int run_bench(const Options& options) {
  const TrainConfig config = build_config(options);
  if (options.bench_stack > 0) {
    const StackBenchResult r = benchmark_stack(config, options.bench_stack, options.bench_warmup, options.bench_steps,
                                               options.cuda_graph == "on");
    if (options.json) {
      std::fputs(to_json_text(r, config).c_str(), stdout);
      return 0;
    }
    std::printf("device     %s, %s (LibTorch %s)\n", r.environment.device_name.c_str(), r.environment.precision.c_str(),
                r.environment.libtorch_version.c_str());
    if (r.environment.device == "cuda") std::printf("CUDA graph %s (the stack's)\n", r.cuda_graph.c_str());
    std::printf("model      %s-norm, %d layers, d_model %d, batch %d x %d tokens\n",
                to_string(config.model.norm).c_str(), config.model.layers, config.model.d_model, config.batch_size,
                config.model.context);
    std::printf("stacked    %d runs as one model: %.2f ms a step of all of them (median of %d)\n", r.runs,
                r.stacked_ms_per_step, r.measured_steps);
    std::printf("single     %d runs one after another: %.2f ms for one step of each\n", r.runs, r.single_ms_per_step);
    std::printf("ratio      stacking is %.2fx %s\n", r.speedup >= 1 ? r.speedup : 1 / r.speedup,
                r.speedup >= 1 ? "faster" : "slower");
    return 0;
  }
  const int warmup = options.bench_warmup;
  const BenchResult r =
      benchmark(config, warmup, options.bench_steps, options.cuda_graph == "on", options.bench_profile);
  const CheckpointCost checkpoint = measure_checkpoint(config);
  if (options.json) {
    std::fputs(to_json_text(r, checkpoint, config).c_str(), stdout);
    return 0;
  }
  std::printf("device     %s, %s (LibTorch %s)\n", r.environment.device_name.c_str(), r.environment.precision.c_str(),
              r.environment.libtorch_version.c_str());
  if (r.environment.device == "cuda") {
    std::printf("CUDA graph %s (recording steps: %s; text decoder: %s)\n", r.cuda_graph.c_str(),
                r.cuda_graph_recording.c_str(), r.cuda_graph_decode.c_str());
  }
  std::printf("model      %s-norm, %d layers, d_model %d, %d heads, vocab %d: %lld parameters\n",
              to_string(config.model.norm).c_str(), config.model.layers, config.model.d_model, config.model.heads,
              config.model.vocab, static_cast<long long>(r.parameters));
  std::printf("batch      %d x %d tokens\n", config.batch_size, config.model.context);
  std::printf("speed      %.2f ms/step (median of %d, after %d warm-up), %.0f tokens/s\n", r.median_ms_per_step,
              r.measured_steps, warmup, r.tokens_per_s);
  std::printf("memory     %.0f minor page faults a step (timed steps from step %d on)\n", r.page_faults_per_step,
              r.page_faults_from_step);
  std::printf(
      "compute    %.2f GFLOP/step -> %.2f GFLOP/s = %.1f %% of this device's measured "
      "matmul rate in the run's precision (%.2f GFLOP/s)\n",
      r.model_flop_per_step / 1e9, r.achieved_flop_per_s / 1e9, 100 * r.achieved_flop_per_s / r.matmul_flop_per_s,
      r.matmul_flop_per_s / 1e9);
  if (r.recorded_steps_per_run > 0) {
    const double extra = r.median_ms_per_recorded_step / r.median_ms_per_step - 1;
    std::printf(
        "statistics %.2f ms/step while recording the layer statistics (%+.1f %%); a %d-step run records them "
        "at %d steps: %+.1f %% over the run\n",
        r.median_ms_per_recorded_step, 100 * extra, config.steps, r.recorded_steps_per_run,
        100 * extra * r.recorded_steps_per_run / config.steps);
  }
  if (r.text_recordings_per_run > 0) {
    const double share = r.text_recordings_per_run * r.median_ms_per_text / (config.steps * r.median_ms_per_step);
    std::printf(
        "text       %.0f ms a recording (the fixed prompts continued greedily and sampled, and the reference "
        "text's probabilities) = %.1f steps; a %d-step run records text at %d evaluations: %+.1f %% over its "
        "steps\n",
        r.median_ms_per_text, r.median_ms_per_text / r.median_ms_per_step, config.steps, r.text_recordings_per_run,
        100 * share);
  }
  if (r.profile.steps > 0) print_profile(r.profile);
  // A checkpoint comes with a save, so at most as often as saves come.
  const double every_s = std::max<double>(config.checkpoint_interval, kSaveIntervalSeconds);
  const double checkpoint_ms = checkpoint.serialise_ms + checkpoint.write_ms;
  std::printf(
      "checkpoint %.1f MB at the run's last step in %.0f ms (%.0f to make, %.0f to write); one every %g s "
      "costs %.2f %% of the run's time\n",
      checkpoint.bytes / 1e6, checkpoint_ms, checkpoint.serialise_ms, checkpoint.write_ms, every_s,
      100 * checkpoint_ms / 1e3 / every_s);
  return 0;
}

}  // namespace normlab::cli
