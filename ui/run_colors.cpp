#include "run_colors.h"

#include "palette.h"
#include "presets.h"

namespace normlab::ui {

RunFamily family_of(const TrainConfig& config) {
  switch (info(config.model.norm).hue) {
    case Hue::Blue: return RunFamily::PreNorm;
    case Hue::Red: {
      // Long: more than the course's short warmup and at least a tenth of the run, so a
      // short run with the course's 30 steps stays red.
      const bool long_warmup = config.warmup_steps > kShortWarmup && config.warmup_steps * 10 >= config.steps;
      return long_warmup ? RunFamily::PostNormLongWarmup : RunFamily::PostNorm;
    }
    case Hue::Teal: return RunFamily::PeriNorm;
    case Hue::Amber: return RunFamily::DeepNorm;
    case Hue::Purple: return RunFamily::MixNorm;
  }
  return RunFamily::PreNorm;  // not reached: the switch names every hue
}

QColor family_colour(RunFamily family, int shade) {
  switch (family) {
    case RunFamily::PreNorm: return QColor(QRgb(hue_colour(Hue::Blue, shade)));
    case RunFamily::PostNorm: return QColor(QRgb(hue_colour(Hue::Red, shade)));
    case RunFamily::PostNormLongWarmup: return QColor(QRgb(kGreens[std::size_t(shade) % kGreens.size()]));
    case RunFamily::PeriNorm: return QColor(QRgb(hue_colour(Hue::Teal, shade)));
    case RunFamily::DeepNorm: return QColor(QRgb(hue_colour(Hue::Amber, shade)));
    case RunFamily::MixNorm: return QColor(QRgb(hue_colour(Hue::Purple, shade)));
  }
  return Qt::black;
}

QColor lightened(const QColor& colour, double amount) {
  auto mix = [amount](int channel) { return int(channel + (255 - channel) * amount + 0.5); };
  return QColor(mix(colour.red()), mix(colour.green()), mix(colour.blue()), colour.alpha());
}

QColor training_colour(const QColor& heldout) { return lightened(heldout, 0.55); }

}  // namespace normlab::ui
