#include "gpu_installer.h"

#include "core/device/cuda_backend.h"
#include "core/gpu_install/gpu_status.h"
#include "core/runs/config.h"

#include "qstring.h"

namespace normlab::lab {

GpuInstaller::GpuInstaller(QObject* parent) : QObject(parent) {}

GpuInstaller::~GpuInstaller() {
  stop();
  for (QThread* thread : {thread_, look_}) {
    if (thread) thread->wait();
    delete thread;
  }
}

bool GpuInstaller::running() const { return thread_ && thread_->isRunning(); }

void GpuInstaller::stop() { stop_ = true; }

bool GpuInstaller::start(const CudaInstallOptions& options) {
  if (running()) return false;
  delete thread_;
  stop_ = false;
  // Signals from the thread reach the receivers' threads queued, as for the training workers.
  thread_ = QThread::create([this, options] {
    QString message;
    bool ok = false;
    try {
      ok = install_cuda_libraries(options, [this](const CudaInstallProgress& p) {
        emit progress(QString::fromUtf8(stage_name(p.stage)), qstr(p.file), p.index, p.count, p.done, p.total);
        return !stop_;
      });
    } catch (const std::exception& error) {  // UserError: one line; anything else says what it is too
      message = QString::fromStdString(error.what());
    }
    emit finished(ok, message);
  });
  thread_->start();
  return true;
}

void GpuInstaller::look_for_gpu(const QString& install_action) {
  if (look_ || !nvidia_driver_present()) return;  // the common case answers at once, on this thread
  look_ = QThread::create([this, action = install_action.toStdString()] {
    const QString text = qstr(gpu_notice(probe_gpu(/*try_loading=*/false), action));
    if (!text.isEmpty()) emit notice(text);
  });
  look_->start();
}

}  // namespace normlab::lab
