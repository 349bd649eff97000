#include "heatmap_math.h"

#include <algorithm>
#include <cmath>

namespace normlab::ui {

std::optional<LogScale> log_scale_of(const std::vector<const Series*>& series) {
  double lo = INFINITY, hi = -INFINITY;
  for (const Series* s : series) {
    if (!s) continue;
    for (double v : s->values) {
      if (!(v > 0) || !std::isfinite(v)) continue;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!std::isfinite(lo)) return std::nullopt;
  return LogScale{std::log10(lo), std::log10(hi)};
}

double scale_position(const LogScale& scale, double value) {
  if (!(value > 0) || !std::isfinite(value)) return NAN;
  if (scale.hi <= scale.lo) return 0.5;
  return std::clamp((std::log10(value) - scale.lo) / (scale.hi - scale.lo), 0.0, 1.0);
}

std::vector<double> colour_bar_ticks(const LogScale& scale, int max_ticks) {
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
