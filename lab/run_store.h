#pragma once
// Every run the lab knows: trained here, queued, restored or imported. Data only: the
// window's run table and charts read it and follow its signals; the lab and its queue
// change it. Files are the archive's business, colours the window's (from the record's
// config.shade, which every run here has).
#include <QObject>
#include <QString>
#include <vector>

#include "core/runs/run_record.h"
#include "core/runs/verdict.h"

namespace normlab::lab {

struct RunEntry {
  int id = 0;        // unique for the session, never reused
  RunRecord record;  // record.config.name is the run's name, record.config.shade its look
  bool visible = true;
  QString file;           // the app's own copy in its runs folder; empty if none
  bool followed = false;  // shown from a followed folder: another program's run, never trained here
  RunVerdict verdict;     // what the record says it is doing (verdict.h), judged again as it changes
};

class RunStore : public QObject {
  Q_OBJECT
 public:
  explicit RunStore(QObject* parent = nullptr);

  // Adds a run at the end, in the shade its record keeps (config.shade), else in its seed
  // group's or the least used of its hue, which it then keeps; returns its id.
  int add(RunRecord record, const QString& file, bool followed = false);
  // The shade a run of `config` added now would take.
  int shade_for(const TrainConfig& config) const;
  void remove(int id);

  const std::vector<RunEntry>& runs() const { return runs_; }
  const RunEntry* find(int id) const;
  int row_of(int id) const;  // -1 if unknown
  int id_at(int row) const;  // 0 if none
  // `wanted`, or "wanted (2)", "wanted (3)"… so that names, and so file names, stay distinct.
  QString unique_name(const QString& wanted) const;
  // "shown (copy 2)", "shown (copy 3)"…: the first that no run's display name is.
  QString copy_label(const QString& shown) const;
  // The records, in the store's order, for the Qt-free sweep and seed code.
  std::vector<const RunRecord*> records() const;

  void set_visible(int id, bool visible);
  void set_words(int id, const std::string& label, const std::string& note);  // the user's (Lab::rename_run)
  // Updates from the trainer, in the order they happen.
  void mark_started(int id, const RunRecord& header);  // environment, counts and baseline
  void append_steps(int id, const std::vector<StepMetrics>& steps);
  void append_eval(int id, const EvalMetrics& eval);
  void append_points(int id, const std::vector<SeriesPoint>& points);  // any named series
  void append_text(int id, const TextSample& text);
  void finish(int id, const RunRecord& run);  // the trainer's final record
  void set_status(int id, RunStatus status, const QString& message = {});

 signals:
  void run_about_to_be_added(int row);
  void run_added(int id);
  void run_about_to_be_removed(int row);
  void run_removed(int id);
  void points_changed(int id);      // new steps or evaluations, or the record replaced
  void appearance_changed(int id);  // shown or hidden, renamed or noted
  void status_changed(int id);
  void text_changed(int id);  // its text: prompts and references as it starts, then each evaluation's
  // Its verdict became another, or took hold at another step: once per change, not per step.
  void verdict_changed(int id);

 private:
  RunEntry* entry(int id);
  // Judges the run again from its record; verdict_changed when the verdict or its step moved.
  void rejudge(RunEntry& run);

  std::vector<RunEntry> runs_;
  int next_id_ = 1;
};

}  // namespace normlab::lab
