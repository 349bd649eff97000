// normlab-ui-bench: the figures the window must meet, measured.
//   1. Launch to the course: the app (normlab, in its own process and home) started with
//      --course until its five runs are queued, each in its file (target: under 2 s).
//      With --launch-only, that figure alone.
//   2. Chart repaint cost with five runs of 3000 steps on screen (target: under 10 ms),
//      and the "Inside the model" view's with two of them, every layer statistic recorded.
//   3. Event-loop latency while a run trains: how late a 10 ms timer fires (target: p99
//      and maximum under 20 ms); with --inside-tab, while that view follows the run.
// With --with-run FILE, that saved run (say a 100,000-step soak) is on the chart in both.
// With --checkpoint-every-save, the run writes its checkpoint with every save (each
// evaluation and every 5 s) instead of once a minute, so the latency covers them.
// Runs offscreen unless QT_QPA_PLATFORM says otherwise.
#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <optional>
#include <vector>

#include "core/runs/presets.h"
#include "core/training/layer_stats.h"
#include "core/training/trainer.h"
#include "lab/lab.h"
#include "lab/run_archive.h"
#include "lab/run_store.h"
#include "ui/inside_view.h"
#include "ui/loss_chart.h"
#include "ui/loss_chart_view.h"
#include "ui/main_window.h"
#include "ui/settings_panel.h"

#include "test_support.h"

using namespace normlab;
using namespace normlab::ui;

