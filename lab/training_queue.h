#pragma once
// Trains the store's queued runs one after another on a worker thread, applies what
// the worker reports to the store, and estimates how long is left. It never adds or
// removes runs: the lab does, with their files.
#include <QList>
#include <QObject>
#include <QSet>
#include <QThread>

#include "run_record.h"
#include "run_text.h"

namespace normlab::lab {

class RunStore;
class TrainWorker;

struct QueueProgress {
  int run_id = 0;            // 0 when idle
  int run_number = 0;        // "run 2 of 5", counted since the queue was last idle
  int run_total = 0;
  int step = 0;
  int steps = 0;
  double run_seconds_left = -1;    // negative: not known yet
  double queue_seconds_left = -1;
  double tokens_per_s = 0;
  double lr = 0;
  QString stage;             // what the trainer is doing when not yet stepping
};

class TrainingQueue : public QObject {
  Q_OBJECT
 public:
  explicit TrainingQueue(RunStore& store, QObject* parent = nullptr);
  ~TrainingQueue() override;

  // The run must be in the store; it trains after those before it, from its checkpoint
  // with `resume`.
  void enqueue(int run_id, bool resume = false);
  // Takes a queued run out of the queue (not out of the store); false if it was not queued.
  bool dequeue(int run_id);
  // True while the run waits in the queue or trains.
  bool is_queued(int run_id) const { return run_id == running_id_ || pending_.contains(run_id); }
  // Stops the running run after its current step; its points stay. The queue goes on.
  void stop_current();
  // Stops the running run and empties the queue; returns the runs taken out of it.
  QList<int> stop_all();
  // Cancels, then waits for the worker thread to end. Nothing runs afterwards.
  void shutdown();
  void probe_device();
  // Times a few steps of `config` on the worker, after what it is doing; answers measured().
  void measure(const TrainConfig& config);

  int running_id() const { return running_id_; }
  bool busy() const { return running_id_ != 0; }
  const QList<int>& pending() const { return pending_; }  // in the order they will train
  QueueProgress progress() const;
  // Wall time per unit of run_flops, measured on the running or last run; 0 before any.
  double seconds_per_flop() const { return seconds_per_flop_; }

 signals:
  void device_found(const normlab::Environment& found);
  void measured(const normlab::TrainConfig& config, double seconds_per_step);
  void progress_changed();
  void busy_changed(bool busy);
  // A run could not train; the runs queued after it were taken out of the queue too
  // (`dropped`), as they most likely share its cause (a corpus, a device).
  void run_failed(int run_id, const QString& message, const QList<int>& dropped);
  void save_failed(int run_id, const QString& message);

 private:
  void start_next();
  void on_started(int run_id, const RunRecord& header);
  void on_steps(int run_id, const std::vector<StepMetrics>& steps);
  void on_finished(int run_id, const RunRecord& run);
  void on_failed(int run_id, const QString& message);
  void run_ended();

  RunStore& store_;
  QThread thread_;
  TrainWorker* worker_;      // lives on thread_, deleted when it ends
  QList<int> pending_;
  QSet<int> resuming_;  // of pending_ and the running run: those that go on from a checkpoint
  int running_id_ = 0;
  int finished_since_idle_ = 0;
  QString stage_;
  TokenRate token_rate_;
  // Wall time (evaluations included) per unit of run_flops: kept across runs, so a deeper
  // or longer run queued next is estimated by its own work.
  double seconds_per_flop_ = 0;
  bool shut_down_ = false;
};

}  // namespace normlab::lab
