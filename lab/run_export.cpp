#include "run_export.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <set>

#include "core/runs/run_record.h"
#include "core/runs/run_text.h"
#include "core/system/atomic_file.h"
#include "core/training/run_markdown.h"

#include "qstring.h"
#include "run_store.h"

namespace normlab::lab {

namespace {

QString said(const char* text, int n) { return QCoreApplication::translate("RunExport", text, nullptr, n); }

void write(const std::vector<const RunRecord*>& runs, RunExport format, const QString& target) {
  switch (format) {
    case RunExport::Json: {
      if (runs.size() == 1 && !QFileInfo(target).isDir()) return write_json(*runs.front(), target.toStdString());
      std::vector<std::string> names;
      for (const RunRecord* run : runs) names.push_back(run->config.name);
      const std::vector<std::string> stems = unique_stems(names);
      for (std::size_t i = 0; i < runs.size(); ++i) {
        write_json(*runs[i], QDir(target).filePath(qstr(stems[i]) + QStringLiteral(".json")).toStdString());
      }
      return;
    }
    case RunExport::Csv: {
      std::vector<RunRecord> records;
      for (const RunRecord* run : runs) records.push_back(*run);
      return write_csv(records, target.toStdString());
    }
    case RunExport::Markdown: {
      std::string markdown;
      for (const RunRecord* run : runs) markdown += (markdown.empty() ? "" : "\n") + run_markdown(*run);
      return write_file_atomically(target.toStdString(), markdown);
    }
  }
}

}  // namespace

std::vector<std::string> unique_stems(const std::vector<std::string>& names) {
  std::set<std::string> used;
  std::vector<std::string> stems;
  for (const std::string& name : names) {
    const std::string base = file_stem(name);
    stems.push_back(first_free_name([&](int n) { return n == 1 ? base : base + "-" + std::to_string(n); },
                                    [&](const std::string& stem) { return used.count(stem) > 0; }));
    used.insert(stems.back());
  }
  return stems;
}

Exported export_runs(const RunStore& store, const QList<int>& ids, RunExport format, const QString& target) {
  std::vector<const RunRecord*> runs;
  for (const int id : ids) {
    if (const RunEntry* run = store.find(id)) runs.push_back(&run->record);
  }
  Exported exported;
  if (runs.empty()) {
    exported.error = said("No run to export: the runs chosen are gone.", 0);
    return exported;
  }
  try {
    write(runs, format, target);
  } catch (const std::exception& error) {
    exported.error = QString::fromStdString(error.what());
    return exported;
  }
  exported.runs = int(runs.size());
  exported.done = (format == RunExport::Markdown ? said("Exported %n run(s) as Markdown to %1", exported.runs)
                                                 : said("Exported %n run(s) to %1", exported.runs))
                      .arg(target);
  return exported;
}

}  // namespace normlab::lab
