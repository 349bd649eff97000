#include "palette.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "presets.h"
#include "seeds.h"

namespace normlab {

namespace {

int shade_slot(int shade) { return ((shade % kShades) + kShades) % kShades; }  // shades repeat every kShades

std::uint32_t base_colour(Hue hue) {
  switch (hue) {
    case Hue::Blue: return 0x1f5fb0;
    case Hue::Red: return 0xc62828;
    case Hue::Green: return 0x2e7d32;
    case Hue::Teal: return 0x00838f;
    case Hue::Amber: return 0xc77800;
    case Hue::Purple: return 0x8e24aa;
    case Hue::Indigo: return 0x4a35b1;  // between pre-norm's blue and mix's purple: a pre-norm variant
    case Hue::Magenta: return 0xb0267f;
    case Hue::Olive: return 0x7c8a00;
  }
  return 0;  // not reached: the switch names every hue
}

// Lightness added to the hue's own colour, per step: darker and lighter in turn, all dark
// enough for a held-out line on white (training lines are lightened further).
constexpr std::array<double, kLightnessSteps> kLightnessShift = {0, -0.13, 0.12, -0.22};

struct Hsl {
  double h, s, l;
};

Hsl to_hsl(std::uint32_t rgb) {
  const double r = ((rgb >> 16) & 0xff) / 255.0, g = ((rgb >> 8) & 0xff) / 255.0, b = (rgb & 0xff) / 255.0;
  const double high = std::max({r, g, b}), low = std::min({r, g, b}), l = (high + low) / 2, d = high - low;
  if (d == 0) return {0, 0, l};
  const double s = d / (1 - std::abs(2 * l - 1));
  double h = high == r ? std::fmod((g - b) / d, 6.0) : high == g ? (b - r) / d + 2 : (r - g) / d + 4;
  if (h < 0) h += 6;
  return {h, s, l};
}

std::uint32_t to_rgb(Hsl c) {
  const double chroma = (1 - std::abs(2 * c.l - 1)) * c.s, x = chroma * (1 - std::abs(std::fmod(c.h, 2.0) - 1)),
               m = c.l - chroma / 2;
  double r = 0, g = 0, b = 0;
  switch (int(c.h)) {
    case 0: r = chroma, g = x; break;
    case 1: r = x, g = chroma; break;
    case 2: g = chroma, b = x; break;
    case 3: g = x, b = chroma; break;
    case 4: r = x, b = chroma; break;
    default: r = chroma, b = x; break;
  }
  auto byte = [m](double v) { return std::uint32_t(std::lround(std::clamp(v + m, 0.0, 1.0) * 255)); };
  return byte(r) << 16 | byte(g) << 8 | byte(b);
}

}  // namespace

Hue family_of(const TrainConfig& config) {
  // A norm type that drops the norm (DyT) is the design, whatever its placement; ReZero has no norm to replace.
  const auto& type = kNormTypes[std::size_t(config.model.norm_type)];
  if (type.hue && info(config.model.norm).norms) return *type.hue;
  const Hue hue = info(config.model.norm).hue;
  const bool long_warmup = config.warmup_steps > kShortWarmup && config.warmup_steps * 10 >= config.steps;
  return hue == Hue::Red && long_warmup ? Hue::Green : hue;
}

std::uint32_t hue_colour(Hue hue, int shade) {
  const int step = shade_slot(shade) % kLightnessSteps;
  if (step == 0) return base_colour(hue);
  Hsl c = to_hsl(base_colour(hue));
  c.l = std::clamp(c.l + kLightnessShift[std::size_t(step)], 0.08, 0.62);
  return to_rgb(c);
}

bool shade_squared(int shade) { return shade_slot(shade) >= kLightnessSteps; }

int next_shade(const TrainConfig& config, const std::vector<const TrainConfig*>& shown) {
  const Hue hue = family_of(config);
  std::array<int, kShades> groups_using{};
  std::vector<const TrainConfig*> counted;  // one run per seed group
  for (const TrainConfig* run : shown) {
    if (family_of(*run) != hue) continue;
    if (differ_only_in_seed(*run, config)) return run->shade;
    const bool group_seen = std::any_of(counted.begin(), counted.end(),
                                        [&](const TrainConfig* c) { return differ_only_in_seed(*c, *run); });
    if (group_seen) continue;
    counted.push_back(run);
    ++groups_using[std::size_t(shade_slot(run->shade))];
  }
  return int(std::min_element(groups_using.begin(), groups_using.end()) - groups_using.begin());
}

}  // namespace normlab
