// The window driven as a person would: settings, Start, Stop, import, export, close.
#include "ui/main_window.h"

#include <QAction>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QLineSeries>
#include <QMenu>
#include <QMenuBar>
#include <QProgressDialog>
#include <QScreen>
#include <QSettings>
#include <QSlider>
#include <QStatusBar>
#include <QStatusTipEvent>
#include <QSvgRenderer>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>
#include <QTextBrowser>
#include <QXmlStreamReader>
#include <gtest/gtest.h>
#include <random>

#include "core/device/cuda_backend.h"
#include "core/runs/config_fields.h"
#include "core/runs/presets.h"
#include "core/runs/run_text.h"
#include "core/runs/run_title.h"
#include "core/runs/seeds.h"
#include "core/runs/verdict.h"
#include "core/system/atomic_file.h"
#include "lab/lab.h"
#include "lab/qstring.h"
#include "lab/run_store.h"
#include "tests/lab/corpus_fixture.h"
#include "tests/support/same_losses.h"
#include "tests/support/stand_in_index.h"
#include "tests/support/stopped_run.h"
#include "ui/chart_legend.h"
#include "ui/format.h"
#include "ui/inside_view.h"
#include "ui/loss_chart.h"
#include "ui/loss_chart_view.h"
#include "ui/run_table.h"
#include "ui/settings_panel.h"
#include "ui/sweep_view.h"
#include "ui/text_view.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

class MainWindowTest : public test::CorpusFixture {
 protected:
  void SetUp() override {
    CorpusFixture::SetUp();
    if (HasFatalFailure()) return;
    MainWindowOptions options;
    options.data_folder = folder_.filePath(QStringLiteral("runs"));
    options.report_error = [this](const QString& title, const QString& text) { errors_ << title + ": " + text; };
    options.confirm = [this](const QString&, const QString& question) {
      questions_ << question;
      return answer_;
    };
    window_ = std::make_unique<MainWindow>(options);
    window_->show();
  }

  RunStatus status(int id) const { return window_->store().find(id)->record.status; }
  const RunRecord& record(int id) const { return window_->store().find(id)->record; }

  // Points in the chart's series, counted from the series themselves.
  int series_with_points(int count) const {
    int found = 0;
    for (QAbstractSeries* series : window_->chart().series()) {
      if (auto* line = qobject_cast<QLineSeries*>(series); line && line->count() == count) ++found;
    }
    return found;
  }

  int start_tiny_run(int steps) {
    window_->settings_panel().set_config(test::tiny_config(corpus_, steps));
    EXPECT_TRUE(window_->settings_panel().problem().isEmpty()) << window_->settings_panel().problem().toStdString();
    EXPECT_TRUE(window_->start_action()->isEnabled());
    window_->start_action()->trigger();
    EXPECT_EQ(window_->store().runs().size(), 1u);
    return window_->store().runs().back().id;
  }

  QStringList errors_;
  QStringList questions_;  // asked to confirm
  bool answer_ = true;     // to each
  std::unique_ptr<MainWindow> window_;
};

// A 1280 x 800 laptop screen holds the whole window: no tab or dock may demand more. A
// 1024 x 700 window still has room for everything, side by side.
TEST_F(MainWindowTest, FitsOnA1280By800Screen) {
  const QSize least = window_->minimumSizeHint().expandedTo(window_->minimumSize());
  EXPECT_LE(least.width(), 1024);
  EXPECT_LE(least.height(), 700);
  for (int i = 0; i < window_->views().count(); ++i) {
    EXPECT_LE(window_->view_at(i)->minimumSizeHint().width(), 1024 - 390)
        << window_->views().tabText(i).toStdString() << " leaves too little room for the settings";
  }
}

// The window opens no larger than its screen has room for, frame included; on a screen
// too small for it, at its least size.
TEST_F(MainWindowTest, OpensWithinTheScreen) {
  const QSize room = window_->screen()->availableGeometry().size();
  const QSize least = window_->minimumSizeHint();
  if (room.width() < least.width()) EXPECT_EQ(window_->width(), least.width());
  else EXPECT_LE(window_->frameGeometry().width(), room.width());
  if (room.height() < least.height()) EXPECT_EQ(window_->height(), least.height());
  else EXPECT_LE(window_->frameGeometry().height(), room.height());
}

// Laid out in a small window, the chart's controls, its legend and the run table still
// show their texts whole.
TEST_F(MainWindowTest, SmallWindowsKeepTextsWholeAndApart) {
  for (int seed = 0; seed < 3; ++seed) {
    for (TrainConfig config : workshop_runs(scaled(TrainConfig{}, Scale::Cpu))) {
      config.seed += std::uint64_t(seed);
      RunRecord run = test::synthetic_run(config.model.norm, config.peak_lr, config.warmup_steps, 600, 50);
      run.config.seed = config.seed;
      run.config.name = with_seed(config, 0, 3).name;
      run.status = seed == 2 ? RunStatus::Interrupted : RunStatus::Done;  // the widest status
      window_->store().add(run, {});
    }
  }
  auto lay_out = [&](QSize size) {
    window_->resize(size);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    QCoreApplication::processEvents();
    window_->chart().refresh();
    QCoreApplication::processEvents();
    ASSERT_EQ(window_->size(), size);
  };
  auto whole = [](const QLabel* label) {
    return label->fontMetrics().horizontalAdvance(label->text()) <= label->width();
  };
  auto* hint = window_->findChild<QLabel*>(QStringLiteral("chartHint"));
  auto* slider = window_->findChild<QSlider*>(QStringLiteral("smoothingSlider"));
  auto* value = window_->findChild<QLabel*>(QStringLiteral("smoothingValue"));
  auto* table = window_->findChild<QTableView*>(QStringLiteral("runTable"));
  ASSERT_TRUE(hint && slider && value && table);

  for (const QSize size : {QSize(1280, 740), QSize(1024, 700)}) {
    SCOPED_TRACE(std::to_string(size.width()) + " x " + std::to_string(size.height()));
    lay_out(size);
    EXPECT_TRUE(!hint->isVisible() || whole(hint)) << "the hint is cut: " << hint->text().toStdString();
    EXPECT_TRUE(whole(value));
    EXPECT_FALSE(slider->geometry().intersects(value->geometry())) << "the slider runs over its value";
    QStringList shown;  // the legend's texts as listed beside the chart
    for (int i = 0; i < window_->legend().count(); ++i) shown << window_->legend().item(i)->text();
    EXPECT_EQ(shown.size(), 11) << "five seed groups, their interrupted seeds drawn alone, and the baseline";
    EXPECT_EQ(QSet<QString>(shown.begin(), shown.end()).size(), shown.size()) << shown.join(" | ").toStdString();
    for (const QString& text : shown)
      EXPECT_FALSE(text.endsWith(QStringLiteral("...")))
          << "cut: " << text.toStdString() << " of " << shown.join(" | ").toStdString();
    const QAbstractItemView* view = table;  // QTableView hides the widest-cell measure
    EXPECT_LE(view->sizeHintForColumn(RunTableModel::StatusColumn), table->columnWidth(RunTableModel::StatusColumn))
        << "\"interrupted\" is cut";
  }
}

// Seen: a typo in Steps (9,999,999) started a run of 467 hours without a word. A run the
// lab expects to take more than an hour starts only once the user says yes; a short one
// starts at once.
TEST_F(MainWindowTest, ARunOfMoreThanAnHourStartsOnlyWhenTheUserSaysYes) {
  RunRecord finished = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600);  // 30 s for 600 full-size steps
  finished.environment.device = window_->lab().on_gpu() ? "cuda" : "cpu";
  window_->store().add(finished, {});
  TrainConfig huge = scaled(TrainConfig{}, Scale::Cpu);
  huge.corpus_path = test::tiny_config(corpus_).corpus_path;
  huge.steps = 9'999'999;
  window_->settings_panel().set_config(huge);
  ASSERT_TRUE(window_->settings_panel().problem().isEmpty()) << window_->settings_panel().problem().toStdString();
  answer_ = false;
  window_->start_action()->trigger();
  ASSERT_EQ(questions_.size(), 1);
  EXPECT_TRUE(questions_.front().contains(QStringLiteral(" h "))) << questions_.front().toStdString();
  EXPECT_TRUE(questions_.front().contains(QStringLiteral("pre-norm lr 1e-3 warmup 30"))) << "what it rests on";
  EXPECT_EQ(window_->store().runs().size(), 1u) << "not started";

  window_->settings_panel().set_config(test::tiny_config(corpus_, 30));
  window_->start_action()->trigger();
  EXPECT_EQ(questions_.size(), 1) << questions_.back().toStdString();
  EXPECT_EQ(window_->store().runs().size(), 2u);
}

