#pragma once
// The "Inside the model" view's arithmetic, apart from Qt so it can be tested on its
// own: one logarithmic colour scale for every panel, its colours and ticks, and which
// recorded step a pixel column shows.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "run_record.h"

namespace normlab::ui {

// log10 of the smallest and largest positive, finite value shown.
struct LogScale {
  double lo, hi;
};

// The scale covering every positive finite value of `series` (null entries skipped), so
// that panels side by side share it; none when there is no such value.
std::optional<LogScale> log_scale_of(const std::vector<const Series*>& series);

// Where `value` falls on the scale, 0 to 1; NaN when it is zero, negative or not finite
// (drawn as "no value").
double scale_position(const LogScale& scale, double value);

// Powers of ten inside the scale, every `stride`-th decade so that at most `max_ticks`
// remain; the two ends when the scale spans less than a decade.
std::vector<double> colour_bar_ticks(const LogScale& scale, int max_ticks);

struct Rgb {
  std::uint8_t r, g, b;
};
// Viridis, dark violet (0) to yellow (1): ordered in lightness, readable in grey.
Rgb colour_at(double position);

// Which of `count` recorded steps the pixel column `pixel` of a `width`-pixel panel
// shows: each recorded step gets an equal share, so the dense first steps stay visible.
std::size_t column_index(int pixel, int width, std::size_t count);

}  // namespace normlab::ui
