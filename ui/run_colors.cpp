#include "run_colors.h"

#include <array>

namespace normlab::ui {

namespace {
// Dark enough to read as "held-out" lines on white; distinct within a family.
constexpr std::array<QRgb, 4> kBlues = {0x1f5fb0, 0x0b2a63, 0x2f9bd6, 0x5548b8};
constexpr std::array<QRgb, 4> kReds = {0xc62828, 0x7a0c0c, 0xe8692a, 0xad1457};
constexpr std::array<QRgb, 3> kGreens = {0x2e7d32, 0x0f4f2a, 0x7cb342};
}  // namespace

RunFamily family_of(const TrainConfig& config) {
  switch (info(config.model.norm).hue) {
    case Hue::Blue: return RunFamily::PreNorm;
    case Hue::Red:
      return config.warmup_steps * 10 >= config.steps ? RunFamily::PostNormLongWarmup : RunFamily::PostNorm;
  }
  return RunFamily::PreNorm;  // not reached: the switch names every hue
}

QColor family_colour(RunFamily family, int shade) {
  switch (family) {
    case RunFamily::PreNorm: return QColor(kBlues[shade % kBlues.size()]);
    case RunFamily::PostNorm: return QColor(kReds[shade % kReds.size()]);
    case RunFamily::PostNormLongWarmup: return QColor(kGreens[shade % kGreens.size()]);
  }
  return Qt::black;
}

QColor lightened(const QColor& colour, double amount) {
  auto mix = [amount](int channel) { return int(channel + (255 - channel) * amount + 0.5); };
  return QColor(mix(colour.red()), mix(colour.green()), mix(colour.blue()), colour.alpha());
}

QColor training_colour(const QColor& heldout) { return lightened(heldout, 0.55); }

}  // namespace normlab::ui
