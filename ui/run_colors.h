#pragma once
// The plate's colour code: each placement's hue from its table row (pre-norm blue,
// post-norm red, peri-norm teal, DeepNorm amber, mix purple), and red runs with a long
// warmup green. Runs of a family differ by shade.
#include <QColor>

#include "config.h"

namespace normlab::ui {

enum class RunFamily { PreNorm, PostNorm, PostNormLongWarmup, PeriNorm, DeepNorm, MixNorm };

// A red run counts as "long warmup" when warming up for at least 10 % of its steps.
RunFamily family_of(const TrainConfig& config);

// The held-out (dark) colour of the `shade`-th run of a family; shades repeat after a few.
QColor family_colour(RunFamily family, int shade);

// The training-loss colour: the same hue, lighter.
QColor training_colour(const QColor& heldout);

// `colour` mixed towards white by `amount` (0 = unchanged, 1 = white).
QColor lightened(const QColor& colour, double amount);

}  // namespace normlab::ui
