#include "training_queue.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/runs/run_cost.h"
#include "core/sweeps/sweep.h"
#include "core/training/side_by_side.h"

#include "run_archive.h"
#include "run_store.h"
#include "train_worker.h"

namespace normlab::lab {

TrainingQueue::TrainingQueue(RunStore& store, int side_by_side, QObject* parent)
    : QObject(parent), store_(store), side_by_side_(std::max(1, side_by_side)) {
  add_slot();  // the device look-up and timings need a worker before any run
}

TrainingQueue::~TrainingQueue() { shutdown(); }

TrainingQueue::Slot& TrainingQueue::add_slot() {
  auto& slot = *slots_.emplace_back(std::make_unique<Slot>());
  slot.thread.setObjectName(QStringLiteral("normlab-trainer-%1").arg(slots_.size()));
  slot.worker = new TrainWorker;
  TrainWorker* worker = slot.worker;
  worker->moveToThread(&slot.thread);
  connect(&slot.thread, &QThread::finished, worker, &QObject::deleteLater);
  // Every connection below crosses threads, so Qt queues it to this object's thread. Each
  // signal names its run: a stopped run's last words may arrive after its slot moved on.
  connect(worker, &TrainWorker::device_found, this, &TrainingQueue::device_found);
  connect(worker, &TrainWorker::measured, this, &TrainingQueue::measured);
  connect(worker, &TrainWorker::stage_changed, this, [this](int id, const QString& stage) {
    if (Slot* running = slot_of(id)) {
      running->stage = stage;
      emit progress_changed();
    }
  });
  connect(worker, &TrainWorker::started, this, &TrainingQueue::on_started);
  connect(worker, &TrainWorker::steps_done, this, &TrainingQueue::on_steps);
  connect(worker, &TrainWorker::points_recorded, this, [this](int id, const std::vector<SeriesPoint>& points) {
    if (slot_of(id)) store_.append_points(id, points);
  });
  connect(worker, &TrainWorker::evaluated, this,
          [this](int id, const EvalMetrics& eval) { store_.append_eval(id, eval); });
  connect(worker, &TrainWorker::text_recorded, this,
          [this](int id, const TextSample& text) { store_.append_text(id, text); });
  connect(worker, &TrainWorker::finished, this, &TrainingQueue::on_finished);
  connect(worker, &TrainWorker::failed, this, &TrainingQueue::on_failed);
  connect(worker, &TrainWorker::save_failed, this, &TrainingQueue::save_failed);
  slot.thread.start();
  return slot;
}

TrainingQueue::Slot* TrainingQueue::slot_of(int run_id) {
  return const_cast<Slot*>(std::as_const(*this).slot_of(run_id));
}

const TrainingQueue::Slot* TrainingQueue::slot_of(int run_id) const {
  if (run_id == 0) return nullptr;
  for (const auto& slot : slots_) {
    if (slot->run_id == run_id) return slot.get();
  }
  return nullptr;
}

bool TrainingQueue::is_running(int run_id) const { return slot_of(run_id) != nullptr; }

QList<int> TrainingQueue::running() const {
  std::vector<const Slot*> busy;
  for (const auto& slot : slots_) {
    if (slot->run_id) busy.push_back(slot.get());
  }
  std::sort(busy.begin(), busy.end(), [](const Slot* a, const Slot* b) { return a->started < b->started; });
  QList<int> ids;
  for (const Slot* slot : busy) ids << slot->run_id;
  return ids;
}

void TrainingQueue::probe_device() {
  QMetaObject::invokeMethod(
      slots_.front()->worker, [worker = slots_.front()->worker] { worker->probe_device(); }, Qt::QueuedConnection);
}

void TrainingQueue::measure(const TrainConfig& config) {
  if (shut_down_) return;
  QMetaObject::invokeMethod(
      slots_.front()->worker, [worker = slots_.front()->worker, config] { worker->measure(config); },
      Qt::QueuedConnection);
}

void TrainingQueue::set_side_by_side(int runs) {
  side_by_side_ = std::max(1, runs);
  start_next();
  emit progress_changed();
}

void TrainingQueue::enqueue(int run_id, bool resume) {
  if (shut_down_ || !store_.find(run_id)) return;
  pending_.append(run_id);
  if (resume) resuming_.insert(run_id);
  start_next();
  emit progress_changed();
}

bool TrainingQueue::dequeue(int run_id) {
  const bool removed = pending_.removeOne(run_id);
  if (removed) resuming_.remove(run_id);
  if (removed) emit progress_changed();
  return removed;
}

void TrainingQueue::stop(int run_id) {
  if (Slot* slot = slot_of(run_id)) slot->worker->cancel_flag() = true;
}

void TrainingQueue::stop_running() {
  for (const int id : running()) stop(id);
}

QList<int> TrainingQueue::stop_all() {
  const QList<int> dropped = std::exchange(pending_, {});
  for (const int id : dropped) resuming_.remove(id);
  stop_running();
  emit progress_changed();
  return dropped;
}

void TrainingQueue::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  pending_.clear();
  for (auto& slot : slots_) {
    slot->worker->closing_flag() = true;  // cut short, not stopped: Continue takes it up again
    slot->worker->cancel_flag() = true;
    slot->thread.quit();  // takes effect once the run in progress has stopped at its next step
  }
  for (auto& slot : slots_) slot->thread.wait();
}

