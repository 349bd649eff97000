#include "folder_follower.h"

#include <QDir>
#include <QFileInfo>
#include <QSet>

#include "core/system/atomic_file.h"

#include "run_store.h"

namespace normlab::lab {

namespace {
// A save writes a temp file and renames it: one burst of notifications, one look.
constexpr int kSettleMs = 100;
}  // namespace

FolderFollower::FolderFollower(RunStore& store, Watch watch, QObject* parent) : QObject(parent), store_(store) {
  poll_.setInterval(kPollMs);
  connect(&poll_, &QTimer::timeout, this, &FolderFollower::look);
  soon_.setSingleShot(true);
  soon_.setInterval(kSettleMs);
  connect(&soon_, &QTimer::timeout, this, &FolderFollower::look);
  if (watch == Watch::NotificationsAndPolling) {
    watcher_ = new QFileSystemWatcher(this);
    connect(watcher_, &QFileSystemWatcher::directoryChanged, &soon_, qOverload<>(&QTimer::start));
  }
}

QString FolderFollower::follow(const QString& folder) {
  const QFileInfo info(folder);
  if (!info.isDir() || !info.isReadable()) return tr("%1 is not a folder that can be read").arg(folder);
  if (watcher_ && !folder_.isEmpty()) watcher_->removePath(folder_);
  folder_ = info.absoluteFilePath();
  seen_.clear();
  sweep_.reset();
  if (watcher_) watcher_->addPath(folder_);
  poll_.start();
  look();
  return {};
}

void FolderFollower::look() {
  if (folder_.isEmpty()) return;
  QSet<QString> present;
  for (const QFileInfo& file : QDir(folder_).entryInfoList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    const QString path = file.absoluteFilePath();
    present.insert(path);
    Seen& seen = seen_[path];
    if (seen.size != file.size() || seen.modified != file.lastModified()) {
      seen.size = file.size();
      seen.modified = file.lastModified();
      read_changed(path, seen);
    }
    mark_if_lost(seen);
  }
  for (auto it = seen_.begin(); it != seen_.end();) {
    if (present.contains(it.key())) {
      ++it;
      continue;
    }
    if (it->run_id) store_.remove(it->run_id);
    it = seen_.erase(it);
  }
}

void FolderFollower::mark_if_lost(const Seen& seen) {
  const RunEntry* run = seen.run_id ? store_.find(seen.run_id) : nullptr;
  if (!run || run->record.status != RunStatus::Running) return;
  if (seen.modified.msecsTo(QDateTime::currentDateTime()) < kLostAfterSeconds * 1000) return;
  // Shown so, not written: the file stays its writer's, and a save brings the run back.
  store_.set_status(
      seen.run_id, RunStatus::Interrupted,
      tr("its file has not changed for %1 s: the process that trained it is gone").arg(kLostAfterSeconds));
}

void FolderFollower::read_changed(const QString& path, Seen& seen) {
  if (path.endsWith(QLatin1String(kSweepDescriptionSuffix))) {
    try {
      const Sweep described = sweep_from_json_text(read_whole_file(path.toStdString()));
      // A sweep trained point by point rewrites its description with each result: the same sweep.
      if (sweep_ && sweep_json_text(*sweep_, {}) == sweep_json_text(described, {})) return;
      sweep_ = described;
      emit sweep_found(*sweep_);
    } catch (const std::exception&) {
      // Not one this version reads: looked at again when it changes.
    }
    return;
  }
  RunRecord record;
  try {
    record = read_json(path.toStdString());
  } catch (const std::exception&) {
    return;  // not a run (a sweep's record of its Slurm jobs), or a damaged one: left where it is
  }
  if (seen.run_id && store_.find(seen.run_id)) store_.finish(seen.run_id, record);
  else seen.run_id = store_.add(std::move(record), {}, /*followed=*/true);
}

}  // namespace normlab::lab
