#include "run_table.h"

#include <QFont>
#include <cmath>

#include "core/runs/run_title.h"
#include "core/runs/verdict.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "format.h"
#include "run_colors.h"
#include "run_details.h"

namespace normlab::ui {

RunTableModel::RunTableModel(lab::RunStore& store, QObject* parent) : QAbstractTableModel(parent), store_(store) {
  connect(&store_, &lab::RunStore::run_about_to_be_added, this, [this](int row) { beginInsertRows({}, row, row); });
  connect(&store_, &lab::RunStore::run_added, this, [this] { endInsertRows(); });
  connect(&store_, &lab::RunStore::run_about_to_be_removed, this, [this](int row) { beginRemoveRows({}, row, row); });
  connect(&store_, &lab::RunStore::run_removed, this, [this] { endRemoveRows(); });
  connect(&store_, &lab::RunStore::points_changed, this, &RunTableModel::row_changed);
  connect(&store_, &lab::RunStore::status_changed, this, &RunTableModel::row_changed);
  connect(&store_, &lab::RunStore::appearance_changed, this, &RunTableModel::row_changed);
  connect(&store_, &lab::RunStore::verdict_changed, this, &RunTableModel::row_changed);
}

void RunTableModel::row_changed(int id) {
  const int row = store_.row_of(id);
  if (row >= 0) emit dataChanged(index(row, 0), index(row, ColumnCount - 1));
}

int RunTableModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : int(store_.runs().size());
}

int RunTableModel::columnCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : ColumnCount; }

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

QVariant RunTableModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= int(store_.runs().size())) return {};
  const lab::RunEntry& run = store_.runs()[std::size_t(index.row())];
  const RunRecord& r = run.record;
  if (role == RunIdRole) return run.id;
  switch (index.column()) {
    case NameColumn:
      if (role == Qt::DisplayRole) return run_name(store_, run);
      if (role == Qt::EditRole) return lab::qstr(display_name(r.config));
      if (role == Qt::DecorationRole) return run_colour(run);
      if (role == Qt::CheckStateRole) return run.visible ? Qt::Checked : Qt::Unchecked;
      if (role == Qt::ToolTipRole) {
        const QString tip = tr("Tick to show this run on the chart; F2 or a double click renames it");
        return r.config.note.empty() ? tip : lab::qstr(r.config.note) + QStringLiteral("\n\n") + tip;
      }
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
      if (role == Qt::DisplayRole) return lab::qstr(to_string(r.status));
      if (role == Qt::ForegroundRole) return status_colour(r.status);
      if (role == Qt::ToolTipRole && !r.message.empty()) return lab::qstr(r.message);
      if (role == Qt::FontRole && r.status == RunStatus::Running) {
        QFont bold;
        bold.setBold(true);
        return bold;
      }
      break;
    case VerdictColumn:
      if (role == Qt::DisplayRole) return QString::fromUtf8(info(run.verdict.verdict).word);
      if (role == Qt::ForegroundRole) return verdict_colour(run.verdict.verdict);
      if (role == Qt::ToolTipRole) {
        return QStringLiteral("<p><b>%1</b>: %2</p><p>%3</p>")
            .arg(QString::fromUtf8(info(run.verdict.verdict).label), QString::fromUtf8(info(run.verdict.verdict).help),
                 lab::qstr(run.verdict.sentence).toHtmlEscaped());
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
    case GapColumn:
      if (role == Qt::DisplayRole) return loss_text(r.generalisation_gap());
      if (role == Qt::TextAlignmentRole) return int(Qt::AlignRight | Qt::AlignVCenter);
      if (role == Qt::ToolTipRole) {
        return tr("Held-out loss above the training loss, both over the %1 steps up to the last evaluation: "
                  "what the model learnt of its training text that does not carry over to unseen text")
            .arg(RunRecord::kGapWindow);
      }
      break;
    default: break;
  }
  return {};
}

QVariant RunTableModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || role != Qt::DisplayRole) return {};
  switch (section) {
    case NameColumn: return tr("Run");
    case SetupColumn: return tr("Setup");
    case StatusColumn: return tr("Status");
    case VerdictColumn: return tr("Verdict");
    case ProgressColumn: return tr("Step");
    case HeldOutColumn: return tr("Held-out");
    case GapColumn: return tr("Gap");
    default: return {};
  }
}

Qt::ItemFlags RunTableModel::flags(const QModelIndex& index) const {
  Qt::ItemFlags f = QAbstractTableModel::flags(index);
  if (index.column() == NameColumn) f |= Qt::ItemIsUserCheckable | Qt::ItemIsEditable;
  return f;
}

bool RunTableModel::setData(const QModelIndex& index, const QVariant& value, int role) {
  if (!index.isValid() || index.column() != NameColumn) return false;
  const int id = store_.id_at(index.row());
  if (role == Qt::EditRole) {
    emit rename_requested(id, value.toString());  // the lab keeps it in the run's file, or says why not
    return true;
  }
  if (role != Qt::CheckStateRole) return false;
  store_.set_visible(id, value.toInt() == Qt::Checked);
  return true;
}

}  // namespace normlab::ui