// Issue 47: layers 64, width 4096 grew memory at 0.8 GB/s until the allocator failed. A run
// estimated at more memory than is available asks first (Cancel / Start anyway); answered
// Cancel, nothing starts.
TEST_F(MainWindowTest, ARunThatCannotFitAsksBeforeItStarts) {
  TrainConfig huge = scaled(TrainConfig{}, Scale::Cpu);
  huge.corpus_path = test::tiny_config(corpus_).corpus_path;
  huge.model.layers = 64;
  huge.model.d_model = 4096;
  huge.model.heads = 32;
  huge.steps = 2;
  window_->settings_panel().set_config(huge);
  ASSERT_TRUE(window_->settings_panel().problem().isEmpty()) << window_->settings_panel().problem().toStdString();
  answer_ = false;
  window_->start_action()->trigger();
  ASSERT_EQ(questions_.size(), 1) << "memory is asked first: if it cannot fit, its time does not matter";
  EXPECT_TRUE(questions_.back().contains(QStringLiteral("GB of memory (estimate) and")))
      << questions_.back().toStdString();
  EXPECT_TRUE(window_->store().runs().empty()) << "not started";
}

// Seen on a re-check: on a new profile, with no run trained on this device yet, a run of
// 9,999,999 steps still started without a word: the estimate had nothing to go by. A run
// far larger than the course's asks first then too; a small one starts at once.
TEST_F(MainWindowTest, AHugeRunAsksFirstEvenBeforeAnySpeedIsKnown) {
  ASSERT_TRUE(test::wait_until([&] { return window_->lab().device_known(); }, 30'000));
  TrainConfig huge = scaled(TrainConfig{}, window_->lab().course_scale());
  huge.corpus_path = test::tiny_config(corpus_).corpus_path;
  huge.steps = 9'999'999;
  window_->settings_panel().set_config(huge);
  ASSERT_TRUE(window_->settings_panel().problem().isEmpty()) << window_->settings_panel().problem().toStdString();
  ASSERT_LT(window_->lab().estimate({huge}).seconds, 0) << "a speed is known: not the case under test";
  answer_ = false;
  window_->start_action()->trigger();
  ASSERT_EQ(questions_.size(), 1);
  EXPECT_TRUE(questions_.front().contains(QStringLiteral("not known"))) << questions_.front().toStdString();
  EXPECT_TRUE(window_->store().runs().empty()) << "not started";

  window_->settings_panel().set_config(test::tiny_config(corpus_, 30));
  window_->start_action()->trigger();
  EXPECT_EQ(questions_.size(), 1) << questions_.back().toStdString();
  EXPECT_EQ(window_->store().runs().size(), 1u);
}

// Asked for on the walk: beside Start, how long its run would take here, from the lab's
// estimate (the one the long-run question and the queue use), following the settings.
TEST_F(MainWindowTest, StartSaysHowLongItsRunWouldTake) {
  ASSERT_TRUE(test::wait_until([&] { return window_->lab().device_known(); }, 30'000));
  EXPECT_FALSE(window_->settings_panel().start_estimate().contains(QStringLiteral("about")))
      << "nothing to go by yet: " << window_->settings_panel().start_estimate().toStdString();
  RunRecord finished = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600);
  finished.environment.device = window_->lab().on_gpu() ? "cuda" : "cpu";
  window_->store().add(finished, {});
  TrainConfig config = scaled(TrainConfig{}, window_->lab().course_scale());
  config.corpus_path = test::tiny_config(corpus_).corpus_path;
  QStringList shown;
  for (const int steps : {600, 60'000}) {
    config.steps = steps;
    window_->settings_panel().set_config(config);
    const lab::Estimate time = window_->lab().estimate({config});
    ASSERT_GT(time.seconds, 0);
    const QString expected = lab::qstr(duration_text(time.seconds));
    EXPECT_TRUE(test::wait_until([&] { return window_->settings_panel().start_estimate().contains(expected); }, 5'000))
        << steps << " steps: " << window_->settings_panel().start_estimate().toStdString() << ", not "
        << expected.toStdString();
    shown << window_->settings_panel().start_estimate();
  }
  EXPECT_NE(shown.front(), shown.back()) << "it follows the steps";
}

// Seen on a keyboard-only walk: no way to switch views but clicking their tabs, no
// shortcut for the course, no letters inside the menus, and F10 did nothing.
TEST_F(MainWindowTest, TheKeyboardReachesEveryViewMenuAndTheCourse) {
  window_->activateWindow();
  ASSERT_TRUE(QTest::qWaitForWindowActive(window_.get()));  // shortcuts go to the active window
  window_->settings_panel().setFocus();
  const int first = window_->views().currentIndex();
  QTest::keyClick(window_.get(), Qt::Key_Tab, Qt::ControlModifier);
  EXPECT_EQ(window_->views().currentIndex(), (first + 1) % window_->views().count());
  QTest::keyClick(window_.get(), Qt::Key_Backtab, Qt::ControlModifier | Qt::ShiftModifier);
  EXPECT_EQ(window_->views().currentIndex(), first);
  EXPECT_FALSE(window_->course_action()->shortcut().isEmpty());

  for (QAction* top : window_->menuBar()->actions()) {
    QSet<QChar> letters;
    for (QAction* item : top->menu()->actions()) {
      if (item->isSeparator()) continue;
      const QString text = item->text();
      const qsizetype at = text.indexOf(QLatin1Char('&'));
      ASSERT_TRUE(at >= 0 && at + 1 < text.size()) << top->text().toStdString() << " > " << text.toStdString();
      const QChar letter = text[at + 1].toLower();
      EXPECT_FALSE(letters.contains(letter))
          << top->text().toStdString() << " > " << text.toStdString() << ": its letter is taken";
      letters.insert(letter);
    }
  }

  QTest::keyClick(window_.get(), Qt::Key_F10);
  EXPECT_EQ(window_->menuBar()->activeAction(), window_->menuBar()->actions().front());
}

// The course experiment over seeds queues each of its five runs once per seed, in turn.
// Without an NVIDIA driver nothing is looked for: the window opens knowing its device, with
// the course ready and scaled for the CPU (the look-up took 13 to 110 s here before). With a
// driver the worker looks it up and the course waits for the answer.
TEST_F(MainWindowTest, TheCourseIsReadyWhenTheWindowOpens) {
  EXPECT_TRUE(window_->course_action()->isEnabled());
  if (!nvidia_driver_present()) {
    EXPECT_TRUE(window_->lab().device_known());
    EXPECT_EQ(window_->settings_panel().config().steps, scaled(TrainConfig{}, Scale::Cpu).steps);
  }
}

// Help > Install GPU support…: asked first, then fetched (here from a local index of
// stand-in wheels) with a progress dialog, and the window says the GPU comes with the next start.
TEST(GpuSupport, HelpInstallsTheCudaLibrariesAfterAsking) {
  QTemporaryDir dir;
  const std::filesystem::path home = dir.path().toStdString();
  const normlab::test::StandIns stand_ins(home / "index");
  normlab::test::IndexServer server(stand_ins.root);
  MainWindowOptions options;
  options.data_folder = dir.filePath(QStringLiteral("runs"));
  options.gpu_install = stand_ins.options(server.url(), home);
  QStringList errors, questions;
  bool answer = false;
  options.report_error = [&](const QString& title, const QString& text) { errors << title + ": " + text; };
  options.confirm = [&](const QString&, const QString& question) {
    questions << question;
    return answer;
  };
  MainWindow window(options);
  window.show();
  auto* install = window.findChild<QAction*>(QStringLiteral("installGpuAction"));
  ASSERT_TRUE(install);
  install->trigger();
  ASSERT_EQ(questions.size(), 1);
  EXPECT_TRUE(questions[0].contains(QString::fromStdString(server.url()))) << "says where from";
  EXPECT_EQ(questions[0].contains(QStringLiteral("No NVIDIA driver was found")), !nvidia_driver_present());
  EXPECT_FALSE(std::filesystem::exists(home / "downloads")) << "no answered no: nothing fetched";

  answer = true;
  install->trigger();
  EXPECT_TRUE(window.findChild<QProgressDialog*>(QStringLiteral("gpuInstallProgress")));
  EXPECT_FALSE(install->isEnabled()) << "one install at a time";
  ASSERT_TRUE(test::wait_until([&] { return install->isEnabled(); }, 30'000));
  EXPECT_TRUE(errors.isEmpty()) << errors.join(QLatin1Char('\n')).toStdString();
  EXPECT_TRUE(window.settings_panel().course_note().contains(QStringLiteral("next start")));
  EXPECT_TRUE(std::filesystem::exists(home / "cuda/torch/lib/libtorch_cuda.so"));
}

TEST(GpuSupport, AFailedInstallIsReportedInADialog) {
  QTemporaryDir dir;
  const std::filesystem::path home = dir.path().toStdString();
  const normlab::test::StandIns stand_ins(home / "index");
  MainWindowOptions options;
  options.data_folder = dir.filePath(QStringLiteral("runs"));
  options.gpu_install = stand_ins.options("http://127.0.0.1:9/simple", home);  // offline
  QStringList errors;
  options.report_error = [&](const QString& title, const QString& text) { errors << title + ": " + text; };
  options.confirm = [](const QString&, const QString&) { return true; };
  MainWindow window(options);
  window.show();
  auto* install = window.findChild<QAction*>(QStringLiteral("installGpuAction"));
  install->trigger();
  ASSERT_TRUE(test::wait_until([&] { return install->isEnabled(); }, 30'000));
  ASSERT_EQ(errors.size(), 1);
  EXPECT_TRUE(
      errors[0].startsWith(QStringLiteral("Cannot install GPU support: cannot fetch http://127.0.0.1:9/simple/")))
      << errors[0].toStdString();
}

TEST_F(MainWindowTest, CourseExperimentOverSeedsQueuesEveryRunPerSeed) {
  window_->settings_panel().set_course_seeds(3);
  EXPECT_EQ(window_->course_action()->text(), QStringLiteral("&Course experiment (5 runs \u00d7 3)"));
  ASSERT_TRUE(test::wait_until([&] { return window_->course_action()->isEnabled(); }, 30000));
  window_->lab().queue().shutdown();  // only the queue's contents matter here
  window_->start_course_experiment();
  ASSERT_EQ(window_->store().runs().size(), 15u);
  const auto& runs = window_->store().runs();
  EXPECT_EQ(runs[0].record.config.name, "pre-norm lr 1e-3 warmup 30 seed 1337");
  EXPECT_EQ(runs[5].record.config.name, "pre-norm lr 1e-3 warmup 30 seed 1338");
  EXPECT_EQ(runs[14].record.config.seed, 1339u);
  // The chart draws the five experiments, each as its seeds' mean.
  window_->chart().refresh();
  EXPECT_EQ(window_->chart().seed_group_of(runs[7].id).size(), 3);
}

// Seen after a crash: the course's "\u00d7 2 seeds" came back as one seed, the settings
// being saved only when the window closed. Starting the course keeps them, as Start does.
TEST_F(MainWindowTest, TheCourseKeepsItsSeedsWhenItStarts) {
  window_->settings_panel().set_course_seeds(2);
  ASSERT_TRUE(test::wait_until([&] { return window_->course_action()->isEnabled(); }, 30000));
  window_->lab().queue().shutdown();  // only what is saved matters here
  window_->start_course_experiment();
  EXPECT_EQ(QSettings().value(QStringLiteral("next-run/course_seeds")).toInt(), 2);
}

TEST_F(MainWindowTest, TinyRunStartedFromTheWindowPutsItsPointsOnTheChart) {
  const int id = start_tiny_run(30);
  ASSERT_TRUE(test::wait_until([&] { return status(id) != RunStatus::Running; }, kTrainTimeoutMs))
      << "still running after " << record(id).steps.size() << " steps";
  ASSERT_EQ(status(id), RunStatus::Done) << record(id).message;
  // The chart catches up on its next refresh: all 30 steps, evaluations at 0, 10, 20 and 30.
  ASSERT_TRUE(test::wait_until(
      [&] { return window_->chart().plotted_points(id) == 30 && window_->chart().plotted_evals(id) == 4; }, 2000));
  EXPECT_GE(series_with_points(30), 1);  // the training curve
  EXPECT_GE(series_with_points(4), 1);   // the held-out curve
  EXPECT_GT(record(id).baseline_loss, 0);
  // Saved as it went, and finished in the data folder.
  const RunRecord saved = read_json(window_->store().find(id)->file.toStdString());
  EXPECT_EQ(saved.status, RunStatus::Done);
  EXPECT_EQ(saved.steps.size(), 30u);
  EXPECT_TRUE(errors_.isEmpty()) << errors_.join('\n').toStdString();
}

TEST_F(MainWindowTest, StopLeavesTheRunStoppedWithItsPointsKept) {
  const int id = start_tiny_run(1'000'000);
  ASSERT_TRUE(test::wait_until([&] { return record(id).steps.size() >= 5; }, kTrainTimeoutMs));
  ASSERT_TRUE(window_->stop_action()->isEnabled());
  window_->stop_action()->trigger();
  ASSERT_TRUE(test::wait_until([&] { return status(id) != RunStatus::Running; }, 30'000));
  EXPECT_EQ(status(id), RunStatus::Stopped);
  const int kept = int(record(id).steps.size());
  EXPECT_GE(kept, 5);
  ASSERT_TRUE(test::wait_until([&] { return window_->chart().plotted_points(id) == kept; }, 2000));
  test::wait_until([] { return false; }, 300);  // nothing may arrive after the stop
  EXPECT_EQ(int(record(id).steps.size()), kept);
  EXPECT_EQ(window_->chart().plotted_points(id), kept);
  EXPECT_FALSE(window_->lab().queue().busy());
  EXPECT_FALSE(window_->stop_action()->isEnabled());
  EXPECT_EQ(read_json(window_->store().find(id)->file.toStdString()).status, RunStatus::Stopped);
}

// Issue 49, item 4: newly started runs appeared off-screen in the run table. A run that
// starts training is scrolled into view.
TEST_F(MainWindowTest, ARunThatStartsIsScrolledIntoView) {
  int last = 0;
  for (int i = 0; i < 40; ++i) {
    RunRecord run = test::synthetic_run(i % 2 ? NormPlacement::Post : NormPlacement::Pre, 1e-3 * (1 + i), 30, 100, 50);
    if (i == 39) {
      run.status = RunStatus::Queued;
      run.steps.clear();
      run.evals.clear();
    }
    last = window_->store().add(run, {});
  }
  auto* table = window_->findChild<QTableView*>(QStringLiteral("runTable"));
  ASSERT_TRUE(table);
  QCoreApplication::processEvents();
  table->scrollToTop();
  const QModelIndex row = table->model()->index(window_->store().row_of(last), 0);
  ASSERT_FALSE(table->viewport()->rect().intersects(table->visualRect(row))) << "the table holds fewer than 40 rows";
  window_->store().set_status(last, RunStatus::Running);
  QCoreApplication::processEvents();
  EXPECT_TRUE(table->viewport()->rect().intersects(table->visualRect(row)));
}

std::unique_ptr<MainWindow> next_session(const QString& runs, QStringList& errors);  // below

TEST_F(MainWindowTest, ClosingDuringTrainingStopsTheWorkerAndSavesTheRun) {
  const int id = start_tiny_run(1'000'000);
  ASSERT_TRUE(test::wait_until([&] { return record(id).steps.size() >= 3; }, kTrainTimeoutMs));
  const QString file = window_->store().find(id)->file;
  EXPECT_TRUE(window_->close());
  EXPECT_FALSE(window_->isVisible());
  const RunRecord saved = read_json(file.toStdString());
  // Issue 49, item 7: closing marked the run "stopped by the user", and Continue
  // interrupted and queued runs was greyed out for it. It is cut short, and goes on.
  EXPECT_EQ(saved.status, RunStatus::Interrupted);
  EXPECT_NE(saved.message.find("closed"), std::string::npos) << saved.message;
  EXPECT_GE(saved.steps.size(), 3u);
  window_.reset();  // the thread has ended: destroying the window must not hang or crash
  QStringList errors;
  auto next = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  auto* continuing = next->findChild<QAction*>(QStringLiteral("continueAction"));
  ASSERT_TRUE(continuing);
  EXPECT_TRUE(continuing->isEnabled()) << "Continue takes the run up again";
  next->lab().stop_all();
}

TEST_F(MainWindowTest, ExportWritesAPngOfTheRequestedSizeAndAParseableSvg) {
  window_->store().add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  window_->store().add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50), {});
  window_->chart().set_log_scale(true);
  window_->chart().set_view({100, 400, 4, 9});

  const QString png = folder_.filePath(QStringLiteral("chart.png"));
  ASSERT_TRUE(window_->export_chart(png, QSize(1234, 777)));
  const QImage image(png);
  ASSERT_FALSE(image.isNull());
  EXPECT_EQ(image.size(), QSize(1234, 777));
  int coloured = 0;  // the curves are there, not just a white page
  for (int y = 0; y < image.height(); y += 3) {
    for (int x = 0; x < image.width(); x += 3) {
      const QColor c = image.pixelColor(x, y);
      coloured += c.saturation() > 80;
    }
  }
  EXPECT_GT(coloured, 200);

  const QString svg = folder_.filePath(QStringLiteral("chart.svg"));
  ASSERT_TRUE(window_->export_chart(svg, QSize(900, 560)));
  QSvgRenderer renderer(svg);
  EXPECT_TRUE(renderer.isValid());
  QFile file(svg);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  QXmlStreamReader xml(&file);
  bool saw_title = false;
  while (!xml.atEnd()) {
    xml.readNext();
    if (xml.isCharacters() && xml.text().contains(QStringLiteral("training (light)"))) saw_title = true;
  }
  EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString();
  EXPECT_TRUE(saw_title);
  EXPECT_TRUE(errors_.isEmpty()) << errors_.join('\n').toStdString();
}

TEST_F(MainWindowTest, ExportedPictureShowsWhatTheChartShows) {
  window_->store().add(test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50), {});
  window_->chart().refresh();
  window_->chart().set_view({0, 300, 4, 10});
  const QString zoomed = folder_.filePath(QStringLiteral("zoomed.png"));
  const QString fitted = folder_.filePath(QStringLiteral("fitted.png"));
  ASSERT_TRUE(window_->export_chart(zoomed, QSize(800, 500)));
  window_->chart().reset_view();
  ASSERT_TRUE(window_->export_chart(fitted, QSize(800, 500)));
  EXPECT_NE(QImage(zoomed), QImage(fitted));
}

TEST_F(MainWindowTest, InsideTheModelStartsWithPreOnTheLeftAndPostOnTheRight) {
  QStringList files;
  for (NormPlacement norm : {NormPlacement::Post, NormPlacement::Pre}) {
    files << folder_.filePath(QString::fromStdString(to_string(norm)) + ".json");
    write_json(test::synthetic_run(norm, 6e-3, 30, 200, 50), files.back().toStdString());
  }
  ASSERT_EQ(window_->import_runs(files), 2);
  const auto boxes = window_->findChild<InsideView*>()->findChildren<QComboBox*>();
  ASSERT_EQ(boxes.size(), 3);
  EXPECT_TRUE(boxes[1]->currentText().startsWith("pre-norm lr 6e-3 warmup 30"))
      << boxes[1]->currentText().toStdString();
  EXPECT_TRUE(boxes[2]->currentText().startsWith("post-norm lr 6e-3 warmup 30"));
}

TEST_F(MainWindowTest, ImportAddsAGoodRunAndABrokenFileChangesNothing) {
  const QString good = folder_.filePath(QStringLiteral("good.json"));
  write_json(test::synthetic_run(NormPlacement::Post, 1e-3, 200, 600, 50), good.toStdString());
  EXPECT_EQ(window_->import_runs({good}), 1);
  ASSERT_EQ(window_->store().runs().size(), 1u);
  EXPECT_TRUE(errors_.isEmpty());
  EXPECT_EQ(window_->store().runs().front().record.config.name, "post-norm lr 1e-3 warmup 200");
  EXPECT_TRUE(QFile::exists(window_->store().runs().front().file));  // kept for the next session

  const QString broken = folder_.filePath(QStringLiteral("broken.json"));
  QFile file(broken);
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write("{\"schema\": \"normlab.run\", \"version\": 1, \"name\": ");
  file.close();
  EXPECT_EQ(window_->import_runs({good, broken}), 0);
  EXPECT_EQ(window_->store().runs().size(), 1u);
  ASSERT_EQ(errors_.size(), 1);
  EXPECT_TRUE(errors_.front().contains(QStringLiteral("broken.json"))) << errors_.front().toStdString();
}

TEST_F(MainWindowTest, RunsComeBackInTheNextSession) {
  const QString good = folder_.filePath(QStringLiteral("good.json"));
  RunRecord interrupted = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 300, 50);
  interrupted.status = RunStatus::Running;  // as saved while training, before a crash
  write_json(interrupted, good.toStdString());
  ASSERT_EQ(window_->import_runs({good}), 1);
  window_->store().set_visible(window_->store().runs().front().id, false);
  window_->close();

  MainWindowOptions options;
  options.data_folder = folder_.filePath(QStringLiteral("runs"));
  MainWindow next(options);
  ASSERT_EQ(next.store().runs().size(), 1u);
  const lab::RunEntry& back = next.store().runs().front();
  EXPECT_EQ(back.record.status, RunStatus::Interrupted);
  EXPECT_EQ(back.record.steps.size(), 300u);
  EXPECT_FALSE(back.visible);
}

// Opens the same data folder as a new session would; errors go to `errors`.
std::unique_ptr<MainWindow> next_session(const QString& runs, QStringList& errors) {
  MainWindowOptions options;
  options.data_folder = runs;
  options.report_error = [&errors](const QString& title, const QString& text) { errors << title + ": " + text; };
  auto window = std::make_unique<MainWindow>(options);
  window->show();
  QCoreApplication::processEvents();  // the damaged-file report waits for the window
  return window;
}

TEST_F(MainWindowTest, DamagedSavedRunsAreMovedAsideAndReportedOnce) {
  window_->close();
  const QDir runs(folder_.filePath(QStringLiteral("runs")));
  write_json(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 100, 50),
             runs.filePath(QStringLiteral("a-good.json")).toStdString());
  const QByteArray cut = "{\"schema\": \"normlab.run\", \"version\": 1, \"name\": ";
  const char raw[] = "\x00\xff\x13 not json";
  const QByteArray binary(raw, sizeof raw - 1);  // the NUL inside counts, the one ending the literal not
  for (const auto& [name, bytes] :
       {std::pair{QStringLiteral("b-cut.json"), cut}, std::pair{QStringLiteral("c-binary.json"), binary}}) {
    QFile file(runs.filePath(name));
    ASSERT_TRUE(file.open(QIODevice::WriteOnly));
    file.write(bytes);
  }

  QStringList errors;
  auto next = next_session(runs.path(), errors);
  ASSERT_EQ(next->store().runs().size(), 1u);
  ASSERT_EQ(errors.size(), 1) << errors.join('\n').toStdString();
  EXPECT_TRUE(errors.front().contains(QStringLiteral("b-cut.json"))) << errors.front().toStdString();
  EXPECT_TRUE(errors.front().contains(QStringLiteral("c-binary.json")));
  EXPECT_TRUE(errors.front().contains(runs.filePath(QStringLiteral("damaged"))));
  EXPECT_TRUE(errors.front().contains(QStringLiteral("2 saved runs could not be read. They were moved")))
      << errors.front().toStdString();
  // Moved, byte for byte; nothing deleted.
  EXPECT_FALSE(runs.exists(QStringLiteral("b-cut.json")));
  QFile moved(runs.filePath(QStringLiteral("damaged/c-binary.json")));
  ASSERT_TRUE(moved.open(QIODevice::ReadOnly));
  EXPECT_EQ(moved.readAll(), binary);
  EXPECT_TRUE(QFile::exists(runs.filePath(QStringLiteral("damaged/b-cut.json"))));
  next->close();

  // Told once: the next session finds nothing to report.
  QStringList again;
  auto third = next_session(runs.path(), again);
  EXPECT_EQ(third->store().runs().size(), 1u);
  EXPECT_TRUE(again.isEmpty()) << again.join('\n').toStdString();
}

// Defect: a second NormLab started meanwhile wrote into the first one's runs folder.
// It shows that folder's runs, says who owns it, and trains, imports or removes nothing.
TEST_F(MainWindowTest, ASecondWindowOnTheSameFolderOnlyShowsItsRuns) {
  const int id = window_->lab().queue_run(test::tiny_config(corpus_, 1'000'000));
  ASSERT_TRUE(test::wait_until([&] { return !record(id).steps.empty(); }, kTrainTimeoutMs));
  QStringList errors;
  auto second = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  EXPECT_TRUE(errors.isEmpty()) << errors.join('\n').toStdString();
  ASSERT_EQ(second->store().runs().size(), 1u);
  auto* owned = second->statusBar()->findChild<QLabel*>(QStringLiteral("readOnlyLabel"));
  ASSERT_TRUE(owned);
  EXPECT_TRUE(owned->toolTip().contains(QString::number(QCoreApplication::applicationPid())) ||
              owned->text().contains(QString::number(QCoreApplication::applicationPid())))
      << owned->text().toStdString();
  EXPECT_TRUE(second->windowTitle().endsWith(QStringLiteral("(read-only)")));
  second->settings_panel().set_config(test::tiny_config(corpus_, 5));
  EXPECT_FALSE(second->start_action()->isEnabled());
  EXPECT_FALSE(second->course_action()->isEnabled());
  second->start_run();
  EXPECT_EQ(second->store().runs().size(), 1u);
  EXPECT_EQ(QDir(folder_.filePath(QStringLiteral("runs"))).entryList({QStringLiteral("*.json")}).size(), 1);
  second->close();
  window_->stop_run();
}

// Seen on the walk: the second window's "another NormLab owns …" went at the first menu
// use (an item's status tip replaced the message), leaving only "(read-only)" in the title.
TEST_F(MainWindowTest, ASecondWindowKeepsSayingWhoOwnsTheFolder) {
  const int id = window_->lab().queue_run(test::tiny_config(corpus_, 1'000'000));
  ASSERT_TRUE(test::wait_until([&] { return !record(id).steps.empty(); }, kTrainTimeoutMs));
  QStringList errors;
  auto second = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  ASSERT_TRUE(second->windowTitle().endsWith(QStringLiteral("(read-only)")));
  for (const QString& tip : {QStringLiteral("Queue a run with these settings"), QString()}) {
    QStatusTipEvent event(tip);  // what hovering a menu item and leaving it sends
    QCoreApplication::sendEvent(second.get(), &event);
  }
  QCoreApplication::processEvents();
  const QString owner = QString::number(QCoreApplication::applicationPid());
  QStringList shown;
  for (const QLabel* label : second->statusBar()->findChildren<QLabel*>()) {
    if (label->isVisible()) shown << label->text() + QStringLiteral(" / ") + label->toolTip();
  }
  EXPECT_TRUE(shown.join('\n').contains(owner)) << shown.join(QStringLiteral(" | ")).toStdString();
  second->close();
  window_->stop_run();
}

// Seen on the walk: "Training “…”, “…” side by side" with long names ran under the
// tokens/s beside it. The stage text gives way, whole in its tooltip.
TEST_F(MainWindowTest, TheStageTextKeepsClearOfTheTokensPerSecond) {
  window_->lab().set_side_by_side(3);
  window_->resize(1024, 700);
  QList<int> ids;
  for (int i = 0; i < 3; ++i) {
    TrainConfig config = test::tiny_config(corpus_, 1'000'000);
    config.seed += std::uint64_t(i);
    config.label = "a run with a long name of its own, number " + std::to_string(i + 1);
    ids << window_->lab().queue_run(config);
  }
  auto* stage = window_->statusBar()->findChild<QLabel*>(QStringLiteral("stageLabel"));
  QLabel* rate = nullptr;
  ASSERT_TRUE(stage);
  ASSERT_TRUE(test::wait_until(
      [&] {
        rate = nullptr;
        for (QLabel* label : window_->statusBar()->findChildren<QLabel*>()) {
          if (label->isVisible() && label->text().endsWith(QStringLiteral("tokens/s"))) rate = label;
        }
        return rate && window_->lab().queue().running().size() == 3 && stage->text().contains(QStringLiteral("Train"));
      },
      kTrainTimeoutMs));
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  QCoreApplication::processEvents();
  EXPECT_LE(stage->fontMetrics().horizontalAdvance(stage->text()), stage->contentsRect().width())
      << stage->text().toStdString();
  EXPECT_LE(stage->geometry().right(), rate->geometry().left()) << "the stage text runs under tokens/s";
  EXPECT_TRUE(stage->toolTip().contains(QStringLiteral("number 3")))
      << "the whole text: " << stage->toolTip().toStdString();
  window_->lab().stop_all();
  ASSERT_TRUE(test::wait_until([&] { return !window_->lab().queue().busy(); }, kTrainTimeoutMs));
}

// The x-axis choice sits beside the chart, and comes back in the next session.
TEST_F(MainWindowTest, TheChartsXAxisIsChosenBesideItAndComesBack) {
  auto* choice = window_->findChild<QComboBox*>(QStringLiteral("xAxisChoice"));
  ASSERT_TRUE(choice);
  EXPECT_EQ(window_->chart().x_axis(), XAxis::Steps);
  choice->setCurrentIndex(choice->findData(int(XAxis::Tokens)));
  EXPECT_EQ(window_->chart().x_axis(), XAxis::Tokens);
  window_->close();
  QStringList errors;
  auto next = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  EXPECT_EQ(next->chart().x_axis(), XAxis::Tokens);
  next->findChild<QComboBox*>(QStringLiteral("xAxisChoice"))->setCurrentIndex(0);  // as it was for the next test
  next->close();
}

TEST_F(MainWindowTest, OneDamagedSavedRunIsToldOfInTheSingular) {
  window_->close();
  const QDir runs(folder_.filePath(QStringLiteral("runs")));
  QFile file(runs.filePath(QStringLiteral("cut.json")));
  ASSERT_TRUE(file.open(QIODevice::WriteOnly));
  file.write("{\"schema\": \"normlab.run\"");
  file.close();
  QStringList errors;
  auto next = next_session(runs.path(), errors);
  ASSERT_EQ(errors.size(), 1);
  EXPECT_TRUE(errors.front().contains(QStringLiteral("1 saved run could not be read. It was moved to")))
      << errors.front().toStdString();
}

// Issue 17 across an app restart: a window closed while its run trains saves it stopped,
// with its checkpoint; the next session resumes it from the run menu and it ends with
// every loss the uninterrupted run has.
TEST_F(MainWindowTest, ARunStoppedByClosingResumesInTheNextSessionWithTheSameNumbers) {
  TrainConfig config = test::tiny_config(corpus_, 80);
  config.threads = 1;
  config.checkpoint_interval = 0;  // a checkpoint with every save
  const int reference = window_->lab().queue_run(config);
  ASSERT_TRUE(test::wait_until([&] { return status(reference) == RunStatus::Done; }, kTrainTimeoutMs));
  const int stopped = window_->lab().queue_run(config);
  ASSERT_TRUE(test::wait_until([&] { return record(stopped).steps.size() >= 25; }, kTrainTimeoutMs));
  const RunRecord uninterrupted = record(reference);
  window_->close();

  QStringList errors;
  auto next = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  ASSERT_EQ(next->store().runs().size(), 2u);
  const lab::RunEntry& back = next->store().runs()[1];
  ASSERT_EQ(back.record.status, RunStatus::Interrupted);  // cut short by closing: Continue takes it up
  auto* table = next->findChild<QTableView*>(QStringLiteral("runTable"));
  ASSERT_TRUE(table);
  table->selectRow(1);
  ASSERT_TRUE(next->resume_action()->isEnabled());
  next->resume_action()->trigger();
  ASSERT_TRUE(
      test::wait_until([&] { return next->store().runs()[1].record.status == RunStatus::Done; }, kTrainTimeoutMs))
      << errors.join('\n').toStdString();
  const RunRecord& resumed = next->store().runs()[1].record;
  ASSERT_EQ(resumed.steps.size(), uninterrupted.steps.size());
  ASSERT_EQ(resumed.evals.size(), uninterrupted.evals.size());
  normlab::test::expect_same_losses(resumed, uninterrupted);
  EXPECT_TRUE(errors.isEmpty()) << errors.join('\n').toStdString();
  EXPECT_FALSE(next->resume_action()->isEnabled()) << "done: nothing left to resume";
}

TEST_F(MainWindowTest, AStatusMessageReplacesTheStageTextInsteadOfOverlappingIt) {
  auto* stage = window_->statusBar()->findChild<QLabel*>(QStringLiteral("stageLabel"));
  ASSERT_TRUE(stage);
  ASSERT_EQ(stage->text(), QStringLiteral("Ready"));
  EXPECT_TRUE(stage->isVisible());
  const QString good = folder_.filePath(QStringLiteral("good.json"));
  write_json(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 100, 50), good.toStdString());
  window_->close();

  // The restore message is shown before the window is: the case that used to overlap.
  MainWindowOptions options;
  options.data_folder = folder_.filePath(QStringLiteral("runs"));
  MainWindow first(options);
  ASSERT_EQ(first.import_runs({good}), 1);
  first.close();
  MainWindow next(options);
  next.show();
  auto* next_stage = next.statusBar()->findChild<QLabel*>(QStringLiteral("stageLabel"));
  ASSERT_FALSE(next.statusBar()->currentMessage().isEmpty());
  EXPECT_FALSE(next_stage->isVisible());
  next.statusBar()->clearMessage();
  EXPECT_TRUE(next_stage->isVisible());
  EXPECT_EQ(next_stage->text(), QStringLiteral("Ready"));
}

TEST_F(MainWindowTest, QueuedRunsComeBackInOrderAndWaitForTheUser) {
  // Three runs queued behind one that trains for a long time, then the app ends.
  window_->lab().set_side_by_side(1);  // kept for the next session too
  const int running = window_->lab().queue_run(test::tiny_config(corpus_, 1'000'000));
  QStringList queued_names;
  for (int steps : {20, 30, 40}) {
    const int id = window_->lab().queue_run(test::tiny_config(corpus_, steps));
    queued_names << QString::fromStdString(record(id).config.name);
    EXPECT_EQ(status(id), RunStatus::Queued);
  }
  // Closed once it trains, so it is saved as cut short (issue 49: Continue takes it up
  // again), not left queued.
  ASSERT_TRUE(test::wait_until([&] { return !record(running).steps.empty(); }, kTrainTimeoutMs));
  window_->close();

  QStringList errors;
  auto next = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  EXPECT_TRUE(errors.isEmpty()) << errors.join('\n').toStdString();
  const auto& runs = next->store().runs();
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[0].record.status, RunStatus::Interrupted);  // the one that was training
  QStringList back;
  for (std::size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].record.status, RunStatus::Queued);
    back << QString::fromStdString(runs[i].record.config.name);
  }
  EXPECT_EQ(back, queued_names);
  EXPECT_TRUE(next->statusBar()->currentMessage().contains(QStringLiteral("3 still queued")))
      << next->statusBar()->currentMessage().toStdString();
  // Nothing starts on its own.
  test::wait_until([] { return false; }, 1000);
  EXPECT_FALSE(next->lab().queue().busy());
  for (std::size_t i = 1; i < runs.size(); ++i) EXPECT_EQ(runs[i].record.status, RunStatus::Queued);

  // When the user says so, they train in that order.
  QAction* resume = nullptr;
  for (QAction* action : next->findChildren<QAction*>()) {
    if (action->text() == QStringLiteral("Continue interrupted and &queued runs")) resume = action;
  }
  ASSERT_TRUE(resume);
  ASSERT_TRUE(resume->isEnabled());
  QList<int> started;
  QObject::connect(&next->store(), &lab::RunStore::status_changed, [&](int id) {
    if (next->store().find(id)->record.status == RunStatus::Running && !started.contains(id)) started << id;
  });
  resume->trigger();
  EXPECT_FALSE(resume->isEnabled());
  EXPECT_EQ(next->lab().queue().running(), QList<int>{runs[0].id}) << "the run cut short by closing goes on first";
  next->lab().stop_runs({runs[0].id});  // a million steps: the queued ones are what this is about
  ASSERT_TRUE(
      test::wait_until([&] { return next->lab().queue().running() == QList<int>{runs[1].id}; }, kTrainTimeoutMs));
  ASSERT_TRUE(test::wait_until([&] { return !next->lab().queue().busy(); }, kTrainTimeoutMs));
  for (std::size_t i = 1; i < runs.size(); ++i) {
    EXPECT_EQ(runs[i].record.status, RunStatus::Done) << runs[i].record.message;
    EXPECT_EQ(read_json(runs[i].file.toStdString()).status, RunStatus::Done);
  }
  EXPECT_EQ(started, (QList<int>{runs[0].id, runs[1].id, runs[2].id, runs[3].id}));
}

// Issue 16: Run > Runs side by side sets how many runs train at once, says what auto means
// here, and comes back in the next session.
TEST_F(MainWindowTest, TheSideBySideChoiceTakesEffectAndComesBack) {
  auto* menu = window_->findChild<QMenu*>(QStringLiteral("sideBySideMenu"));
  ASSERT_TRUE(menu);
  QAction *automatic = nullptr, *one = nullptr;
  for (QAction* choice : menu->actions()) {
    if (choice->data().toInt() == 0) automatic = choice;
    if (choice->data().toInt() == 1) one = choice;
  }
  ASSERT_TRUE(automatic && one);
  EXPECT_TRUE(automatic->isChecked());
  EXPECT_EQ(automatic->text(), QStringLiteral("Auto: %1 here").arg(window_->lab().auto_side_by_side()));
  EXPECT_EQ(window_->lab().queue().side_by_side(), window_->lab().auto_side_by_side());
  one->trigger();
  EXPECT_TRUE(one->isChecked() && !automatic->isChecked());
  EXPECT_EQ(window_->lab().queue().side_by_side(), 1);
  window_->close();

  QStringList errors;
  auto next = next_session(folder_.filePath(QStringLiteral("runs")), errors);
  EXPECT_EQ(next->lab().side_by_side_choice(), 1);
  EXPECT_EQ(next->lab().queue().side_by_side(), 1);
}

TEST_F(MainWindowTest, RemovingARunDeletesItsSavedCopy) {
  const QString good = folder_.filePath(QStringLiteral("good.json"));
  write_json(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 300, 50), good.toStdString());
  ASSERT_EQ(window_->import_runs({good}), 1);
  const lab::RunEntry& run = window_->store().runs().front();
  const QString kept = run.file;
  window_->remove_runs({run.id});
  ASSERT_EQ(questions_.size(), 1);
  EXPECT_TRUE(questions_.back().startsWith(QStringLiteral("Remove 1 run from NormLab? Its saved data")))
      << questions_.back().toStdString();
  EXPECT_TRUE(window_->store().runs().empty());
  EXPECT_FALSE(QFile::exists(kept));
  EXPECT_TRUE(QFile::exists(good));
  const QString retrained = folder_.filePath(QStringLiteral("retrained.json"));
  write_json(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 301, 50), retrained.toStdString());
  ASSERT_EQ(window_->import_runs({good, retrained}), 2);
  window_->remove_runs({window_->store().runs()[0].id, window_->store().runs()[1].id});
  EXPECT_TRUE(questions_.back().startsWith(QStringLiteral("Remove 2 runs from NormLab? Their saved data")))
      << questions_.back().toStdString();
}

TEST_F(MainWindowTest, ExportsRunsAsJsonFilesAndOneCsv) {
  window_->store().add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 50), {});
  window_->store().add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 200, 50), {});
  QList<int> ids;
  for (const lab::RunEntry& run : window_->store().runs()) ids << run.id;
  const QString out = folder_.filePath(QStringLiteral("export"));
  QDir().mkpath(out);
  ASSERT_TRUE(window_->export_runs(lab::RunExport::Json, ids, out));
  EXPECT_EQ(read_json(QDir(out).filePath(QStringLiteral("pre-norm_lr_6e-3_warmup_30.json")).toStdString()).steps.size(),
            200u);
  EXPECT_TRUE(QFile::exists(QDir(out).filePath(QStringLiteral("post-norm_lr_6e-3_warmup_30.json"))));
  const QString csv = QDir(out).filePath(QStringLiteral("runs.csv"));
  ASSERT_TRUE(window_->export_runs(lab::RunExport::Csv, ids, csv));
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  EXPECT_EQ(file.readAll().count('\n'), 1 + 2 * 201);  // steps 0 (evaluated) to 200
}

