#include "chart_math.h"

#include <algorithm>
#include <limits>
#include <utility>
#include <vector>

namespace normlab::ui {

double nice_step(double span, int target) {
  const double raw = span / target;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0}) {
    if (m * magnitude >= raw) return m * magnitude;
  }
  return 10 * magnitude;
}

int decimals_for(double step) {
  int decimals = std::max(0, int(std::ceil(-std::log10(step) - 1e-9)));
  if (std::abs(step * std::pow(10.0, decimals) - std::round(step * std::pow(10.0, decimals))) > 1e-6) ++decimals;
  return decimals;
}

std::vector<Tick> loss_ticks(double lo, double hi, bool log_scale, int most) {
  most = std::max(2, most);
  std::vector<Tick> ticks;
  if (!log_scale || hi / lo < 10) {
    // The most round ticks that fit, up to the usual 7 (6 on a log scale).
    for (int target = 1; target <= (log_scale ? 6 : 7); ++target) {
      std::vector<Tick> tried;
      const double step = nice_step(hi - lo, target);
      const int decimals = decimals_for(step);
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
        if (!log_scale || v > 0) tried.push_back({v, decimals});
      }
      if (int(tried.size()) <= most && tried.size() >= ticks.size()) ticks = std::move(tried);
    }
  } else {
    // 1-2-5 per decade, then 1 per decade, then every other decade… until they fit.
    for (const auto& [multiples, every] : std::vector<std::pair<std::vector<double>, int>>{
             {{1.0, 2.0, 5.0}, 1}, {{1.0}, 1}, {{1.0}, 2}, {{1.0}, 3}, {{1.0}, 5}, {{1.0}, 10}}) {
      ticks.clear();
      for (int decade = int(std::floor(std::log10(lo))); decade <= int(std::ceil(std::log10(hi))); ++decade) {
        if (decade % every != 0) continue;
        for (const double m : multiples) {
          const double v = m * std::pow(10.0, decade);
          if (v >= lo && v <= hi) ticks.push_back({v, std::max(0, -decade)});
        }
      }
      if (int(ticks.size()) <= most) break;
    }
  }
  return ticks;
}

LossRange fit_loss_range(const std::vector<CurveExtents>& curves, const std::vector<double>& baselines,
                         bool ignore_outliers) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  double lo = kInf, hi = -kInf, start = -kInf;
  for (const CurveExtents& c : curves) {
    lo = std::min({lo, c.heldout_lo, c.training_lo});
    hi = std::max(hi, ignore_outliers && c.heldout_count >= 2 ? c.heldout_last : c.heldout_hi);
    if (!std::isnan(c.heldout_first)) start = std::max(start, c.heldout_first);
    // Training spikes above the first evaluation are not worth squashing the curves for;
    // the raw curve's lows stay in view even when it is only drawn faintly.
    if (std::isnan(c.heldout_first)) hi = std::max(hi, c.training_hi);
  }
  if (ignore_outliers && std::isfinite(start) && start > lo) hi = std::min(hi, start + kOutlierHeadroom * (start - lo));
  for (double b : baselines) {  // always in view: the line every curve is measured against
    lo = std::min(lo, b);
    hi = std::max(hi, b);
  }
  if (!(hi >= lo)) return {std::nan(""), std::nan("")};
  return {lo, hi};
}

}  // namespace normlab::ui
