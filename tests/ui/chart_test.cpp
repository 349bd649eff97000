// The chart on its own: colours, smoothing, scales, zoom and the hover readout.
#include <QAreaSeries>
#include <QCategoryAxis>
#include <QCoreApplication>
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsScene>
#include <QGraphicsSimpleTextItem>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLineSeries>
#include <QRegularExpression>
#include <QSvgRenderer>
#include <QTemporaryDir>
#include <QTest>
#include <QTransform>
#include <QXmlStreamReader>
#include <algorithm>
#include <cmath>
#include <functional>
#include <gtest/gtest.h>
#include <map>
#include <optional>
#include <set>

#include "core/runs/run_title.h"
#include "lab/qstring.h"
#include "lab/run_store.h"
#include "ui/chart_export.h"
#include "ui/format.h"
#include "ui/loss_chart.h"
#include "ui/loss_chart_view.h"
#include "ui/run_colors.h"
#include "ui/smoothing.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

TEST(DebiasedEma, FirstValueIsKeptAndAConstantStaysConstant) {
  DebiasedEma ema(0.9);
  EXPECT_DOUBLE_EQ(ema.add(5.0), 5.0);  // a plain EMA would give 0.5
  for (int i = 0; i < 50; ++i) EXPECT_NEAR(ema.add(5.0), 5.0, 1e-12);
  DebiasedEma off(0);
  EXPECT_DOUBLE_EQ(off.add(3.0), 3.0);
  EXPECT_DOUBLE_EQ(off.add(7.0), 7.0);
}

TEST(RunColours, QtColoursAreThePalettes) {
  const QColor blue = family_colour(Hue::Blue, 0), red = family_colour(Hue::Red, 0),
               green = family_colour(Hue::Green, 0);
  EXPECT_GT(blue.blue(), blue.red());
  EXPECT_GT(red.red(), red.blue());
  EXPECT_GT(green.green(), green.red());
  EXPECT_GT(training_colour(blue).lightness(), blue.lightness());
  EXPECT_EQ(family_colour(Hue::Teal, 5).rgb() & 0xffffff, hue_colour(Hue::Teal, 5));
}

// Defect: among 13 runs a post-norm run was orange, a pre-norm one purple, another
// post-norm one magenta (the old shades changed hue), and a 2-layer sweep run wore the
// blue of the 8-layer pre-norm seed group. Every run's colour must keep its placement's
// hue, and every curve of one hue must look different from the others of that hue.
TEST(RunStore, ColoursSayThePlacementAndCurvesOfOneHueStayApart) {
  lab::RunStore store;
  std::vector<int> ids;
  auto add = [&](NormPlacement norm, double lr, int warmup, int layers = 8, std::uint64_t seed = 1337) {
    RunRecord run = test::synthetic_run(norm, lr, warmup, 600);
    run.config.model.layers = layers;
    run.config.seed = seed;
    ids.push_back(store.add(run, {}));
    return ids.back();
  };
  for (std::uint64_t seed : {1337, 1338, 1339}) add(NormPlacement::Pre, 6e-3, 30, 8, seed);  // one group
  const int two_layers = add(NormPlacement::Pre, 1e-3, 30, 2);
  for (double lr : {3e-4, 1e-3, 3e-3, 6e-3, 1e-2}) add(NormPlacement::Post, lr, 30);
  for (double lr : {1e-3, 3e-3}) add(NormPlacement::Pre, lr, 30, 4);
  add(NormPlacement::Post, 1e-3, 200);
  add(NormPlacement::Peri, 1e-3, 30);
  ASSERT_EQ(store.runs().size(), 13u);

  std::map<Hue, std::set<std::pair<QRgb, bool>>> looks;  // per hue, one look per seed group
  for (const lab::RunEntry& run : store.runs()) {
    const Hue hue = family_of(run.record.config);
    const QColor colour = run_colour(run);
    EXPECT_NEAR(colour.hslHueF() * 360, family_colour(hue, 0).hslHueF() * 360, 3.0)
        << run.record.config.name << " is drawn in another hue";
    if (run.record.config.seed == 1337) {
      EXPECT_TRUE(looks[hue].insert({colour.rgb(), run_squared(run)}).second)
          << run.record.config.name << " looks like another curve of its hue";
    }
  }
  EXPECT_EQ(run_colour(*store.find(ids[1])), run_colour(*store.find(ids[0]))) << "a seed group is one curve";
  EXPECT_NE(run_colour(*store.find(two_layers)), run_colour(*store.find(ids[0])));
  EXPECT_EQ(store.unique_name(lab::qstr(store.runs()[0].record.config.name)),
            lab::qstr(store.runs()[0].record.config.name) + " (2)");
}

class LossChartTest : public ::testing::Test {
 protected:
  LossChartTest() : chart_(store_) { chart_.resize(1000, 600); }
  lab::RunStore store_;
  LossChart chart_;
};

TEST_F(LossChartTest, FollowsTheDataUntilZoomedAndFitsAgainOnReset) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  chart_.refresh();
  ViewRange fitted = chart_.view();
  EXPECT_LT(fitted.x_min, 0);  // a margin keeps the first and last dots whole
  EXPECT_NEAR(fitted.x_min, 0, 10);
  EXPECT_GT(fitted.x_max, 600);
  EXPECT_NEAR(fitted.x_max, 600, 10);
  EXPECT_LT(fitted.y_min, 4.6);
  EXPECT_GT(fitted.y_max, 7.6);  // the baseline, above where the run is now
  EXPECT_LT(fitted.y_max, 8.0);  // not the starting loss (9.01): the band that matters
  chart_.set_view({100, 200, 5, 6});
  EXPECT_FALSE(chart_.follows_data());
  store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 3000, 100), {});
  chart_.refresh();
  EXPECT_DOUBLE_EQ(chart_.view().x_max, 200);  // a zoom is not undone by new data
  chart_.reset_view();
  EXPECT_NEAR(chart_.view().x_max, 3000, 50);
}

