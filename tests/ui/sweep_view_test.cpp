// The Sweeps tab driven as a person would: choose a sweep, see what it reuses and costs,
// start it, click a point, export, stop.
#include "ui/sweep_view.h"

#include <QComboBox>
#include <QFile>
#include <QImage>
#include <QLabel>
#include <QPushButton>
#include <QTemporaryDir>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/sweeps/sweep.h"
#include "lab/lab.h"
#include "lab/run_store.h"
#include "tests/lab/corpus_fixture.h"
#include "ui/loss_chart.h"
#include "ui/main_window.h"
#include "ui/settings_panel.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

class SweepViewTest : public test::CorpusFixture {
 protected:
  static constexpr int kTrainTimeoutMs = 240'000;  // the tokenizer is trained once, on a busy machine

  void SetUp() override {
    CorpusFixture::SetUp();
    if (HasFatalFailure()) return;
    open_window();
  }

  void open_window() {
    MainWindowOptions options;
    options.data_folder = folder_.filePath(QStringLiteral("runs"));
    options.report_error = [this](const QString& title, const QString& text) { errors_ << title + ": " + text; };
    options.confirm = [](const QString&, const QString&) { return true; };
    window_.reset();
    window_ = std::make_unique<MainWindow>(options);
    window_->show();
    window_->show_view(&sweeps());
  }

  SweepView& sweeps() { return window_->sweep_view(); }

  // Layers 1 and 2 for pre and post, each run a tiny model of `steps` steps.
  void choose_tiny_sweep(int steps) {
    window_->settings_panel().set_config(test::tiny_config(corpus_, steps));
    sweeps().choose_preset(std::nullopt);
    sweeps().set_setting("layers");
    sweeps().set_values(QStringLiteral("1, 2"));
    sweeps().set_placements({NormPlacement::Pre, NormPlacement::Post});
    sweeps().set_seeds(1);
    ASSERT_TRUE(sweeps().problem().isEmpty()) << sweeps().problem().toStdString();
  }

  // A finished run of the sweep's point, as if trained earlier on this machine.
  int add_finished(NormPlacement placement, int layers, RunStatus status, int threads) {
    TrainConfig config = window_->settings_panel().config();
    config.model.norm = placement;
    config.model.layers = layers;
    config.threads = threads;
    config.name = default_run_name(config);
    RunRecord run =
        test::synthetic_run(placement, config.peak_lr, config.warmup_steps, config.steps, config.eval_interval);
    run.config = config;
    run.status = status;
    return window_->store().add(run, {});
  }

  QPushButton* button(const QString& text) {
    for (QPushButton* b : sweeps().findChildren<QPushButton*>()) {
      if (b->text() == text) return b;
    }
    return nullptr;
  }

