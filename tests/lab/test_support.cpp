#include "test_support.h"

#include <QCoreApplication>
#include <QDeadlineTimer>
#include <QDir>
#include <QFile>
#include <QThread>
#include <cmath>
#include <random>

#include "core/system/atomic_file.h"
#include "core/training/trainer.h"
#include "core/training/weights.h"
#include "tests/support/synthetic_corpus.h"
#include "tests/support/tiny_config.h"

namespace normlab::lab::test {

QString write_synthetic_corpus(const QString& folder, int bytes) {
  const std::string text = normlab::test::synthetic_corpus(std::size_t(bytes));
  const QString path = QDir(folder).filePath(QStringLiteral("synthetic-corpus.txt"));
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly)) throw std::runtime_error("cannot write " + path.toStdString());
  file.write(text.data(), qint64(text.size()));
  return path;
}

RunRecord train_keeping_weights(const TrainConfig& config, const QString& run_file) {
  TrainCallbacks callbacks;
  callbacks.on_weights_due = [&](const std::string& bytes) {
    write_file_atomically(weights_path(run_file.toStdString()), bytes);
  };
  RunRecord run = train(config, callbacks);
  write_json(run, run_file.toStdString());
  return run;
}

TrainConfig tiny_config(const QString& corpus, int steps) {
  return normlab::test::tiny_config(corpus.toStdString(), normlab::test::lab_run(steps));
}

RunRecord synthetic_run(NormPlacement norm, double lr, int warmup, int steps, int eval_interval) {
  RunRecord run;
  TrainConfig& c = run.config;
  c.model.norm = norm;
  c.peak_lr = lr;
  c.warmup_steps = warmup;
  c.steps = steps;
  c.eval_interval = eval_interval;
  c.name = default_run_name(c);
  run.status = RunStatus::Done;
  run.baseline_loss = 7.60;
  run.environment = {"test", "none", "cpu", "CPU, synthetic", 1};
  const double start = std::log(8192.0);
  const bool stalls = norm == NormPlacement::Post && warmup * 10 < steps;
  const double floor = stalls ? 7.58 : 4.4 + (lr < 5e-3 ? 0.15 : 0.0) + (norm == NormPlacement::Post ? 0.1 : 0);
  std::mt19937 rng(unsigned(lr * 1e6) + unsigned(warmup) + (norm == NormPlacement::Post ? 7 : 0));
  std::normal_distribution<double> noise(0, 0.12);
  auto curve = [&](int step) {
    const double t = double(step) / steps;
    return floor + (start - floor) * std::exp(-t * (stalls ? 40 : 6));
  };
  for (int step = 1; step <= steps; ++step) {
    run.steps.push_back({step, step * 0.05, lr, curve(step) + noise(rng), 20000});
    if (step % eval_interval == 0 || step == steps) run.evals.push_back({step, step * 0.05, curve(step) + 0.05});
  }
  run.evals.insert(run.evals.begin(), EvalMetrics{0, 0, start});
  return run;
}

bool wait_until(const std::function<bool()>& done, int timeout_ms) {
  QDeadlineTimer deadline(timeout_ms);
  while (!done()) {
    if (deadline.hasExpired()) return false;
    QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
    QThread::msleep(2);
  }
  return true;
}

}  // namespace normlab::lab::test
