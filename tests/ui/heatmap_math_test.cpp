#include "ui/heatmap_math.h"

#include <cmath>
#include <gtest/gtest.h>

namespace normlab::ui {
namespace {

TEST(HeatmapMath, OneScaleCoversEveryPanelsPositiveValues) {
  Series post{"g", 2, {1, 2}, {1e-12, 0.2, 0.0, 0.3}};
  Series pre{"g", 2, {1}, {0.05, NAN}};
  const auto scale = log_scale_of({&post, nullptr, &pre});
  ASSERT_TRUE(scale);
  EXPECT_DOUBLE_EQ(scale->lo, -12);
  EXPECT_NEAR(scale->hi, std::log10(0.3), 1e-12);
  EXPECT_FALSE(log_scale_of({nullptr}));
  Series zeros{"g", 1, {1}, {0.0}};
  EXPECT_FALSE(log_scale_of({&zeros}));
}

TEST(HeatmapMath, PositionsAreLogarithmic) {
  const ColourScale scale{-4, 0};
  EXPECT_DOUBLE_EQ(scale_position(scale, 1e-4), 0);
  EXPECT_DOUBLE_EQ(scale_position(scale, 1e-2), 0.5);
  EXPECT_DOUBLE_EQ(scale_position(scale, 1), 1);
  EXPECT_DOUBLE_EQ(scale_position(scale, 100), 1);  // clamped
  EXPECT_TRUE(std::isnan(scale_position(scale, 0)));
  EXPECT_TRUE(std::isnan(scale_position(scale, -1)));
  EXPECT_TRUE(std::isnan(scale_position(scale, INFINITY)));
  EXPECT_DOUBLE_EQ(scale_position({-1, -1}, 0.1), 0.5);  // one value only
}

TEST(HeatmapMath, ColourBarTicksAreDecadesThinnedToFit) {
  EXPECT_EQ(colour_bar_ticks({-3.2, 0.5}, 8), (std::vector<double>{1e-3, 1e-2, 1e-1, 1}));
  const auto wide = colour_bar_ticks({-16, 0}, 5);
  EXPECT_EQ(wide.size(), 5u);  // every 4th decade
  EXPECT_DOUBLE_EQ(wide.front(), 1e-16);
  EXPECT_DOUBLE_EQ(wide.back(), 1);
  const auto narrow = colour_bar_ticks({std::log10(0.2), std::log10(0.5)}, 5);
  ASSERT_EQ(narrow.size(), 2u);  // no decade inside: the ends
  EXPECT_NEAR(narrow[0], 0.2, 1e-12);
}

// ReZero's α: 0 at the start, some blocks' negative later. A linear scale shows them all.
TEST(HeatmapMath, ALinearScaleDrawsZeroAndNegativeValues) {
  Series alpha{"rezero_alpha", 3, {1, 600}, {0.0, 0.0, 0.0, 0.028, -0.051, 0.066}};
  const auto scale = linear_scale_of({&alpha, nullptr});
  ASSERT_TRUE(scale);
  EXPECT_TRUE(scale->linear);
  EXPECT_DOUBLE_EQ(scale->lo, -0.051);
  EXPECT_DOUBLE_EQ(scale->hi, 0.066);
  EXPECT_DOUBLE_EQ(scale_position(*scale, -0.051), 0);
  EXPECT_DOUBLE_EQ(scale_position(*scale, 0.066), 1);
  EXPECT_NEAR(scale_position(*scale, 0.0), 0.051 / 0.117, 1e-12) << "0 has a colour: the start is visible";
  EXPECT_TRUE(std::isnan(scale_position(*scale, NAN)));
  EXPECT_TRUE(std::isnan(scale_position(*log_scale_of({&alpha}), 0.0))) << "where on a log scale 0 has no colour";
  EXPECT_DOUBLE_EQ(scale_position(ColourScale{0, 0, true}, 0), 0.5);  // all zeros: one colour
  Series none{"rezero_alpha", 1, {1}, {NAN}};
  EXPECT_FALSE(linear_scale_of({&none}));
}

TEST(HeatmapMath, LinearTicksAreRoundStepsThroughZero) {
  auto expect_ticks = [](const ColourScale& scale, int most, std::vector<double> wanted) {
    const auto ticks = colour_bar_ticks(scale, most);
    ASSERT_EQ(ticks.size(), wanted.size());
    for (std::size_t i = 0; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i], wanted[i], 1e-12) << i;
  };
  expect_ticks({-0.051, 0.066, true}, 7, {-0.04, -0.02, 0.0, 0.02, 0.04, 0.06});
  expect_ticks({0, 1, true}, 6, {0.0, 0.2, 0.4, 0.6, 0.8, 1.0});
  expect_ticks({0.5, 0.5, true}, 6, {0.5});
  EXPECT_EQ(colour_bar_ticks({-0.051, 0.066, true}, 7)[2], 0.0) << "an exact zero";
}

TEST(HeatmapMath, ViridisEndsAndGrowsInLightness) {
  EXPECT_EQ(colour_at(0).r, 68);
  EXPECT_EQ(colour_at(1).g, 231);
  EXPECT_EQ(colour_at(-1).r, colour_at(0).r);
  auto light = [](Rgb c) { return 0.299 * c.r + 0.587 * c.g + 0.114 * c.b; };
  for (double p = 0; p < 1; p += 0.05) EXPECT_LT(light(colour_at(p)), light(colour_at(p + 0.05))) << p;
}

TEST(HeatmapMath, EachRecordedStepGetsAnEqualShareOfColumns) {
  EXPECT_EQ(column_index(0, 300, 150), 0u);
  EXPECT_EQ(column_index(1, 300, 150), 0u);
  EXPECT_EQ(column_index(2, 300, 150), 1u);
  EXPECT_EQ(column_index(299, 300, 150), 149u);
  EXPECT_EQ(column_index(500, 300, 150), 149u);  // clamped
  EXPECT_EQ(column_index(99, 100, 1000), 990u);  // more steps than pixels: every tenth
  EXPECT_EQ(column_index(5, 100, 0), 0u);
}

}  // namespace
}  // namespace normlab::ui
