#pragma once
// The "Inside the model" view's arithmetic, apart from Qt so it can be tested on its
// own: one colour scale for every panel (logarithmic, or linear for a statistic whose
// values change sign), its colours and ticks, and which recorded step a pixel column shows.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab::ui {

// Logarithmic: log10 of the smallest and largest positive, finite value shown. Linear: the
// smallest and largest finite value themselves.
struct ColourScale {
  double lo, hi;
  bool linear = false;
};

// The scale covering every positive finite value of `series` (null entries skipped), so
// that panels side by side share it; none when there is no such value.
std::optional<ColourScale> log_scale_of(const std::vector<const Series*>& series);
// The same over every finite value, zero and negative ones included (ReZero's α starts at
// 0 and may change sign); none when there is no finite value.
std::optional<ColourScale> linear_scale_of(const std::vector<const Series*>& series);

// Where `value` falls on the scale, 0 to 1; NaN when it is not finite or, on a log scale,
// zero or negative (drawn as "no value").
double scale_position(const ColourScale& scale, double value);

// Log: powers of ten inside the scale, every `stride`-th decade so that at most
// `max_ticks` remain; the two ends when the scale spans less than a decade. Linear: round
// steps (1, 2 or 5 times a power of ten), at most `max_ticks` of them.
std::vector<double> colour_bar_ticks(const ColourScale& scale, int max_ticks);

struct Rgb {
  std::uint8_t r, g, b;
};
// Viridis, dark violet (0) to yellow (1): ordered in lightness, readable in grey.
Rgb colour_at(double position);

// Which of `count` recorded steps the pixel column `pixel` of a `width`-pixel panel
// shows: each recorded step gets an equal share, so the dense first steps stay visible.
std::size_t column_index(int pixel, int width, std::size_t count);

}  // namespace normlab::ui
