#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "corpus.h"
#include "cuda_backend.h"
#include "dataset.h"
#include "layer_stats.h"
#include "learner.h"
#include "memory.h"
#include "schedule.h"
#include "tokenizer.h"

namespace normlab {

namespace {

// A GPU's losses are read at least this often, so the chart still moves live.
constexpr double kLossReadInterval_s = 0.03;
constexpr std::size_t kMaxPendingSteps = 512;
// Batch start offsets are drawn and sent to the device this many steps at a time.
constexpr int kBatchChunkSteps = 1024;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Environment describe_device(const std::string& device, int threads) {
  Environment env;
  env.app_version = NORMLAB_VERSION;
  env.libtorch_version = libtorch_version();
  // Without a driver there is no GPU to find: the backend is not even loaded.
  const bool has_cuda = device != "cpu" && nvidia_driver_present() && load_cuda_backend().loaded &&
                        torch::cuda::is_available();
  if (device == "cuda" && !has_cuda) {
    throw UserError("device 'cuda' was asked for, but LibTorch sees no CUDA GPU here; "
                    "use 'auto' or 'cpu'");
  }
  if (device == "cuda" || (device == "auto" && has_cuda)) {
    env.device = "cuda";
    env.device_name = cuda_device_name();
    env.threads = torch::get_num_threads();
  } else {
    env.device = "cpu";
    env.threads = threads > 0 ? threads : torch::get_num_threads();
    env.device_name = "CPU, " + std::to_string(env.threads) + (env.threads == 1 ? " thread" : " threads");
  }
  return env;
}

RunRecord train(const TrainConfig& requested, const TrainCallbacks& callbacks,
                const std::atomic<bool>* cancel) {
  auto stage = [&](const std::string& what) { if (callbacks.on_stage) callbacks.on_stage(what); };
  auto cancelled = [&] { return cancel && cancel->load(std::memory_order_relaxed); };

  validate(requested);
  RunRecord run;
  run.config = requested;
  if (run.config.name.empty()) run.config.name = default_run_name(run.config);
  const TrainConfig& config = run.config;
  run.environment = describe_device(config.device, config.threads);
  const torch::Device device = prepare_device(config, run.environment);

  stage("Reading the corpus");
  const Corpus corpus =
      config.corpus_path.empty() ? load_default_corpus() : load_corpus(config.corpus_path);
  stage("Preparing the " + std::to_string(config.model.vocab) +
        "-token BPE tokenizer (trained once per corpus, then cached)");
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus, config.model.vocab);
  stage("Tokenizing the corpus");
  Dataset data(encode_corpus(corpus, tokenizer), tokenizer.vocab_size(), config.model.context);
  run.train_tokens = data.train_tokens();
  run.heldout_tokens = data.heldout_tokens();
  run.baseline_loss = data.unigram_baseline();
  data.to(device);  // batches are cut where the model is

  Learner learner(config, tokenizer.vocab_size(), device);
  run.parameters = learner.parameter_count();
  // Room for every row at once: grown by doubling, each outgrown buffer would stay in the
  // process as free memory (keep_freed_memory_for_reuse), as large again as the record.
  // Pages are only touched as the steps fill them.
  run.steps.reserve(std::size_t(config.steps));
  run.evals.reserve(std::size_t(config.steps / config.eval_interval) + 2);
  const std::vector<Batch> heldout = data.heldout_batches(config.batch_size, config.eval_batches);

  // The run's batches, drawn a chunk of steps at a time in the order a step-by-step draw
  // would take them, and sent to the device once per chunk rather than once per step.
  std::mt19937_64 rng(config.seed);
  torch::Tensor starts;
  auto batch_for = [&](int step) {
    const int row = (step - 1) % kBatchChunkSteps;
    if (row == 0) {
      auto chunk = data.sample_starts(config.batch_size, std::min(kBatchChunkSteps, config.steps - step + 1), rng);
      starts = device.is_cuda() ? chunk.pin_memory().to(device, /*non_blocking=*/true) : chunk;
    }
    return data.train_windows(starts[row]);
  };

