#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>
#include <string_view>

#include "checkpoint.h"
#include "corpus.h"
#include "cuda_backend.h"
#include "dataset.h"
#include "layer_stats.h"
#include "learner.h"
#include "memory.h"
#include "schedule.h"
#include "tokenizer.h"
#include "training_state.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// A GPU's losses are read at least this often, so the chart still moves live.
constexpr double kLossReadInterval_s = 0.03;
constexpr std::size_t kMaxPendingSteps = 512;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The training data as checkpoints name it: a changed corpus, or a tokenizer trained
// differently, gives other token ids. Read on the host, before the ids move to a device.
std::string data_fingerprint(const Dataset& data) {
  auto hash = [](const torch::Tensor& ids) {
    return content_hash(std::string_view(static_cast<const char*>(ids.data_ptr()), ids.nbytes()));
  };
  return hash(data.train_ids()) + "/" + hash(data.heldout_ids());
}

// How long the run has trained: the wall time of its last point.
double wall_time(const RunRecord& run) {
  return std::max(run.steps.empty() ? 0.0 : run.steps.back().wall_s, run.evals.empty() ? 0.0 : run.evals.back().wall_s);
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

namespace {

// A fresh run, or with `checkpoint` the run it holds, from its step on.
RunRecord run_training(const TrainConfig& requested, const fs::path* checkpoint, const TrainCallbacks& callbacks,
                       const std::atomic<bool>* cancel) {
  auto stage = [&](const std::string& what) { if (callbacks.on_stage) callbacks.on_stage(what); };
  auto cancelled = [&] { return cancel && cancel->load(std::memory_order_relaxed); };

  validate(requested);
  RunRecord run;
  run.config = requested;
  if (run.config.name.empty()) run.config.name = default_run_name(run.config);
  const TrainConfig& config = run.config;
  run.environment = describe_device(config.device, config.threads);
  // Refused before the corpus is read; read again, with the data compared, once it is.
  if (checkpoint) resumable_checkpoint(*checkpoint, config);
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
  const std::string fingerprint = data_fingerprint(data);
  data.to(device);  // batches are cut where the model is

  Learner learner(config, tokenizer.vocab_size(), device);
  run.parameters = learner.parameter_count();
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
  TrainingState state{learner, rng, starts, run};
  if (checkpoint) {
    stage("Resuming from the checkpoint");
    restore_checkpoint(*checkpoint, fingerprint, state);
    starts = starts.to(device);
  }
  const int first_step = int(run.steps.size()) + 1;
  // Room for every row at once: grown by doubling, each outgrown buffer would stay in the
  // process as free memory (keep_freed_memory_for_reuse), as large again as the record.
  // Pages are only touched as the steps fill them.
  run.steps.reserve(std::size_t(config.steps));
  run.evals.reserve(std::size_t(config.steps / config.eval_interval) + 2);

  // A resumed run's clock goes on from its last point.
  const auto start = std::chrono::steady_clock::now() -
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(wall_time(run)));
  auto last_read = std::chrono::steady_clock::now();  // when losses were last read; the steps since then share that time
  auto last_save = last_read, last_checkpoint = last_read;
  int checkpointed = int(run.steps.size());  // the step of the last checkpoint, or where this process began
  auto write_checkpoint = [&] {
    if (!callbacks.on_checkpoint_due || int(run.steps.size()) == checkpointed) return;
    callbacks.on_checkpoint_due(checkpoint_bytes(state, fingerprint));
    checkpointed = int(run.steps.size());
    last_checkpoint = last_read = std::chrono::steady_clock::now();  // writing is not training time
  };
  auto save = [&](bool with_checkpoint) {
    if (with_checkpoint) write_checkpoint();
    last_save = std::chrono::steady_clock::now();
    if (callbacks.on_save_due) callbacks.on_save_due(run);
    hand_back_freed_memory();
  };
  auto evaluate = [&](int step, bool with_checkpoint) {
    run.evals.push_back({step, seconds_since(start), learner.evaluate(heldout)});
    if (callbacks.on_eval) callbacks.on_eval(run.evals.back(), run);
    save(with_checkpoint);
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
  if (checkpoint) save(false);  // the files go back to the checkpoint's step
  else evaluate(0, false);
  const bool read_every_step = !device.is_cuda();
  for (int step = first_step; step <= config.steps; ++step) {
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
    const bool saving = evaluating || seconds_since(last_save) >= kSaveIntervalSeconds;
    // A checkpoint comes with a save and holds every loss up to its step, so they are read
    // first. The last step's is left to the end, which keeps it only if asked.
    const bool checkpointing = saving && step < config.steps && callbacks.on_checkpoint_due &&
                               seconds_since(last_checkpoint) >= config.checkpoint_interval;
    bool finite = true;
    if (read_every_step || evaluating || checkpointing || pending.size() >= kMaxPendingSteps ||
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
    if (evaluating) evaluate(step, checkpointing);
    else if (saving) save(checkpointing);
  }
  if (run.status == RunStatus::Running) run.status = RunStatus::Done;
  if (keeps_checkpoint(run)) write_checkpoint();
  return run;
}

}  // namespace

RunRecord train(const TrainConfig& config, const TrainCallbacks& callbacks, const std::atomic<bool>* cancel) {
  return run_training(config, nullptr, callbacks, cancel);
}

RunRecord resume(const TrainConfig& config, const fs::path& checkpoint, const TrainCallbacks& callbacks,
                 const std::atomic<bool>* cancel) {
  return run_training(config, &checkpoint, callbacks, cancel);
}

}  // namespace normlab