// Issue 28: the selected runs' text, one section per evaluation, in one Markdown file.
TEST_F(MainWindowTest, ExportsRunsAsMarkdown) {
  RunRecord run = test::synthetic_run(NormPlacement::Post, 6e-3, 30, 200, 100);
  run.text.prompts = {"In the beginning"};
  run.text.samples = {{100, {",,,,"}, {"the and of"}, {}}, {200, {", , ,"}, {"of the LORD"}, {}}};
  const int id = window_->store().add(run, {});
  const QString path = folder_.filePath(QStringLiteral("text.md"));
  ASSERT_TRUE(window_->export_runs(lab::RunExport::Markdown, {id}, path));
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QString markdown = QString::fromUtf8(file.readAll());
  EXPECT_TRUE(markdown.startsWith(QStringLiteral("# post-norm lr 6e-3 warmup 30"))) << markdown.toStdString();
  EXPECT_EQ(markdown.count(QStringLiteral("\n### Step ")), 2);
  EXPECT_TRUE(markdown.contains(QStringLiteral("of the LORD")));
  EXPECT_FALSE(window_->export_runs(lab::RunExport::Markdown, {id}, folder_.path()))
      << "a folder is not a file to write";
}

// Issue 28: a click on the loss curves picks the step What it writes shows (the evaluation
// at or before it), as its slider does; a drag still zooms and picks nothing.
TEST_F(MainWindowTest, AClickOnTheCurvesPicksTheStepWhatItWritesShows) {
  RunRecord run = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 100);
  run.text.prompts = {"In the beginning"};
  run.text.samples = {{100, {"was the word"}, {"the and of"}, {}}, {200, {"God created"}, {"of the LORD"}, {}}};
  window_->store().add(run, {});
  window_->chart().refresh();
  window_->chart().set_view({0, 200, 4, 10});
  QCoreApplication::processEvents();
  TextView& text = window_->text_view();
  ASSERT_TRUE(test::wait_until([&] { return text.text_of(0).contains(QStringLiteral("Step 200")); }, 30'000))
      << "it follows the latest evaluation";

  LossChartView& view = window_->chart_view();
  auto point_at = [&](double step) {
    return view.mapFromScene(window_->chart().mapToScene(window_->chart().position_of({step, 7})));
  };
  QTest::mouseClick(view.viewport(), Qt::LeftButton, {}, point_at(150));
  EXPECT_TRUE(text.text_of(0).contains(QStringLiteral("Step 100"))) << text.text_of(0).toStdString();
  EXPECT_TRUE(window_->statusBar()->currentMessage().contains(QStringLiteral("step 150")))
      << window_->statusBar()->currentMessage().toStdString();

  QTest::mousePress(view.viewport(), Qt::LeftButton, {}, point_at(20));
  QTest::mouseMove(view.viewport(), point_at(190));
  QTest::mouseRelease(view.viewport(), Qt::LeftButton, {}, point_at(190) + QPoint(0, 40));
  EXPECT_FALSE(window_->chart().follows_data()) << "a drag zooms";
  EXPECT_TRUE(text.text_of(0).contains(QStringLiteral("Step 100"))) << "and picks no step";
}

// Issue 30: two runs that differ in their steps read apart in the table and the legend; a
// name given in the table (F2, a double click) and a note are the run's everywhere: the
// table, the details, the legend, the CSV and the run file.
TEST_F(MainWindowTest, RunsReadApartAndARenameAndANoteGoEverywhere) {
  window_->store().add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 50), {});
  window_->store().add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 300, 50), {});
  auto* table = window_->findChild<QTableView*>(QStringLiteral("runTable"));
  ASSERT_TRUE(table);
  EXPECT_TRUE(table->editTriggers() & QAbstractItemView::EditKeyPressed) << "F2 renames";
  EXPECT_TRUE(table->editTriggers() & QAbstractItemView::DoubleClicked);
  const QModelIndex first = table->model()->index(0, RunTableModel::NameColumn);
  const QModelIndex second = table->model()->index(1, RunTableModel::NameColumn);
  EXPECT_EQ(first.data().toString().toStdString(), "pre-norm lr 6e-3 warmup 30 \u00b7 steps 200, eval-interval 50");
  EXPECT_EQ(second.data().toString().toStdString(), "pre-norm lr 6e-3 warmup 30 \u00b7 steps 300, eval-interval 50");
  EXPECT_TRUE(first.flags() & Qt::ItemIsEditable);

  ASSERT_TRUE(table->model()->setData(first, QStringLiteral("short run"), Qt::EditRole));  // the editor's commit
  const int id = window_->store().runs()[0].id;
  ASSERT_TRUE(window_->note_run(id, QStringLiteral("too few steps to tell")));
  EXPECT_TRUE(errors_.isEmpty()) << errors_.join('\n').toStdString();
  EXPECT_EQ(first.data().toString(), QStringLiteral("short run"));
  EXPECT_TRUE(first.data(Qt::ToolTipRole).toString().startsWith(QStringLiteral("too few steps to tell")));
  EXPECT_EQ(window_->store().runs()[0].record.config.name, "pre-norm lr 6e-3 warmup 30") << "its name in files stays";
  ASSERT_TRUE(test::wait_until(
      [&] {
        const auto entries = window_->chart().legend_entries();
        return std::any_of(entries.begin(), entries.end(), [](const LegendEntry& e) { return e.name == "short run"; });
      },
      30000));

  table->selectRow(0);
  auto* details = window_->findChild<QTextBrowser*>(QStringLiteral("runDetails"));
  ASSERT_TRUE(details);
  EXPECT_TRUE(details->toPlainText().startsWith(QStringLiteral("\u25a0 short run")))
      << details->toPlainText().toStdString();
  EXPECT_TRUE(details->toPlainText().contains(QStringLiteral("too few steps to tell")));
  EXPECT_TRUE(details->toPlainText().contains(QStringLiteral("Settings say")));

  const QString csv = folder_.filePath(QStringLiteral("runs.csv"));
  ASSERT_TRUE(window_->export_runs(lab::RunExport::Csv, {id}, csv));
  QFile file(csv);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray text = file.readAll();
  const RunVerdict& verdict = window_->store().find(id)->verdict;  // and what it is doing, then its settings
  const std::string row = ",\"short run\",\"too few steps to tell\"," + std::string(info(verdict.verdict).name) + "," +
                          (verdict.since_step >= 0 ? std::to_string(verdict.since_step) : "") + ",pre,0.006,";
  EXPECT_TRUE(text.contains(row.c_str())) << row << "\n" << text.left(400).toStdString();
}

