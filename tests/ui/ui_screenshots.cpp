// normlab-ui-screenshots: the pictures in docs/, made from recorded runs so they can be
// made again after the window changes. Run it under xvfb-run (or offscreen):
//   normlab-ui-screenshots OUT_DIR RUN.json...
//   normlab-ui-screenshots OUT_DIR --sweep depth|learning-rate RUN.json...
// writes OUT_DIR/window-launch.png, OUT_DIR/pre-vs-post-6e-3.png, OUT_DIR/inside-the-model-6e-3.png
// (the two runs with a 30-step warmup at 6e-3, the pointer where they have parted, then
// their attention gradients per layer with the pointer near step 20, then what they write
// as OUT_DIR/what-it-writes-6e-3.png, and their answers to a typed prompt as
// OUT_DIR/what-it-writes-prompt-6e-3.png; only when there
// are two such runs) and OUT_DIR/course-experiment.png
// (every run given) with the chart exported from it as PNG (twice the on-screen size) and
// SVG, and OUT_DIR/about-this-experiment.png. With --sweep, only the Sweeps tab with that
// preset over the runs given: OUT_DIR/sweep-PRESET-window.png, with the curves of the
// pre-norm point at 8 layers or at 6e-3 shown, and the summary chart as
// OUT_DIR/sweep-PRESET.png and .svg. Settings and data live in a temporary folder.
#include <QApplication>
#include <QDir>
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstdio>

#include "lab/run_store.h"
#include "ui/about_view.h"
#include "ui/inside_view.h"
#include "ui/loss_chart.h"
#include "ui/loss_chart_view.h"
#include "ui/main_window.h"
#include "ui/plurals.h"
#include "ui/sweep_view.h"
#include "ui/text_view.h"

#include "test_support.h"

using namespace normlab;
using namespace normlab::ui;

namespace {

constexpr QSize kWindowSize(1400, 900);

void settle() {
  test::wait_until([] { return false; }, 400);
}

bool save(QWidget& window, const QString& path) {
  settle();
  const bool ok = window.grab().toImage().convertToFormat(QImage::Format_RGB888).save(path, "PNG", 9);
  std::printf("%s %s\n", ok ? "wrote" : "could not write", qPrintable(path));
  return ok;
}

std::unique_ptr<MainWindow> open_window(const QString& data) {
  MainWindowOptions options;
  options.data_folder = data;
  options.report_error = [](const QString& title, const QString& text) {
    std::fprintf(stderr, "%s: %s\n", qPrintable(title), qPrintable(text));
  };
  auto window = std::make_unique<MainWindow>(options);
  window->resize(kWindowSize);
  window->show();
  // Shown once the device is known: it sets the next run's scale and the course note.
  if (!test::wait_until([&] { return window->course_action()->isEnabled(); }, 180000)) {
    std::fprintf(stderr, "the device was not known after 3 minutes\n");
  }
  return window;
}

// Moves the pointer over the chart at `step`, near the top where the curves have left room,
// so the readout shows without hiding them.
void hover(MainWindow& window, double step) {
  LossChartView& view = window.chart_view();
  const QRectF plot = window.chart().plotArea();
  const QPointF at(window.chart().position_of({step, 1}).x(), plot.top() + 0.12 * plot.height());
  QTest::mouseMove(view.viewport(), view.mapFromScene(window.chart().mapToScene(at)));
}

// The Sweeps tab with a preset over `runs`, one point's curves shown, and its chart exported.
bool sweep_pictures(const QDir& out, const QString& data, const QString& preset, const QStringList& runs) {
  auto window = open_window(data);
  if (!window->course_action()->isEnabled()) return false;  // the sweep keeps the device's scale
  bool ok = window->import_runs(runs) == runs.size();
  SweepView& sweeps = window->sweep_view();
  window->show_view(&sweeps);
  const SweepPreset chosen = parse_sweep_preset(preset.toStdString());
  sweeps.choose_preset(chosen);
  sweeps.show_point(NormPlacement::Pre, chosen == SweepPreset::Depth ? 8 : 6e-3);
  const QString stem = QStringLiteral("sweep-") + preset;
  ok &= save(*window, out.filePath(stem + QStringLiteral("-window.png")));
  const QSize chart(900, 560);
  try {
    sweeps.export_picture(out.filePath(stem + QStringLiteral(".png")), chart);
    sweeps.export_picture(out.filePath(stem + QStringLiteral(".svg")), chart);
  } catch (const UserError& e) {
    std::fprintf(stderr, "%s\n", e.what());
    ok = false;
  }
  std::printf("%s: %zu results; %s\n", qPrintable(stem), sweeps.results().size(), qPrintable(sweeps.cost_text()));
  return ok;
}

}  // namespace