namespace {

struct Summary {
  double median, p99, max;
};

Summary summarise(std::vector<double> v) {
  if (v.empty()) return {0, 0, 0};
  std::sort(v.begin(), v.end());
  auto at = [&](double q) { return v[std::min(v.size() - 1, std::size_t(q * (v.size() - 1) + 0.5))]; };
  return {at(0.5), at(0.99), v.back()};
}

double thread_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Wall time and the GUI thread's own CPU time: on a busy machine the first includes waiting
// for a core, the second is what the work itself costs.
struct Timings {
  std::vector<double> wall, cpu;
};

template <typename F>
Timings time_ms(int repeats, F&& f) {
  Timings t;
  for (int i = 0; i < repeats; ++i) {
    QElapsedTimer wall;
    const double cpu = thread_cpu_ms();
    wall.start();
    f(i);
    t.wall.push_back(wall.nsecsElapsed() / 1e6);
    t.cpu.push_back(thread_cpu_ms() - cpu);
  }
  return t;
}

void print(const char* what, const Summary& s) {
  std::printf("  %-50s median %6.2f ms   p99 %6.2f ms   max %6.2f ms\n", what, s.median, s.p99, s.max);
}

void print(const char* what, const Timings& t) {
  const Summary wall = summarise(t.wall), cpu = summarise(t.cpu);
  std::printf("  %-50s median %6.2f ms   p99 %6.2f ms   max %6.2f ms   (CPU median %5.2f ms)\n", what, wall.median,
              wall.p99, wall.max, cpu.median);
}

// Lets the chart's zoom-and-pan state end, so its curves are cached again.
void settle(LossChart& chart) {
  chart.refresh();
  test::wait_until([] { return false; }, 2 * LossChart::kViewSettleMs);
}

// The run in `file`, timed as the window reads it; none when `file` is empty.
std::optional<RunRecord> load_run(const QString& file) {
  if (file.isEmpty()) return std::nullopt;
  QElapsedTimer wall;
  wall.start();
  RunRecord run = read_json(file.toStdString());
  std::printf("Loaded %s: %zu steps, %zu evaluations, status %s, in %lld ms\n\n", qPrintable(file), run.steps.size(),
              run.evals.size(), to_string(run.status).c_str(), wall.elapsed());
  return run;
}

// The app launched with --course, in a home of its own whose last settings are a tiny run,
// until it has queued the course's five runs, each in its file. Without an NVIDIA driver
// the GPU look-up answers at once; with one it runs off the UI thread (lab/gpu_installer,
// lab/train_worker). The five runs fail soon after on the tiny corpus; the app is closed.
void launch_to_course() {
  QTemporaryDir home;
  {
    QSettings saved(home.filePath(QStringLiteral("config/NormLab/NormLab.conf")), QSettings::IniFormat);
    SettingsPanel panel;
    panel.set_config(test::tiny_config(test::write_synthetic_corpus(home.path()), 10));
    panel.save(saved);
  }
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
  env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
  env.insert(QStringLiteral("NORMLAB_CACHE_DIR"), home.filePath(QStringLiteral("cache")));
  const QDir runs(home.filePath(QStringLiteral("data/NormLab/NormLab/runs")));
  QProcess app;
  app.setProcessEnvironment(env);
  QElapsedTimer launched;
  launched.start();
  app.start(QStringLiteral(NORMLAB_GUI_EXECUTABLE), {QStringLiteral("--course")});
  const bool queued =
      test::wait_until([&] { return runs.entryList({QStringLiteral("*.json")}, QDir::Files).size() == 5; }, 60'000);
  const qint64 ms = launched.elapsed();
  std::printf("Launch of normlab --course until its five runs are queued, each in its file\n");
  if (queued) std::printf("  %lld ms\n", static_cast<long long>(ms));
  else std::printf("  not queued within 60 s: %s\n", qPrintable(app.errorString()));
  std::printf("  target: under 2000 ms\n\n");
  app.terminate();
  if (!app.waitForFinished(15'000)) app.kill();
}

void chart_cost(const std::optional<RunRecord>& extra) {
  lab::RunStore store;
  std::vector<int> ids;
  for (const TrainConfig& c : workshop_runs(scaled(TrainConfig{}, Scale::Full))) {
    ids.push_back(
        store.add(test::synthetic_run(c.model.norm, c.peak_lr, c.warmup_steps, c.steps, c.eval_interval), {}));
  }
  if (extra) store.add(*extra, {});
  auto* chart = new LossChart(store);
  LossChartView view(chart);
  view.resize(1100, 650);
  view.show();
  test::wait_until([&] { return view.isVisible(); }, 2000);
  chart->set_smoothing(0.6);
  chart->refresh();
  settle(*chart);
  std::printf("Chart: 5 runs x 3000 steps (+31 evaluations each)%s, smoothing on, %dx%d px, antialiased\n",
              extra ? " and the loaded run" : "", view.width(), view.height());

  print("repaint (paint only)", (time_ms(60, [&](int) { view.viewport()->repaint(); })));
  // Panning moves every curve: nothing cached can be reused.
  print("pan by a pixel: points placed again, all redrawn", (time_ms(60, [&](int i) {
          chart->pan_by({i % 2 ? 1.0 : -1.0, 0});
          view.viewport()->repaint();
        })));
  chart->reset_view();
  settle(*chart);
  // Hovering: the readout and crosshair follow the pointer; the region they cross is redrawn.
  const QRectF plot = chart->plotArea();
  print("hover: pointer moved, readout and crosshair redrawn", (time_ms(60, [&](int i) {
          const QPointF at(plot.left() + plot.width() * (0.1 + 0.013 * i), plot.center().y());
          QTest::mouseMove(view.viewport(), view.mapFromScene(chart->mapToScene(at)));
          QApplication::processEvents();
        })));
  // A timer tick while training: one run gained ~a batch of steps; its series are replaced.
  RunRecord growing = store.find(ids.back())->record;
  const int live = store.add(growing, {});
  store.finish(live, [&] {
    RunRecord r = growing;
    r.steps.resize(1000);
    r.evals.resize(11);
    r.status = RunStatus::Running;
    return r;
  }());
  chart->refresh();
  settle(*chart);
  print("live tick: 20 new steps, refresh + repaint", (time_ms(60, [&](int i) {
          const auto first = growing.steps.begin() + 1000 + 20 * i;
          store.append_steps(live, std::vector<StepMetrics>(first, first + 20));
          chart->refresh();
          view.viewport()->repaint();
        })));
  store.remove(live);
  print("everything rebuilt (smoothing changed) + repaint", (time_ms(20, [&](int i) {
          chart->set_smoothing(i % 2 ? 0.6 : 0.61);
          chart->refresh();
          view.viewport()->repaint();
        })));
  std::printf("  target: under 10 ms per repaint\n\n");
}

// Every statistic at the steps a 3000-step run records them, values spread over decades.
std::vector<SeriesPoint> statistic_points(const TrainConfig& c, int from, int to) {
  std::vector<SeriesPoint> points;
  for (int step = from; step <= to; ++step) {
    if (!records_layer_stats(c, step)) continue;
    for (const StatisticInfo& info : layer_statistics()) {
      const int layers = info.per_layer ? c.model.layers : 0;
      std::vector<double> values;
      for (int l = 0; l < std::max(1, layers); ++l) values.push_back(std::pow(10.0, -(l + step % 7)));
      points.push_back({info.name, layers, step, values});
    }
  }
  return points;
}

void inside_cost() {
  lab::RunStore store;
  const auto runs = workshop_runs(scaled(TrainConfig{}, Scale::Full));
  const TrainConfig& pre = runs[2];
  const TrainConfig& post = runs[3];
  const int left = store.add(test::synthetic_run(pre.model.norm, pre.peak_lr, pre.warmup_steps, pre.steps), {});
  const int right = store.add(test::synthetic_run(post.model.norm, post.peak_lr, post.warmup_steps, 1000), {});
  store.append_points(left, statistic_points(pre, 1, pre.steps));
  store.append_points(right, statistic_points(post, 1, 1000));
  InsideView view(store);
  view.resize(1100, 650);
  view.show();
  test::wait_until([] { return false; }, 300);  // until the window is exposed, or repaint() paints nothing
  view.show_runs(left, right);
  std::printf(
      "Inside the model: 8 layers, a 3000-step run (%zu recorded steps) beside one at step 1000, plot %dx%d px\n",
      store.find(left)->record.find_series("attention_grad_norm")->steps.size(), view.plot()->width(),
      view.plot()->height());
  print("repaint (paint only)", (time_ms(60, [&](int) { view.plot()->repaint(); })));
  const QRect panel = view.panel_rect(0);
  print("hover: readout, profile and marker redrawn", (time_ms(60, [&](int i) {
          QTest::mouseMove(view.plot(), QPoint(panel.left() + (i * 7) % panel.width(), panel.center().y()));
          view.plot()->repaint();
        })));
  print("live tick: one recorded step's points + repaint", (time_ms(60, [&](int i) {
          const int step = 1000 + 10 * (i + 1);
          store.append_points(right, statistic_points(post, step, step));
          view.plot()->repaint();
        })));
  std::printf("  target: under 10 ms per repaint\n\n");
}

void event_loop_latency(int seconds, bool course_model, bool inside_tab, const QString& extra_file,
                        bool checkpoint_every_save) {
  QTemporaryDir folder;
  MainWindowOptions options;
  options.data_folder = folder.filePath(QStringLiteral("runs"));
  options.report_error = [](const QString& title, const QString& text) {
    std::fprintf(stderr, "%s: %s\n", qPrintable(title), qPrintable(text));
  };
  MainWindow window(options);
  window.show();
  if (!extra_file.isEmpty()) {  // as File > Import does it: read, copied to the runs folder, drawn
    QElapsedTimer wall;
    wall.start();
    const int added = window.import_runs({extra_file});
    window.chart().refresh();
    std::printf("Imported into the window (read, saved a copy, drawn): %d run in %lld ms\n", added, wall.elapsed());
  }
  if (inside_tab) window.show_view(window.findChild<InsideView*>());
  TrainConfig config;
  if (course_model) {
    config = scaled(TrainConfig{}, Scale::Cpu);
  } else {
    config = test::tiny_config(test::write_synthetic_corpus(folder.path(), 200'000));
    config.model.layers = 4;
    config.model.d_model = 64;
    config.model.heads = 4;
    config.model.context = 64;
    config.batch_size = 8;
    config.eval_interval = 50;
  }
  config.steps = 1'000'000;
  window.settings_panel().set_config(config);
  TrainConfig chosen = window.settings_panel().config();
  if (checkpoint_every_save) chosen.checkpoint_interval = 0;
  const int id = window.lab().queue_run(chosen);
  const RunRecord& run = window.store().find(id)->record;
  std::printf(
      "Event loop while training (%s)%s, %s shown: a 10 ms timer for %d s once steps arrive\n",
      course_model ? "the course's CPU-scale model on the default corpus" : "4 layers x 64 on a synthetic corpus",
      extra_file.isEmpty() ? "" : ", the imported run on the chart", inside_tab ? "Inside the model" : "the loss chart",
      seconds);
  if (!test::wait_until([&] { return !run.steps.empty(); }, 600'000)) {
    std::printf("  no training step within 10 minutes\n");
    return;
  }
  std::vector<double> lateness;
  double worst_refresh = 0;
  QElapsedTimer clock;
  clock.start();
  qint64 last = clock.nsecsElapsed();
  QTimer tick;
  tick.setTimerType(Qt::PreciseTimer);
  tick.setInterval(10);
  QObject::connect(&tick, &QTimer::timeout, [&] {
    const qint64 now = clock.nsecsElapsed();
    lateness.push_back(std::max(0.0, (now - last) / 1e6 - 10.0));
    last = now;
    worst_refresh = std::max(worst_refresh, window.chart().last_refresh_ms());
  });
  const std::size_t steps_before = run.steps.size();
  window.chart().refresh();  // so the slowest refresh is one of this measurement's, not the import's
  tick.start();
  test::wait_until([&] { return clock.elapsed() >= seconds * 1000; }, seconds * 1000 + 5000);
  tick.stop();
  const std::size_t steps = run.steps.size() - steps_before;
  print("10 ms timer lateness", summarise(lateness));
  std::printf("  %zu ticks; %zu steps trained meanwhile (%.1f steps/s); slowest chart data refresh %.2f ms\n",
              lateness.size(), steps, steps / double(seconds), worst_refresh);
  if (checkpoint_every_save) {
    std::printf("  a checkpoint (%.1f MB) with every save, at each evaluation (every %d steps) and every %g s\n",
                QFileInfo(lab::RunArchive::checkpoint_of(window.store().find(id)->file)).size() / 1e6,
                config.eval_interval, kSaveIntervalSeconds);
  }
  std::printf("  target: p99 and max under 20 ms\n");
  window.close();
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QTemporaryDir home;  // settings of this measurement only
  qputenv("XDG_CONFIG_HOME", home.filePath(QStringLiteral("config")).toUtf8());
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName(QStringLiteral("NormLabBench"));
  QCoreApplication::setApplicationName(QStringLiteral("NormLabBench"));
  QApplication::setStyle(QStringLiteral("Fusion"));
  QCommandLineParser parser;
  parser.setApplicationDescription(
      QStringLiteral("Measures chart repaint cost and event-loop latency while training."));
  parser.addHelpOption();
  const QCommandLineOption seconds(QStringLiteral("seconds"),
                                   QStringLiteral("How long to measure latency (default 20)."), QStringLiteral("N"),
                                   QStringLiteral("20"));
  const QCommandLineOption course(QStringLiteral("course-model"),
                                  QStringLiteral("Train the course's CPU-scale model on the default corpus instead."));
  const QCommandLineOption with_run(QStringLiteral("with-run"),
                                    QStringLiteral("Also show this saved run on the chart."), QStringLiteral("FILE"));
  const QCommandLineOption inside_tab(QStringLiteral("inside-tab"),
                                      QStringLiteral("Show the \"Inside the model\" view while training."));
  parser.addOption(seconds);
  parser.addOption(course);
  parser.addOption(with_run);
  parser.addOption(inside_tab);
  const QCommandLineOption checkpoints(QStringLiteral("checkpoint-every-save"),
                                       QStringLiteral("Checkpoint the run with every save instead of once a minute."));
  parser.addOption(checkpoints);
  const QCommandLineOption launch_only(QStringLiteral("launch-only"),
                                       QStringLiteral("Measure only the launch to the course's runs queued."));
  parser.addOption(launch_only);
  parser.process(app);
  launch_to_course();
  if (parser.isSet(launch_only)) return 0;
  const std::optional<RunRecord> extra = load_run(parser.value(with_run));
  chart_cost(extra);
  inside_cost();
  event_loop_latency(std::max(1, parser.value(seconds).toInt()), parser.isSet(course), parser.isSet(inside_tab),
                     parser.value(with_run), parser.isSet(checkpoints));
  return 0;
}
