#include "prompt_service.h"

#include <QDateTime>
#include <QFileInfo>
#include <QMetaObject>
#include <list>
#include <memory>

#include "run_archive.h"

namespace normlab::lab {

// Keeps the models most recently asked, as a user compares a few runs at a time. Lives on
// the service's thread and hands each answer to the service's own (a queued call).
class PromptWorker : public QObject {
 public:
  static constexpr std::size_t kKeptModels = 4;  // each is about 40 MB with its corpus

  explicit PromptWorker(PromptService* service) : service_(service) {}

  void answer(int run_id, const RunRecord& run, const QString& run_file, const SampleRequest& request) {
    try {
      const Sample sample = model_for(run_id, run, run_file).sample(request);
      tell([=](PromptService* s) { emit s->answered(run_id, sample); });
    } catch (const UserError& error) {
      const QString why = QString::fromStdString(error.what());
      tell([=](PromptService* s) { emit s->refused(run_id, why); });
    } catch (const std::exception& error) {
      const QString why = QStringLiteral("unexpected error: ") + error.what();
      tell([=](PromptService* s) { emit s->refused(run_id, why); });
    }
  }

 private:
  template <typename Emit>
  void tell(Emit emit_on) {
    QMetaObject::invokeMethod(service_, [service = service_, emit_on] { emit_on(service); });
  }

  struct Loaded {
    QString file;
    QString written;  // when the files its weights may come from were written
    std::unique_ptr<TrainedModel> model;
  };

  static QString written(const QString& run_file) {
    return QFileInfo(RunArchive::weights_of(run_file)).lastModified().toString(Qt::ISODateWithMs) + " " +
           QFileInfo(RunArchive::checkpoint_of(run_file)).lastModified().toString(Qt::ISODateWithMs);
  }

  const TrainedModel& model_for(int run_id, const RunRecord& run, const QString& run_file) {
    const QString stamp = written(run_file);
    models_.remove_if([&](const Loaded& loaded) { return loaded.file == run_file && loaded.written != stamp; });
    for (auto it = models_.begin(); it != models_.end(); ++it) {
      if (it->file == run_file) {
        models_.splice(models_.begin(), models_, it);
        return *models_.front().model;
      }
    }
    auto model = std::make_unique<TrainedModel>(run, run_file.toStdString(), [&](const std::string& stage) {
      const QString what = QString::fromStdString(stage);
      tell([=](PromptService* s) { emit s->loading(run_id, what); });
    });
    models_.push_front({run_file, stamp, std::move(model)});
    if (models_.size() > kKeptModels) models_.pop_back();
    return *models_.front().model;
  }

  PromptService* const service_;
  std::list<Loaded> models_;  // most recently asked first
};

PromptService::PromptService(QObject* parent) : QObject(parent), worker_(new PromptWorker(this)) {
  thread_.setObjectName(QStringLiteral("prompts"));
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  thread_.start();
}

PromptService::~PromptService() {
  thread_.quit();
  thread_.wait();
}

void PromptService::ask(int run_id, const RunRecord& run, const QString& run_file, const SampleRequest& request) {
  QMetaObject::invokeMethod(
      worker_, [worker = worker_, run_id, run, run_file, request] { worker->answer(run_id, run, run_file, request); });
}

}  // namespace normlab::lab
