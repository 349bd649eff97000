// The chart on its own: colours, smoothing, scales, zoom and the hover readout.
#include <gtest/gtest.h>

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <cmath>
#include <map>
#include <set>

#include "chart_export.h"
#include "format.h"
#include "loss_chart.h"
#include "run_colors.h"
#include "run_store.h"
#include "smoothing.h"
#include "test_support.h"
#include "lab_names.h"

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
  const QColor blue = family_colour(Hue::Blue, 0), red = family_colour(Hue::Red, 0), green = family_colour(Hue::Green, 0);
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
  RunStore store;
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

  std::map<Hue, std::set<std::pair<QRgb, Qt::PenStyle>>> looks;  // per hue, one look per seed group
  for (const RunEntry& run : store.runs()) {
    const Hue hue = family_of(run.record.config);
    const QColor colour = run_colour(run);
    EXPECT_NEAR(colour.hslHueF() * 360, family_colour(hue, 0).hslHueF() * 360, 3.0)
        << run.record.config.name << " is drawn in another hue";
    if (run.record.config.seed == 1337) {
      EXPECT_TRUE(looks[hue].insert({colour.rgb(), run_pen_style(run)}).second)
          << run.record.config.name << " looks like another curve of its hue";
    }
  }
  EXPECT_EQ(run_colour(*store.find(ids[1])), run_colour(*store.find(ids[0]))) << "a seed group is one curve";
  EXPECT_NE(run_colour(*store.find(two_layers)), run_colour(*store.find(ids[0])));
  EXPECT_EQ(store.unique_name(qstr(store.runs()[0].record.config.name)),
            qstr(store.runs()[0].record.config.name) + " (2)");
}

class LossChartTest : public ::testing::Test {
 protected:
  LossChartTest() : chart_(store_) { chart_.resize(1000, 600); }
  RunStore store_;
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
  EXPECT_GT(fitted.y_max, 9.0);
  chart_.set_view({100, 200, 5, 6});
  EXPECT_FALSE(chart_.follows_data());
  store_.add(test::synthetic_run(NormPlacement::Post, 6e-3, 30, 3000, 100), {});
  chart_.refresh();
  EXPECT_DOUBLE_EQ(chart_.view().x_max, 200);  // a zoom is not undone by new data
  chart_.reset_view();
  EXPECT_NEAR(chart_.view().x_max, 3000, 50);
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

TEST(RunStore, CarriesAnyNamedSeries) {
  RunStore store;
  const int id = store.add(test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 100), {});
  int changes = 0;
  QObject::connect(&store, &RunStore::points_changed, [&](int changed) { changes += changed == id; });
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

TEST_F(LossChartTest, LongRunsAreThinnedToThePixelsButPicturesKeepEveryPoint) {
  const int id = store_.add(test::synthetic_run(NormPlacement::Pre, 6e-3, 30, 3000, 100), {});
  chart_.refresh();
  auto longest = [&] {
    int points = 0;
    for (QAbstractSeries* s : chart_.series()) {
      if (auto* line = qobject_cast<QLineSeries*>(s); line && line->isVisible()) points = std::max(points, int(line->count()));
    }
    return points;
  };
  EXPECT_EQ(chart_.plotted_points(id), 3000);
  EXPECT_LT(longest(), 2 * int(chart_.plotArea().width()) + 4);  // a low and a high per pixel
  chart_.set_view({1000, 1200, 4, 10});  // zoomed in: every step again
  EXPECT_EQ(longest(), 3000);
  chart_.reset_view();
  EXPECT_LT(longest(), 3000);
  chart_.set_picture_mode(true);
  EXPECT_EQ(longest(), 3000);
}

TEST(ChartExport, ScaleKeepsTextReadable) {
  EXPECT_DOUBLE_EQ(export_scale(QSize(1000, 600), QSize(2000, 1200)), 2.0);
  EXPECT_DOUBLE_EQ(export_scale(QSize(1000, 600), QSize(500, 300)), 1.0);
}

}  // namespace
}  // namespace normlab::ui
