#pragma once
// Runs repeated over seeds, and what a group of them shows together. At a high learning
// rate one run can land anywhere in a range (pre-norm at 6e-3 on the CPU scale ends between
// about 5.3 and 5.6 nats by seed), so the course experiment and sweep points can be run k
// times and drawn as a mean with its range. Plain data: the command line and the window
// share it.
#include <cstddef>
#include <string>
#include <vector>

#include "run_record.h"

namespace normlab {

// `config` as the i-th of `seeds` runs: seed config.seed + i, and " seed N" after the
// name (and the label, if any) when there is more than one, so every run has its own name
// and files.
TrainConfig with_seed(TrainConfig config, int i, int seeds);
// Each config `seeds` times, seed-major: every config once with the first seed, then
// every config again with the next, so the whole experiment shows early. UserError
// when seeds < 1.
std::vector<TrainConfig> repeat_over_seeds(const std::vector<TrainConfig>& configs, int seeds);
// What a group of seeds is called: the run's name without the " seed N" with_seed added.
std::string seed_group_name(const TrainConfig& config);
// What the window shows for the group: its runs' label without the seed, else their title
// without it (run_title.h).
std::string seed_group_title(const TrainConfig& config);

// Whether the two runs are one experiment but for their seed (see same_experiment).
bool differ_only_in_seed(const TrainConfig& a, const TrainConfig& b);

// Runs that differ only in their seed, as index lists into `runs`, in first-seen order;
// a run with no such partner is a group of its own.
std::vector<std::vector<std::size_t>> seed_groups(const std::vector<const RunRecord*>& runs);

// The runs of a group its mean is over, one per seed, in group order: runs with a recorded
// point that are training (they join live) or ran to their end (done, or diverged: a
// seed's real outcome). A seed run twice counts once, by its first such run. Runs cut
// short (stopped, interrupted, failed) would make the mean jump where they end, so they
// join only when no run of the group is training or ended; queued runs have no points.
std::vector<const RunRecord*> runs_in_mean(const std::vector<const RunRecord*>& group);

// A group's curves together: at each recorded step (or evaluation) the mean of the runs
// in its mean (runs_in_mean) that have a finite value there, and the lowest and highest.
struct SeedSpread {
  RunRecord mean;  // the settings and baseline of the first run in the mean (else of the group's first); its points are
                   // the means
  std::vector<EvalMetrics> low, high;  // held-out range, one per evaluation of `mean`
  int runs = 0;                        // the seeds the mean is over
};
SeedSpread seed_spread(const std::vector<const RunRecord*>& group);

}  // namespace normlab
