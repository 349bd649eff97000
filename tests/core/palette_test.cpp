// The colour rule: a hue per design, shades of one hue told apart, a seed group one curve.
#include "core/runs/palette.h"

#include <cmath>
#include <set>

#include "core/runs/presets.h"

#include "test_support.h"

namespace normlab::test {
namespace {

// The hue of 0xRRGGBB in degrees.
double hue_degrees(std::uint32_t rgb) {
  const double r = (rgb >> 16 & 0xff) / 255.0, g = (rgb >> 8 & 0xff) / 255.0, b = (rgb & 0xff) / 255.0;
  const double high = std::max({r, g, b}), low = std::min({r, g, b}), d = high - low;
  double h = high == r ? std::fmod((g - b) / d, 6.0) : high == g ? (b - r) / d + 2 : (r - g) / d + 4;
  return std::fmod(h * 60 + 360, 360);
}

double hue_distance(double a, double b) { return std::min(std::abs(a - b), 360 - std::abs(a - b)); }

const std::vector<Hue> kAllHues = {Hue::Blue,   Hue::Red,    Hue::Green,   Hue::Teal, Hue::Amber,
                                   Hue::Purple, Hue::Indigo, Hue::Magenta, Hue::Olive};

TEST(Palette, EveryShadeKeepsItsHueAndLooksDifferent) {
  for (const Hue hue : kAllHues) {
    const double own = hue_degrees(hue_colour(hue, 0));
    std::set<std::pair<std::uint32_t, bool>> looks;
    for (int shade = 0; shade < kShades; ++shade) {
      EXPECT_LT(hue_distance(hue_degrees(hue_colour(hue, shade)), own), 3.0)
          << "hue " << int(hue) << " shade " << shade;
      looks.insert({hue_colour(hue, shade), shade_squared(shade)});
    }
    EXPECT_EQ(looks.size(), std::size_t(kShades)) << "hue " << int(hue);
    EXPECT_EQ(hue_colour(hue, kShades), hue_colour(hue, 0)) << "shades repeat after all are used";
  }
  // The hues themselves stay far apart, so a colour names its design.
  const std::vector<Hue>& hues = kAllHues;
  for (std::size_t i = 0; i < hues.size(); ++i) {
    for (std::size_t j = i + 1; j < hues.size(); ++j) {
      EXPECT_GT(hue_distance(hue_degrees(hue_colour(hues[i], 0)), hue_degrees(hue_colour(hues[j], 0))), 25.0);
    }
  }
}

TEST(Palette, FamiliesFollowThePlate) {
  TrainConfig pre, post, long_warmup;
  pre.model.norm = NormPlacement::Pre;
  post.model.norm = NormPlacement::Post;
  long_warmup.model.norm = NormPlacement::Post;
  long_warmup.warmup_steps = 1000;
  long_warmup.steps = 3000;
  EXPECT_EQ(family_of(pre), Hue::Blue);
  EXPECT_EQ(family_of(post), Hue::Red);
  EXPECT_EQ(family_of(long_warmup), Hue::Green);
  TrainConfig short_run = post;
  short_run.steps = 100;  // the course's 30-step warmup is short even in a short run
  EXPECT_EQ(family_of(short_run), Hue::Red);
  short_run.warmup_steps = 50;
  EXPECT_EQ(family_of(short_run), Hue::Green);
  for (const PlacementInfo& placement : kPlacements) {
    TrainConfig c;
    c.model.norm = placement.value;
    c.warmup_steps = c.steps / 2;  // a long warmup makes only post-norm green
    EXPECT_EQ(family_of(c), placement.value == NormPlacement::Post ? Hue::Green : placement.hue) << placement.name;
  }
}

// DyT is its own design whatever the placement; the switches keep their design's hue.
TEST(Palette, DytHasItsOwnHueAndSwitchesKeepTheDesigns) {
  std::set<Hue> design_hues;
  for (const PlacementInfo& placement : kPlacements)
    EXPECT_TRUE(design_hues.insert(placement.hue).second) << placement.name;
  EXPECT_TRUE(design_hues.insert(*kNormTypes[std::size_t(NormType::Dyt)].hue).second)
      << "DyT shares no placement's hue";
  for (const NormPlacement norm : {NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri}) {
    TrainConfig c;
    c.model.norm = norm;
    c.model.norm_type = NormType::Dyt;
    EXPECT_EQ(family_of(c), Hue::Olive) << to_string(norm);
    c.model.norm_type = NormType::RmsNorm;
    EXPECT_EQ(family_of(c), info(norm).hue) << "RMSNorm is drawn as its placement";
  }
  TrainConfig rezero;
  rezero.model.norm = NormPlacement::ReZero;
  rezero.model.norm_type = NormType::Dyt;  // no norm to replace
  EXPECT_EQ(family_of(rezero), Hue::Magenta);
  TrainConfig lns;
  lns.model.norm = NormPlacement::LayerNormScaling;
  lns.model.qk_norm = Switch::On;
  lns.model.scaled_residual_init = Switch::On;
  EXPECT_EQ(family_of(lns), Hue::Indigo);
}

TEST(Palette, ASeedGroupSharesAShadeAndNewCurvesTakeTheLeastUsed) {
  TrainConfig a, b, c, other_hue;
  a.model.norm = b.model.norm = c.model.norm = NormPlacement::Pre;
  b.peak_lr = 6e-3;
  c.model.layers = 2;
  other_hue.model.norm = NormPlacement::Post;
  std::vector<const TrainConfig*> shown;
  TrainConfig a_seeds[3] = {a, a, a};
  for (int i = 0; i < 3; ++i) {
    a_seeds[i].seed = a.seed + std::uint64_t(i);
    a_seeds[i].shade = next_shade(a_seeds[i], shown);
    EXPECT_EQ(a_seeds[i].shade, 0) << "seed " << i << ": one group, one curve, one shade";
    shown.push_back(&a_seeds[i]);
  }
  EXPECT_EQ(next_shade(other_hue, shown), 0) << "another hue counts its own shades";
  b.shade = next_shade(b, shown);
  EXPECT_EQ(b.shade, 1);
  shown.push_back(&b);
  EXPECT_EQ(next_shade(c, shown), 2) << "not the group's shade, however many seeds it has";
  // With every shade taken once, the next curve reuses the one least used.
  std::vector<TrainConfig> more(kShades);
  std::vector<const TrainConfig*> full;
  for (int i = 0; i < kShades; ++i) {
    more[std::size_t(i)].peak_lr = 1e-4 * (i + 1);
    more[std::size_t(i)].shade = i;
    full.push_back(&more[std::size_t(i)]);
  }
  a.shade = 0;
  full.push_back(&a);  // shade 0 twice now
  EXPECT_EQ(next_shade(b, full), 1);
}

}  // namespace
}  // namespace normlab::test
