#include "lab.h"

#include <QFile>
#include <algorithm>

#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/runs/run_cost.h"
#include "core/runs/run_title.h"
#include "core/runs/seeds.h"
#include "core/sweeps/point_fate.h"
#include "core/training/checkpoint.h"
#include "core/training/side_by_side.h"
#include "core/training/trainer.h"

#include "qstring.h"

namespace normlab::lab {

Lab::Lab(const QString& runs_folder, QObject* parent)
    : QObject(parent),
      archive_(std::make_unique<RunArchive>(runs_folder)),
      store_(new RunStore(this)),
      queue_(new TrainingQueue(*store_, default_side_by_side("cpu"), this)),  // until the device is known
      follower_(new FolderFollower(*store_, FolderFollower::Watch::NotificationsAndPolling, this)) {
  connect(queue_, &TrainingQueue::progress_changed, this, &Lab::progress_changed);
  connect(queue_, &TrainingQueue::busy_changed, this, &Lab::busy_changed);
  connect(queue_, &TrainingQueue::save_failed, this, &Lab::save_failed);
  connect(queue_, &TrainingQueue::device_found, this, &Lab::on_device);
  connect(queue_, &TrainingQueue::measured, this, &Lab::on_measured);
  connect(queue_, &TrainingQueue::run_failed, this, [this](int id, const QString& message, const QList<int>& dropped) {
    for (const int gone : dropped) remove_run(gone);
    emit run_failed(id, message, int(dropped.size()));
  });
  // A sweep's run that ended, or was removed, no longer belongs to a sweep in progress.
  connect(store_, &RunStore::status_changed, this, [this](int id) {
    if (sweep_runs_.contains(id)) emit sweep_changed();
  });
}

Lab::~Lab() { shutdown(); }

void Lab::shutdown() {
  queue_->shutdown();
  archive_->release();
}

RunArchive::Restored Lab::restore() {
  RunArchive::Restored restored = archive_->restore();
  for (const auto& [record, file] : restored.runs) {
    const int id = store_->add(record, file);
    // A file from before shades were kept keeps the one it gets now, so that removing a
    // run never changes how the others look at the next start.
    if (record.config.shade < 0 && !read_only()) {
      try {
        RunArchive::write(store_->find(id)->record, file);
      } catch (const std::exception&) {
        // Drawn alike this time; the next save of the run keeps its shade.
      }
    }
  }
  return restored;
}

void Lab::probe_device() {
  if (device_known()) return;
  if (!nvidia_driver_present()) {
    on_device(describe_device("auto"));
    return;
  }
  queue_->probe_device();
}

void Lab::on_device(const Environment& found) {
  device_ = found;
  set_side_by_side(side_by_side_choice_);  // "auto" depends on the device
  emit device_found(found);
  for (const TrainConfig& config : std::exchange(waiting_starts_, {})) start_run(config);
  if (auto course = std::exchange(waiting_course_, std::nullopt))
    start_course_experiment(course->first, course->second);
}

TrainConfig Lab::fit_to_device(TrainConfig config) const {
  const TrainConfig full;
  const bool default_schedule = config.steps == full.steps && config.batch_size == full.batch_size &&
                                config.model.context == full.model.context &&
                                config.eval_interval == full.eval_interval;
  return default_schedule ? scaled(std::move(config), course_scale()) : config;
}

int Lab::queue_run(TrainConfig config) {
  if (read_only()) {
    emit note(tr("Nothing can train here: %1 owns the runs folder").arg(archive_->owner()));
    return 0;
  }
  if (config.name.empty()) config.name = default_run_name(config);
  config.name = store_->unique_name(qstr(config.name)).toStdString();
  config.shade = store_->shade_for(config);  // kept in its file: the same look after a restart
  RunRecord record;
  record.config = config;
  record.status = RunStatus::Queued;
  const QString file = archive_->new_path(qstr(config.name));
  try {
    RunArchive::write(record, file);  // so a run still queued when NormLab ends comes back
  } catch (const std::exception&) {
    // The worker reports a folder that refuses writes when it saves the run (once per run).
  }
  const int id = store_->add(record, file);
  queue_->enqueue(id);
  return id;
}

void Lab::start_run(const TrainConfig& config) {
  if (!device_known()) {  // its size may depend on the device; the look-up answers soon
    waiting_starts_.push_back(config);
    emit note(tr("Looking for a GPU first; the run starts as soon as the device is known"));
    return;
  }
  const int id = queue_run(fit_to_device(config));
  if (id && !queue_->is_running(id)) {
    emit note(tr("Queued \u201c%1\u201d").arg(qstr(store_->find(id)->record.config.name)));
  }
}

PointFate Lab::fate_of(const TrainConfig& config) const {
  return point_fate(config, store_->records(), [&](std::size_t i) {
    const QString refused = resume_refusal(store_->runs()[i].id);
    if (!refused.isEmpty()) return CheckpointAnswer{-1, refused.toStdString()};
    const RunEntry& run = store_->runs()[i];
    try {
      return CheckpointAnswer{resumable_checkpoint(checkpoint_path(run.file.toStdString()), run.record.config).step,
                              ""};
    } catch (const std::exception& error) {
      return CheckpointAnswer{-1, error.what()};
    }
  });
}

Lab::PointAnswer Lab::answer_point(const TrainConfig& config) {
  const PointFate fate = fate_of(config);
  PointAnswer answer{fate.fate, fate.run < 0 ? 0 : store_->runs()[std::size_t(fate.run)].id, false};
  switch (fate.fate) {
    case Fate::Reuse: break;
    case Fate::Wait:
      // Left queued by an earlier session: it joins the queue now. One queued or training
      // already is someone else's (a run by hand, say) and is left alone.
      if (!queue_->is_queued(answer.run)) {
        queue_->enqueue(answer.run);
        answer.joined = true;
      }
      break;
    case Fate::Resume:
      enqueue_resume(answer.run, fate.from_step);
      answer.joined = true;
      break;
    case Fate::Train:
      answer.run = queue_run(config);
      answer.joined = answer.run != 0;
      break;
  }
  return answer;
}

Lab::Started Lab::train_missing(const std::vector<TrainConfig>& configs, QSet<int>* owned) {
  Started started;
  for (const TrainConfig& config : configs) {
    const PointAnswer answer = answer_point(config);
    if (answer.joined && owned) owned->insert(answer.run);
    switch (answer.fate) {
      case Fate::Reuse: ++started.reused; break;
      case Fate::Wait: ++started.waiting; break;
      case Fate::Resume: ++started.queued; break;
      case Fate::Train:
        if (answer.run) ++started.queued;
        break;
    }
  }
  return started;
}

std::vector<TrainConfig> Lab::course_runs(const TrainConfig& base) const {
  TrainConfig course;
  copy_section(Section::DeviceAndData, base, course);
  course.seed = base.seed;
  return workshop_runs(scaled(course, course_scale()));
}

void Lab::start_course_experiment(const TrainConfig& base, int seeds) {
  if (!device_known()) {
    waiting_course_ = {base, seeds};
    return;
  }
  const Started s = train_missing(repeat_over_seeds(course_runs(base), seeds), nullptr);
  QString text = tr("Course experiment: %n run(s) queued", nullptr, s.queued + s.waiting);
  if (s.reused > 0) text += tr("; %n already trained with the same settings, reused", nullptr, s.reused);
  emit note(text);
}

void Lab::set_side_by_side(int runs) {
  side_by_side_choice_ = runs;
  queue_->set_side_by_side(runs > 0 ? runs : auto_side_by_side());
}

int Lab::auto_side_by_side() const { return default_side_by_side(on_gpu() ? "cuda" : "cpu"); }

void Lab::stop_run() { queue_->stop_running(); }

void Lab::stop_runs(const QList<int>& ids) {
  for (const int id : ids) queue_->stop(id);
}

void Lab::stop_all() {
  for (const int id : queue_->stop_all()) remove_run(id);
}

bool Lab::has_checkpoint(int id) const {
  const RunEntry* run = store_->find(id);
  return run && !run->file.isEmpty() && progress_of(run->record.status) == RunProgress::CutShort &&
         QFile::exists(RunArchive::checkpoint_of(run->file));
}

void Lab::drop_checkpoints(const QList<int>& ids) {
  if (read_only()) return;
  for (const int id : ids) {
    const RunEntry* run = store_->find(id);
    if (run && !run->file.isEmpty() && !queue_->is_queued(id)) RunArchive::drop_checkpoint(run->file);
  }
}

QString Lab::resume_refusal(int id) const {
  const RunEntry* run = store_->find(id);
  if (!run || read_only() || queue_->is_queued(id)) return tr("this run cannot be resumed here");
  if (progress_of(run->record.status) != RunProgress::CutShort) {
    return tr("only a stopped, interrupted or failed run goes on from a checkpoint");
  }
  if (run->file.isEmpty()) return tr("this run has no file in the runs folder, so no checkpoint");
  return {};
}

void Lab::enqueue_resume(int id, int from_step) {
  if (const RunEntry* run = store_->find(id)) emit note(resume_note(*run, from_step));  // from where, and why
  store_->set_status(id, RunStatus::Queued);
  queue_->enqueue(id, /*resume=*/true);
}

QString Lab::resume_run(int id) {
  if (const QString refused = resume_refusal(id); !refused.isEmpty()) return refused;
  const RunEntry* run = store_->find(id);
  int from = 0;
  try {
    from = resumable_checkpoint(checkpoint_path(run->file.toStdString()), run->record.config).step;
  } catch (const std::exception& error) {
    return QString::fromStdString(error.what());
  }
  enqueue_resume(id, from);
  return {};
}

QString resume_note(const RunEntry& run, int checkpoint_step) {
  const QString name = qstr(display_name(run.record.config));
  const int reached = run.record.steps.empty() ? 0 : run.record.steps.back().step;
  if (checkpoint_step >= reached) {
    return Lab::tr("\u201c%1\u201d goes on from step %2, where it was cut short").arg(name).arg(checkpoint_step);
  }
  return Lab::tr(
             "\u201c%1\u201d goes back to its checkpoint at step %2 and trains again from there: the %3 steps "
             "after it, to step %4, were saved in its file but not in a checkpoint before it was cut short")
      .arg(name)
      .arg(checkpoint_step)
      .arg(reached - checkpoint_step)
      .arg(reached);
}

bool Lab::left_queued(const RunEntry& run) const {
  return run.record.status == RunStatus::Queued && !queue_->is_queued(run.id) && !run.followed;
}

bool Lab::left_interrupted(const RunEntry& run) const {
  return run.record.status == RunStatus::Interrupted && !run.followed && !queue_->is_queued(run.id) &&
         has_checkpoint(run.id);
}

bool Lab::has_runs_to_continue() const {
  return !read_only() && std::any_of(store_->runs().begin(), store_->runs().end(),
                                     [this](const RunEntry& run) { return left_queued(run) || left_interrupted(run); });
}

QStringList Lab::continue_runs() {
  QStringList refused;
  if (read_only()) return refused;
  std::vector<int> ids;  // resume_run changes a run's status: decide first
  for (const RunEntry& run : store_->runs()) {
    if (left_queued(run) || left_interrupted(run)) ids.push_back(run.id);
  }
  for (const int id : ids) {
    const RunEntry* run = store_->find(id);
    if (run->record.status == RunStatus::Queued) {
      queue_->enqueue(id);
    } else if (const QString why = resume_run(id); !why.isEmpty()) {
      refused << tr("\u201c%1\u201d: %2").arg(qstr(display_name(run->record.config)), why);
    }
  }
  return refused;
}

Lab::Imported Lab::import_runs(const QStringList& files) {
  Imported imported;
  std::vector<RunRecord> records;
  for (const QString& file : files) {
    try {
      records.push_back(read_json(file.toStdString()));
    } catch (const std::exception& error) {
      imported.problems << QString::fromStdString(error.what());
    }
  }
  if (!imported.problems.isEmpty()) return imported;
  for (std::size_t i = 0; i < records.size(); ++i) {
    RunRecord& record = records[i];
    const auto twin = std::find_if(store_->runs().begin(), store_->runs().end(), [&](const RunEntry& open) {
      return same_experiment(open.record.config, record.config);
    });
    if (twin != store_->runs().end()) {
      const auto open_copy = std::find_if(twin, store_->runs().end(), [&](const RunEntry& open) {
        return same_experiment(open.record.config, record.config) && same_points(open.record, record);
      });
      if (open_copy != store_->runs().end()) {
        imported.refused << tr("\u201c%1\u201d is already open").arg(qstr(display_name(open_copy->record.config)));
        continue;
      }
      record.config.label = store_->copy_label(qstr(display_name(twin->record.config))).toStdString();
    }
    record.config.name = store_->unique_name(qstr(record.config.name)).toStdString();
    record.config.shade = store_->shade_for(record.config);  // its look among these runs, not where it came from
    mark_interrupted(record, "the file was saved while the run trained; it ends there");
    QString file;
    if (read_only()) {
      imported.unsaved << tr("%1 owns the runs folder").arg(archive_->owner());
    } else {
      file = archive_->new_path(qstr(record.config.name));
      try {
        RunArchive::write(record, file);  // a copy, so it comes back next time
        // Its weights too, so it can be asked to continue text; without them it still shows.
        const QString weights = RunArchive::weights_of(files[int(i)]);
        if (QFile::exists(weights)) QFile::copy(weights, RunArchive::weights_of(file));
      } catch (const std::exception& error) {
        imported.unsaved << QString::fromStdString(error.what());
        file.clear();
      }
    }
    store_->add(record, file);
    ++imported.added;
  }
  return imported;
}

QString Lab::keep_words(int id, const std::function<void(TrainConfig&)>& change) {
  const RunEntry* run = store_->find(id);
  if (!run) return {};
  const QString name = qstr(display_name(run->record.config));
  if (queue_->is_running(id))
    return tr("\u201c%1\u201d is training; it can be renamed or noted when it ends").arg(name);
  if (run->followed) return tr("\u201c%1\u201d is another program's run, shown from its folder").arg(name);
  if (read_only()) return tr("%1 owns the runs folder").arg(archive_->owner());
  RunRecord record = run->record;
  change(record.config);
  if (!run->file.isEmpty()) {
    try {
      RunArchive::write(record, run->file);
    } catch (const std::exception& error) {
      return QString::fromStdString(error.what());  // the store keeps what the file says
    }
  }
  store_->set_words(id, record.config.label, record.config.note);
  return {};
}

QString Lab::rename_run(int id, const QString& label) {
  return keep_words(id, [&](TrainConfig& config) { config.label = label.trimmed().toStdString(); });
}

QString Lab::set_note(int id, const QString& note) {
  return keep_words(id, [&](TrainConfig& config) { config.note = note.toStdString(); });
}

bool Lab::removable(int id) const { return store_->find(id) && !queue_->is_running(id) && !read_only(); }

void Lab::remove_run(int id) {
  const RunEntry* run = store_->find(id);
  if (!run) return;
  queue_->dequeue(id);
  archive_->remove(run->file);
  const bool in_sweep = sweep_runs_.remove(id);
  store_->remove(id);
  if (in_sweep) emit sweep_changed();
}

void Lab::remove_runs(const QList<int>& ids) {
  for (const int id : ids) {
    if (removable(id)) remove_run(id);
  }
}

void Lab::start_sweep(const Sweep& sweep) {
  std::vector<TrainConfig> configs;
  for (const SweepRun& run : expand(sweep)) configs.push_back(run.config);
  const Started s = train_missing(configs, &sweep_runs_);
  emit note(tr("Sweep: %n run(s) queued", nullptr, s.queued + s.waiting));
  emit sweep_changed();
}

bool Lab::sweep_in_progress() const {
  return std::any_of(sweep_runs_.begin(), sweep_runs_.end(), [this](int id) { return queue_->is_queued(id); });
}

void Lab::stop_sweep() {
  for (const int id : std::exchange(sweep_runs_, {})) {
    if (queue_->is_running(id)) queue_->stop(id);
    else if (queue_->is_queued(id)) remove_run(id);  // never started: nothing of it to keep
  }
  emit note(tr("Sweep stopped; its finished runs stay"));
  emit sweep_changed();
}

double Lab::thread_scale(int threads, Estimate& basis) const {
  const int now = threads_per_run(queue_->side_by_side());
  if (on_gpu() || threads <= 0 || threads == now) return 1;
  basis.measured_threads = threads;
  basis.threads_now = now;
  return double(threads) / now;
}

// Seconds per flop of one run among those the queue trains side by side: the model the
// queue's own estimate follows once they train. A speed from a run with more threads (the
// course's last run, alone on every core; steps timed alone) is scaled to a run's share.
double Lab::seconds_per_flop(Estimate& basis) const {
  if (queue_->seconds_per_flop() > 0) {
    basis.basis = Estimate::Basis::ThisSession;
    return queue_->seconds_per_flop() * thread_scale(queue_->measured_threads(), basis);
  }
  const std::string device = on_gpu() ? "cuda" : "cpu";
  for (auto it = store_->runs().rbegin(); it != store_->runs().rend(); ++it) {
    const RunRecord& r = it->record;
    if (r.status == RunStatus::Done && !r.steps.empty() && r.environment.device == device &&
        r.steps.back().step == r.config.steps && r.steps.back().wall_s > 0) {
      basis.basis = Estimate::Basis::FinishedRun;
      basis.reference = r.config.name;
      basis.reference_seconds = r.steps.back().wall_s;
      basis.reference_steps = r.config.steps;
      return r.steps.back().wall_s / run_flops(r.config) * thread_scale(r.environment.threads, basis);
    }
  }
  if (timed_ && timed_->second > 0) {
    const auto& [config, per_step] = *timed_;
    basis.basis = Estimate::Basis::TimedSteps;
    basis.ms_per_step = per_step * 1000;
    basis.timed_layers = config.model.layers;
    return per_step / step_flops(config) * thread_scale(config.threads > 0 ? config.threads : cpu_threads(), basis);
  }
  return 0;
}

Estimate Lab::estimate(const std::vector<TrainConfig>& runs, bool may_time) const {
  Estimate e;
  const double per_flop = seconds_per_flop(e);
  if (per_flop > 0) {
    e.seconds = 0;
    for (const TrainConfig& run : runs) e.seconds += run_flops(run) * per_flop;
  } else if (may_time && !runs.empty() && !queue_->busy()) {
    // Nothing to go by: time a few steps on the worker (about a second), once per device.
    const TrainConfig& first = runs.front();
    const bool asked = timed_ && timed_->first.device == first.device && timed_->first.threads == first.threads;
    if (!asked) {
      timed_ = {first, -1};
      queue_->measure(first);
    }
    e.timing = timed_->second < 0;
  }
  return e;
}

void Lab::on_measured(const TrainConfig& config, double seconds_per_step) {
  if (timed_ && timed_->second < 0) timed_ = {config, std::max(seconds_per_step, 0.0)};  // 0: it failed
  emit sweep_changed();
}

SweepTime Lab::sweep_time(const SweepStanding& standing, bool may_time) const {
  // The sweep's runs not in the queue yet join it at its end; those that go on from a
  // checkpoint cost what is left of them.
  std::vector<TrainConfig> unqueued = standing.to_train;
  std::vector<const RunRecord*> resumed;
  for (const int id : standing.pending) {
    if (!queue_->is_queued(id)) unqueued.push_back(store_->find(id)->record.config);
  }
  for (const int id : standing.to_resume) resumed.push_back(&store_->find(id)->record);
  std::vector<TrainConfig> timed = unqueued;
  for (const RunRecord* run : resumed) timed.push_back(run->config);
  SweepTime time;
  time.total = estimate(timed, may_time);
  if (time.total.seconds < 0) return time;
  Estimate basis;
  const double per_flop = seconds_per_flop(basis);
  const auto is_sweeps = [&](int id) {
    return std::find(standing.pending.begin(), standing.pending.end(), id) != standing.pending.end();
  };
  // When the sweep's last run ends, side by side as the queue trains them: with the runs
  // queued before its own, and (for what they cost it) without them.
  const auto sweep_end = [&](bool with_others) {
    std::vector<double> running, waiting;
    std::vector<bool> sweeps;
    for (const int id : queue_->running()) {
      if (!with_others && !is_sweeps(id)) continue;
      running.push_back(remaining_flops(store_->find(id)->record) * per_flop);
      sweeps.push_back(is_sweeps(id));
    }
    for (const int id : queue_->pending()) {
      if (!with_others && !is_sweeps(id)) continue;
      waiting.push_back(remaining_flops(store_->find(id)->record) * per_flop);
      sweeps.push_back(is_sweeps(id));
    }
    for (const TrainConfig& config : unqueued) {
      waiting.push_back(run_flops(config) * per_flop);
      sweeps.push_back(true);
    }
    for (const RunRecord* run : resumed) {
      waiting.push_back(remaining_flops(*run) * per_flop);
      sweeps.push_back(true);
    }
    const std::vector<double> ends = finish_times(running, waiting, queue_->side_by_side());
    double last = 0;
    for (std::size_t i = 0; i < ends.size(); ++i) {
      if (sweeps[i]) last = std::max(last, ends[i]);
    }
    return last;
  };
  time.total.seconds = sweep_end(true);
  time.ahead_seconds = time.total.seconds - sweep_end(false);
  return time;
}

}  // namespace normlab::lab
