#pragma once
// The colour rule of core/runs/palette.h as Qt colours: a run's hue says its design, its shade
// tells it from the other runs of that hue.
#include <QColor>

#include "core/runs/palette.h"
#include "lab/run_store.h"

namespace normlab::ui {

// The held-out (dark) colour of a hue's `shade`.
QColor family_colour(Hue hue, int shade);
// A run's held-out colour, and whether its held-out points are squares (shades past the
// lightnesses). Its lines are solid: a dashed line is the unigram baseline's alone.
QColor run_colour(const lab::RunEntry& run);
bool run_squared(const lab::RunEntry& run);

// The run's name as the window lists it: its display name, told apart from the store's
// runs that read the same (distinct_name), down to when it started (its file's name).
QString run_name(const lab::RunStore& store, const lab::RunEntry& run);

// The training-loss colour: the same hue, lighter.
QColor training_colour(const QColor& heldout);

// `colour` mixed towards white by `amount` (0 = unchanged, 1 = white).
QColor lightened(const QColor& colour, double amount);

}  // namespace normlab::ui