// Seen: a 9,999,999-step run stopped after a few hundred steps kept the step axis at
// 10 million after Fit to data, every curve squashed into its first pixels. A run that
// trains reaches to its planned end, any other to its last step, a queued run nowhere.
TEST_F(LossChartTest, FittingReachesToWhereStoppedAndQueuedRunsGot) {
  RunRecord stopped = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
  stopped.config.steps = 9'999'999;
  stopped.status = RunStatus::Stopped;
  store_.add(stopped, {});
  RunRecord queued = stopped;
  queued.status = RunStatus::Queued;
  queued.steps.clear();
  queued.evals.clear();
  store_.add(queued, {});
  chart_.refresh();
  EXPECT_NEAR(chart_.view().x_max, 600, 10);

  RunRecord running = test::synthetic_run(NormPlacement::Post, 6e-3, 30, 300, 50);
  running.config.steps = 2000;
  running.status = RunStatus::Running;
  store_.add(running, {});
  chart_.refresh();
  EXPECT_NEAR(chart_.view().x_max, 2000, 30);
}

TEST_F(LossChartTest, ABlownUpRunIsLeftOutOfTheFitUntilAskedFor) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50), {});
  RunRecord blown = test::synthetic_run(NormPlacement::Post, 1.0, 30, 600, 50);
  blown.evals.back().val_loss = 46.6;
  store_.add(blown, {});
  chart_.refresh();
  EXPECT_TRUE(chart_.ignore_outliers());
  EXPECT_LT(chart_.view().y_max, 12);
  chart_.set_ignore_outliers(false);
  EXPECT_GT(chart_.view().y_max, 46.6);
  chart_.set_ignore_outliers(true);
  chart_.set_view({0, 600, 0, 50});  // zooming out reaches it too
  EXPECT_DOUBLE_EQ(chart_.view().y_max, 50);
}

// The label of the baseline sits above its line at the right unless a curve lies there:
// then below it. Only the points within the label's steps are counted, so this checks
// that those are found in a long run.
TEST_F(LossChartTest, ABaselineLabelKeepsClearOfACurveOnItsLine) {
  int shown = -1;
  const auto label_offset = [&](const RunRecord& run) {
    if (shown >= 0) store_.remove(shown);
    shown = store_.add(run, {});
    chart_.set_smoothing(0);
    chart_.refresh();
    QGraphicsRectItem* label = nullptr;
    for (QGraphicsItem* item : chart_.childItems()) {
      for (QGraphicsItem* child : item->childItems()) {
        auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(child);
        if (text && text->text().startsWith("unigram baseline")) label = dynamic_cast<QGraphicsRectItem*>(item);
      }
    }
    EXPECT_TRUE(label && label->isVisible());
    if (!label) return QPointF();
    const QPointF line = chart_.position_of({0, run.baseline_loss});
    return QPointF(label->pos().x() - chart_.plotArea().center().x(), label->pos().y() - line.y());
  };
  RunRecord run = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 30'000, 1000);
  const QPointF clear = label_offset(run);
  EXPECT_GT(clear.x(), 0);
  EXPECT_LT(clear.y(), 0) << "above the line";
  for (StepMetrics& s : run.steps) {
    if (s.step > 24'000) s.train_loss = run.baseline_loss + 0.05;  // just above the line
  }
  const QPointF moved = label_offset(run);
  EXPECT_GT(moved.x(), 0);
  EXPECT_GT(moved.y(), 0) << "below the line";
}

// Issue 49, item 8: an exported picture gave 30-40 % of its width to the legend beside the
// plot. In a picture the legend lies inside the plot, in the corner the curves leave
// emptiest, and the plot takes the room.
TEST_F(LossChartTest, APicturesLegendLiesInsideThePlotClearOfTheCurves) {
  std::vector<RunRecord> runs{test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50),
                              test::synthetic_run(NormPlacement::Post, 1e-3, 30, 600, 50)};
  for (const RunRecord& run : runs) store_.add(run, {});
  chart_.set_picture_mode(true);
  chart_.refresh();
  const double beside = chart_.plotArea().width();
  chart_.place_legend_in_plot();
  const QRectF plot = chart_.plotArea(), key = chart_.legend()->geometry();
  EXPECT_GT(plot.width(), beside) << "the plot takes the legend's room";
  EXPECT_GE(plot.width(), 0.85 * chart_.size().width());
  EXPECT_TRUE(plot.contains(key)) << key.x() << ", " << key.y() << " " << key.width() << " x " << key.height();
  EXPECT_GT(key.width(), 50);  // the legend is there, with its names
  for (const RunRecord& run : runs) {
    for (const EvalMetrics& e : run.evals) {
      EXPECT_FALSE(key.contains(chart_.position_of({double(e.step), e.val_loss})))
          << "the legend covers the held-out point at step " << e.step;
    }
  }
}

// Issue 49, item 3: runs whose baselines differ (6.06 and 6.13 nats, an older folder beside
// CPU-scale runs) drew two dashed lines almost on top of each other, and the caption named
// one. Each line is labelled with its value and whose it is, in the legend and on the plot,
// the two labels apart.
TEST_F(LossChartTest, EachBaselineSaysItsValueAndWhoseItIs) {
  RunRecord full = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50);
  full.baseline_loss = 6.06;
  RunRecord cpu = test::synthetic_run(NormPlacement::Post, 1e-3, 30, 600, 50);
  cpu.config.model.context = 64;
  cpu.baseline_loss = 6.13;
  for (RunRecord* run : {&full, &cpu}) {
    for (StepMetrics& s : run->steps) s.train_loss = std::max(s.train_loss, 6.5);  // no curve near the lines
    for (EvalMetrics& e : run->evals) e.val_loss = std::max(e.val_loss, 6.6);
  }
  store_.add(full, {});
  store_.add(cpu, {});
  chart_.refresh();
  std::vector<QString> legend;
  for (const LegendEntry& entry : chart_.legend_entries()) {
    if (entry.style == Qt::DashLine) legend.push_back(entry.name);
  }
  ASSERT_EQ(legend.size(), 2u);
  EXPECT_TRUE(legend[0].contains("6.06") && legend[0].contains("context 128")) << legend[0].toStdString();
  EXPECT_TRUE(legend[1].contains("6.13") && legend[1].contains("context 64")) << legend[1].toStdString();
  std::vector<QRectF> labels;
  for (QGraphicsItem* item : chart_.childItems()) {
    for (QGraphicsItem* child : item->childItems()) {
      auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(child);
      if (text && text->text().contains("unigram") && item->isVisible()) {
        EXPECT_TRUE(text->text().contains("context")) << text->text().toStdString();
        labels.push_back(item->sceneBoundingRect());
      }
    }
  }
  ASSERT_EQ(labels.size(), 2u) << "each line labelled";
  EXPECT_FALSE(labels[0].intersects(labels[1]));

  store_.remove(store_.runs()[1].id);  // one line: every run's, said once
  chart_.refresh();
  for (const LegendEntry& entry : chart_.legend_entries()) {
    if (entry.style == Qt::DashLine) EXPECT_EQ(entry.name, QStringLiteral("unigram baseline 6.06 nats"));
  }
}

