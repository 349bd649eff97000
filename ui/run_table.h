#pragma once
// The run table: the lab's run store as rows, with a tick to show a run on the chart and
// its name to edit.
#include <QAbstractTableModel>

namespace normlab::lab {
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

class RunTableModel : public QAbstractTableModel {
  Q_OBJECT
 public:
  enum Column {
    NameColumn,
    VerdictColumn,  // beside the name: what matters most, in view on a small screen
    SetupColumn,
    StatusColumn,
    ProgressColumn,
    HeldOutColumn,
    GapColumn,
    ColumnCount
  };
  static constexpr int RunIdRole = Qt::UserRole + 1;

  explicit RunTableModel(lab::RunStore& store, QObject* parent = nullptr);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;
  Qt::ItemFlags flags(const QModelIndex& index) const override;
  bool setData(const QModelIndex& index, const QVariant& value, int role) override;

 signals:
  // The name cell edited (F2, a double click): what the user calls the run now.
  void rename_requested(int run_id, const QString& label);

 private:
  void row_changed(int id);

  lab::RunStore& store_;
};

}  // namespace normlab::ui
