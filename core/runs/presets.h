#pragma once
// The course's workshop: five runs that show the norm placement deciding whether
// an 8-layer model trains.
#include <string>
#include <vector>

#include "config.h"

namespace normlab {

// The course's short warmup, in steps, at every scale: post-norm stalls with it.
inline constexpr int kShortWarmup = 30;

enum class Scale {
  Full,  // as in the course: 3000 steps of 32 x 128 tokens; meant for a GPU
  Cpu,   // fewer, smaller steps, the long warmup shrunk in proportion: minutes on 2 cores
};
Scale parse_scale(const std::string& text);  // "full" | "cpu"
std::string to_string(Scale scale);

// Applies the scale's batch, context, steps and evaluation settings to `base`.
TrainConfig scaled(TrainConfig base, Scale scale);

// Pre and post at 1e-3 and 6e-3 with a short warmup, then post at 1e-3 with a long one
// (1000 steps at 3000, in proportion otherwise). `base` supplies everything else.
std::vector<TrainConfig> workshop_runs(const TrainConfig& base);

}  // namespace normlab