// Seen on the walk: once one hue had many runs, its fifth held-out curve turned dashed
// like the unigram baseline. The baseline stays the only dashed line; the same hue's
// fifth curve on has square points instead, in the chart and in its legend.
TEST_F(LossChartTest, OnlyTheBaselineIsDashed) {
  for (double lr : {1e-4, 3e-4, 1e-3, 3e-3, 6e-3, 1e-2})
    store_.add(test::synthetic_run(NormPlacement::Pre, lr, 30, 600, 50), {});
  chart_.refresh();
  QStringList dashed;
  int squared = 0;
  for (QAbstractSeries* series : chart_.series()) {
    auto* line = qobject_cast<QLineSeries*>(series);
    if (!line || !line->isVisible() || line->count() == 0) continue;
    if (line->pen().style() != Qt::SolidLine) dashed << line->name();
    if (!line->lightMarker().isNull()) ++squared;
  }
  ASSERT_EQ(dashed.size(), 1) << dashed.join(QStringLiteral(" | ")).toStdString();
  EXPECT_TRUE(dashed.front().startsWith(QStringLiteral("unigram baseline")));
  EXPECT_EQ(squared, 2) << "the hue's fifth and sixth curves";
  int squares_listed = 0;
  for (const LegendEntry& entry : chart_.legend_entries()) {
    EXPECT_EQ(entry.style == Qt::SolidLine, !entry.name.startsWith(QStringLiteral("unigram baseline")))
        << entry.name.toStdString();
    squares_listed += entry.squares;
  }
  EXPECT_EQ(squares_listed, 2);
}

// Seen on the walk: the baseline's label sat on the curves, as where a run lies right on
// its line it covered the fewest curves rather than none. It goes where no curve is, on
// its line when it can, else under the plot, and stays readable.
TEST_F(LossChartTest, TheBaselineLabelCoversNoCurve) {
  const auto label_box = [&]() -> std::optional<QRectF> {
    for (QGraphicsItem* item : chart_.childItems()) {
      for (QGraphicsItem* child : item->childItems()) {
        auto* text = dynamic_cast<QGraphicsSimpleTextItem*>(child);
        if (text && text->text().contains(QStringLiteral("unigram")) && item->isVisible())
          return item->mapRectToParent(item->boundingRect());
      }
    }
    return std::nullopt;
  };
  struct Case {
    QSize size;
    double swing;  // of the training loss about the line
  };
  // Close about the line, then all over the label's height; and that in a small chart.
  for (const Case& c : {Case{{1000, 600}, 0.02}, Case{{1000, 600}, 0.3}, Case{{560, 330}, 0.3}}) {
    SCOPED_TRACE(std::to_string(c.size.width()) + " wide, swing " + std::to_string(c.swing));
    chart_.resize(c.size);
    RunRecord run = test::synthetic_run(NormPlacement::Post, 1e-3, 30, 3000, 100);
    for (StepMetrics& s : run.steps) s.train_loss = run.baseline_loss + c.swing * std::sin(s.step * 0.7);
    for (EvalMetrics& e : run.evals) e.val_loss = run.baseline_loss + (e.step % 200 == 0 ? 0.01 : -0.01);
    const int id = store_.add(run, {});
    chart_.set_smoothing(0);
    chart_.refresh();
    const std::optional<QRectF> box = label_box();
    if (c.size.width() >= 1000) {
      ASSERT_TRUE(box) << "no baseline label shown";
    }
    if (box) {
      std::vector<QPointF> drawn;  // the run's curves as drawn, every point and the held-out line between them
      for (const StepMetrics& s : run.steps) drawn.push_back(chart_.position_of({double(s.step), s.train_loss}));
      for (std::size_t i = 0; i + 1 < run.evals.size(); ++i) {
        const QPointF a = chart_.position_of({double(run.evals[i].step), run.evals[i].val_loss});
        const QPointF b = chart_.position_of({double(run.evals[i + 1].step), run.evals[i + 1].val_loss});
        for (int t = 0; t <= 20; ++t) drawn.push_back(a + (b - a) * (t / 20.0));
      }
      const auto covered = std::count_if(drawn.begin(), drawn.end(), [&](QPointF p) { return box->contains(p); });
      EXPECT_EQ(covered, 0) << "the label at " << box->x() << ", " << box->y() << " covers curve points";
      // Nor the axes' words: under the plot it kept off the step axis's title.
      std::function<void(QGraphicsItem*)> clear_of_texts = [&](QGraphicsItem* item) {
        if (auto* text = dynamic_cast<QGraphicsTextItem*>(item); text && text->isVisible()) {
          const QRectF words = text->mapRectToItem(&chart_, text->boundingRect());
          EXPECT_FALSE(words.intersects(*box)) << "the label covers " << text->toPlainText().toStdString();
        }
        for (QGraphicsItem* child : item->childItems()) clear_of_texts(child);
      };
      clear_of_texts(&chart_);
    }
    store_.remove(id);
  }
}

TEST(RunStore, CarriesAnyNamedSeries) {
  lab::RunStore store;
  const int id = store.add(test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 100), {});
  int changes = 0;
  QObject::connect(&store, &lab::RunStore::points_changed, [&](int changed) { changes += changed == id; });
  store.append_points(id, {{"update_ratio", 3, 10, {0.1, 0.2, 0.3}}, {"update_ratio", 3, 20, {0.4, 0.5, 0.6}}});
  EXPECT_EQ(changes, 1);
  const Series* series = store.find(id)->record.find_series("update_ratio");
  ASSERT_NE(series, nullptr);
  EXPECT_EQ(series->steps, (std::vector<int>{10, 20}));
  EXPECT_DOUBLE_EQ(series->at(1, 2), 0.6);
}

