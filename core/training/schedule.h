#pragma once
#include "core/runs/config.h"

namespace normlab {

// Learning rate for 0-based `step` of `total_steps`: linear from peak/warmup up to
// `peak` over `warmup_steps`, then cosine down to 10 % of peak at the last step.
double learning_rate(int step, int total_steps, int warmup_steps, double peak);

inline constexpr double kFinalLrFraction = 0.1;

// Whether a run evaluates after its 1-based `step`: every eval_interval steps and at the last.
bool evaluates_at(const TrainConfig& config, int step);

}  // namespace normlab
