#pragma once
// What a run costs in arithmetic, by its settings: the scale by which the time measured
// for one run gives another's on the same device (the window's and the queue's time
// estimates) and what the bench divides by its time.
#include "config.h"
#include "run_record.h"

namespace normlab {

// Floating-point operations of a whole run: each training step's forward and backward
// pass and each evaluation's forward pass.
double run_flops(const TrainConfig& config);
// The same for one training step alone (no evaluation).
double step_flops(const TrainConfig& config);
// What is left of a run's work: all of run_flops before its first step, none once done.
double remaining_flops(const RunRecord& run);

}  // namespace normlab
