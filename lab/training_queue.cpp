#include "training_queue.h"

#include <utility>

#include "run_archive.h"
#include "run_store.h"
#include "sweep.h"
#include "train_worker.h"

namespace normlab::lab {

TrainingQueue::TrainingQueue(RunStore& store, QObject* parent)
    : QObject(parent), store_(store), worker_(new TrainWorker) {
  thread_.setObjectName(QStringLiteral("normlab-trainer"));
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  // Every connection below crosses threads, so Qt queues it to this object's thread.
  connect(worker_, &TrainWorker::device_found, this, &TrainingQueue::device_found);
  connect(worker_, &TrainWorker::measured, this, &TrainingQueue::measured);
  connect(worker_, &TrainWorker::stage_changed, this, [this](int id, const QString& stage) {
    if (id != running_id_) return;
    stage_ = stage;
    emit progress_changed();
  });
  connect(worker_, &TrainWorker::started, this, &TrainingQueue::on_started);
  connect(worker_, &TrainWorker::steps_done, this, &TrainingQueue::on_steps);
  connect(worker_, &TrainWorker::points_recorded, this, [this](int id, const std::vector<SeriesPoint>& points) {
    if (id == running_id_) store_.append_points(id, points);
  });
  connect(worker_, &TrainWorker::evaluated, this,
          [this](int id, const EvalMetrics& eval) { store_.append_eval(id, eval); });
  connect(worker_, &TrainWorker::finished, this, &TrainingQueue::on_finished);
  connect(worker_, &TrainWorker::failed, this, &TrainingQueue::on_failed);
  connect(worker_, &TrainWorker::save_failed, this, &TrainingQueue::save_failed);
  thread_.start();
}

TrainingQueue::~TrainingQueue() { shutdown(); }

void TrainingQueue::probe_device() {
  QMetaObject::invokeMethod(worker_, [worker = worker_] { worker->probe_device(); }, Qt::QueuedConnection);
}

void TrainingQueue::measure(const TrainConfig& config) {
  if (shut_down_) return;
  QMetaObject::invokeMethod(worker_, [worker = worker_, config] { worker->measure(config); }, Qt::QueuedConnection);
}

void TrainingQueue::enqueue(int run_id, bool resume) {
  if (shut_down_ || !store_.find(run_id)) return;
  pending_.append(run_id);
  if (resume) resuming_.insert(run_id);
  if (!busy()) start_next();
  emit progress_changed();
}

bool TrainingQueue::dequeue(int run_id) {
  const bool removed = pending_.removeOne(run_id);
  if (removed) resuming_.remove(run_id);
  if (removed) emit progress_changed();
  return removed;
}

void TrainingQueue::stop_current() {
  if (busy()) worker_->cancel_flag() = true;
}

QList<int> TrainingQueue::stop_all() {
  const QList<int> dropped = std::exchange(pending_, {});
  resuming_.clear();
  stop_current();
  emit progress_changed();
  return dropped;
}

void TrainingQueue::shutdown() {
  if (shut_down_) return;
  shut_down_ = true;
  pending_.clear();
  worker_->cancel_flag() = true;
  thread_.quit();  // takes effect once the run in progress has stopped at its next step
  thread_.wait();
}

void TrainingQueue::start_next() {
  while (!pending_.isEmpty() && !busy()) {
    const int id = pending_.takeFirst();
    const RunEntry* run = store_.find(id);
    if (!run) continue;
    running_id_ = id;
    stage_ = tr("Starting");
    // Reset here, before the run is posted, so a Stop pressed meanwhile is never lost.
    worker_->cancel_flag() = false;
    QMetaObject::invokeMethod(
        worker_, [worker = worker_, id, config = run->record.config, file = run->file, resume = resuming_.contains(id)] {
          worker->train(id, config, file, resume);
        },
        Qt::QueuedConnection);
    store_.set_status(id, RunStatus::Running);
    emit busy_changed(true);
  }
}

void TrainingQueue::on_started(int run_id, const RunRecord& header) {
  if (run_id != running_id_) return;
  token_rate_.reset();
  // A resumed run starts from its checkpoint's record: the points saved after it go.
  if (resuming_.contains(run_id)) store_.finish(run_id, header);
  store_.mark_started(run_id, header);
  emit progress_changed();
}

void TrainingQueue::on_steps(int run_id, const std::vector<StepMetrics>& steps) {
  if (run_id != running_id_ || steps.empty()) return;
  if (const RunEntry* run = store_.find(run_id)) {
    const StepMetrics& last = steps.back();
    const TrainConfig& c = run->record.config;
    for (const auto& s : steps) token_rate_.add(s.wall_s, double(c.batch_size) * c.model.context);
    seconds_per_flop_ = last.wall_s / (run_flops(c) * last.step / c.steps);
  }
  stage_.clear();
  store_.append_steps(run_id, steps);
  emit progress_changed();
}

void TrainingQueue::on_finished(int run_id, const RunRecord& run) {
  if (run_id != running_id_) return;
  store_.finish(run_id, run);
  run_ended();
}

void TrainingQueue::on_failed(int run_id, const QString& message) {
  if (run_id != running_id_) return;
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
  resuming_.clear();
  run_ended();
  emit run_failed(run_id, message, dropped);
}

void TrainingQueue::run_ended() {
  resuming_.remove(running_id_);
  running_id_ = 0;
  stage_.clear();
  ++finished_since_idle_;
  start_next();
  if (!busy()) {
    finished_since_idle_ = 0;
    emit busy_changed(false);
  }
  emit progress_changed();
}

QueueProgress TrainingQueue::progress() const {
  QueueProgress p;
  const RunEntry* run = store_.find(running_id_);
  if (!run) return p;
  const RunRecord& r = run->record;
  p.run_id = running_id_;
  p.run_number = finished_since_idle_ + 1;
  p.run_total = p.run_number + int(pending_.size());
  p.steps = r.config.steps;
  p.stage = stage_;
  p.tokens_per_s = token_rate_.value();
  if (!r.steps.empty()) {
    p.step = r.steps.back().step;
    p.lr = r.steps.back().lr;
  }
  if (seconds_per_flop_ > 0) {
    p.run_seconds_left = remaining_flops(r) * seconds_per_flop_;
    p.queue_seconds_left = p.run_seconds_left;
    for (int id : pending_) {
      if (const RunEntry* next = store_.find(id)) p.queue_seconds_left += remaining_flops(next->record) * seconds_per_flop_;
    }
  }
  return p;
}

}  // namespace normlab::lab
