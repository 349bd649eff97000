#include "heatmap_math.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace normlab::ui {

namespace {

// The smallest and largest finite value of `series` that `counts`.
template <typename Counts>
std::optional<std::pair<double, double>> range_of(const std::vector<const Series*>& series, Counts counts) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series* s : series) {
    if (!s) continue;
    for (double v : s->values) {
      if (!std::isfinite(v) || !counts(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!std::isfinite(lo)) return std::nullopt;
  return std::pair{lo, hi};
}

std::vector<double> linear_ticks(const ColourScale& scale, int max_ticks) {
  if (scale.hi <= scale.lo) return {scale.lo};
  const double raw = (scale.hi - scale.lo) / std::max(1, max_ticks - 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = 10 * magnitude;
  for (double factor : {1.0, 2.0, 5.0}) {
    if (factor * magnitude >= raw) {
      step = factor * magnitude;
      break;
    }
  }
  std::vector<double> ticks;
  for (double k = std::ceil(scale.lo / step - 1e-9); k * step <= scale.hi + 1e-9 * step; ++k) {
    ticks.push_back(k == 0 ? 0.0 : k * step);  // an exact 0, not -0 or 1e-18
  }
  return ticks;
}

}  // namespace

std::optional<ColourScale> log_scale_of(const std::vector<const Series*>& series) {
  const auto range = range_of(series, [](double v) { return v > 0; });
  if (!range) return std::nullopt;
  return ColourScale{std::log10(range->first), std::log10(range->second)};
}

std::optional<ColourScale> linear_scale_of(const std::vector<const Series*>& series) {
  const auto range = range_of(series, [](double) { return true; });
  if (!range) return std::nullopt;
  return ColourScale{range->first, range->second, /*linear=*/true};
}

double scale_position(const ColourScale& scale, double value) {
  if (!std::isfinite(value) || (!scale.linear && !(value > 0))) return NAN;
  if (scale.hi <= scale.lo) return 0.5;
  const double at = scale.linear ? value : std::log10(value);
  return std::clamp((at - scale.lo) / (scale.hi - scale.lo), 0.0, 1.0);
}

std::vector<double> colour_bar_ticks(const ColourScale& scale, int max_ticks) {
  if (scale.linear) return linear_ticks(scale, max_ticks);
  const int first = int(std::ceil(scale.lo - 1e-9)), last = int(std::floor(scale.hi + 1e-9));
  if (last < first) return {std::pow(10.0, scale.lo), std::pow(10.0, scale.hi)};
  const int span = last - first, gaps = std::max(1, max_ticks - 1);
  const int stride = std::max(1, (span + gaps - 1) / gaps);
  std::vector<double> ticks;
  for (int decade = first; decade <= last; decade += stride) ticks.push_back(std::pow(10.0, decade));
  return ticks;
}

Rgb colour_at(double position) {
  static constexpr Rgb kStops[] = {{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}};
  constexpr int kLast = int(std::size(kStops)) - 1;
  const double at = std::clamp(position, 0.0, 1.0) * kLast;
  const int i = std::min(int(at), kLast - 1);
  const double t = at - i;
  auto mix = [&](std::uint8_t a, std::uint8_t b) { return std::uint8_t(std::lround(a + (b - a) * t)); };
  return {mix(kStops[i].r, kStops[i + 1].r), mix(kStops[i].g, kStops[i + 1].g), mix(kStops[i].b, kStops[i + 1].b)};
}

std::size_t column_index(int pixel, int width, std::size_t count) {
  if (count == 0 || width <= 0) return 0;
  const auto clamped = std::size_t(std::clamp(pixel, 0, width - 1));
  return std::min(count - 1, clamped * count / std::size_t(width));
}

}  // namespace normlab::ui
