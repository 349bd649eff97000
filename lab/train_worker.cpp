#include "train_worker.h"

#include <chrono>
#include <utility>

#include "core/training/bench.h"
#include "core/training/checkpoint.h"
#include "core/training/trainer.h"

#include "run_archive.h"

namespace normlab::lab {

namespace {
// Longest a step waits before it is sent: well under one chart refresh.
constexpr auto kStepBatchInterval = std::chrono::milliseconds(20);
}  // namespace

void TrainWorker::probe_device() {
  try {
    emit device_found(describe_device("auto"));
  } catch (const std::exception&) {
    Environment none;
    none.device = "cpu";
    none.device_name = "CPU";
    emit device_found(none);
  }
}

void TrainWorker::measure(const TrainConfig& config) {
  constexpr int kWarmupSteps = 2, kTimedSteps = 5;  // about a second at the CPU scale
  try {
    emit measured(config, benchmark(config, kWarmupSteps, kTimedSteps).median_ms_per_step / 1000);
  } catch (const std::exception&) {
    emit measured(config, -1);  // the run itself will say what is wrong
  }
}

void TrainWorker::train(int run_id, const TrainConfig& config, const QString& save_path, bool resume) {
  std::vector<StepMetrics> pending;
  std::vector<SeriesPoint> pending_points;
  auto last_sent = std::chrono::steady_clock::now();
  bool save_ok = true;
  // A run file or checkpoint that cannot be written: the run goes on, told once.
  auto keep = [&](const auto& write) {
    try {
      write();
    } catch (const std::exception& error) {
      if (save_ok) emit save_failed(run_id, QString::fromStdString(error.what()));
      save_ok = false;
    }
  };
  auto flush = [&] {
    if (!pending.empty()) emit steps_done(run_id, std::exchange(pending, {}));
    if (!pending_points.empty()) emit points_recorded(run_id, std::exchange(pending_points, {}));
    last_sent = std::chrono::steady_clock::now();
  };
  auto flush_when_due = [&] {
    if (std::chrono::steady_clock::now() - last_sent >= kStepBatchInterval) flush();
  };
  auto save = [&](const RunRecord& run) {
    if (!save_path.isEmpty()) keep([&] { RunArchive::write(run, save_path); });
  };

  TrainCallbacks callbacks;
  callbacks.on_stage = [&](const std::string& stage) { emit stage_changed(run_id, QString::fromStdString(stage)); };
  callbacks.on_start = [&](const RunRecord& header) { emit started(run_id, header); };
  callbacks.on_step = [&](const StepMetrics& step) {
    pending.push_back(step);
    flush_when_due();
  };
  callbacks.on_point = [&](const SeriesPoint& point) {
    pending_points.push_back(point);
    flush_when_due();
  };
  callbacks.on_eval = [&](const EvalMetrics& eval, const RunRecord& run) {
    flush();
    emit evaluated(run_id, eval);
    if (!run.text.samples.empty() && run.text.samples.back().step == eval.step) {
      emit text_recorded(run_id, run.text.samples.back());
    }
  };
  callbacks.on_save_due = save;
  if (!save_path.isEmpty()) {
    callbacks.on_checkpoint_due = [&](const std::string& bytes) {
      keep([&] { RunArchive::write_checkpoint(bytes, save_path); });
    };
    callbacks.on_weights_due = [&](const std::string& bytes) {
      keep([&] { RunArchive::write_weights(bytes, save_path); });
    };
    RunArchive::drop_weights(save_path);  // a run trained again is not the one they were
  }
  try {
    RunRecord run = resume ? normlab::resume(config, checkpoint_path(save_path.toStdString()), callbacks, &cancel_)
                           : normlab::train(config, callbacks, &cancel_);
    if (closing_ && run.status == RunStatus::Stopped) {
      run.status = RunStatus::Interrupted;
      run.message = "cut short when NormLab closed, after " + std::to_string(run.steps.size()) +
                    " steps; Run \u25b8 Continue goes on from there";
    }
    flush();
    save(run);
    if (!save_path.isEmpty() && !keeps_checkpoint(run)) RunArchive::drop_checkpoint(save_path);
    emit finished(run_id, run);
  } catch (const UserError& error) {
    flush();
    emit failed(run_id, QString::fromStdString(error.what()));
  } catch (const std::exception& error) {
    flush();
    emit failed(run_id, QStringLiteral("unexpected error in the trainer: ") + error.what());
  }
}

}  // namespace normlab::lab
