#pragma once
// The loss chart's arithmetic, apart from Qt Charts so it can be tested on its own:
// tick values, thinning curves to the pixels that show them, and fitting the loss range.
// No Qt types: points are anything with x() and y().
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace normlab::ui {

// The 1-2-2.5-5 step nearest to span/target from above: round tick values.
double nice_step(double span, int target);
// Decimals that show every multiple of `step` exactly: 0.25 -> 2, 5 -> 0.
int decimals_for(double step);

struct Tick {
  double value;  // nats
  int decimals;
};
// Loss axis ticks between lo and hi (nats): round steps, or 1-2-5 per decade on a log
// scale spanning a factor of ten or more; at most `most` of them (at least 2), with wider
// steps or fewer per decade where the axis is short.
std::vector<Tick> loss_ticks(double lo, double hi, bool log_scale, int most = 100);

// Fewer points for a curve whose `bucket` of x (steps, tokens or seconds) fits in a pixel,
// drawing the same ink: a noisy curve keeps each bucket's lowest and highest point, in x
// order; a smooth one its last. Buckets start at multiples of `bucket`, so panning keeps
// them. A bucket of 0 keeps every point.
template <typename Points>
Points thinned(const Points& points, double bucket, bool noisy) {
  if (bucket <= 0) return points;
  Points out;
  out.reserve(2 * points.size() / bucket + 2);
  const auto size = points.size();
  decltype(points.size()) first = 0;
  while (first < size) {
    const std::int64_t key = std::int64_t(std::floor(points[first].x() / bucket));
    auto end = first, low = first, high = first;
    while (end < size && std::int64_t(std::floor(points[end].x() / bucket)) == key) {
      if (points[end].y() < points[low].y()) low = end;
      if (points[end].y() > points[high].y()) high = end;
      ++end;
    }
    if (noisy) {
      out.push_back(points[std::min(low, high)]);
      if (low != high) out.push_back(points[std::max(low, high)]);
    } else {
      out.push_back(points[end - 1]);
    }
    first = end;
  }
  return out;
}

// What fitting the loss range needs of one run's curves, in the units the chart plots
// (log10 nats on a log scale): kept up to date as points arrive, so a refresh costs the
// same for a 100,000-step run as for a short one.
struct CurveExtents {
  static constexpr double kInf = std::numeric_limits<double>::infinity();
  double heldout_lo = kInf, heldout_hi = -kInf;
  double heldout_first = std::nan("");             // the starting loss; NaN before any evaluation
  double heldout_last = std::nan("");              // where it is now
  int heldout_count = 0;                           // evaluations so far
  double training_lo = kInf, training_hi = -kInf;  // raw training loss

  void add_heldout(double v) {  // in step order
    if (std::isnan(heldout_first)) heldout_first = v;
    heldout_last = v;
    ++heldout_count;
    heldout_lo = std::min(heldout_lo, v);
    heldout_hi = std::max(heldout_hi, v);
  }
  void add_training(double v) {
    training_lo = std::min(training_lo, v);
    training_hi = std::max(training_hi, v);
  }
};

struct LossRange {
  double lo, hi;
};

// The loss range worth showing: the held-out points, the training curves' lows, and the
// baselines. Training spikes above the evaluations never widen it. With ignore_outliers
// (TensorBoard's "ignore outliers in chart scaling"), the band that matters: from the
// first evaluation after the start, a run's top is where its held-out loss is now, not
// where it started (about 9 nats at step 0, which squeezed the 5–6.5 band where pre- and
// post-norm part into a third of the plot), so the range follows the runs down; and
// held-out values far above the highest starting loss, as from a run that blew up, do not
// stretch it: they would squeeze every other curve into a sliver. Zoom out, or turn
// ignore_outliers off, to see them.
LossRange fit_loss_range(const std::vector<CurveExtents>& curves, const std::vector<double>& baselines,
                         bool ignore_outliers);

// How far above the starting loss a value may lie, as a share of the span from the
// lowest loss up to the starting loss, before it counts as an outlier.
inline constexpr double kOutlierHeadroom = 0.25;

}  // namespace normlab::ui
