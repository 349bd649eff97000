#include "schedule.h"

#include <algorithm>
#include <cmath>

namespace normlab {

double learning_rate(int step, int total_steps, int warmup_steps, double peak) {
  if (step < warmup_steps) return peak * (step + 1) / warmup_steps;
  const int decay_steps = total_steps - 1 - warmup_steps;
  if (decay_steps <= 0) return peak;
  const double progress = std::min(1.0, double(step - warmup_steps) / decay_steps);
  const double floor = kFinalLrFraction * peak;
  return floor + 0.5 * (1.0 + std::cos(M_PI * progress)) * (peak - floor);
}

bool evaluates_at(const TrainConfig& config, int step) {
  return step % config.eval_interval == 0 || step == config.steps;
}

}  // namespace normlab
