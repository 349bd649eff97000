#pragma once
// The app's colours, as 0xRRGGBB: one family of shades per placement hue, plus the green
// of long-warmup post-norm runs. Dark enough to read as held-out lines on white, distinct
// within a family. The window (ui/run_colors) and the sweep chart both draw from here.
#include <array>
#include <cstdint>

#include "config.h"

namespace normlab {

inline constexpr std::array<std::uint32_t, 4> kBlues = {0x1f5fb0, 0x0b2a63, 0x2f9bd6, 0x5548b8};
inline constexpr std::array<std::uint32_t, 4> kReds = {0xc62828, 0x7a0c0c, 0xe8692a, 0xad1457};
inline constexpr std::array<std::uint32_t, 3> kGreens = {0x2e7d32, 0x0f4f2a, 0x7cb342};
// The later designs: hues no earlier family uses, so the plate's three stay unambiguous.
inline constexpr std::array<std::uint32_t, 3> kTeals = {0x00838f, 0x004d56, 0x26a69a};
inline constexpr std::array<std::uint32_t, 3> kAmbers = {0xc77800, 0x7a4a00, 0xe0a526};
inline constexpr std::array<std::uint32_t, 3> kPurples = {0x8e24aa, 0x4a148c, 0xc158dc};

// The `shade`-th colour of a hue's family; shades repeat after a few.
inline std::uint32_t hue_colour(Hue hue, int shade) {
  auto pick = [shade](const auto& family) { return family[std::size_t(shade) % family.size()]; };
  switch (hue) {
    case Hue::Blue: return pick(kBlues);
    case Hue::Red: return pick(kReds);
    case Hue::Teal: return pick(kTeals);
    case Hue::Amber: return pick(kAmbers);
    case Hue::Purple: return pick(kPurples);
  }
  return 0;  // not reached: the switch names every hue
}

}  // namespace normlab
