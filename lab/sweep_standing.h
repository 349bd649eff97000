#pragma once
// Where a sweep stands against the store: which run answers or pursues each of its runs,
// what has ended, what is still queued or training, and what is left to train. The
// window's Sweeps tab shows it and the lab starts the sweep from it; the rule that an
// earlier run answers a point is core's (find_run, progress_of), the command line's too.
#include <vector>

#include "core/sweeps/sweep.h"

namespace normlab::lab {

class RunStore;

struct SweepStanding {
  std::vector<SweepRun> runs;         // the sweep expanded
  std::vector<int> ids;               // per run: the store's run for it, or 0
  std::vector<SweepResult> results;   // per run that ended (with a result or cut short), in sweep order
  std::vector<int> pending;           // the store's runs of the sweep still queued or training
  std::vector<TrainConfig> to_train;  // never trained, or cut short or failed: Start trains these

  int ended_with_result() const { return int(runs.size() - to_train.size() - pending.size()); }
};

// UserError (from expand) when the sweep describes nothing that can run.
SweepStanding stand(const Sweep& sweep, const RunStore& store);

}  // namespace normlab::lab
