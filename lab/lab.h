#pragma once
// The lab: what the window's buttons and menus do, without a widget. It owns the run
// store, the archive of run files and the training queue; it starts single runs, the
// course experiment and sweeps, stops them, and says how long they will take. Every
// widget shows its state and turns clicks into calls on it; the tests drive it headless.
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <QStringList>
#include <functional>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/runs/presets.h"
#include "core/runs/run_record.h"
#include "core/sweeps/point_fate.h"

#include "folder_follower.h"
#include "run_archive.h"
#include "run_store.h"
#include "sweep_standing.h"
#include "training_queue.h"

namespace normlab::lab {

// How long something should take, and what the figure rests on.
struct Estimate {
  enum class Basis { None, ThisSession, FinishedRun, TimedSteps };
  double seconds = -1;  // negative: not known
  Basis basis = Basis::None;
  std::string reference;         // FinishedRun: that run's name
  double reference_seconds = 0;  // FinishedRun: how long it took
  int reference_steps = 0;
  double ms_per_step = 0;  // TimedSteps: on a model of `timed_layers` layers
  int timed_layers = 0;
  bool timing = false;  // None: a few steps are being timed now
  // On a CPU: the threads the speed was measured with, and what a run gets now (side by
  // side); 0 when they are the same or not known.
  int measured_threads = 0;
  int threads_now = 0;
};

// A sweep's time left: its own runs and the other runs queued before its last one.
struct SweepTime {
  Estimate total;
  double ahead_seconds = 0;  // of total, what the other runs queued before its last one cost it
};

class Lab : public QObject {
  Q_OBJECT
 public:
  explicit Lab(const QString& runs_folder, QObject* parent = nullptr);
  ~Lab() override;  // shuts down
  // Stops the running run (saved as stopped), ends the worker and gives the runs folder up.
  void shutdown();

  RunStore& store() { return *store_; }
  const RunStore& store() const { return *store_; }
  TrainingQueue& queue() { return *queue_; }
  const TrainingQueue& queue() const { return *queue_; }
  const RunArchive& archive() const { return *archive_; }
  // Another NormLab owns the runs folder: its runs are shown, nothing is trained or changed.
  bool read_only() const { return !archive_->writable(); }

  // The folder's runs into the store, in the order they were made; what could not be read.
  RunArchive::Restored restore();
  // Shows every run in another folder and follows it as its files change (FolderFollower:
  // only reads); empty, or why not. Its sweep's description comes with sweep_found.
  QString follow_folder(const QString& folder) { return follower_->follow(folder); }
  FolderFollower& follower() { return *follower_; }

  // What "auto" means here. Without an NVIDIA driver the answer is immediate; with one the
  // worker looks (loading the CUDA libraries can take a while) and device_found follows.
  void probe_device();
  bool device_known() const { return device_.has_value(); }
  bool on_gpu() const { return device_ && device_->device == "cuda"; }
  const Environment* device() const { return device_ ? &*device_ : nullptr; }
  // The course's scale on this device: full on a GPU, the CPU scale otherwise.
  Scale course_scale() const { return on_gpu() ? Scale::Full : Scale::Cpu; }
  // `config` at this device's scale when its schedule is still the full-scale default a
  // CPU cannot train in minutes; otherwise as it is.
  TrainConfig fit_to_device(TrainConfig config) const;

  // Adds the run (named uniquely, saved as queued) and queues it; its id, or 0 if refused.
  int queue_run(TrainConfig config);
  // A run from the settings: queued once the device is known, fitted to it.
  void start_run(const TrainConfig& config);
  // The course's five runs, `seeds` times, at the device's scale, on `base`'s device,
  // data and seed; runs the store already has an answer for are reused, not retrained.
  void start_course_experiment(const TrainConfig& base, int seeds);
  // The course's five runs at the device's scale on `base`'s device, data and seed (known
  // once the device is).
  std::vector<TrainConfig> course_runs(const TrainConfig& base) const;
  // One point by core's one rule (point_fate), as the course and sweeps train theirs: the
  // run that answers it, reused, waited for (one left queued joins the queue), resumed from
  // its checkpoint, or queued afresh; run 0 when it could not be queued (a read-only folder).
  struct PointAnswer {
    Fate fate = Fate::Train;
    int run = 0;
    bool joined = false;  // it joined the queue here
  };
  PointAnswer answer_point(const TrainConfig& config);
  // What answer_point would do with `config` now, doing nothing: core's rule over the
  // store, a cut-short run's checkpoint asked whether it can go on here. The Sweeps tab's
  // standing says it of each point.
  PointFate fate_of(const TrainConfig& config) const;
  // How many runs train at once; 0: the device's default (default_side_by_side).
  void set_side_by_side(int runs);
  int side_by_side_choice() const { return side_by_side_choice_; }
  int auto_side_by_side() const;          // what 0 means on this device
  void stop_run();                        // the running runs, after their current step; their points stay
  void stop_runs(const QList<int>& ids);  // those of these that train, likewise
  void stop_all();                        // and the queued runs are removed
  // Queues a stopped or interrupted run to go on from its checkpoint, with the numbers it
  // would have had uninterrupted; empty, or why it cannot (no checkpoint, a damaged one,
  // one of another experiment, corpus or LibTorch). The run and its files stay either way.
  // Says in a note from which step it goes on, and why when that is before where it got.
  QString resume_run(int id);
  // Whether the run was cut short and has a checkpoint file (resume_run checks it whole).
  bool has_checkpoint(int id) const;
  // Deletes the checkpoints of these runs (not of one queued or training): the disk back,
  // the runs' points kept.
  void drop_checkpoints(const QList<int>& ids);
  // Goes on with what an earlier session left, in the order its runs were made (and so
  // queued): each interrupted run with a sound checkpoint resumes, each run left queued but
  // not waiting (or imported so) joins the queue. Stopped runs were stopped on purpose and
  // stay. What could not resume, "“name”: why".
  QStringList continue_runs();
  bool has_runs_to_continue() const;

