#pragma once
// Trains the store's queued runs, several side by side (each on its own worker thread,
// with its share of the CPU cores or its own CUDA stream), the rest waiting in order;
// applies what the workers report to the store and estimates how long is left. It never
// adds or removes runs: the lab does, with their files.
#include <QList>
#include <QObject>
#include <QSet>
#include <QThread>
#include <memory>
#include <vector>

#include "core/runs/run_record.h"
#include "core/runs/run_text.h"

namespace normlab::lab {

class RunStore;
class TrainWorker;

struct ActiveRun {
  int run_id = 0;
  int step = 0;
  int steps = 0;
  double seconds_left = -1;  // negative: not known yet
  double tokens_per_s = 0;
  double lr = 0;
  QString stage;  // what the trainer is doing when not yet stepping
};

struct QueueProgress {
  std::vector<ActiveRun> running;  // in the order they started; empty when idle
  int ended = 0;                   // runs that ended since the queue was last idle
  int total = 0;                   // those, the running and the waiting
  double seconds_left = -1;        // until the last queued run ends; negative: not known
  double tokens_per_s = 0;         // of the running runs together
};

class TrainingQueue : public QObject {
  Q_OBJECT
 public:
  // Trains up to `side_by_side` runs at once.
  explicit TrainingQueue(RunStore& store, int side_by_side, QObject* parent = nullptr);
  ~TrainingQueue() override;

  // The run must be in the store; it trains after those before it, from its checkpoint
  // with `resume`.
  void enqueue(int run_id, bool resume = false);
  // Takes a queued run out of the queue (not out of the store); false if it was not queued.
  bool dequeue(int run_id);
  // True while the run waits in the queue or trains.
  bool is_queued(int run_id) const { return is_running(run_id) || pending_.contains(run_id); }
  bool is_running(int run_id) const;
  // How many runs train at once. A run that starts takes threads_per_run(side_by_side)
  // CPU threads unless its config names a count, and keeps them to its end (the thread
  // count changes a run's last digits). Lowering it lets the runs training finish.
  void set_side_by_side(int runs);
  int side_by_side() const { return side_by_side_; }
  // Stops one running run after its current step; its points stay. The queue goes on.
  void stop(int run_id);
  void stop_running();  // every running run, likewise
  // Stops the running runs and empties the queue; returns the runs taken out of it.
  QList<int> stop_all();
  // Cancels, then waits for the worker threads to end. Nothing runs afterwards.
  void shutdown();
  void probe_device();
  // Times a few steps of `config` on a worker, after what it is doing; answers measured().
  void measure(const TrainConfig& config);

  QList<int> running() const;  // in the order they started
  bool busy() const { return !running().isEmpty(); }
  const QList<int>& pending() const { return pending_; }  // in the order they will train
  QueueProgress progress() const;
  // Wall time per unit of run_flops of one run among those training at once, measured on
  // the latest steps; 0 before any.
  double seconds_per_flop() const { return seconds_per_flop_; }
  int measured_threads() const { return measured_threads_; }  // the CPU threads of the run it was measured on

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
  // A worker thread and the run it trains (0: free).
  struct Slot {
    QThread thread;
    TrainWorker* worker = nullptr;  // lives on thread, deleted when it ends
    int run_id = 0;
    qint64 started = 0;  // order of starts, for running()
    QString stage;
    TokenRate token_rate;
    StepPace pace;
  };
  Slot& add_slot();
  Slot* slot_of(int run_id);
  const Slot* slot_of(int run_id) const;
  void start_next();
  void on_started(int run_id, const RunRecord& header);
  void on_steps(int run_id, const std::vector<StepMetrics>& steps);
  void on_finished(int run_id, const RunRecord& run);
  void on_failed(int run_id, const QString& message);
  void run_ended(Slot& slot);

  RunStore& store_;
  std::vector<std::unique_ptr<Slot>> slots_;  // grows to the most runs trained at once
  int side_by_side_;
  QList<int> pending_;
  QSet<int> resuming_;  // of pending_ and the running runs: those that go on from a checkpoint
  int ended_since_idle_ = 0;
  qint64 starts_ = 0;
  // Wall time (evaluations included) per unit of run_flops: kept across runs, so a deeper
  // or longer run queued next is estimated by its own work.
  double seconds_per_flop_ = 0;
  int measured_threads_ = 0;
  bool shut_down_ = false;
};

}  // namespace normlab::lab
