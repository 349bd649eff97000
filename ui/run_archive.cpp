#include "run_archive.h"

#include <QDateTime>
#include <QDir>

#include "format.h"

namespace normlab::ui {

RunArchive::RunArchive(QString folder) : folder_(std::move(folder)) { QDir().mkpath(folder_); }

QString RunArchive::new_path(const QString& run_name) const {
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
  const QString base = QDir(folder_).filePath(stamp + '-' + file_stem(run_name));
  QString path = base + QStringLiteral(".json");
  for (int n = 2; QFile::exists(path); ++n) path = QStringLiteral("%1-%2.json").arg(base).arg(n);
  return path;
}

RunArchive::Restored RunArchive::restore() const {
  Restored restored;
  const QDir dir(folder_);
  for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    const QString path = dir.filePath(name);
    try {
      RunRecord run = read_json(path.toStdString());
      if (run.status == RunStatus::Running || run.status == RunStatus::Queued) {
        run.status = RunStatus::Stopped;
        run.message = "interrupted: NormLab ended before the run finished";
      }
      restored.runs.emplace_back(std::move(run), path);
    } catch (const std::exception& error) {
      restored.problems << QStringLiteral("%1: %2").arg(name, QString::fromUtf8(error.what()));
    }
  }
  return restored;
}

}  // namespace normlab::ui
