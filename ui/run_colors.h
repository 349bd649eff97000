#pragma once
// The colour rule of core/runs/palette.h as Qt colours: a run's hue says its design, its shade
// tells it from the other runs of that hue.
#include <QColor>

#include "core/runs/palette.h"
#include "lab/run_store.h"

namespace normlab::ui {

// The held-out (dark) colour of a hue's `shade`.
QColor family_colour(Hue hue, int shade);
// A run's held-out colour, and whether its lines are dashed (shades past the lightnesses).
QColor run_colour(const lab::RunEntry& run);
Qt::PenStyle run_pen_style(const lab::RunEntry& run);

// The training-loss colour: the same hue, lighter.
QColor training_colour(const QColor& heldout);

// `colour` mixed towards white by `amount` (0 = unchanged, 1 = white).
QColor lightened(const QColor& colour, double amount);

}  // namespace normlab::ui