TEST_F(LossChartTest, LogScaleKeepsTheShownRangeAndLabelsItInNats) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  chart_.refresh();
  chart_.set_view({0, 600, 4, 9});
  chart_.set_log_scale(true);
  EXPECT_NEAR(chart_.view().y_min, 4, 1e-9);
  EXPECT_NEAR(chart_.view().y_max, 9, 1e-9);
  QCategoryAxis* y = nullptr;
  for (QAbstractAxis* axis : chart_.axes(Qt::Vertical)) y = qobject_cast<QCategoryAxis*>(axis);
  ASSERT_NE(y, nullptr);
  const QStringList labels = y->categoriesLabels();
  EXPECT_TRUE(labels.contains(QStringLiteral("5"))) << labels.join(' ').toStdString();
  EXPECT_NEAR(y->endValue(QStringLiteral("5")), std::log10(5.0), 1e-12);
}

TEST_F(LossChartTest, SmoothingDrawsTheRawCurveBehindTheSmoothedOne) {
  const int id = store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  chart_.resize(1600, 600);  // a pixel per step beside the legend and its run's title: no step thinned out
  chart_.set_smoothing(0.9);
  chart_.refresh();
  int full_series = 0;
  for (QAbstractSeries* s : chart_.series()) {
    if (auto* line = qobject_cast<QLineSeries*>(s); line && line->count() == 600 && line->isVisible()) ++full_series;
  }
  EXPECT_EQ(full_series, 2);
  const std::vector<Readout> values = chart_.readout(300.4);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values[0].step, 300);
  EXPECT_EQ(values[0].eval_step, 300);
  EXPECT_TRUE(std::isfinite(values[0].train_smoothed));
  EXPECT_EQ(values[0].train, store_.find(id)->record.steps[299].train_loss);
}

TEST_F(LossChartTest, HiddenRunsLeaveTheChartAndTheReadout) {
  const int id = store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  store_.set_visible(id, false);
  chart_.refresh();
  EXPECT_TRUE(chart_.readout(100).empty());
  for (QAbstractSeries* s : chart_.series()) {
    if (auto* line = qobject_cast<QLineSeries*>(s); line && line->count() > 2) {
      EXPECT_FALSE(line->isVisible());
    }
  }
}

// Runs that differ only in their seed: one mean curve with the held-out range as a band;
// another experiment stays apart, and turning grouping off draws every run again.
TEST_F(LossChartTest, SeedsAreDrawnAsTheirMeanWithABand) {
  std::vector<int> seeds;
  for (std::uint64_t i = 0; i < 3; ++i) {
    RunRecord run = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
    run.config.seed += i;
    for (EvalMetrics& e : run.evals) e.val_loss += 0.1 * double(i);  // seeds end 0.1 nats apart
    seeds.push_back(store_.add(run, {}));
  }
  const int other = store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50), {});
  chart_.refresh();
  EXPECT_EQ(chart_.seed_group_of(seeds[2]), QList<int>(seeds.begin(), seeds.end()));
  EXPECT_TRUE(chart_.seed_group_of(other).isEmpty());
  const std::vector<Readout> values = chart_.readout(600);
  ASSERT_EQ(values.size(), 2u) << "the group and the other run";
  const double first = store_.find(seeds[0])->record.evals.back().val_loss;
  EXPECT_NEAR(values[0].heldout, first + 0.1, 1e-9) << "the mean of the three";
  EXPECT_TRUE(values[0].name.contains(QStringLiteral("mean of 3 seeds"))) << values[0].name.toStdString();
  QAreaSeries* band = nullptr;
  for (QAbstractSeries* s : chart_.series()) {
    if (auto* area = qobject_cast<QAreaSeries*>(s); area && area->isVisible()) band = area;
  }
  ASSERT_NE(band, nullptr);
  ASSERT_EQ(band->upperSeries()->count(), 13);
  EXPECT_NEAR(band->upperSeries()->at(12).y() - band->lowerSeries()->at(12).y(), 0.2, 1e-9);

  chart_.set_group_seeds(false);
  chart_.refresh();
  EXPECT_EQ(chart_.readout(600).size(), 4u);
  EXPECT_FALSE(band->isVisible());
  chart_.set_group_seeds(true);
  store_.set_visible(seeds[1], false);  // a hidden seed leaves the group
  chart_.refresh();
  EXPECT_EQ(chart_.seed_group_of(seeds[0]), QList<int>({seeds[0], seeds[2]}));
}

// A group's name counts the seeds its mean is over: a second copy of a seed counts once,
// and a queued seed joins (live) once it has points.
TEST_F(LossChartTest, SeedGroupCountsTheSeedsItsMeanIsOver) {
  const RunRecord base = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
  auto add_seed = [&](std::uint64_t seed, double shift) {
    RunRecord run = base;
    run.config.seed = seed;
    for (EvalMetrics& e : run.evals) e.val_loss += shift;
    return store_.add(run, {});
  };
  add_seed(1337, 0);
  add_seed(1337, 1.0);  // the same seed again
  add_seed(1338, 0.2);
  RunRecord waiting = base;
  waiting.config.seed = 1339;
  waiting.status = RunStatus::Queued;
  waiting.steps.clear();
  waiting.evals.clear();
  const int queued = store_.add(waiting, {});
  chart_.refresh();
  ASSERT_EQ(chart_.seed_group_of(queued).size(), 4) << "every copy is drawn as the group";
  std::vector<Readout> values = chart_.readout(600);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_TRUE(values[0].name.endsWith(QStringLiteral("mean of 2 of 3 seeds so far"))) << values[0].name.toStdString();
  EXPECT_NEAR(values[0].heldout, base.evals.back().val_loss + 0.1, 1e-9) << "seeds 1337 and 1338, each once";

  store_.mark_started(queued, base);
  store_.append_eval(queued, base.evals.front());
  chart_.refresh();
  values = chart_.readout(600);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_TRUE(values[0].name.endsWith(QStringLiteral("mean of 3 seeds"))) << values[0].name.toStdString();
}