// Issue 30: two runs selected, the details hold only the settings they differ in and their
// last held-out losses; three or more, the same as a table with a column per run.
TEST_F(MainWindowTest, SelectedRunsShowOnlyTheSettingsTheyDifferIn) {
  window_->store().add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 50), {});
  window_->store().add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 300, 50), {});
  window_->store().add(test::synthetic_run(NormPlacement::Post, 1e-3, 30, 300, 50), {});
  auto* table = window_->findChild<QTableView*>(QStringLiteral("runTable"));
  auto* details = window_->findChild<QTextBrowser*>(QStringLiteral("runDetails"));
  ASSERT_TRUE(table && details);
  table->selectRow(0);
  table->selectionModel()->select(table->model()->index(1, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  QString text = details->toPlainText();
  EXPECT_TRUE(text.contains(QStringLiteral("Norm placement")) && text.contains(QStringLiteral("Steps")))
      << text.toStdString();
  EXPECT_FALSE(text.contains(QStringLiteral("Peak learning rate"))) << "the same in both";
  EXPECT_FALSE(text.contains(QStringLiteral("Layers")));
  EXPECT_TRUE(text.contains(QStringLiteral("Held-out, last")));
  EXPECT_TRUE(text.contains(loss_text(window_->store().runs()[1].record.final_val_loss())));
  EXPECT_TRUE(text.contains(QStringLiteral("Gap to training")));
  EXPECT_TRUE(text.contains(loss_text(window_->store().runs()[1].record.generalisation_gap())));
  for (int row = 0; row < 2; ++row) {  // and the run table's column, row by row
    EXPECT_EQ(table->model()->index(row, RunTableModel::GapColumn).data().toString(),
              loss_text(window_->store().runs()[std::size_t(row)].record.generalisation_gap()));
  }
  // Issue 48: what differs in settings and verdicts, in a sentence above the table.
  EXPECT_TRUE(text.startsWith(QStringLiteral("The norm placement and the ") + lab::qstr(config_field("steps").noun) +
                              QStringLiteral(" differ. Pre-norm ")))
      << text.toStdString();
  // And each run's verdict: one word in the table, its sentence in the tooltip.
  for (int row = 0; row < 2; ++row) {
    const RunVerdict& verdict = window_->store().runs()[std::size_t(row)].verdict;
    const QModelIndex cell = table->model()->index(row, RunTableModel::VerdictColumn);
    EXPECT_EQ(cell.data().toString(), QString::fromUtf8(info(verdict.verdict).word));
    EXPECT_TRUE(cell.data(Qt::ToolTipRole).toString().contains(lab::qstr(verdict.sentence).toHtmlEscaped()));
  }
  EXPECT_EQ(table->model()->index(0, RunTableModel::VerdictColumn).data().toString(), "learning");

  table->selectionModel()->select(table->model()->index(2, 0), QItemSelectionModel::Select | QItemSelectionModel::Rows);
  text = details->toPlainText();
  EXPECT_TRUE(text.contains(QStringLiteral("Peak learning rate"))) << "the third run's differs";
  // Issue 49, item 8: as run names write it, not 0.006.
  EXPECT_TRUE(text.contains(QStringLiteral("1e-3")) && text.contains(QStringLiteral("6e-3"))) << text.toStdString();
  EXPECT_FALSE(text.contains(QStringLiteral("0.006"))) << text.toStdString();
}

// Issue 48: when a run's verdict changes, the status bar says so once, in its first clause;
// the evidence's links in the details open the views it comes from.
TEST_F(MainWindowTest, AVerdictThatChangesIsSaidInTheStatusBar) {
  RunRecord run = test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50);
  const auto evals = run.evals;
  run.evals.clear();
  run.status = RunStatus::Running;
  const int id = window_->store().add(run, {});
  for (const EvalMetrics& e : evals) {
    window_->store().append_eval(id, e);
    if (window_->store().find(id)->verdict.verdict == Verdict::OnBaseline) break;
  }
  const RunVerdict& verdict = window_->store().find(id)->verdict;
  ASSERT_EQ(verdict.verdict, Verdict::OnBaseline) << verdict.sentence;
  const QString said = window_->statusBar()->currentMessage();
  EXPECT_TRUE(said.startsWith(QStringLiteral("\u201c%1\u201d: On the unigram baseline since step %2 (")
                                  .arg(lab::qstr(display_name(run.config)))
                                  .arg(verdict.since_step)))
      << said.toStdString();
  EXPECT_FALSE(said.contains(QLatin1Char(';'))) << "its first clause";

  auto* table = window_->findChild<QTableView*>(QStringLiteral("runTable"));
  auto* details = window_->findChild<QTextBrowser*>(QStringLiteral("runDetails"));
  ASSERT_TRUE(table && details);
  table->selectRow(window_->store().row_of(id));
  EXPECT_TRUE(details->toPlainText().contains(lab::qstr(verdict.sentence))) << details->toPlainText().toStdString();
  emit details->anchorClicked(QUrl(QStringLiteral("curves")));
  EXPECT_EQ(window_->views().currentIndex(), 0) << "the loss curves";
  emit details->anchorClicked(QUrl(QStringLiteral("text")));
  EXPECT_EQ(window_->views().tabText(window_->views().currentIndex()).remove(QLatin1Char('&')),
            QStringLiteral("What it writes"));
  emit details->anchorClicked(QUrl(QStringLiteral("statistic:mlp_grad_norm")));
  EXPECT_EQ(window_->views().tabText(window_->views().currentIndex()).remove(QLatin1Char('&')),
            QStringLiteral("Inside the model"));
}

