#include "core/training/schedule.h"

#include <cmath>
#include <gtest/gtest.h>
#include <vector>

namespace normlab {
namespace {

constexpr double kPeak = 6e-3;

std::vector<double> series(int steps, int warmup, double peak = kPeak) {
  std::vector<double> lr;
  for (int s = 0; s < steps; ++s) lr.push_back(learning_rate(s, steps, warmup, peak));
  return lr;
}

TEST(Schedule, LinearWarmupToPeak) {
  EXPECT_DOUBLE_EQ(learning_rate(0, 3000, 30, kPeak), kPeak / 30);
  EXPECT_DOUBLE_EQ(learning_rate(0, 3000, 1000, kPeak), kPeak / 1000);
  const auto lr = series(3000, 30);
  for (int s = 0; s < 30; ++s) EXPECT_NEAR(lr[s], kPeak * (s + 1) / 30, 1e-15) << s;
  EXPECT_DOUBLE_EQ(lr[29], kPeak);
  EXPECT_DOUBLE_EQ(lr[30], kPeak);
}

TEST(Schedule, RisesThenFalls) {
  for (int warmup : {1, 30, 200, 1000}) {
    const auto lr = series(3000, warmup);
    for (int s = 1; s < warmup; ++s) EXPECT_GE(lr[s], lr[s - 1]) << "warmup " << warmup << " step " << s;
    for (int s = warmup + 1; s < 3000; ++s) EXPECT_LE(lr[s], lr[s - 1]) << "warmup " << warmup << " step " << s;
  }
}

TEST(Schedule, CosineDownToTenPercent) {
  for (int warmup : {1, 30, 1000}) {
    EXPECT_NEAR(learning_rate(2999, 3000, warmup, kPeak), 0.1 * kPeak, 1e-15) << warmup;
  }
  EXPECT_NEAR(learning_rate(599, 600, 200, 1e-3), 1e-4, 1e-15);
  // Half-way through the decay the cosine term is zero: half-way between peak and floor.
  EXPECT_NEAR(learning_rate(100 + 500, 1101, 100, 1.0), 0.55, 1e-12);
}

TEST(Schedule, NeverAbovePeak) {
  for (int steps : {1, 2, 10, 600, 3000}) {
    for (int warmup : {1, 5, 30, 1000, 5000}) {
      for (double lr : series(steps, warmup)) {
        EXPECT_TRUE(std::isfinite(lr));
        EXPECT_GT(lr, 0.0);
        EXPECT_LE(lr, kPeak * (1 + 1e-12));
      }
    }
  }
  EXPECT_DOUBLE_EQ(learning_rate(0, 1, 1, kPeak), kPeak);
}

TEST(Schedule, WarmupLongerThanRun) {
  // The run ends inside the warmup: a plain linear rise that never reaches the peak.
  const auto lr = series(10, 20);
  for (int s = 0; s < 10; ++s) EXPECT_NEAR(lr[s], kPeak * (s + 1) / 20, 1e-15);
  EXPECT_DOUBLE_EQ(series(10, 10).back(), kPeak);
}

}  // namespace
}  // namespace normlab
