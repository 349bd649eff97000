#pragma once
// Where a sweep stands against the store: which run answers or pursues each of its runs,
// what has ended, what is still queued or training, what goes on from a checkpoint and
// what is left to train. The window's Sweeps tab shows it and the lab starts the sweep by
// the same rule: each point's fate is core's point_fate (Lab::fate_of), as the command
// line's sweeps decide theirs, so the tab says what Start will do.
#include <vector>

#include "core/sweeps/sweep.h"

namespace normlab::lab {

class Lab;

struct SweepStanding {
  std::vector<SweepRun> runs;         // the sweep expanded
  std::vector<int> ids;               // per run: the store's run for it, or 0
  std::vector<SweepResult> results;   // per run that ended (with a result or cut short), in sweep order
  std::vector<int> pending;           // the store's runs of the sweep still queued or training
  std::vector<int> to_resume;         // the store's runs cut short whose checkpoints go on: Start resumes these
  std::vector<TrainConfig> to_train;  // never trained, or cut short without a checkpoint to go on from

  int ended_with_result() const { return int(runs.size() - to_train.size() - to_resume.size() - pending.size()); }
};

// UserError (from expand) when the sweep describes nothing that can run.
SweepStanding stand(const Sweep& sweep, const Lab& lab);

}  // namespace normlab::lab
