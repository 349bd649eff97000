#include "run_store.h"

#include <algorithm>
#include <utility>

#include "core/runs/palette.h"
#include "core/runs/run_text.h"
#include "core/runs/run_title.h"

#include "qstring.h"

namespace normlab::lab {

RunStore::RunStore(QObject* parent) : QObject(parent) {}

int RunStore::shade_for(const TrainConfig& config) const {
  std::vector<const TrainConfig*> shown;
  for (const RunEntry& run : runs_) shown.push_back(&run.record.config);
  return next_shade(config, shown);
}

int RunStore::add(RunRecord record, const QString& file, bool followed) {
  // The shade its file keeps, so that it looks the same after a restart whatever was
  // removed meanwhile; another program's run (followed) gets one here.
  if (followed || record.config.shade < 0) record.config.shade = shade_for(record.config);
  const int id = next_id_++;
  emit run_about_to_be_added(int(runs_.size()));
  runs_.push_back({id, std::move(record), true, file, followed});
  runs_.back().verdict = judge(runs_.back().record);
  emit run_added(id);
  return id;
}

void RunStore::remove(int id) {
  const int row = row_of(id);
  if (row < 0) return;
  emit run_about_to_be_removed(row);
  runs_.erase(runs_.begin() + row);
  emit run_removed(id);
}

const RunEntry* RunStore::find(int id) const {
  auto it = std::find_if(runs_.begin(), runs_.end(), [id](const RunEntry& r) { return r.id == id; });
  return it == runs_.end() ? nullptr : &*it;
}

RunEntry* RunStore::entry(int id) { return const_cast<RunEntry*>(std::as_const(*this).find(id)); }

void RunStore::rejudge(RunEntry& run) {
  RunVerdict now = judge(run.record);
  const bool moved = now.verdict != run.verdict.verdict || now.since_step != run.verdict.since_step;
  run.verdict = std::move(now);
  if (moved) emit verdict_changed(run.id);
}

int RunStore::row_of(int id) const {
  for (std::size_t row = 0; row < runs_.size(); ++row) {
    if (runs_[row].id == id) return int(row);
  }
  return -1;
}

int RunStore::id_at(int row) const { return row >= 0 && row < int(runs_.size()) ? runs_[std::size_t(row)].id : 0; }

QString RunStore::unique_name(const QString& wanted) const {
  const std::string base = wanted.toStdString();
  return qstr(first_free_name([&](int n) { return n == 1 ? base : base + " (" + std::to_string(n) + ")"; },
                              [this](const std::string& name) {
                                return std::any_of(runs_.begin(), runs_.end(),
                                                   [&](const RunEntry& r) { return r.record.config.name == name; });
                              }));
}

std::vector<const RunRecord*> RunStore::records() const {
  std::vector<const RunRecord*> records;
  for (const RunEntry& run : runs_) records.push_back(&run.record);
  return records;
}

QString RunStore::copy_label(const QString& shown) const {
  const std::string base = shown.toStdString();
  return qstr(first_free_name([&](int n) { return n == 1 ? base : base + " (copy " + std::to_string(n) + ")"; },
                              [this](const std::string& label) {
                                return std::any_of(runs_.begin(), runs_.end(), [&](const RunEntry& r) {
                                  return display_name(r.record.config) == label;
                                });
                              }));
}

void RunStore::set_words(int id, const std::string& label, const std::string& note) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record.config.label = label;
  run->record.config.note = note;
  emit appearance_changed(id);
}

void RunStore::set_visible(int id, bool visible) {
  RunEntry* run = entry(id);
  if (!run || run->visible == visible) return;
  run->visible = visible;
  emit appearance_changed(id);
}

void RunStore::mark_started(int id, const RunRecord& header) {
  RunEntry* run = entry(id);
  if (!run) return;
  RunRecord& r = run->record;
  r.environment = header.environment;
  r.parameters = header.parameters;
  r.train_tokens = header.train_tokens;
  r.heldout_tokens = header.heldout_tokens;
  r.baseline_loss = header.baseline_loss;
  r.text = header.text;  // the prompts and references; a resumed run's text up to its step
  r.status = RunStatus::Running;
  r.message.clear();
  rejudge(*run);
  emit status_changed(id);
  emit points_changed(id);  // the baseline is known now
  emit text_changed(id);
}

void RunStore::append_steps(int id, const std::vector<StepMetrics>& steps) {
  RunEntry* run = entry(id);
  if (!run || steps.empty()) return;
  run->record.steps.insert(run->record.steps.end(), steps.begin(), steps.end());
  emit points_changed(id);
}

void RunStore::append_eval(int id, const EvalMetrics& eval) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record.evals.push_back(eval);
  rejudge(*run);
  emit points_changed(id);
}

void RunStore::append_points(int id, const std::vector<SeriesPoint>& points) {
  RunEntry* run = entry(id);
  if (!run || points.empty()) return;
  for (const SeriesPoint& point : points) run->record.add_point(point);
  rejudge(*run);  // the evidence: context use, the layers' gradients
  emit points_changed(id);
}

void RunStore::append_text(int id, const TextSample& text) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record.text.samples.push_back(text);
  emit text_changed(id);
}

void RunStore::finish(int id, const RunRecord& record) {
  RunEntry* run = entry(id);
  if (!run) return;
  const int shade = run->record.config.shade;  // a checkpoint's record may be older than its shade
  run->record = record;
  run->record.config.shade = shade;
  rejudge(*run);
  emit status_changed(id);
  emit points_changed(id);
  emit text_changed(id);
}

void RunStore::set_status(int id, RunStatus status, const QString& message) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record.status = status;
  run->record.message = message.toStdString();
  rejudge(*run);
  emit status_changed(id);
}

}  // namespace normlab::lab