// Issue 30: the same file imported twice was drawn twice, as "mean of 1 seed"; the second
// time it is refused with a dialog naming the run.
TEST_F(MainWindowTest, ImportingARunAlreadyOpenIsRefusedNamingIt) {
  const QString good = folder_.filePath(QStringLiteral("good.json"));
  write_json(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 200, 50), good.toStdString());
  ASSERT_EQ(window_->import_runs({good}), 1);
  EXPECT_EQ(window_->import_runs({good}), 0);
  EXPECT_EQ(window_->store().runs().size(), 1u);
  ASSERT_EQ(errors_.size(), 1);
  EXPECT_TRUE(errors_[0].startsWith(QStringLiteral("Already open: ")));
  EXPECT_TRUE(errors_[0].contains(QStringLiteral("\u201cpre-norm lr 6e-3 warmup 30 \u00b7 steps 200")))
      << errors_[0].toStdString();
}

// A folder a cluster's array tasks write: File > Follow folder shows its runs as they land,
// and its sweep's description fills the Sweeps tab (its fixed settings the next run's).
TEST_F(MainWindowTest, FollowingAFolderFillsTheSweepsTabAsPointsLand) {
  const QString followed = folder_.filePath(QStringLiteral("cluster runs"));
  ASSERT_TRUE(QDir().mkpath(followed));
  Sweep sweep;
  sweep.name = "depth";
  sweep.setting = "layers";
  sweep.values = {"1", "2"};
  sweep.placements = {NormPlacement::Pre};
  sweep.base = test::tiny_config(corpus_, 40);
  write_file_atomically(sweep_description_path(followed.toStdString(), sweep.name), sweep_json_text(sweep, {}));
  const std::vector<SweepRun> points = expand(sweep);
  auto land = [&](std::size_t i) {
    RunRecord run = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 40, 10);
    run.config = points[i].config;
    write_json(run, QDir(followed).filePath(QString::number(i) + QStringLiteral(".json")).toStdString());
  };
  land(0);

  EXPECT_FALSE(window_->follow_folder(folder_.filePath(QStringLiteral("nowhere"))));
  ASSERT_EQ(errors_.size(), 1);
  EXPECT_TRUE(errors_.front().startsWith(QStringLiteral("Cannot follow the folder: ")))
      << errors_.front().toStdString();
  ASSERT_TRUE(window_->follow_folder(followed));
  EXPECT_EQ(window_->store().runs().size(), 1u);
  window_->sweep_view().refresh();
  const std::vector<SweepRun> shown = expand(window_->sweep_view().sweep());
  ASSERT_EQ(shown.size(), points.size());
  for (std::size_t i = 0; i < points.size(); ++i) EXPECT_EQ(shown[i].config.name, points[i].config.name);
  EXPECT_EQ(window_->sweep_view().results().size(), 1u);
  EXPECT_EQ(window_->sweep_view().runs_to_train().size(), 1u);

  land(1);
  ASSERT_TRUE(
      test::wait_until([&] { return window_->sweep_view().results().size() == 2; }, 3 * lab::FolderFollower::kPollMs));
  EXPECT_TRUE(window_->sweep_view().runs_to_train().empty());
}

