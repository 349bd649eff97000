#include "run_colors.h"

namespace normlab::ui {

QColor family_colour(Hue hue, int shade) { return QColor(QRgb(hue_colour(hue, shade))); }

QColor run_colour(const lab::RunEntry& run) {
  return family_colour(family_of(run.record.config), run.record.config.shade);
}

bool run_squared(const lab::RunEntry& run) { return shade_squared(run.record.config.shade); }

QColor lightened(const QColor& colour, double amount) {
  auto mix = [amount](int channel) { return int(channel + (255 - channel) * amount + 0.5); };
  return QColor(mix(colour.red()), mix(colour.green()), mix(colour.blue()), colour.alpha());
}

QColor training_colour(const QColor& heldout) { return lightened(heldout, 0.55); }

}  // namespace normlab::ui
