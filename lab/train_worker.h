#pragma once
// Runs normlab::train on the thread it lives on and reports through signals, which Qt
// queues to the window's thread. Steps are sent in small batches, not one signal each.
#include <QObject>
#include <QString>
#include <atomic>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab::lab {

class TrainWorker : public QObject {
  Q_OBJECT
 public:
  // Checked by the trainer before every step. Safe from any thread.
  std::atomic<bool>& cancel_flag() { return cancel_; }
  // Set with the cancel flag when the window closes: the run is cut short, not stopped by
  // the user, and Continue goes on with it in the next session.
  std::atomic<bool>& closing_flag() { return closing_; }

  // Trains one run, or with `resume` goes on from its checkpoint; `save_path` receives the
  // record whenever the trainer says a save is due (at evaluations and every few seconds)
  // and at the end, and its checkpoint goes beside it.
  void train(int run_id, const TrainConfig& config, const QString& save_path, bool resume = false);
  // Finds what "auto" means here (loads the CUDA driver if there is one: can take a moment).
  void probe_device();
  // Times a few training steps of `config` on random tokens (no corpus needed).
  void measure(const TrainConfig& config);

 signals:
  void device_found(const normlab::Environment& found);
  // Seconds per training step, or negative when it could not be measured.
  void measured(const normlab::TrainConfig& config, double seconds_per_step);
  void stage_changed(int run_id, const QString& stage);
  void started(int run_id, const normlab::RunRecord& header);
  void steps_done(int run_id, const std::vector<normlab::StepMetrics>& steps);
  // Any named series, batched with the steps.
  void points_recorded(int run_id, const std::vector<normlab::SeriesPoint>& points);
  void evaluated(int run_id, const normlab::EvalMetrics& eval);
  void text_recorded(int run_id, const normlab::TextSample& text);  // at the evaluations that record text
  void finished(int run_id, const normlab::RunRecord& run);
  void failed(int run_id, const QString& message);
  void save_failed(int run_id, const QString& message);

 private:
  std::atomic<bool> cancel_{false};
  std::atomic<bool> closing_{false};
};

}  // namespace normlab::lab
