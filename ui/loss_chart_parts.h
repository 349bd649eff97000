#pragma once
// What LossChart's source files share: loss_chart.cpp (series, points, styles, readout),
// loss_chart_range.cpp (fitting, zoom, ticks) and loss_chart_baselines.cpp. Not for
// other users.
#include <QFont>
#include <QList>
#include <QPointF>
#include <vector>

#include "core/runs/seeds.h"

#include "chart_math.h"
#include "loss_chart.h"
#include "smoothing.h"

class QAreaSeries;
class QGraphicsRectItem;
class QGraphicsSimpleTextItem;
class QLineSeries;

namespace normlab::ui {

struct LossChart::Curves {
  QLineSeries* raw = nullptr;                                // faint, behind the smoothed curve
  QLineSeries* train = nullptr;                              // smoothed, or raw when smoothing is off
  QLineSeries* heldout = nullptr;                            // with a marker at each evaluation
  QList<QPointF> raw_points, smooth_points, heldout_points;  // display space
  std::vector<double> smoothed;  // nats, one per recorded step (NaN where the loss was not finite)
  CurveExtents extents;          // of raw_points and heldout_points, for fitting the range
  std::size_t steps_done = 0;
  std::size_t evals_done = 0;
  DebiasedEma ema;
  bool live = false;  // its run is training: its picture would be stale at every refresh

  // Forgets the points, so the next update takes every step again (same series).
  void restart(double smoothing) {
    raw_points.clear();
    smooth_points.clear();
    heldout_points.clear();
    smoothed.clear();
    extents = {};
    steps_done = evals_done = 0;
    ema = DebiasedEma(smoothing);
  }
};

// Runs drawn as one: the first member's curves show the mean, the band the held-out range.
struct LossChart::SeedGroup {
  std::vector<int> members;
  SeedSpread spread;
  QAreaSeries* band = nullptr;  // upper and lower are series of its own, not on the chart
};

struct LossChart::Baseline {
  double nats = 0;
  QString whose;  // which runs it is the baseline of, where several are drawn; else empty
  QLineSeries* series = nullptr;
  QGraphicsRectItem* label = nullptr;  // a pale box holding the text, where no curve is
  QGraphicsSimpleTextItem* words = nullptr;
};

inline QFont sized_font(double points, bool bold = false) {
  QFont font;
  font.setPointSizeF(points);
  font.setBold(bold);
  return font;
}

}  // namespace normlab::ui