// Issue 29: after a crash an interrupted seed was ticked but not drawn, left out of the
// mean of a group whose other seed had ended, and the group read "mean of 1 seed". A seed
// cut short beside seeds that ended is drawn on its own; the group says how many of its
// seeds it holds so far; the seed rejoins the mean once it trains again.
TEST_F(LossChartTest, ASeedCutShortBesideEndedSeedsIsDrawnOnItsOwn) {
  const RunRecord base = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50);
  RunRecord interrupted = base, queued = base;
  interrupted.config.seed = 1338;
  interrupted.status = RunStatus::Interrupted;
  interrupted.steps.resize(250);
  interrupted.evals.resize(5);
  queued.config.seed = 1339;
  queued.status = RunStatus::Queued;
  queued.steps.clear();
  queued.evals.clear();
  const int done = store_.add(base, {}), cut = store_.add(interrupted, {}), waiting = store_.add(queued, {});
  chart_.refresh();
  EXPECT_EQ(chart_.seed_group_of(done), QList<int>({done, waiting}));
  EXPECT_TRUE(chart_.seed_group_of(cut).isEmpty()) << "drawn on its own";
  std::vector<Readout> values = chart_.readout(200);
  ASSERT_EQ(values.size(), 2u) << "the group and the interrupted seed";
  EXPECT_TRUE(values[0].name.endsWith(QStringLiteral("1 of 2 seeds so far"))) << values[0].name.toStdString();
  EXPECT_EQ(values[1].name.toStdString(), display_name(interrupted.config));
  EXPECT_EQ(values[1].colour, values[0].colour) << "in its group's colour";
  EXPECT_EQ(chart_.plotted_evals(cut), 5);
  const std::vector<LegendEntry> legend = chart_.legend_entries();
  EXPECT_EQ(
      std::count_if(legend.begin(), legend.end(),
                    [&](const LegendEntry& e) { return e.name.toStdString() == display_name(interrupted.config); }),
      1);

  store_.set_status(cut, RunStatus::Running);  // resumed: it joins the mean live
  chart_.refresh();
  EXPECT_EQ(chart_.seed_group_of(done), QList<int>({done, cut, waiting}));
  values = chart_.readout(200);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_TRUE(values[0].name.endsWith(QStringLiteral("mean of 2 of 3 seeds so far"))) << values[0].name.toStdString();
}

// Asked for on issue 29's walk: a seed group's seeds drawn one by one, and back as their mean.
// Issue 49, item 5: the user's renamed runs vanished from the legend into seed groups
// ("1 of 2 seeds so far"). A renamed run keeps its own entry, under its name.
TEST_F(LossChartTest, ARenamedRunKeepsItsOwnLegendEntry) {
  RunRecord first = test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50);
  RunRecord second = first;
  second.config.seed += 1;
  second.config.label = "my own run";
  store_.add(first, {});
  const int renamed = store_.add(second, {});
  chart_.refresh();
  EXPECT_TRUE(chart_.seed_group_of(renamed).isEmpty());
  QStringList names;
  for (const LegendEntry& entry : chart_.legend_entries()) {
    if (entry.style != Qt::DashLine) names << entry.name;
  }
  EXPECT_EQ(names.size(), 2) << names.join(" | ").toStdString();
  EXPECT_TRUE(names.contains(QStringLiteral("my own run"))) << names.join(" | ").toStdString();
}

TEST_F(LossChartTest, ASeedGroupCanBeDrawnSeedBySeed) {
  std::vector<int> seeds;
  for (std::uint64_t i = 0; i < 3; ++i) {
    RunRecord run = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
    run.config.seed += i;
    for (EvalMetrics& e : run.evals) e.val_loss += 0.1 * double(i);
    seeds.push_back(store_.add(run, {}));
  }
  const int other = store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50), {});
  chart_.refresh();
  ASSERT_EQ(chart_.seed_group_of(seeds[0]).size(), 3);
  EXPECT_FALSE(chart_.seeds_apart(seeds[2]));

  chart_.set_seeds_apart(seeds[1], true);
  chart_.refresh();
  EXPECT_TRUE(chart_.seeds_apart(seeds[2])) << "the whole group";
  EXPECT_FALSE(chart_.seeds_apart(other));
  EXPECT_TRUE(chart_.seed_group_of(seeds[0]).isEmpty());
  const std::vector<Readout> values = chart_.readout(600);
  ASSERT_EQ(values.size(), 4u) << "three seeds and the other run";
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(values[std::size_t(i)].heldout, store_.find(seeds[std::size_t(i)])->record.evals.back().val_loss, 1e-9);
    EXPECT_EQ(values[std::size_t(i)].colour, values[0].colour) << "one experiment, one colour";
  }
  for (QAbstractSeries* s : chart_.series()) EXPECT_FALSE(qobject_cast<QAreaSeries*>(s) && s->isVisible()) << "no band";

  chart_.set_seeds_apart(seeds[2], false);
  chart_.refresh();
  EXPECT_FALSE(chart_.seeds_apart(seeds[1]));
  EXPECT_EQ(chart_.seed_group_of(seeds[1]).size(), 3);
  EXPECT_EQ(chart_.readout(600).size(), 2u);
}

TEST_F(LossChartTest, LongRunsAreThinnedToThePixelsButPicturesKeepEveryPoint) {
  const int id = store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 3000, 100), {});
  chart_.refresh();
  auto longest = [&] {
    int points = 0;
    for (QAbstractSeries* s : chart_.series()) {
      if (auto* line = qobject_cast<QLineSeries*>(s); line && line->isVisible())
        points = std::max(points, int(line->count()));
    }
    return points;
  };
  EXPECT_EQ(chart_.plotted_points(id), 3000);
  EXPECT_LT(longest(), 2 * int(chart_.plotArea().width()) + 4);  // a low and a high per pixel
  chart_.set_view({1000, 1200, 4, 10});                          // zoomed in: every step again
  EXPECT_EQ(longest(), 3000);
  chart_.reset_view();
  EXPECT_LT(longest(), 3000);
  chart_.set_picture_mode(true);
  EXPECT_EQ(longest(), 3000);
}

// A chart as short as the one under the Sweeps tab's summary names its loss axis in
// fewer words rather than cut them.
TEST_F(LossChartTest, AShortChartKeepsItsAxisTitlesWhole) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  QGraphicsScene scene;
  auto* chart = new LossChart(store_);
  scene.addItem(chart);  // which owns it
  for (const bool log : {false, true}) {
    chart->set_log_scale(log);
    chart->resize(600, 160);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    chart->refresh();
    QStringList shown;
    std::function<void(QGraphicsItem*)> collect = [&](QGraphicsItem* item) {
      if (auto* text = dynamic_cast<QGraphicsTextItem*>(item); text && text->isVisible()) shown << text->toPlainText();
      for (QGraphicsItem* child : item->childItems()) collect(child);
    };
    collect(chart);
    for (const QAbstractAxis* axis : chart->axes()) {
      EXPECT_TRUE(shown.contains(axis->titleText()))
          << axis->titleText().toStdString() << " is cut: " << shown.join(" | ").toStdString();
    }
    EXPECT_TRUE(chart->axes(Qt::Vertical).front()->titleText().contains(QStringLiteral("nats")));
  }
}