int pictures(QApplication& app);

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  try {
    return pictures(app);
  } catch (const UserError& e) {  // a run file that cannot be read
    std::fprintf(stderr, "normlab-ui-screenshots: %s\n", e.what());
    return 2;
  }
}

int pictures(QApplication& app) {
  QCoreApplication::setOrganizationName(QStringLiteral("NormLabScreenshots"));
  QCoreApplication::setApplicationName(QStringLiteral("NormLabScreenshots"));
  QApplication::setStyle(QStringLiteral("Fusion"));
  install_english_plurals();
  const QStringList args = app.arguments().mid(1);
  if (args.size() < 2) {
    std::fprintf(stderr, "usage: normlab-ui-screenshots OUT_DIR RUN.json...\n");
    return 2;
  }
  const QDir out(args.front());
  QStringList runs = args.mid(1);
  QTemporaryDir home;
  qputenv("XDG_CONFIG_HOME", home.filePath(QStringLiteral("config")).toUtf8());
  if (runs.front() == QLatin1String("--sweep") && runs.size() > 2) {
    return sweep_pictures(out, home.filePath(QStringLiteral("sweep")), runs[1], runs.mid(2)) ? 0 : 1;
  }
  bool ok = true;

  auto window = open_window(home.filePath(QStringLiteral("launch")));
  ok &= save(*window, out.filePath(QStringLiteral("window-launch.png")));

  QStringList fast;
  for (const QString& file : runs) {
    const RunRecord run = read_json(file.toStdString());
    if (std::abs(run.config.peak_lr - 6e-3) < 1e-9 && run.config.warmup_steps == kShortWarmup) fast << file;
  }
  if (fast.size() == 2) {  // other sets of runs (one placement per run at 1e-3, say) skip these
    window = open_window(home.filePath(QStringLiteral("pre-vs-post")));
    ok &= window->import_runs(fast) == 2;
    settle();  // the chart lays out its legend before the pointer is placed
    hover(*window, window->store().runs().front().record.config.steps * 0.8);
    ok &= save(*window, out.filePath(QStringLiteral("pre-vs-post-6e-3.png")));
    auto* inside = window->findChild<InsideView*>();
    window->show_view(inside);
    settle();
    const QRect left_panel = inside->panel_rect(0);
    QTest::mouseMove(inside->plot(),
                     QPoint(left_panel.left() + left_panel.width() * 20 / 150, left_panel.center().y()));
    ok &= save(*window, out.filePath(QStringLiteral("inside-the-model-6e-3.png")));
    auto* text = window->findChild<TextView*>();
    window->show_view(text);
    ok &= save(*window, out.filePath(QStringLiteral("what-it-writes-6e-3.png")));
    text->ask(QStringLiteral("And the LORD said unto Moses,"));
    ok &=
        test::wait_until([&] { return text->bar_tokens(0).size() == 10 && text->bar_tokens(1).size() == 10; }, 180000);
    ok &= save(*window, out.filePath(QStringLiteral("what-it-writes-prompt-6e-3.png")));
  }

  window = open_window(home.filePath(QStringLiteral("course")));
  ok &= window->import_runs(runs) == runs.size();
  ok &= save(*window, out.filePath(QStringLiteral("course-experiment.png")));
  const QSize chart = window->chart_view().size();
  window->show_view(window->findChild<AboutView*>());
  ok &= save(*window, out.filePath(QStringLiteral("about-this-experiment.png")));  // before the exports' messages

  ok &= window->export_chart(out.filePath(QStringLiteral("course-experiment-chart.png")), chart * 2);
  ok &= window->export_chart(out.filePath(QStringLiteral("course-experiment-chart.svg")), chart);
  return ok ? 0 : 1;
}
