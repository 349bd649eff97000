#include "presets.h"

#include <algorithm>
#include <cmath>

namespace normlab {

namespace {
constexpr int kFullSteps = 3000;
constexpr int kLongWarmup = 1000;  // at the full step count; scaled with the steps
}  // namespace

Scale parse_scale(const std::string& text) {
  if (text == "full" || text == "gpu") return Scale::Full;
  if (text == "cpu") return Scale::Cpu;
  throw UserError("scale must be 'full' or 'cpu', not '" + text + "'");
}

std::string to_string(Scale scale) { return scale == Scale::Full ? "full" : "cpu"; }

TrainConfig scaled(TrainConfig c, Scale scale) {
  if (scale == Scale::Full) {
    c.batch_size = 32;
    c.model.context = 128;
    c.steps = kFullSteps;
    c.eval_interval = 100;
    c.eval_batches = 16;
  } else {
    c.batch_size = 8;
    c.model.context = 64;
    c.steps = 600;
    c.eval_interval = 50;
    c.eval_batches = 8;
    // Writing the text costs about two of these small steps whatever the batch: at every
    // evaluation some 4 % of a run; at every third and the last (steps 0, 150, … 600),
    // under 2 % (`normlab-cli bench --scale cpu` prints it).
    c.text_every = 3;
  }
  return c;
}

std::vector<TrainConfig> workshop_runs(const TrainConfig& base) {
  auto run = [&](NormPlacement norm, double lr, int warmup) {
    TrainConfig c = base;
    c.model.norm = norm;
    c.peak_lr = lr;
    c.warmup_steps = warmup;
    c.name = default_run_name(c);
    return c;
  };
  const int long_warmup = std::max(1, int(std::lround(double(kLongWarmup) * base.steps / kFullSteps)));
  return {run(NormPlacement::Pre, 1e-3, kShortWarmup), run(NormPlacement::Post, 1e-3, kShortWarmup),
          run(NormPlacement::Pre, 6e-3, kShortWarmup), run(NormPlacement::Post, 6e-3, kShortWarmup),
          run(NormPlacement::Post, 1e-3, long_warmup)};
}

}  // namespace normlab
