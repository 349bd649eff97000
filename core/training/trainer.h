#pragma once
// Trains one run. Config in, RunRecord out, progress through callbacks.
// No torch in this header, so the UI can drive it.
#include <atomic>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab {

struct TrainCallbacks {
  std::function<void(const std::string& stage)> on_stage;  // "Training tokenizer…"
  std::function<void(const RunRecord& run)> on_start;      // prepared: env, baseline, counts (resumed: points)
  std::function<void(const StepMetrics& step)> on_step;
  std::function<void(const EvalMetrics& eval, const RunRecord& run)> on_eval;
  // A further statistic's values at a step, already added to the record: per-layer
  // views subscribe here without the trainer, worker or store knowing their names.
  std::function<void(const SeriesPoint& point)> on_point;
  // The record as it stands, to be written to disk (the CLI and the app both save here):
  // after every evaluation and, between them, once kSaveIntervalSeconds have passed since
  // the last save, so a killed process loses at most that much training.
  std::function<void(const RunRecord& run)> on_save_due;
  // The run's whole state as a checkpoint file's bytes (checkpoint.h), to be written
  // atomically to checkpoint_path(run file): with a save, once config.checkpoint_interval
  // seconds have passed since the last checkpoint, and as the run ends when
  // keeps_checkpoint says it keeps one. Without this callback no checkpoint is made.
  std::function<void(const std::string& checkpoint)> on_checkpoint_due;
  // The final parameters as a weights file's bytes (weights.h), to be written atomically
  // to weights_path(run file): once, as the run ends, when keeps_weights says it keeps them.
  std::function<void(const std::string& weights)> on_weights_due;
};

inline constexpr double kSaveIntervalSeconds = 5;

// Runs to completion, cancellation (status Stopped, points kept) or divergence
// (status Diverged). Throws UserError for bad config or input, before training starts.
RunRecord train(const TrainConfig& config, const TrainCallbacks& callbacks = {},
                const std::atomic<bool>* cancel = nullptr);

// Why these runs cannot train as one stack (train_stacked, stacked_learner.h), in one
// line; empty when they can. They stack when their models have one shape (the model's
// stack_refusal, stacked_model.h) and they take batches of one size for the same number
// of steps on one device and corpus, in fp32; learning rate, warmup, seed, weight decay,
// clipping and what they record may differ.
std::string stack_refusal(const std::vector<TrainConfig>& configs);

// Trains runs of one shape (stack_refusal; UserError naming why
// not) as one stacked model: each step of all of them one forward and backward, each
// run still with its own weights, batches, schedule and AdamW state. Each run gets its
// callbacks (callbacks[r]; none when empty) and the record train(configs[r]) would give
// it, within fp32 rounding: steps, evaluations, statistics, text, checkpoints and
// weights. A step at which any run records layer statistics is taken by each run alone,
// through its own learner on the stack's tensors. All runs stop when `cancel` is set; a
// run that diverges ends there while the others go on.
std::vector<RunRecord> train_stacked(const std::vector<TrainConfig>& configs,
                                     const std::vector<TrainCallbacks>& callbacks = {},
                                     const std::atomic<bool>* cancel = nullptr);

// Goes on with the run whose checkpoint is at `checkpoint`, as if it had never stopped:
// its record is cut back to the checkpoint's step (on_start gets it so), and from there
// every step, evaluation, statistic, save and checkpoint comes as in train(), with the
// same numbers on the same device and thread count. `config` is the run's, from its run
// file; settings that do not shape the result (device, threads, checkpoints) may differ
// from the checkpoint's. Throws UserError before training starts when the checkpoint
// cannot continue this run (resumable_checkpoint) or was made from other training data.
RunRecord resume(const TrainConfig& config, const std::filesystem::path& checkpoint,
                 const TrainCallbacks& callbacks = {}, const std::atomic<bool>* cancel = nullptr);

// What `device` ("auto", "cpu", "cuda") resolves to here, with `threads` CPU threads
// (0 = LibTorch's default); UserError when unavailable.
Environment describe_device(const std::string& device, int threads = 0);

}  // namespace normlab
