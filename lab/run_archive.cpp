#include "run_archive.h"

#include <QDir>
#include <QFile>

#include "core/runs/run_text.h"
#include "core/system/atomic_file.h"
#include "core/training/checkpoint.h"
#include "core/training/weights.h"

#include "qstring.h"

namespace normlab::lab {

RunArchive::RunArchive(QString folder) : folder_(std::move(folder)) {
  QDir().mkpath(folder_);
  // Beside the folder, not in it: a lock holds its file open, and an open file in the folder
  // would keep its file system from being remounted read-only (or unmounted) meanwhile.
  auto lock = std::make_unique<QLockFile>(QDir::cleanPath(QDir(folder_).absolutePath()) + QStringLiteral(".lock"));
  lock->setStaleLockTime(0);  // stale only when its process is gone, however long it has run
  if (lock->tryLock()) {
    lock_ = std::move(lock);
    return;
  }
  if (lock->error() != QLockFile::LockFailedError) return;  // not another owner: writes fail, and say why
  qint64 pid = 0;
  QString host, app;
  if (lock->getLockInfo(&pid, &host, &app)) owner_ = QStringLiteral("process %1 on %2").arg(pid).arg(host);
  else owner_ = QStringLiteral("a process that cannot be named (%1)").arg(lock->fileName());
}

void RunArchive::release() { lock_.reset(); }

QString RunArchive::new_path(const QString& run_name) {
  const QDateTime now = QDateTime::currentDateTime();
  last_stamp_ = last_stamp_.isValid() && now <= last_stamp_ ? last_stamp_.addMSecs(1) : now;
  const QString stamp = last_stamp_.toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
  const std::string base = QDir(folder_).filePath(stamp + '-' + qstr(file_stem(run_name.toStdString()))).toStdString();
  return qstr(first_free_name([&](int n) { return n == 1 ? base + ".json" : base + "-" + std::to_string(n) + ".json"; },
                              [](const std::string& path) { return QFile::exists(qstr(path)); }));
}

void RunArchive::write(const RunRecord& run, const QString& path) { write_json(run, path.toStdString()); }

QString RunArchive::checkpoint_of(const QString& run_file) {
  return QString::fromStdString(checkpoint_path(run_file.toStdString()).string());
}

void RunArchive::write_checkpoint(const std::string& bytes, const QString& run_file) {
  write_file_atomically(checkpoint_path(run_file.toStdString()), bytes);
}

void RunArchive::drop_checkpoint(const QString& run_file) { QFile::remove(checkpoint_of(run_file)); }

QString RunArchive::weights_of(const QString& run_file) {
  return QString::fromStdString(weights_path(run_file.toStdString()).string());
}

void RunArchive::write_weights(const std::string& bytes, const QString& run_file) {
  write_file_atomically(weights_path(run_file.toStdString()), bytes);
}

void RunArchive::drop_weights(const QString& run_file) { QFile::remove(weights_of(run_file)); }

void RunArchive::remove(const QString& path) const {
  if (!writable() || path.isEmpty()) return;
  QFile::remove(path);
  drop_checkpoint(path);
  drop_weights(path);
}

QString RunArchive::damaged_folder() const { return QDir(folder_).filePath(QStringLiteral("damaged")); }

RunArchive::Restored RunArchive::restore() const {
  Restored restored;
  const QDir dir(folder_);
  for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    const QString path = dir.filePath(name);
    try {
      RunRecord run = read_json(path.toStdString());
      // Read-only, a running run is the owner's, still training.
      if (writable()) {
        mark_interrupted(run, "NormLab or normlab-cli ended while it trained; its points up to the last save are kept");
      }
      restored.runs.emplace_back(std::move(run), path);
    } catch (const std::exception& error) {
      const QString problem = QStringLiteral("%1: %2").arg(name, QString::fromUtf8(error.what()));
      const QString target = qstr(first_free_name(
          [&](int n) {
            return QDir(damaged_folder())
                .filePath(n == 1 ? name : QStringLiteral("%1-%2").arg(n).arg(name))
                .toStdString();
          },
          [](const std::string& candidate) { return QFile::exists(qstr(candidate)); }));
      if (writable() && QDir().mkpath(damaged_folder()) && QFile::rename(path, target)) restored.damaged << problem;
      else restored.unmovable << problem;
    }
  }
  return restored;
}

}  // namespace normlab::lab