// Issue 29: under the Sweeps tab the chart of a point's runs is short, and its loss labels
// read "…": Qt Charts gives each label of a category axis the axis' height over their
// count, and cuts a taller one. A short chart has fewer labels, each whole.
TEST_F(LossChartTest, AShortChartKeepsItsLossLabelsWhole) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50), {});
  QGraphicsScene scene;
  auto* chart = new LossChart(store_);
  scene.addItem(chart);  // which owns it
  for (const bool log : {false, true}) {
    for (const int height : {500, 200, 150}) {
      chart->set_log_scale(log);
      chart->resize(600, height);
      QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
      chart->refresh();
      QStringList shown;
      std::function<void(QGraphicsItem*)> collect = [&](QGraphicsItem* item) {
        if (auto* text = dynamic_cast<QGraphicsTextItem*>(item); text && text->isVisible())
          shown << text->toPlainText();
        for (QGraphicsItem* child : item->childItems()) collect(child);
      };
      collect(chart);
      auto* loss = qobject_cast<QCategoryAxis*>(chart->axes(Qt::Vertical).front());
      ASSERT_TRUE(loss);
      const QStringList labels = loss->categoriesLabels();
      EXPECT_GE(labels.size(), height > 160 ? 2 : 1) << height << " px";
      for (const QString& label : labels) {
        EXPECT_TRUE(shown.contains(label))
            << label.toStdString() << " is cut at " << height << " px: " << shown.join(" | ").toStdString();
      }
    }
  }
}

// Issue 49, item 4: at 1024 x 700 the chart's title was cut to "Loss per step · training
// (light) and held-out...". A narrow chart gives it in fewer words, whole.
TEST_F(LossChartTest, ANarrowChartKeepsItsTitleWhole) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  QGraphicsScene scene;
  auto* chart = new LossChart(store_);
  scene.addItem(chart);  // which owns it
  for (const int width : {1000, 420, 300}) {
    chart->resize(width, 400);
    QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
    chart->refresh();
    EXPECT_TRUE(chart->title().startsWith(QStringLiteral("Loss per step"))) << chart->title().toStdString();
    EXPECT_LE(QFontMetricsF(chart->titleFont()).horizontalAdvance(chart->title()), width - 40)
        << chart->title().toStdString() << " in " << width << " px";
  }
  chart->resize(1000, 400);
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  EXPECT_TRUE(chart->title().contains(QStringLiteral("held-out (dark)"))) << "wide: every word";
}

// The hover box says the step under the pointer, also after the view under a still
// pointer changed: a double-click that fits the data again.
TEST(LossChartView, TheReadoutFollowsAFitUnderAStillPointer) {
  lab::RunStore store;
  store.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  auto* chart = new LossChart(store);
  LossChartView view(chart);  // which owns it
  view.resize(900, 600);
  view.show();
  QCoreApplication::processEvents();
  chart->set_view({100, 200, 4, 10});
  const QPoint at = view.mapFromScene(chart->mapToScene(chart->plotArea().center()));
  auto* readout = view.findChild<QLabel*>(QStringLiteral("chartReadout"));
  ASSERT_NE(readout, nullptr);
  auto step_under_pointer = [&] {
    return QStringLiteral("step %1").arg(
        chart->readout(chart->value_at(chart->mapFromScene(view.mapToScene(at))).x()).front().step);
  };
  QTest::mouseMove(view.viewport(), at);
  ASSERT_TRUE(readout->isVisible());
  EXPECT_TRUE(readout->text().contains(QStringLiteral("step 150"))) << readout->text().toStdString();
  QTest::mouseDClick(view.viewport(), Qt::LeftButton, {}, at);
  ASSERT_TRUE(chart->follows_data());
  EXPECT_NE(step_under_pointer(), QStringLiteral("step 150"));
  EXPECT_TRUE(!readout->isVisible() || readout->text().contains(step_under_pointer() + QStringLiteral("<")))
      << readout->text().toStdString() << " where the pointer is at " << step_under_pointer().toStdString();
}

// Issue 49, item 2: with twenty runs the readout covered most of the plot, listed ten runs
// and "… and 10 more", and was cut at the chart's edge so the held-out column was not
// visible. It fits inside the plot, gives held-out losses, and lists the runs nearest the
// pointer first.
TEST(LossChartView, TheReadoutFitsInsideThePlotNearestRunsFirst) {
  lab::RunStore store;
  for (int i = 0; i < 20; ++i) {
    RunRecord run = test::synthetic_run(i % 2 ? NormPlacement::Post : NormPlacement::Pre, 1e-3 * (1 + i), 30, 600, 50);
    run.config.label = "a run with a long name that a user typed to tell it apart, number " + std::to_string(i);
    for (EvalMetrics& e : run.evals) e.val_loss = 5.0 + 0.1 * i;  // run i at 5 + i/10 nats
    for (StepMetrics& s : run.steps) s.train_loss = 4.9 + 0.1 * i;
    store.add(run, {});
  }
  auto* chart = new LossChart(store);
  LossChartView view(chart);  // which owns it
  view.resize(900, 560);
  view.show();
  QCoreApplication::processEvents();
  chart->set_view({0, 600, 4.5, 7.5});
  auto* readout = view.findChild<QLabel*>(QStringLiteral("chartReadout"));
  ASSERT_TRUE(readout);
  const QRect plot = view.viewport()->rect();  // the chart, its axes and title
  for (const double loss : {5.0, 6.2, 6.9}) {
    const QPoint at = view.mapFromScene(chart->mapToScene(chart->position_of({580, loss})));
    QTest::mouseMove(view.viewport(), at);
    ASSERT_TRUE(readout->isVisible());
    EXPECT_TRUE(plot.adjusted(-1, -1, 1, 1).contains(readout->geometry()))
        << "readout " << readout->geometry().width() << " x " << readout->geometry().height() << " in a plot of "
        << plot.width() << " x " << plot.height();
    EXPECT_TRUE(readout->text().contains(QStringLiteral("held-out"))) << readout->text().toStdString();
    const int nearest = int(std::lround((loss - 5.0) * 10));
    const QString first = readout->text().section(QStringLiteral("</span> "), 1, 1);
    EXPECT_TRUE(first.contains(QStringLiteral("number %1&").arg(nearest)) ||
                first.contains(QStringLiteral("number %1\u2026").arg(nearest)) ||
                first.contains(QStringLiteral("held-out <b>%1</b>").arg(loss_text(5.0 + 0.1 * nearest))))
        << "nearest first: " << first.toStdString();
  }
}

