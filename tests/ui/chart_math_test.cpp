// The chart's arithmetic without a chart: ticks, thinning and range fitting.
#include "ui/chart_math.h"

#include <cmath>
#include <gtest/gtest.h>

namespace normlab::ui {
namespace {

struct Point {
  double px, py;
  double x() const { return px; }
  double y() const { return py; }
};

TEST(ChartMath, NiceStepsAndDecimals) {
  EXPECT_DOUBLE_EQ(nice_step(10, 7), 2);
  EXPECT_DOUBLE_EQ(nice_step(1, 7), 0.2);
  EXPECT_DOUBLE_EQ(nice_step(3000, 8), 500);
  EXPECT_DOUBLE_EQ(nice_step(1.5, 7), 0.25);
  EXPECT_EQ(decimals_for(0.25), 2);
  EXPECT_EQ(decimals_for(0.5), 1);
  EXPECT_EQ(decimals_for(500), 0);
}

TEST(ChartMath, LinearTicksAreRoundAndInside) {
  const auto ticks = loss_ticks(4.3, 9.2, false);
  ASSERT_FALSE(ticks.empty());
  EXPECT_DOUBLE_EQ(ticks.front().value, 5);
  EXPECT_DOUBLE_EQ(ticks.back().value, 9);
  EXPECT_EQ(ticks.front().decimals, 0);
  for (const Tick& t : ticks) EXPECT_NEAR(std::fmod(t.value, 1.0), 0, 1e-9);
}

TEST(ChartMath, LogTicksOverADecadeAre125) {
  std::vector<double> values;
  for (const Tick& t : loss_ticks(0.8, 60, true)) values.push_back(t.value);
  EXPECT_EQ(values, (std::vector<double>{1, 2, 5, 10, 20, 50}));
}

// A short axis holds fewer labels: wider round steps, then fewer per decade.
TEST(ChartMath, TicksStayWithinWhatTheAxisHolds) {
  for (const int most : {2, 3, 4}) {
    const auto linear = loss_ticks(4.3, 9.2, false, most);
    EXPECT_GE(linear.size(), 2u);
    EXPECT_LE(int(linear.size()), most);
  }
  std::vector<double> values;
  for (const Tick& t : loss_ticks(0.8, 60, true, 3)) values.push_back(t.value);
  EXPECT_EQ(values, (std::vector<double>{1, 10}));
}

TEST(ChartMath, ThinningKeepsEachBucketsExtremesInOrder) {
  const std::vector<Point> points = {{0, 5}, {1, 3}, {2, 4}, {3, 9}, {4, 1}, {5, 2}, {6, 2}};
  const auto noisy = thinned(points, 4, true);
  ASSERT_EQ(noisy.size(), 4u);  // bucket [0,4): low 3 at x=1, high 9 at x=3; [4,8): 1 then 2
  EXPECT_EQ(noisy[0].x(), 1);
  EXPECT_EQ(noisy[1].x(), 3);
  EXPECT_EQ(noisy[2].x(), 4);
  EXPECT_EQ(noisy[3].x(), 5);
  const auto smooth = thinned(points, 4, false);
  ASSERT_EQ(smooth.size(), 2u);
  EXPECT_EQ(smooth[0].x(), 3);
  EXPECT_EQ(smooth[1].x(), 6);
  EXPECT_EQ(thinned(points, 1, true).size(), points.size());
}

CurveExtents curve(double start, double end, int evals) {
  CurveExtents c;
  for (int i = 0; i < evals; ++i) c.add_heldout(start + (end - start) * i / (evals - 1));
  c.add_training(start + 0.3);
  c.add_training(end - 0.2);
  return c;
}

TEST(ChartMath, RangeHoldsEveryHeldOutPointTheTrainingLowsAndTheBaseline) {
  const LossRange r = fit_loss_range({curve(9.0, 5.0, 10), curve(9.0, 4.5, 10)}, {6.05}, false);
  EXPECT_DOUBLE_EQ(r.lo, 4.3);  // a training low
  EXPECT_DOUBLE_EQ(r.hi, 9.0);  // the training spike at 9.3 does not widen it
}

// Issue 49, item 1: from the first evaluation after step 0 the range is the band that
// matters, from the lowest loss up to the baseline and where the runs are now; the
// starting loss no longer squeezes it. Before that evaluation it holds the start.
TEST(ChartMath, FromTheSecondEvaluationTheRangeIsTheBandThatMatters) {
  LossRange r = fit_loss_range({curve(9.0, 5.0, 10), curve(9.0, 4.5, 10)}, {6.05}, true);
  EXPECT_DOUBLE_EQ(r.lo, 4.3);
  EXPECT_DOUBLE_EQ(r.hi, 6.05) << "the baseline, above both runs' losses now";
  r = fit_loss_range({curve(9.0, 6.9, 2), curve(9.0, 6.2, 5)}, {6.13}, true);
  EXPECT_DOUBLE_EQ(r.hi, 6.9) << "a run's loss now";
  CurveExtents started;
  started.add_heldout(9.0);
  started.add_training(9.2);
  r = fit_loss_range({started}, {6.13}, true);
  EXPECT_DOUBLE_EQ(r.hi, 9.0) << "only the evaluation at step 0: where it starts";
}

// One imported run blew up to 46.6 nats at lr 1: fitted to it, the other curves would
// share the bottom tenth of the plot.
TEST(ChartMath, ABlownUpRunDoesNotSquashTheOthers) {
  CurveExtents blown = curve(9.0, 7.0, 4);
  blown.add_heldout(46.6);
  const std::vector<CurveExtents> runs = {curve(9.0, 5.0, 10), blown};
  const LossRange fitted = fit_loss_range(runs, {6.05}, true);
  EXPECT_DOUBLE_EQ(fitted.lo, 4.8);
  EXPECT_LE(fitted.hi, 9.0 + kOutlierHeadroom * (9.0 - 4.8) + 1e-12);
  EXPECT_GE(fitted.hi, 9.0);
  const LossRange everything = fit_loss_range(runs, {6.05}, false);
  EXPECT_DOUBLE_EQ(everything.hi, 46.6);
}

TEST(ChartMath, ABaselineAboveTheCapStaysInView) {
  const LossRange r = fit_loss_range({curve(3.0, 1.0, 5)}, {12.0}, true);
  EXPECT_DOUBLE_EQ(r.hi, 12.0);
}

// Before its first evaluation a run's training curve sets the top too, spikes and all;
// the starting loss is the first evaluation's, whatever comes after it.
TEST(ChartMath, ExtentsFollowThePointsAsTheyArrive) {
  CurveExtents c;
  c.add_training(8.0);
  c.add_training(9.5);
  LossRange r = fit_loss_range({c}, {}, true);
  EXPECT_DOUBLE_EQ(r.lo, 8.0);
  EXPECT_DOUBLE_EQ(r.hi, 9.5);
  c.add_heldout(9.0);
  c.add_heldout(4.0);
  c.add_heldout(30.0);
  r = fit_loss_range({c}, {}, true);
  EXPECT_DOUBLE_EQ(c.heldout_first, 9.0);
  EXPECT_DOUBLE_EQ(r.lo, 4.0);
  EXPECT_DOUBLE_EQ(r.hi, 9.0 + kOutlierHeadroom * (9.0 - 4.0));
  EXPECT_DOUBLE_EQ(fit_loss_range({c}, {}, false).hi, 30.0);
  c.add_training(3.5);
  EXPECT_DOUBLE_EQ(fit_loss_range({c}, {}, false).lo, 3.5);
}

TEST(ChartMath, NothingToFit) {
  const LossRange r = fit_loss_range({}, {}, true);
  EXPECT_FALSE(r.hi >= r.lo);
}

}  // namespace
}  // namespace normlab::ui