  const auto start = std::chrono::steady_clock::now();
  auto last_save = start;
  auto save = [&] {
    last_save = std::chrono::steady_clock::now();
    if (callbacks.on_save_due) callbacks.on_save_due(run);
    hand_back_freed_memory();
  };
  auto last_read = start;  // when losses were last read; the steps since then share that time
  auto evaluate = [&](int step) {
    run.evals.push_back({step, seconds_since(start), learner.evaluate(heldout)});
    if (callbacks.on_eval) callbacks.on_eval(run.evals.back(), run);
    save();
    last_read = std::chrono::steady_clock::now();  // evaluation time is not training time
  };

  // Losses wait on the device and are read together: each read is a host sync, which
  // would leave a GPU idle once per step. The CPU computes synchronously, so there every
  // step is read at once.
  struct PendingStep {
    int step;
    double lr;
    torch::Tensor loss;
  };
  std::vector<PendingStep> pending;
  const double tokens_per_step = double(config.batch_size) * config.model.context;
  // Records the pending steps; false when one's loss was not finite (the run diverged
  // there, and the steps after it are dropped).
  auto read_losses = [&]() -> bool {
    if (pending.empty()) return true;
    std::vector<torch::Tensor> losses;
    for (const auto& p : pending) losses.push_back(p.loss);
    const auto values = torch::stack(losses).to(torch::kCPU, torch::kFloat64);
    const double block_start = std::chrono::duration<double>(last_read - start).count();
    const double per_step = seconds_since(last_read) / double(pending.size());
    bool finite = true;
    for (std::size_t i = 0; i < pending.size() && finite; ++i) {
      const double loss = values.data_ptr<double>()[i];
      run.steps.push_back({pending[i].step, block_start + per_step * double(i + 1), pending[i].lr, loss,
                           tokens_per_step / per_step});
      if (callbacks.on_step) callbacks.on_step(run.steps.back());
      if (!std::isfinite(loss)) {
        finite = false;
        run.status = RunStatus::Diverged;
        run.message = "training loss became " + std::string(std::isnan(loss) ? "NaN" : "infinite") + " at step " +
                      std::to_string(pending[i].step);
      }
    }
    pending.clear();
    last_read = std::chrono::steady_clock::now();
    return finite;
  };

  run.status = RunStatus::Running;
  if (callbacks.on_start) callbacks.on_start(run);
  stage("Training");
  evaluate(0);
  const bool read_every_step = !device.is_cuda();
  for (int step = 1; step <= config.steps; ++step) {
    if (cancelled()) {
      if (read_losses()) {
        run.status = RunStatus::Stopped;
        run.message = "stopped by the user after " + std::to_string(step - 1) + " steps";
      }
      break;
    }
    const double lr = learning_rate(step - 1, config.steps, config.warmup_steps, config.peak_lr);
    std::vector<SeriesPoint> statistics;
    pending.push_back({step, lr,
                       learner.step(batch_for(step), lr, records_layer_stats(config, step) ? &statistics : nullptr)});
    const bool evaluating = step % config.eval_interval == 0 || step == config.steps;
    bool finite = true;
    if (read_every_step || evaluating || pending.size() >= kMaxPendingSteps ||
        seconds_since(last_read) >= kLossReadInterval_s) {
      finite = read_losses();
    }
    // A step's statistics stand unless the run ended at an earlier step.
    if (finite || run.steps.back().step == step) {
      for (SeriesPoint& point : statistics) {
        point.step = step;
        run.add_point(point);
        if (callbacks.on_point) callbacks.on_point(point);
      }
    }
    if (!finite) break;
    if (evaluating) evaluate(step);
    else if (seconds_since(last_save) >= kSaveIntervalSeconds) save();
  }
  if (run.status == RunStatus::Running) run.status = RunStatus::Done;
  return run;
}

}  // namespace normlab