// Seen with a 300-step run beside 600-step ones: past step 300 the header said "step 300"
// while the longer runs' rows said "at 466". The header says the step under the pointer,
// the shorter run's row where it ended.
TEST(LossChartView, TheReadoutPastTheEndOfAShorterRunSaysTheStepUnderThePointer) {
  lab::RunStore store;
  store.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 300, 50), {});
  store.add(test::synthetic_run(NormPlacement::Post, 1e-3, 200, 600, 50), {});
  auto* chart = new LossChart(store);
  LossChartView view(chart);  // which owns it
  view.resize(900, 600);
  view.show();
  QCoreApplication::processEvents();
  chart->set_view({400, 500, 4, 10});
  QTest::mouseMove(view.viewport(), view.mapFromScene(chart->mapToScene(chart->plotArea().center())));
  auto* readout = view.findChild<QLabel*>(QStringLiteral("chartReadout"));
  ASSERT_TRUE(readout && readout->isVisible());
  EXPECT_TRUE(readout->text().contains(QStringLiteral("<b>step 450</b>"))) << readout->text().toStdString();
  EXPECT_TRUE(readout->text().contains(QStringLiteral(" at 300"))) << readout->text().toStdString();
  EXPECT_FALSE(readout->text().contains(QRegularExpression(QStringLiteral("train [0-9.]+ at 4"))))
      << "a longer run's training loss is given at another step: " << readout->text().toStdString();
}

// Asked for on the walk: the x-axis in tokens trained on or in wall-clock time as well as
// in steps, from what each run records (steps × batch × context; each point's wall_s).
// Fit to data, the readout and a picture's copy of the chart follow the choice.
TEST_F(LossChartTest, TheXAxisCanBeTokensOrWallClockTime) {
  const RunRecord run = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
  ASSERT_DOUBLE_EQ(run.steps.back().wall_s, 30);  // its 600 steps took 30 s
  const double million_per_step = double(run.config.batch_size) * run.config.model.context / 1e6;
  store_.add(run, {});
  chart_.refresh();
  const QAbstractAxis* x_axis = chart_.axes(Qt::Horizontal).front();

  chart_.set_x_axis(XAxis::Tokens);
  EXPECT_TRUE(x_axis->titleText().contains(QStringLiteral("tokens"))) << x_axis->titleText().toStdString();
  EXPECT_NEAR(chart_.view().x_max, 600 * million_per_step, 600 * million_per_step * 0.02);
  EXPECT_EQ(chart_.readout(300 * million_per_step).front().step, 300);

  chart_.set_x_axis(XAxis::WallTime);
  EXPECT_TRUE(x_axis->titleText().contains(QStringLiteral("time"))) << x_axis->titleText().toStdString();
  EXPECT_FALSE(chart_.title().contains(QStringLiteral("per step"))) << chart_.title().toStdString();
  EXPECT_NEAR(chart_.view().x_max, 30, 0.6);
  EXPECT_EQ(chart_.readout(12.5).front().step, 250);
  EXPECT_DOUBLE_EQ(chart_.readout(12.5).front().x, 12.5);
  chart_.set_view({5, 10, 4, 10});
  chart_.reset_view();  // Fit to data
  EXPECT_NEAR(chart_.view().x_max, 30, 0.6);

  LossChart copy(store_);  // as an exported picture makes it
  copy.resize(1000, 600);
  copy.copy_view_from(chart_);
  EXPECT_EQ(copy.x_axis(), XAxis::WallTime);
  EXPECT_NEAR(copy.view().x_max, 30, 0.6);
  EXPECT_EQ(copy.readout(12.5).front().step, 250);

  chart_.set_x_axis(XAxis::Steps);
  EXPECT_NEAR(chart_.view().x_max, 600, 10);
}

// Off the step axis the hover box says where the pointer is in that axis's units, and each
// run's row its own step: runs differ in tokens per step and in speed.
TEST(LossChartView, TheReadoutSpeaksTheXAxisUnits) {
  lab::RunStore store;
  store.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});  // 0.05 s a step
  auto* chart = new LossChart(store);
  LossChartView view(chart);  // which owns it
  view.resize(900, 600);
  view.show();
  QCoreApplication::processEvents();
  chart->set_x_axis(XAxis::WallTime);
  chart->set_view({10, 20, 4, 10});
  QTest::mouseMove(view.viewport(), view.mapFromScene(chart->mapToScene(chart->plotArea().center())));
  auto* readout = view.findChild<QLabel*>(QStringLiteral("chartReadout"));
  ASSERT_TRUE(readout && readout->isVisible());
  // About 15 s, at the step recorded nearest the pointer: the header's time is that step's.
  const QRegularExpressionMatch time = QRegularExpression(QStringLiteral("<b>([0-9.]+) s</b>")).match(readout->text());
  const QRegularExpressionMatch step = QRegularExpression(QStringLiteral(" at step ([0-9]+)")).match(readout->text());
  ASSERT_TRUE(time.hasMatch() && step.hasMatch()) << readout->text().toStdString();
  EXPECT_NEAR(time.captured(1).toDouble(), 15, 0.5);
  EXPECT_NEAR(time.captured(1).toDouble(), step.captured(1).toInt() * 0.05, 0.05) << readout->text().toStdString();
}

// What an SVG draws, in the picture's coordinates: each shape's points (polylines, paths,
// lines) and whether a clip path holds it, where each text starts, and the clip path's rectangle.
struct SvgShapes {
  std::vector<std::pair<QList<QPointF>, bool>> shapes;  // points, clipped
  std::vector<std::pair<QString, QPointF>> texts;
  std::optional<QRectF> clip;
  QString clip_id;
};

