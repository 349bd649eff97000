#include "run_store.h"

#include <QFile>
#include <QFont>
#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "format.h"
#include "run_colors.h"
#include "run_text.h"

namespace normlab::ui {

RunStore::RunStore(QObject* parent) : QAbstractTableModel(parent) {}

int RunStore::add(RunRecord record, const QString& file) {
  const RunFamily family = family_of(record.config);
  std::set<QRgb> taken;
  for (const auto& run : runs_) {
    if (family_of(run.record.config) == family) taken.insert(run.colour.rgb());
  }
  // The first shade of the family no other run shows, so a new run never repeats a colour
  // while an unused one is left.
  int shade = 0;
  while (shade < 16 && taken.count(family_colour(family, shade).rgb())) ++shade;

  const int id = next_id_++;
  const int row = int(runs_.size());
  beginInsertRows({}, row, row);
  runs_.push_back({id, std::move(record), family_colour(family, shade), true, file});
  endInsertRows();
  emit run_added(id);
  return id;
}

void RunStore::remove(int id) {
  const int row = row_of(id);
  if (row < 0) return;
  if (const QString& file = runs_[std::size_t(row)].file; !file.isEmpty()) QFile::remove(file);
  beginRemoveRows({}, row, row);
  runs_.erase(runs_.begin() + row);
  endRemoveRows();
  emit run_removed(id);
}

const RunEntry* RunStore::find(int id) const {
  auto it = std::find_if(runs_.begin(), runs_.end(), [id](const RunEntry& r) { return r.id == id; });
  return it == runs_.end() ? nullptr : &*it;
}

RunEntry* RunStore::entry(int id) { return const_cast<RunEntry*>(std::as_const(*this).find(id)); }

int RunStore::row_of(int id) const {
  for (std::size_t row = 0; row < runs_.size(); ++row) {
    if (runs_[row].id == id) return int(row);
  }
  return -1;
}

int RunStore::id_at(int row) const {
  return row >= 0 && row < int(runs_.size()) ? runs_[std::size_t(row)].id : 0;
}

QString RunStore::unique_name(const QString& wanted) const {
  const std::string base = wanted.toStdString();
  return qstr(first_free_name([&](int n) { return n == 1 ? base : base + " (" + std::to_string(n) + ")"; },
                              [this](const std::string& name) {
                                return std::any_of(runs_.begin(), runs_.end(),
                                                   [&](const RunEntry& r) { return r.record.config.name == name; });
                              }));
}

void RunStore::row_changed(int id, Column first, Column last) {
  const int row = row_of(id);
  if (row >= 0) emit dataChanged(index(row, first), index(row, last));
}

void RunStore::set_visible(int id, bool visible) {
  RunEntry* run = entry(id);
  if (!run || run->visible == visible) return;
  run->visible = visible;
  row_changed(id, NameColumn, NameColumn);
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
  r.status = RunStatus::Running;
  r.message.clear();
  row_changed(id, NameColumn, HeldOutColumn);
  emit status_changed(id);
  emit points_changed(id);  // the baseline is known now
}

void RunStore::append_steps(int id, const std::vector<StepMetrics>& steps) {
  RunEntry* run = entry(id);
  if (!run || steps.empty()) return;
  run->record.steps.insert(run->record.steps.end(), steps.begin(), steps.end());
  row_changed(id, ProgressColumn, ProgressColumn);
  emit points_changed(id);
}

void RunStore::append_eval(int id, const EvalMetrics& eval) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record.evals.push_back(eval);
  row_changed(id, HeldOutColumn, HeldOutColumn);
  emit points_changed(id);
}

void RunStore::append_points(int id, const std::vector<SeriesPoint>& points) {
  RunEntry* run = entry(id);
  if (!run || points.empty()) return;
  for (const SeriesPoint& point : points) run->record.add_point(point);
  emit points_changed(id);
}

void RunStore::finish(int id, const RunRecord& record) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record = record;
  row_changed(id, NameColumn, HeldOutColumn);
  emit status_changed(id);
  emit points_changed(id);
}

void RunStore::set_status(int id, RunStatus status, const QString& message) {
  RunEntry* run = entry(id);
  if (!run) return;
  run->record.status = status;
  run->record.message = message.toStdString();
  row_changed(id, StatusColumn, StatusColumn);
  emit status_changed(id);
}

int RunStore::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(runs_.size());
}

int RunStore::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : ColumnCount;
}

namespace {

QString progress_text(const RunRecord& r) {
  const int done = r.steps.empty() ? 0 : r.steps.back().step;
  return QStringLiteral("%1 / %2").arg(done).arg(r.config.steps);
}

QVariant status_colour(RunStatus status) {
  switch (status) {
    case RunStatus::Diverged:
    case RunStatus::Failed: return QColor(0xb71c1c);
    case RunStatus::Stopped:
    case RunStatus::Interrupted: return QColor(0x9a6400);
    case RunStatus::Running: return QColor(0x1f5fb0);
    case RunStatus::Queued: return QColor(0x757575);
    case RunStatus::Done: break;
  }
  return {};
}

}  // namespace

QVariant RunStore::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(runs_.size())) return {};
  const RunEntry& run = runs_[std::size_t(index.row())];
  const RunRecord& r = run.record;
  if (role == RunIdRole) return run.id;
  switch (index.column()) {
    case NameColumn:
      if (role == Qt::DisplayRole || role == Qt::EditRole) return qstr(r.config.name);
      if (role == Qt::DecorationRole) return run.colour;
      if (role == Qt::CheckStateRole) return run.visible ? Qt::Checked : Qt::Unchecked;
      if (role == Qt::ToolTipRole) return tr("Tick to show this run on the chart");
      break;
    case SetupColumn:
      if (role == Qt::DisplayRole) return setup_text(r.config);
      if (role == Qt::ToolTipRole) {
        return tr("%1 heads, vocabulary %2; peak learning rate %3, warmup %4 steps; seed %5")
            .arg(r.config.model.heads)
            .arg(r.config.model.vocab)
            .arg(lr_text(r.config.peak_lr))
            .arg(r.config.warmup_steps)
            .arg(r.config.seed);
      }
      break;
    case StatusColumn:
      if (role == Qt::DisplayRole) return qstr(to_string(r.status));
      if (role == Qt::ForegroundRole) return status_colour(r.status);
      if (role == Qt::ToolTipRole && !r.message.empty()) return qstr(r.message);
      if (role == Qt::FontRole && r.status == RunStatus::Running) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      break;
    case ProgressColumn:
      if (role == Qt::DisplayRole) return progress_text(r);
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      break;
    case HeldOutColumn:
      if (role == Qt::DisplayRole) return loss_text(r.final_val_loss());
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      if (role == Qt::ToolTipRole) {
        return tr("Held-out loss at the last evaluation, nats per token (unigram baseline %1)")
            .arg(loss_text(r.baseline_loss > 0 ? r.baseline_loss : std::nan("")));
      }
      break;
    default: break;
  }
  return {};
}

QVariant RunStore::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Run");
    case SetupColumn: return tr("Setup");
    case StatusColumn: return tr("Status");
    case ProgressColumn: return tr("Step");
    case HeldOutColumn: return tr("Held-out");
    default: return {};
  }
}

Qt::ItemFlags RunStore::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.column() == NameColumn) f |= Qt::ItemIsUserCheckable;
  return f;
}

bool RunStore::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.column() != NameColumn || role != Qt::CheckStateRole) return false;
  set_visible(id_at(index.row()), value.toInt() == Qt::Checked);
  return true;
}

}  // namespace normlab::ui