void TrainingQueue::start_next() {
  const bool was_busy = busy();
  while (!shut_down_ && !pending_.isEmpty() && running().size() < side_by_side_) {
    const int id = pending_.takeFirst();
    const RunEntry* run = store_.find(id);
    if (!run) continue;
    auto free = std::find_if(slots_.begin(), slots_.end(), [](const auto& slot) { return slot->run_id == 0; });
    Slot& slot = free != slots_.end() ? **free : add_slot();
    slot.run_id = id;
    slot.started = ++starts_;
    slot.stage = tr("Starting");
    slot.token_rate.reset();
    // Reset here, before the run is posted, so a Stop pressed meanwhile is never lost.
    slot.worker->cancel_flag() = false;
    TrainConfig config = run->record.config;
    if (config.threads == 0) config.threads = threads_per_run(side_by_side_);
    QMetaObject::invokeMethod(
        slot.worker,
        [worker = slot.worker, id, config, file = run->file, resume = resuming_.contains(id)] {
          worker->train(id, config, file, resume);
        },
        Qt::QueuedConnection);
    store_.set_status(id, RunStatus::Running);
  }
  if (!was_busy && busy()) emit busy_changed(true);
}

void TrainingQueue::on_started(int run_id, const RunRecord& header) {
  Slot* slot = slot_of(run_id);
  if (!slot) return;
  // A resumed run's speed is that of its steps from here on, not of those before.
  slot->pace = StepPace::of(header);
  slot->token_rate.reset(slot->pace.start_wall_s());
  // A resumed run starts from its checkpoint's record: the points saved after it go.
  if (resuming_.contains(run_id)) store_.finish(run_id, header);
  store_.mark_started(run_id, header);
  emit progress_changed();
}

void TrainingQueue::on_steps(int run_id, const std::vector<StepMetrics>& steps) {
  Slot* slot = slot_of(run_id);
  if (!slot || steps.empty()) return;
  if (const RunEntry* run = store_.find(run_id)) {
    const StepMetrics& last = steps.back();
    const TrainConfig& c = run->record.config;
    for (const auto& s : steps) slot->token_rate.add(s.wall_s, double(c.batch_size) * c.model.context);
    const double step_s = slot->pace.seconds_per_step(last.step, last.wall_s);
    if (std::isfinite(step_s)) seconds_per_flop_ = step_s / (run_flops(c) / c.steps);
    measured_threads_ = run->record.environment.threads;
  }
  slot->stage.clear();
  store_.append_steps(run_id, steps);
  emit progress_changed();
}

void TrainingQueue::on_finished(int run_id, const RunRecord& run) {
  Slot* slot = slot_of(run_id);
  if (!slot) return;
  store_.finish(run_id, run);
  run_ended(*slot);
}

void TrainingQueue::on_failed(int run_id, const QString& message) {
  Slot* slot = slot_of(run_id);
  if (!slot) return;
  store_.set_status(run_id, RunStatus::Failed, message);
  // Its file still says queued (or running): it must not come back so.
  if (const RunEntry* run = store_.find(run_id); run && !run->file.isEmpty()) {
    try {
      RunArchive::write(run->record, run->file);
    } catch (const std::exception& error) {
      emit save_failed(run_id, QString::fromStdString(error.what()));
    }
  }
  const QList<int> dropped = std::exchange(pending_, {});
  for (const int id : dropped) resuming_.remove(id);
  run_ended(*slot);
  emit run_failed(run_id, message, dropped);
}

void TrainingQueue::run_ended(Slot& slot) {
  resuming_.remove(slot.run_id);
  slot.run_id = 0;
  slot.stage.clear();
  ++ended_since_idle_;
  start_next();
  if (!busy()) {
    ended_since_idle_ = 0;
    emit busy_changed(false);
  }
  emit progress_changed();
}

QueueProgress TrainingQueue::progress() const {
  QueueProgress p;
  std::vector<double> running_left, pending_seconds;
  for (const int id : running()) {
    const RunEntry* run = store_.find(id);
    if (!run) continue;
    const RunRecord& r = run->record;
    const Slot& slot = *slot_of(id);
    ActiveRun one;
    one.run_id = id;
    one.steps = r.config.steps;
    one.stage = slot.stage;
    one.tokens_per_s = slot.token_rate.value();
    if (!r.steps.empty()) {
      one.step = r.steps.back().step;
      one.lr = r.steps.back().lr;
    }
    if (seconds_per_flop_ > 0) one.seconds_left = remaining_flops(r) * seconds_per_flop_;
    running_left.push_back(one.seconds_left);
    p.tokens_per_s += one.tokens_per_s;
    p.running.push_back(one);
  }
  if (p.running.empty()) return p;
  p.ended = ended_since_idle_;
  p.total = p.ended + int(p.running.size() + pending_.size());
  if (seconds_per_flop_ > 0) {
    for (const int id : pending_) {
      if (const RunEntry* next = store_.find(id))
        pending_seconds.push_back(remaining_flops(next->record) * seconds_per_flop_);
    }
    const std::vector<double> ends = finish_times(running_left, pending_seconds, side_by_side_);
    p.seconds_left = *std::max_element(ends.begin(), ends.end());
  }
  return p;
}

}  // namespace normlab::lab
