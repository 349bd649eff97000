#pragma once
// Help ▸ Install GPU support…, without a widget: runs install_cuda_libraries on a thread of
// its own and reports progress and the outcome as signals; and the one-line notice that
// says a GPU is here but NormLab's CUDA libraries are not, found off the UI thread.
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>

#include "core/gpu_install/cuda_install.h"

namespace normlab::lab {

class GpuInstaller : public QObject {
  Q_OBJECT
 public:
  explicit GpuInstaller(QObject* parent = nullptr);
  ~GpuInstaller() override;  // stops an install and waits for its thread

  // Starts fetching; false when one is already under way.
  bool start(const CudaInstallOptions& options = {});
  void stop();  // what arrived stays, and the next start resumes it
  bool running() const;

  // Looks for a driver and the libraries (probe_gpu) on a thread and emits notice() when
  // there is something to say. Cheap and immediate without a driver.
  void look_for_gpu(const QString& install_action);

 signals:
  void progress(const QString& stage, const QString& file, int index, int count, qint64 done, qint64 total);
  // ok: installed; otherwise `message` says why not in one line (empty when stopped).
  void finished(bool ok, const QString& message);
  void notice(const QString& text);

 private:
  QThread* thread_ = nullptr;  // the install
  QThread* look_ = nullptr;    // look_for_gpu's, once per window
  std::atomic<bool> stop_{false};
};

}  // namespace normlab::lab
