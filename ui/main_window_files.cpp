// Runs and pictures in and out of the window: import, export as JSON, CSV or image.
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QSettings>
#include <QStatusBar>
#include <QTabWidget>

#include "core/runs/run_text.h"
#include "lab/lab.h"
#include "lab/qstring.h"
#include "lab/run_export.h"

#include "chart_export.h"
#include "format.h"
#include "image_dialog.h"
#include "loss_chart_view.h"
#include "main_window.h"
#include "settings_panel.h"
#include "sweep_view.h"

namespace normlab::ui {

int MainWindow::import_runs(const QStringList& files) {
  const lab::Lab::Imported imported = lab_->import_runs(files);
  if (!imported.problems.isEmpty()) {
    report(tr("Import failed"), tr("Nothing was imported.\n\n%1").arg(imported.problems.join(QStringLiteral("\n\n"))));
    return 0;
  }
  if (!imported.refused.isEmpty()) {
    report(tr("Already open"), tr("Not imported again: %1.").arg(imported.refused.join(QStringLiteral("; "))));
  }
  statusBar()->showMessage(imported.unsaved.isEmpty()
                               ? tr("Imported %n run(s)", nullptr, imported.added)
                               : tr("Imported %n run(s), but could not keep a copy: %1", nullptr, imported.added)
                                     .arg(imported.unsaved.join(QStringLiteral("; "))),
                           kStatusMessageMs);
  update_actions();
  return imported.added;
}

bool MainWindow::export_chart(const QString& path, QSize pixels) {
  try {
    if (QFileInfo(path).suffix().compare(QStringLiteral("svg"), Qt::CaseInsensitive) == 0) {
      export_svg(*chart_, path, pixels);
    } else {
      export_png(*chart_, path, pixels, export_scale(chart_view_->size(), pixels));
    }
  } catch (const std::exception& error) {
    report(tr("Export failed"), QString::fromStdString(error.what()));
    return false;
  }
  statusBar()->showMessage(tr("Chart saved to %1").arg(path), kStatusMessageMs);
  return true;
}

bool MainWindow::export_runs(lab::RunExport format, const QList<int>& run_ids, const QString& target) {
  const lab::Exported exported = lab::export_runs(*store_, run_ids, format, target);
  if (!exported.error.isEmpty()) {
    report(tr("Export failed"), exported.error);
    return false;
  }
  statusBar()->showMessage(exported.done, kStatusMessageMs);
  return true;
}

namespace {
QString last_folder(const char* key) {
  return QSettings().value(QStringLiteral("paths/") + key, QDir::homePath()).toString();
}
void remember_folder(const char* key, const QString& path) {
  QSettings().setValue(QStringLiteral("paths/") + key, QFileInfo(path).isDir() ? path : QFileInfo(path).absolutePath());
}
}  // namespace

void MainWindow::import_dialog() {
  const QStringList files = QFileDialog::getOpenFileNames(this, tr("Import runs"), last_folder("import"),
                                                          tr("NormLab runs (*.json);;All files (*)"));
  if (files.isEmpty()) return;
  remember_folder("import", files.front());
  import_runs(files);
}

void MainWindow::follow_dialog() {
  const QString folder = QFileDialog::getExistingDirectory(this, tr("Follow a folder of runs"), last_folder("follow"));
  if (folder.isEmpty()) return;
  remember_folder("follow", folder);
  follow_folder(folder);
}

bool MainWindow::follow_folder(const QString& folder) {
  const QString problem = lab_->follow_folder(folder);
  if (!problem.isEmpty()) {
    report(tr("Cannot follow the folder"), problem);
    return false;
  }
  statusBar()->showMessage(tr("Following %1: its runs update as their files change").arg(lab_->follower().folder()),
                           kStatusMessageMs);
  return true;
}

void MainWindow::show_followed_sweep(const Sweep& sweep) {
  settings_->set_config(sweep.base);
  sweeps_->choose_preset(std::nullopt);
  sweeps_->set_setting(sweep.setting);
  QStringList values;
  for (const std::string& value : sweep.values) values << lab::qstr(value);
  sweeps_->set_values(values.join(QLatin1Char(',')));
  sweeps_->set_placements(sweep.placements);
  sweeps_->set_seeds(sweep.seeds);
  sweeps_->refresh();
}

void MainWindow::export_json_dialog() {
  const QList<int> ids = selected_or_all_runs();
  if (ids.isEmpty()) return;
  QString target;
  if (ids.size() == 1) {
    const QString name = lab::qstr(file_stem(store_->find(ids.front())->record.config.name)) + QStringLiteral(".json");
    target = QFileDialog::getSaveFileName(this, tr("Export run as JSON"), QDir(last_folder("export")).filePath(name),
                                          tr("NormLab run (*.json)"));
  } else {
    target = QFileDialog::getExistingDirectory(
        this, tr("Export %n runs as JSON: choose a folder", nullptr, int(ids.size())), last_folder("export"));
  }
  if (target.isEmpty()) return;
  remember_folder("export", target);
  export_runs(lab::RunExport::Json, ids, target);
}

void MainWindow::export_csv_dialog() {
  const QList<int> ids = selected_or_all_runs();
  if (ids.isEmpty()) return;
  const QString path = QFileDialog::getSaveFileName(
      this, tr("Export %n run(s) as CSV", nullptr, int(ids.size())),
      QDir(last_folder("export")).filePath(QStringLiteral("normlab-runs.csv")), tr("CSV table (*.csv)"));
  if (path.isEmpty()) return;
  remember_folder("export", path);
  export_runs(lab::RunExport::Csv, ids, path);
}

void MainWindow::export_markdown_dialog() {
  const QList<int> ids = selected_or_all_runs();
  if (ids.isEmpty()) return;
  const QString name = ids.size() == 1
                           ? lab::qstr(file_stem(store_->find(ids.front())->record.config.name)) + QStringLiteral(".md")
                           : QStringLiteral("normlab-text.md");
  const QString path = QFileDialog::getSaveFileName(this, tr("Export %n run(s) as Markdown", nullptr, int(ids.size())),
                                                    QDir(last_folder("export")).filePath(name), tr("Markdown (*.md)"));
  if (path.isEmpty()) return;
  remember_folder("export", path);
  export_runs(lab::RunExport::Markdown, ids, path);
}

void MainWindow::export_image_dialog() {
  views_->setCurrentIndex(0);
  const ImageRequest request = ask_image(this, chart_view_->size(), last_folder("export"));
  if (request.path.isEmpty()) return;
  remember_folder("export", request.path);
  export_chart(request.path, request.pixels);
}

}  // namespace normlab::ui
