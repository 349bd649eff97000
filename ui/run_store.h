#pragma once
// Every run the window knows: trained here, queued, restored or imported. The run
// table shows it directly; the chart follows its signals.
#include <QAbstractTableModel>
#include <QColor>
#include <vector>

#include "run_record.h"

namespace normlab::ui {

struct RunEntry {
  int id = 0;                  // unique for the session, never reused
  RunRecord record;            // record.config.name is the run's name
  QColor colour;               // held-out colour; training lines are lighter
  bool visible = true;
  QString file;                // the app's own copy in its data folder; empty if none
};

class RunStore : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column { NameColumn, SetupColumn, StatusColumn, ProgressColumn, HeldOutColumn, ColumnCount };
  static constexpr int RunIdRole = Qt::UserRole + 1;

  explicit RunStore(QObject* parent = nullptr);

  // Adds a run at the end with the next shade of its colour family; returns its id.
  int add(RunRecord record, const QString& file);
  // Removes the run and deletes its file in the data folder (exported copies stay).
  void remove(int id);

  const std::vector<RunEntry>& runs() const { return runs_; }
  const RunEntry* find(int id) const;
  int row_of(int id) const;    // -1 if unknown
  int id_at(int row) const;
  // `wanted`, or "wanted (2)", "wanted (3)"… so that names, and so file names, stay distinct.
  QString unique_name(const QString& wanted) const;

  void set_visible(int id, bool visible);
  // Updates from the trainer, in the order they happen.
  void mark_started(int id, const RunRecord& header);  // environment, counts and baseline
  void append_steps(int id, const std::vector<StepMetrics>& steps);
  void append_eval(int id, const EvalMetrics& eval);
  void append_points(int id, const std::vector<SeriesPoint>& points);  // any named series
  void finish(int id, const RunRecord& run);           // the trainer's final record
  void set_status(int id, RunStatus status, const QString& message = {});

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;

 signals:
  void run_added(int id);
  void run_removed(int id);
  void points_changed(int id);       // new steps or evaluations, or the record replaced
  void appearance_changed(int id);   // shown or hidden
  void status_changed(int id);

 private:
  RunEntry* entry(int id);
  void row_changed(int id, Column first, Column last);

  std::vector<RunEntry> runs_;
  int next_id_ = 1;
};

}  // namespace normlab::ui
