#include "lesson.h"

#include <QDir>
#include <QFile>

#include "core/runs/presets.h"
#include "core/sweeps/sweep.h"
#include "core/system/atomic_file.h"

#include "lab.h"
#include "qstring.h"

namespace normlab::lab {

Lesson::Lesson(Lab& lab, QObject* parent) : QObject(parent), lab_(lab) {
  // An answer settles when a verdict changes, and a run on the baseline only when it is
  // done; a run added or removed changes which run answers a question.
  RunStore& store = lab_.store();
  for (auto signal :
       {&RunStore::verdict_changed, &RunStore::status_changed, &RunStore::run_added, &RunStore::run_removed}) {
    connect(&store, signal, this, [this] {
      if (begun()) settle();
    });
  }
  connect(&lab_, &Lab::device_found, this, [this] {
    if (auto base = std::exchange(waiting_base_, std::nullopt)) begin(*base);
  });
}

QString Lesson::file_in(const QString& runs_folder) {
  return QDir(runs_folder).filePath(QStringLiteral("lesson.state"));
}

bool Lesson::writable() const { return !lab_.read_only(); }

QString Lesson::load() {
  const QString file = file_in(lab_.archive().folder());
  if (!QFile::exists(file)) return {};
  try {
    state_ = lesson_from_json_text(read_whole_file(file.toStdString()));
  } catch (const std::exception& error) {
    state_ = {};
    problem_ = tr("The lesson kept in %1 could not be read (%2); a new lesson replaces it")
                   .arg(file, QString::fromUtf8(error.what()));
    return problem_;
  }
  if (!state_.left && writable()) open();
  else settle();
  emit changed();
  return {};
}

void Lesson::begin(const TrainConfig& base) {
  if (!lab_.device_known()) {  // the course's size depends on the device
    waiting_base_ = base;
    lab_.probe_device();
    emit changed();
    return;
  }
  begin_with(lab_.course_runs(base), to_string(lab_.course_scale()));
}

void Lesson::begin_with(const std::vector<TrainConfig>& course, const std::string& scale) {
  waiting_base_.reset();
  reused_.clear();
  state_ = new_lesson(course, scale);
  save();
  emit changed();
}

void Lesson::open() {
  if (!begun()) return;
  state_.left = false;
  if (writable()) {
    for (int i = 0; i < int(state_.questions.size()); ++i) {
      const LessonQuestion& q = state_.questions[std::size_t(i)];
      if (q.prediction && !q.outcome) start_run(i);
    }
  }
  settle();
  save();
  emit changed();
}

void Lesson::leave() {
  if (!begun()) return;
  state_.left = true;
  save();
  emit changed();
}

void Lesson::predict(LessonOutcome prediction) {
  if (!begun() || state_.at_summary() || !writable()) return;
  const int question = state_.current;
  LessonQuestion& q = state_.questions[std::size_t(question)];
  if (q.prediction) return;  // once: no changing it after the run has started
  q.prediction = prediction;
  save();  // the prediction first, so a crash while the run starts keeps it
  start_run(question);
  settle();
  emit changed();
}

void Lesson::start_run(int question) {
  const Lab::PointAnswer answer = lab_.answer_point(state_.questions[std::size_t(question)].config);
  if (answer.fate == Fate::Reuse) reused_.insert(question);
  else reused_.remove(question);
}

bool Lesson::can_go_on() const {
  return begun() && !state_.at_summary() && state_.questions[std::size_t(state_.current)].prediction.has_value();
}

void Lesson::go_on() {
  if (!can_go_on()) return;
  ++state_.current;
  save();
  emit changed();
}

void Lesson::ask_further(TrainConfig config) {
  if (!begun() || !state_.at_summary() || !writable()) return;
  config.name = default_run_name(config);
  LessonQuestion q;
  q.config = config;
  q.further = true;
  state_.questions.push_back(q);
  state_.current = int(state_.questions.size()) - 1;
  save();
  emit changed();
}

void Lesson::train_on(int question) {
  if (question < 0 || question >= int(state_.questions.size()) || !writable()) return;
  const LessonQuestion& q = state_.questions[std::size_t(question)];
  if (!q.prediction || q.outcome) return;
  start_run(question);
  settle();
  emit changed();
}

void Lesson::start_over() {
  if (!begun()) return;
  std::vector<TrainConfig> course;
  for (const LessonQuestion& q : state_.questions) {
    if (!q.further) course.push_back(q.config);
  }
  begin_with(course, state_.scale);
}

int Lesson::run_of(int question) const {
  if (question < 0 || question >= int(state_.questions.size())) return 0;
  const int found = find_run(state_.questions[std::size_t(question)].config, lab_.store().records());
  return found < 0 ? 0 : lab_.store().runs()[std::size_t(found)].id;
}

void Lesson::settle() {
  QList<int> settled;
  for (int i = 0; i < int(state_.questions.size()); ++i) {
    LessonQuestion& q = state_.questions[std::size_t(i)];
    if (!q.prediction || q.outcome) continue;
    const RunEntry* run = lab_.store().find(run_of(i));
    if (!run) continue;
    const std::optional<LessonOutcome> outcome = settled_outcome(run->verdict.verdict, run->record.status);
    if (!outcome) continue;
    q.outcome = outcome;
    q.verdict = info(run->verdict.verdict).name;
    q.verdict_step = run->verdict.since_step;
    q.sentence = run->verdict.sentence;
    q.run = run->record.config.name;
    settled << i;
  }
  if (settled.isEmpty()) return;
  save();
  for (const int i : settled) emit answered(i);
  emit changed();
}

void Lesson::save() {
  if (!writable()) return;
  try {
    write_file_atomically(file_in(lab_.archive().folder()).toStdString(), lesson_json_text(state_));
    problem_.clear();
  } catch (const std::exception& error) {
    problem_ = tr("The lesson could not be kept: %1").arg(QString::fromUtf8(error.what()));
  }
}

}  // namespace normlab::lab
