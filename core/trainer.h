#pragma once
// Trains one run. Config in, RunRecord out, progress through callbacks.
// No torch in this header, so the UI can drive it.
#include <atomic>
#include <functional>
#include <string>

#include "run_record.h"

namespace normlab {

struct TrainCallbacks {
  std::function<void(const std::string& stage)> on_stage;   // "Training tokenizer…"
  std::function<void(const RunRecord& run)> on_start;       // prepared: env, baseline, counts
  std::function<void(const StepMetrics& step)> on_step;
  std::function<void(const EvalMetrics& eval, const RunRecord& run)> on_eval;
  // A further statistic's values at a step, already added to the record: per-layer
  // views subscribe here without the trainer, worker or store knowing their names.
  std::function<void(const SeriesPoint& point)> on_point;
  // The record as it stands, to be written to disk (the CLI and the app both save here):
  // after every evaluation and, between them, once kSaveIntervalSeconds have passed since
  // the last save, so a killed process loses at most that much training.
  std::function<void(const RunRecord& run)> on_save_due;
};

inline constexpr double kSaveIntervalSeconds = 5;

// Runs to completion, cancellation (status Stopped, points kept) or divergence
// (status Diverged). Throws UserError for bad config or input, before training starts.
RunRecord train(const TrainConfig& config, const TrainCallbacks& callbacks = {},
                const std::atomic<bool>* cancel = nullptr);

// What `device` ("auto", "cpu", "cuda") resolves to here, with `threads` CPU threads
// (0 = LibTorch's default); UserError when unavailable.
Environment describe_device(const std::string& device, int threads = 0);

}  // namespace normlab