  QStringList errors_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(SweepViewTest, ReusesEarlierRunsTrainsTheRestAndShowsAPointsCurves) {
  choose_tiny_sweep(12);
  // Trained before with another thread count: the same experiment, so reused.
  const int reused = add_finished(NormPlacement::Pre, 1, RunStatus::Done, 3);
  add_finished(NormPlacement::Post, 1, RunStatus::Stopped, 1);  // cut short: trained again
  sweeps().refresh();
  EXPECT_EQ(sweeps().runs_to_train().size(), 3u);
  const QString cost = sweeps().cost_text();
  EXPECT_TRUE(cost.contains(QStringLiteral("1 done, 3 to train"))) << cost.toStdString();
  EXPECT_TRUE(cost.contains(QStringLiteral("about"))) << "estimated from the finished run: " << cost.toStdString();
  ASSERT_TRUE(button(QStringLiteral("Start sweep"))->isEnabled());

  button(QStringLiteral("Start sweep"))->click();
  EXPECT_EQ(window_->store().runs().size(), 5u);
  EXPECT_TRUE(sweeps().runs_to_train().empty()) << "queued runs are not queued twice";
  EXPECT_EQ(sweeps().runs_in_progress().size(), 3u);
  ASSERT_TRUE(test::wait_until([&] { return !window_->lab().queue().busy(); }, kTrainTimeoutMs)) << "still training";
  sweeps().refresh();
  ASSERT_TRUE(errors_.isEmpty()) << errors_.join('\n').toStdString();

  // Four points, each from a run that ended; the stopped one is replaced by its retrain.
  ASSERT_EQ(sweeps().results().size(), 4u);
  for (const SweepResult& r : sweeps().results()) {
    EXPECT_TRUE(r.outcome == Outcome::Trained || r.outcome == Outcome::Stalled) << r.run;
    EXPECT_TRUE(std::isfinite(r.final_val)) << r.run;
  }
  EXPECT_EQ(sweeps().results()[0].run, window_->store().find(reused)->record.config.name);
  EXPECT_FALSE(button(QStringLiteral("Start sweep"))->isEnabled()) << "nothing left to train";
  EXPECT_TRUE(sweeps().cost_text().startsWith(QStringLiteral("4 run"))) << sweeps().cost_text().toStdString();

  sweeps().show_point(NormPlacement::Pre, 1);
  EXPECT_EQ(sweeps().shown_runs(), QList<int>{reused});
  EXPECT_GT(sweeps().curves().plotted_points(reused), 0);

  const QString csv = folder_.filePath(QStringLiteral("sweep.csv")),
                json = folder_.filePath(QStringLiteral("sweep.json")),
                png = folder_.filePath(QStringLiteral("sweep.png")),
                svg = folder_.filePath(QStringLiteral("sweep.svg"));
  sweeps().export_csv(csv);
  sweeps().export_json(json);
  sweeps().export_picture(png, QSize(900, 560));
  sweeps().export_picture(svg, QSize(900, 560));
  QFile csv_file(csv), json_file(json), svg_file(svg);
  ASSERT_TRUE(csv_file.open(QIODevice::ReadOnly) && json_file.open(QIODevice::ReadOnly) &&
              svg_file.open(QIODevice::ReadOnly));
  EXPECT_EQ(csv_file.readAll().count('\n'), 5);
  const auto described = nlohmann::json::parse(json_file.readAll().toStdString());
  EXPECT_EQ(described.at("results").size(), 4u);
  EXPECT_EQ(described.at("fixed").at("steps"), "12");
  EXPECT_TRUE(svg_file.readAll().startsWith("<svg"));
  EXPECT_EQ(QImage(png).size(), QSize(1800, 1120)) << "drawn at twice the size for sharpness";
}

// Nothing trained here yet: a few steps are timed on the worker, and the cost follows.
TEST_F(SweepViewTest, EstimatesFromAFewTimedStepsWhenNothingRanHere) {
  choose_tiny_sweep(1000);
  ASSERT_TRUE(test::wait_until(
      [&] {
        sweeps().refresh();
        return sweeps().cost_text().contains(QStringLiteral("about"));
      },
      60000))
      << sweeps().cost_text().toStdString();
  EXPECT_TRUE(sweeps().cost_text().contains(QStringLiteral("ms per step, timed here")))
      << sweeps().cost_text().toStdString();
  EXPECT_TRUE(window_->store().runs().empty()) << "timing trains no run";
}

TEST_F(SweepViewTest, StopEndsTheRunningRunAndTakesTheRestOutOfTheQueue) {
  choose_tiny_sweep(100000);
  button(QStringLiteral("Start sweep"))->click();
  ASSERT_EQ(window_->store().runs().size(), 4u);
  const int first = window_->store().runs().front().id;
  ASSERT_TRUE(
      test::wait_until([&] { return window_->store().find(first)->record.steps.size() >= 3; }, kTrainTimeoutMs));
  ASSERT_TRUE(button(QStringLiteral("Stop sweep"))->isEnabled());
  const QList<int> running = window_->lab().queue().running();  // side by side: more than one
  ASSERT_EQ(running.size(), window_->lab().queue().side_by_side());
  button(QStringLiteral("Stop sweep"))->click();
  ASSERT_TRUE(test::wait_until([&] { return !window_->lab().queue().busy(); }, 30000));
  ASSERT_EQ(window_->store().runs().size(), std::size_t(running.size())) << "the waiting runs are gone";
  for (const lab::RunEntry& run : window_->store().runs()) {
    EXPECT_TRUE(running.contains(run.id));
    EXPECT_EQ(run.record.status, RunStatus::Stopped);
  }
  EXPECT_EQ(QDir(folder_.filePath(QStringLiteral("runs"))).entryList({QStringLiteral("*.json")}).size(),
            running.size());
  sweeps().refresh();
  // Issue 47: the tab said "4 to train" while Start resumed the stopped runs; it says what
  // Start does (core's one rule): each stopped run goes on from its checkpoint.
  EXPECT_EQ(sweeps().runs_to_resume().size(), std::size_t(running.size()))
      << "a stopped run goes on from its checkpoint when the sweep is started again";
  EXPECT_EQ(sweeps().runs_to_train().size(), 4u - std::size_t(running.size()));
  EXPECT_TRUE(sweeps().cost_text().contains(QStringLiteral("%1 to go on from a checkpoint").arg(running.size())))
      << sweeps().cost_text().toStdString();
}

TEST_F(SweepViewTest, SaysWhatIsWrongAndWillNotStart) {
  choose_tiny_sweep(12);
  sweeps().set_values(QStringLiteral("2, many"));
  EXPECT_TRUE(sweeps().problem().contains(QStringLiteral("many"))) << sweeps().problem().toStdString();
  EXPECT_FALSE(button(QStringLiteral("Start sweep"))->isEnabled());
  sweeps().set_values(QStringLiteral("2, 99"));
  EXPECT_TRUE(sweeps().problem().contains(QStringLiteral("between 1 and 64"))) << sweeps().problem().toStdString();
  sweeps().set_values(QStringLiteral("2"));
  sweeps().set_placements({});
  EXPECT_TRUE(sweeps().problem().contains(QStringLiteral("placement"))) << sweeps().problem().toStdString();
  EXPECT_FALSE(button(QStringLiteral("Start sweep"))->isEnabled());
  window_->sweep_view().start();
  EXPECT_TRUE(window_->store().runs().empty());
  ASSERT_EQ(errors_.size(), 1);
  EXPECT_TRUE(errors_.front().startsWith(QStringLiteral("Sweep not started")));
}

// Choosing another setting to vary puts that setting's values in the box: a learning
// rate is no number of layers.
TEST_F(SweepViewTest, AnotherSettingStartsFromItsOwnValues) {
  sweeps().choose_preset(SweepPreset::LearningRate);
  QComboBox* vary = nullptr;
  for (QComboBox* box : sweeps().findChildren<QComboBox*>()) {
    if (box->findData(QStringLiteral("warmup_steps")) >= 0) vary = box;
  }
  ASSERT_NE(vary, nullptr);
  auto choose = [&](const char* key) {  // as a person picks it from the list
    vary->setCurrentIndex(vary->findData(QString::fromLatin1(key)));
    emit vary->activated(vary->currentIndex());
  };
  choose("layers");
  ASSERT_TRUE(sweeps().problem().isEmpty()) << sweeps().problem().toStdString();
  EXPECT_EQ(sweeps().sweep().values, starting_values("layers", Scale::Cpu));
  choose("warmup_steps");
  ASSERT_TRUE(sweeps().problem().isEmpty()) << sweeps().problem().toStdString();
  EXPECT_EQ(sweeps().sweep().values, starting_values("warmup_steps", Scale::Cpu));
  sweeps().set_values(QStringLiteral("10, 50"));
  choose("warmup_steps");  // the same setting again: the values typed stay
  EXPECT_EQ(sweeps().sweep().values, (std::vector<std::string>{"10", "50"}));
}

// The caption above the point's curves goes with the point: values without it clear both.
TEST_F(SweepViewTest, ThePointShownGoesWhenTheSweepNoLongerHasIt) {
  choose_tiny_sweep(12);
  const int run = add_finished(NormPlacement::Pre, 2, RunStatus::Done, 1);
  sweeps().refresh();
  auto* caption = sweeps().findChild<QLabel*>(QStringLiteral("pointTitle"));
  ASSERT_NE(caption, nullptr);
  const QString waiting = caption->text();
  sweeps().show_point(NormPlacement::Pre, 2);
  EXPECT_TRUE(caption->text().startsWith(QStringLiteral("Pre-norm, 2 layers: 1 run"))) << caption->text().toStdString();
  EXPECT_EQ(sweeps().shown_runs(), QList<int>{run});
  sweeps().set_values(QStringLiteral("2, 4"));
  EXPECT_EQ(sweeps().shown_runs(), QList<int>{run}) << "still a point of the sweep";
  sweeps().set_values(QStringLiteral("1, 4"));
  EXPECT_EQ(caption->text().toStdString(), waiting.toStdString());
  EXPECT_TRUE(sweeps().shown_runs().isEmpty());
  EXPECT_FALSE(sweeps().curves().draws_any_run()) << "its curves are gone too";
}

TEST_F(SweepViewTest, PresetsFillTheControlsAndTheChoiceComesBack) {
  sweeps().choose_preset(SweepPreset::LearningRate);
  ASSERT_TRUE(sweeps().problem().isEmpty()) << sweeps().problem().toStdString();
  const Sweep lr = sweeps().sweep();
  EXPECT_EQ(lr.name, "learning-rate");
  EXPECT_EQ(lr.setting, "peak_lr");
  EXPECT_EQ(lr.values, (std::vector<std::string>{"3e-4", "1e-3", "3e-3", "6e-3", "1e-2"}));
  EXPECT_EQ(lr.placements.size(), 4u);
  sweeps().set_seeds(3);
  EXPECT_EQ(expand(sweeps().sweep()).size(), 5u * 4u * 3u);

  sweeps().choose_preset(SweepPreset::Depth);
  const Sweep depth = sweeps().sweep();
  EXPECT_EQ(depth.setting, "layers");
  EXPECT_DOUBLE_EQ(depth.base.peak_lr, 1e-3) << "the preset's rate, whatever the next run has";
  sweeps().set_values(QStringLiteral("2, 4"));

  open_window();  // the next session
  const Sweep again = sweeps().sweep();
  EXPECT_EQ(again.name, "depth");
  EXPECT_EQ(again.values, (std::vector<std::string>{"2", "4"}));
  EXPECT_EQ(again.seeds, 3);
}

}  // namespace
}  // namespace normlab::ui
