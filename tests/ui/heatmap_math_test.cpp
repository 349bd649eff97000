#include "heatmap_math.h"

#include <gtest/gtest.h>

#include <cmath>

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
  const LogScale scale{-4, 0};
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
