#include "run_archive.h"

#include <QDateTime>
#include <QDir>

#include "format.h"
#include "run_text.h"

namespace normlab::ui {

RunArchive::RunArchive(QString folder) : folder_(std::move(folder)) { QDir().mkpath(folder_); }

QString RunArchive::new_path(const QString& run_name) const {
  const QString stamp = QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss-zzz"));
  const std::string base = QDir(folder_).filePath(stamp + '-' + qstr(file_stem(run_name.toStdString()))).toStdString();
  return qstr(first_free_name([&](int n) { return n == 1 ? base + ".json" : base + "-" + std::to_string(n) + ".json"; },
                              [](const std::string& path) { return QFile::exists(qstr(path)); }));
}

RunArchive::Restored RunArchive::restore() const {
  Restored restored;
  const QDir dir(folder_);
  for (const QString& name : dir.entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name)) {
    const QString path = dir.filePath(name);
    try {
      RunRecord run = read_json(path.toStdString());
      stop_if_unfinished(run, "interrupted: NormLab ended before the run finished");
      restored.runs.emplace_back(std::move(run), path);
    } catch (const std::exception& error) {
      restored.problems << QStringLiteral("%1: %2").arg(name, QString::fromUtf8(error.what()));
    }
  }
  return restored;
}

}  // namespace normlab::ui