TEST_F(MainWindowTest, FailedRunIsReportedAndMarkedFailed) {
  window_->lab().set_side_by_side(1);  // the second waits behind the first
  TrainConfig config = test::tiny_config(folder_.filePath(QStringLiteral("no-such-corpus.txt")));
  const int id = window_->lab().queue_run(config);
  const QString dropped_file = window_->store().find(window_->lab().queue_run(config))->file;  // dropped with it
  ASSERT_TRUE(QFile::exists(dropped_file));                                                    // saved as queued
  ASSERT_TRUE(test::wait_until([&] { return !errors_.isEmpty(); }, 60'000));
  EXPECT_EQ(status(id), RunStatus::Failed);
  EXPECT_EQ(window_->store().runs().size(), 1u);
  // Neither comes back queued in the next session.
  EXPECT_EQ(read_json(window_->store().find(id)->file.toStdString()).status, RunStatus::Failed);
  EXPECT_FALSE(QFile::exists(dropped_file));
  EXPECT_TRUE(errors_.front().contains(QStringLiteral("no-such-corpus"))) << errors_.front().toStdString();
}

// Stop (one selected run, then the other), Stop all, and closing the window, each while
// two runs train side by side, at a random step of their first hundred (layer statistics
// at every step, an evaluation and a checkpoint every 10): each run ends stopped, its file
// whole, its checkpoint at its last step. Each way twice, each round in a window of its own.
TEST_F(MainWindowTest, StopStopAllAndClosingLeaveTwoRunsStoppedAndWhole) {
  window_->close();
  std::mt19937 random{std::random_device()()};
  for (int round = 0; round < 6; ++round) {
    const char* ways[] = {"Stop", "Stop all", "closing the window"};
    const int way = round % 3;
    const int after_steps = std::uniform_int_distribution<int>(0, 100)(random);
    SCOPED_TRACE(std::string(ways[way]) + " after " + std::to_string(after_steps) + " steps");
    QStringList errors;
    auto window = next_session(folder_.filePath(QStringLiteral("runs-%1").arg(round)), errors);
    window->lab().set_side_by_side(2);
    TrainConfig config = test::tiny_config(corpus_, 1'000'000);
    config.model.d_model = 128;  // wide enough for oneDNN's JIT matmuls, as in the CLI's stop test
    config.model.heads = 4;
    config.threads = 1;
    config.eval_interval = 10;
    config.checkpoint_interval = 0;  // a checkpoint with every save
    const int first = window->lab().queue_run(config);
    config.seed += 1;
    const int second = window->lab().queue_run(config);
    auto& store = window->store();
    ASSERT_TRUE(test::wait_until(
        [&] {
          return int(store.find(first)->record.steps.size()) >= after_steps &&
                 store.find(second)->record.status == RunStatus::Running;
        },
        kTrainTimeoutMs));
    const QString files[] = {store.find(first)->file, store.find(second)->file};
    if (way == 0) {
      auto* table = window->findChild<QTableView*>(QStringLiteral("runTable"));
      ASSERT_TRUE(table);
      table->selectRow(0);
      window->stop_action()->trigger();
      ASSERT_TRUE(test::wait_until([&] { return store.find(first)->record.status != RunStatus::Running; }, 30'000));
      EXPECT_EQ(store.find(second)->record.status, RunStatus::Running) << "Stop stops the selected run only";
      table->selectRow(1);
      window->stop_action()->trigger();
    } else if (way == 1) {
      window->findChild<QAction*>(QStringLiteral("stopAllAction"))->trigger();
    }
    if (way == 2) {
      EXPECT_TRUE(window->close());
    } else {
      ASSERT_TRUE(test::wait_until([&] { return !window->lab().queue().busy(); }, 30'000));
      for (const int id : {first, second}) EXPECT_EQ(store.find(id)->record.status, RunStatus::Stopped);
    }
    window.reset();
    // Closing cuts the runs short (issue 49, item 7): Continue takes them up again.
    for (const QString& file : files)
      normlab::test::expect_stopped_and_whole(file.toStdString(), normlab::test::Csv::None,
                                              way == 2 ? RunStatus::Interrupted : RunStatus::Stopped);
    EXPECT_TRUE(errors.isEmpty()) << errors.join('\n').toStdString();
  }
}

}  // namespace
}  // namespace normlab::ui
