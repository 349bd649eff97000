// Help ▸ Install GPU support… and the notice that leads to it.
#include <QAction>
#include <QDir>
#include <QMessageBox>
#include <QProgressDialog>
#include <QStatusBar>

#include "core/device/cuda_backend.h"
#include "core/gpu_install/gpu_status.h"
#include "lab/gpu_installer.h"
#include "lab/lab.h"
#include "lab/qstring.h"

#include "format.h"
#include "main_window.h"
#include "settings_panel.h"

namespace normlab::ui {

// A GPU is here but not the libraries to use it: said where the course's device is said,
// and in the status bar, until the window closes.
void MainWindow::show_gpu_notice(const QString& text) {
  settings_->set_course_note(text);
  statusBar()->showMessage(text);
}

void MainWindow::install_gpu_support() {
  if (gpu_installer_->running()) return;
  const CudaInstallOptions& install = options_.gpu_install;
  const QString question =
      tr("Download LibTorch %1's CUDA libraries (%2) from %3 and install them in %4?\n\n"
         "Each file is checked against its pinned SHA-256; a stopped download goes on where it stopped next "
         "time. NormLab trains on the GPU from its next start.")
          .arg(QStringLiteral(NORMLAB_TORCH_VERSION), lab::qstr(cuda_download_size_text()),
               lab::qstr(install.index_url), QDir::toNativeSeparators(lab::qstr(install.target.string())));
  const QString without_driver =
      nvidia_driver_present()
          ? QString()
          : tr("\n\nNo NVIDIA driver was found on this machine: NormLab uses these libraries only once "
               "one is installed.");
  const bool yes = options_.confirm ? options_.confirm(tr("Install GPU support"), question + without_driver)
                                    : QMessageBox::question(this, tr("Install GPU support"),
                                                            question + without_driver) == QMessageBox::Yes;
  if (!yes) return;

  auto* dialog =
      new QProgressDialog(tr("Connecting to %1\u2026").arg(lab::qstr(install.index_url)), tr("Stop"), 0, 1000, this);
  dialog->setWindowTitle(tr("Installing GPU support"));
  dialog->setObjectName(QStringLiteral("gpuInstallProgress"));
  // Not modal: a modal progress dialog's setValue() runs the event loop itself, where the
  // install's end could delete the dialog under it; the window stays usable meanwhile.
  dialog->setWindowModality(Qt::NonModal);
  dialog->setMinimumDuration(0);
  dialog->setAutoClose(false);
  dialog->setAutoReset(false);
  dialog->setMinimumWidth(520);
  connect(gpu_installer_, &lab::GpuInstaller::progress, dialog,
          [dialog](const QString& stage, const QString& file, int index, int count, qint64 done, qint64 total) {
            dialog->setLabelText(tr("%1 %2 of %3: %4\n%5 of %6 MB")
                                     .arg(stage)
                                     .arg(index)
                                     .arg(count)
                                     .arg(file)
                                     .arg(done / 1'000'000)
                                     .arg(total / 1'000'000));
            dialog->setValue(total > 0 ? int(1000 * done / total) : 0);
          });
  connect(dialog, &QProgressDialog::canceled, gpu_installer_, &lab::GpuInstaller::stop);
  connect(gpu_installer_, &lab::GpuInstaller::finished, dialog, [this, dialog](bool ok, const QString& message) {
    dialog->deleteLater();
    install_gpu_action_->setEnabled(true);
    if (ok) {
      const QString done = tr("GPU support installed: NormLab trains on the GPU from its next start.");
      settings_->set_course_note(done);
      statusBar()->showMessage(done);
    } else if (message.isEmpty()) {
      statusBar()->showMessage(tr("GPU support: stopped. Install it again to go on where it stopped."),
                               kStatusMessageMs);
    } else {
      report(tr("Cannot install GPU support"), message);
    }
  });
  install_gpu_action_->setEnabled(false);
  gpu_installer_->start(install);
  dialog->show();
}

}  // namespace normlab::ui
