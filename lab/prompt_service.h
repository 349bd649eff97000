#pragma once
// Runs asked to continue a prompt, off the window's thread: one thread of its own loads each
// run's weights once (core/training/trained_model.h: the corpus and tokenizer behind them
// take a few seconds) and answers one request after another, so training runs and the
// window go on meanwhile. Weights written again since (the run trained again) are loaded
// again. Answers arrive as signals on the thread the service lives on.
#include <QObject>
#include <QString>
#include <QThread>

#include "core/runs/run_record.h"
#include "core/training/trained_model.h"

namespace normlab::lab {

class PromptWorker;

class PromptService : public QObject {
  Q_OBJECT
 public:
  explicit PromptService(QObject* parent = nullptr);
  ~PromptService() override;  // waits for the request in hand

  // Continues request.prompt with the weights beside `run_file` (the record `run`'s); the
  // answer comes as answered() or refused() with this `run_id`. Requests queue in order.
  void ask(int run_id, const RunRecord& run, const QString& run_file, const SampleRequest& request);

 signals:
  void loading(int run_id, const QString& stage);  // what the set-up does before the first answer
  void answered(int run_id, const normlab::Sample& sample);
  void refused(int run_id, const QString& message);  // one line: no weights, damaged, bad prompt

 private:
  QThread thread_;
  PromptWorker* worker_;  // lives on thread_, deleted with it
};

}  // namespace normlab::lab