SvgShapes shapes_in(const QByteArray& svg) {
  SvgShapes out;
  QXmlStreamReader xml(svg);
  struct Group {
    QTransform transform;
    bool clipped = false;
  };
  std::vector<Group> groups{{}};
  bool in_clip_path = false;
  const QRegularExpression number(QStringLiteral("-?[0-9.]+(e-?[0-9]+)?"));
  auto numbers_in = [&](const QString& text) {
    QList<double> values;
    for (auto it = number.globalMatch(text); it.hasNext();) values << it.next().captured().toDouble();
    return values;
  };
  while (!xml.atEnd()) {
    xml.readNext();
    if (xml.isEndElement()) {
      if (xml.name() == QLatin1String("clipPath")) in_clip_path = false;
      if (xml.name() == QLatin1String("g") || xml.name() == QLatin1String("svg")) groups.pop_back();
      continue;
    }
    if (!xml.isStartElement()) continue;
    const QXmlStreamAttributes a = xml.attributes();
    const QString name = xml.name().toString();
    if (name == QLatin1String("g") || name == QLatin1String("svg")) {
      Group g = groups.back();
      if (a.hasAttribute(QStringLiteral("transform"))) {
        const QList<double> m = numbers_in(a.value(QStringLiteral("transform")).toString());
        if (m.size() == 6) g.transform = QTransform(m[0], m[1], m[2], m[3], m[4], m[5]) * g.transform;
      }
      g.clipped = g.clipped || a.hasAttribute(QStringLiteral("clip-path"));
      groups.push_back(g);
    } else if (name == QLatin1String("clipPath")) {
      in_clip_path = true;
      out.clip_id = a.value(QStringLiteral("id")).toString();
    } else if (name == QLatin1String("rect") && in_clip_path) {
      out.clip = QRectF(a.value(QStringLiteral("x")).toDouble(), a.value(QStringLiteral("y")).toDouble(),
                        a.value(QStringLiteral("width")).toDouble(), a.value(QStringLiteral("height")).toDouble());
    } else if (name == QLatin1String("polyline") || name == QLatin1String("path") || name == QLatin1String("line")) {
      const QString text = name == QLatin1String("polyline") ? a.value(QStringLiteral("points")).toString()
                           : name == QLatin1String("path")
                               ? a.value(QStringLiteral("d")).toString()
                               : QStringLiteral("%1,%2 %3,%4")
                                     .arg(a.value(QStringLiteral("x1")), a.value(QStringLiteral("y1")),
                                          a.value(QStringLiteral("x2")), a.value(QStringLiteral("y2")));
      const QList<double> values = numbers_in(text);
      QList<QPointF> points;
      for (int i = 0; i + 1 < values.size(); i += 2)
        points << groups.back().transform.map(QPointF(values[i], values[i + 1]));
      out.shapes.emplace_back(points, groups.back().clipped);
    } else if (name == QLatin1String("text")) {
      const QPointF at = groups.back().transform.map(
          QPointF(a.value(QStringLiteral("x")).toDouble(), a.value(QStringLiteral("y")).toDouble()));
      out.texts.emplace_back(xml.readElementText(), at);
    }
  }
  EXPECT_FALSE(xml.hasError()) << xml.errorString().toStdString();
  return out;
}

// A training spike far above the range (outliers are left out of the fit) stays inside the
// plot in an SVG, as on screen and in a PNG: the curves are clipped to the plot area.
TEST_F(LossChartTest, SvgClipsTheCurvesToThePlotArea) {
  RunRecord run = test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50);
  run.steps[19].train_loss = 400;
  store_.add(run, {});
  chart_.refresh();
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("spike.svg"));
  export_svg(chart_, path, QSize(900, 560));
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray svg = file.readAll();
  EXPECT_TRUE(QSvgRenderer(svg).isValid());
  const SvgShapes drawn = shapes_in(svg);
  ASSERT_TRUE(drawn.clip) << "no clip path";
  EXPECT_TRUE(svg.contains("clip-path=\"url(#" + drawn.clip_id.toUtf8() + ")\""));
  const auto title = std::find_if(drawn.texts.begin(), drawn.texts.end(), [](const auto& text) {
    return text.first.startsWith(QStringLiteral("Loss per step"));
  });
  ASSERT_NE(title, drawn.texts.end());
  EXPECT_LT(title->second.y(), drawn.clip->top()) << "the title lies above the plot";
  int outside = 0;
  for (const auto& [points, clipped] : drawn.shapes) {
    for (const QPointF& p : points) {
      if (p.y() > drawn.clip->top() - 20) continue;
      ++outside;
      EXPECT_TRUE(clipped) << "a point at " << p.x() << ", " << p.y() << " above the plot, drawn unclipped";
    }
  }
  EXPECT_GT(outside, 0) << "the spike runs above the plot, where the clip hides it";
}

// Seen: the course's SVG held 7,296 two-point segments (889 KB), and ImageMagick drew none
// of its curves. Each curve is one shape: two runs, smoothed, make two held-out lines, two
// raw and two smoothed training curves and a baseline, seven shapes in the plot.
TEST_F(LossChartTest, SvgDrawsEachCurveAsOneShape) {
  store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 600, 50), {});
  store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 600, 50), {});
  chart_.set_smoothing(0.8);
  chart_.refresh();
  QTemporaryDir dir;
  const QString path = dir.filePath(QStringLiteral("curves.svg"));
  export_svg(chart_, path, QSize(900, 560));
  QFile file(path);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QByteArray svg = file.readAll();
  EXPECT_TRUE(QSvgRenderer(svg).isValid());
  std::vector<int> sizes;
  for (const auto& [points, clipped] : shapes_in(svg).shapes) {
    if (clipped) sizes.push_back(int(points.size()));
  }
  std::sort(sizes.begin(), sizes.end());
  ASSERT_EQ(sizes.size(), 7u) << "shapes of " << sizes.front() << " to " << sizes.back() << " points";
  EXPECT_EQ(sizes.front(), 2) << "the baseline";
  EXPECT_EQ(sizes[1], 13) << "a held-out line: step 0 and every 50th to 600";
  EXPECT_EQ(sizes.back(), 600) << "a training curve, every step";
}

TEST(ChartExport, ScaleKeepsTextReadable) {
  EXPECT_DOUBLE_EQ(export_scale(QSize(1000, 600), QSize(2000, 1200)), 2.0);
  EXPECT_DOUBLE_EQ(export_scale(QSize(1000, 600), QSize(500, 300)), 1.0);
}

}  // namespace
}  // namespace normlab::ui
