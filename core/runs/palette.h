#pragma once
// The app's colour rule, as 0xRRGGBB. A run's hue says its design and nothing else may
// change it: pre-norm blue, post-norm red (green with a long warmup), peri-norm teal,
// DeepNorm amber, mix purple, LayerNorm Scaling indigo, ReZero magenta, DyT (any
// placement) olive. The model switches (QK-norm, scaled init) modify a design and keep
// its hue: their runs are told apart like any other setting, by shade. Runs of one hue are told apart by lightness,
// then by square held-out points (a dashed line is the baseline's alone); the runs of one seed group are one curve
// and share one shade. The window (ui/run_colors) and
// the sweep chart both draw from here.
#include <cstdint>
#include <vector>

#include "config.h"

namespace normlab {

inline constexpr int kLightnessSteps = 4;
inline constexpr int kShades = 2 * kLightnessSteps;  // each lightness with round points, then square ones

// The hue a run is drawn in: its norm type's when it has one (DyT), else its placement's,
// or green for post-norm with a long warmup (more than the course's short warmup and at
// least a tenth of the run).
Hue family_of(const TrainConfig& config);

// The `shade`-th colour of a hue: shade 0 is the hue's own colour, the next ones darker or
// lighter at the same hue; shades repeat every kShades.
std::uint32_t hue_colour(Hue hue, int shade);
// Shades from kLightnessSteps on mark their held-out points with squares.
bool shade_squared(int shade);

// The shade a new run takes among the runs `shown` (each config with its shade): its seed
// group's when it joins one, else the shade least used by the other groups of its hue (the
// lowest of equals), so two curves of one hue look alike only once all kShades are in use.
int next_shade(const TrainConfig& config, const std::vector<const TrainConfig*>& shown);

}  // namespace normlab
