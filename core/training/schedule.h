#pragma once

namespace normlab {

// Learning rate for 0-based `step` of `total_steps`: linear from peak/warmup up to
// `peak` over `warmup_steps`, then cosine down to 10 % of peak at the last step.
double learning_rate(int step, int total_steps, int warmup_steps, double peak);

inline constexpr double kFinalLrFraction = 0.1;

}  // namespace normlab