  struct Imported {
    int added = 0;
    QStringList problems;  // nothing was added when any file had one
    QStringList unsaved;   // added, but no copy could be kept in the runs folder
    QStringList refused;   // a run already open (same settings, seed and points): not added again
  };
  // All or nothing: one bad file and none is added. A file of a run already open is
  // refused; one with the same settings and seed but other points is added as a copy
  // ("… (copy 2)"), so two legend entries never read the same.
  Imported import_runs(const QStringList& files);
  // What the user calls the run (empty: its title again) and their note on it, kept in its
  // file. Empty, or why not now: a run training saves its own file, a followed one is
  // another program's.
  QString rename_run(int id, const QString& label);
  QString set_note(int id, const QString& note);
  bool removable(int id) const;             // known, and not training now
  void remove_runs(const QList<int>& ids);  // with their files in the runs folder

  // The sweep's runs that are missing or were cut short join the queue, with those still
  // queued from an earlier session; those it has answers for count at once.
  void start_sweep(const Sweep& sweep);
  // Stops the running run the sweep started and takes its waiting runs out; only runs
  // started by start_sweep are touched.
  void stop_sweep();
  bool sweep_in_progress() const;
  // With `may_time`, a few steps are timed on the worker when nothing else tells the speed
  // (only for a view someone looks at: the worker is then busy for a moment).
  SweepTime sweep_time(const SweepStanding& standing, bool may_time) const;
  // Time for runs to train here, from this session's speed, the latest finished run on
  // this device, or a few steps timed on the worker.
  Estimate estimate(const std::vector<TrainConfig>& runs, bool may_time = false) const;

 signals:
  void device_found(const normlab::Environment& found);
  void progress_changed();
  void busy_changed(bool busy);
  void sweep_changed();
  // Something to tell the user in passing (the window's status bar).
  void note(const QString& text);
  // A run could not train; `dropped` queued runs behind it were removed with it.
  void run_failed(int run_id, const QString& message, int dropped);
  void save_failed(int run_id, const QString& message);

 private:
  struct Started {
    int queued = 0, reused = 0, waiting = 0;
  };
  // Each config's fate by answer_point. `owned` collects the ids that joined the queue here.
  Started train_missing(const std::vector<TrainConfig>& configs, QSet<int>* owned);
  // Why the run cannot go on from a checkpoint here, before its file is read; empty if it may.
  QString resume_refusal(int id) const;
  // Queues the run to go on from its checkpoint at `from_step`, and notes from where and why.
  void enqueue_resume(int id, int from_step);
  // Queued, but not waiting in the queue: from an earlier session, or imported so (a
  // followed folder's queued runs are another program's to train).
  bool left_queued(const RunEntry& run) const;
  bool left_interrupted(const RunEntry& run) const;  // with a checkpoint to go on from
  void on_device(const Environment& found);
  void remove_run(int id);
  // Sets what `change` changes of the run's label and note, and saves its file.
  QString keep_words(int id, const std::function<void(TrainConfig&)>& change);
  void on_measured(const TrainConfig& config, double seconds_per_step);
  double seconds_per_flop(Estimate& basis) const;
  // What a speed measured with `threads` CPU threads per run becomes with the threads a
  // run gets now: the cores do the same work however the runs share them.
  double thread_scale(int threads, Estimate& basis) const;

  std::unique_ptr<RunArchive> archive_;
  RunStore* store_;
  TrainingQueue* queue_;
  std::optional<Environment> device_;
  std::vector<TrainConfig> waiting_starts_;                    // Start pressed before the device was known
  std::optional<std::pair<TrainConfig, int>> waiting_course_;  // the course likewise: base and seeds
  FolderFollower* follower_;
  QSet<int> sweep_runs_;  // runs start_sweep queued
  int side_by_side_choice_ = 0;
  // A few steps timed on the worker: (config, seconds per step); negative while asked, 0 if it failed.
  mutable std::optional<std::pair<TrainConfig, double>> timed_;
};

// What resuming `run` from its checkpoint at `checkpoint_step` does: from which step it
// goes on and, where that is before the last step its file holds (a killed process saves
// its points more often than its checkpoint), why it trains those steps again.
QString resume_note(const RunEntry& run, int checkpoint_step);

}  // namespace normlab::lab
