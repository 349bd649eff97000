#pragma once
// The one rule for a point's fate. Given a point (a run's settings) and the runs already
// held (a folder's run files, the window's store), it says whether an earlier run is
// reused, one still queued or training is waited for, a cut-short one goes on from its
// checkpoint, or the point trains afresh, and why, in one line. The command line's sweeps,
// `sweep --status` and Slurm array tasks, and the window's course experiment and sweeps
// all ask it. No torch: whether a checkpoint can go on is the caller's question to
// core/training (resumable_checkpoint), so the rule itself is tested on records alone.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/runs/config.h"
#include "core/runs/run_record.h"

namespace normlab {

enum class Fate {
  Reuse,   // an earlier run with the same settings ended with a result (done, or diverged)
  Wait,    // one is queued or training: it will answer the point
  Resume,  // one was cut short and its checkpoint can go on
  Train,   // none, or only a cut-short one whose checkpoint cannot go on: train afresh
};

struct PointFate {
  Fate fate = Fate::Train;
  int run = -1;        // which of the runs: the one reused, waited for or resumed; for Train, the refused one or -1
  int from_step = -1;  // Resume: the checkpoint's step
  std::string reason;  // "done before with the same settings, final held-out 5.090 nats"
};

// What a cut-short run's checkpoint answers: the step it goes on from, or why it cannot
// (missing, damaged, of another experiment or another LibTorch).
struct CheckpointAnswer {
  int step = -1;
  std::string refused;  // empty: it can go on
};
// Asked only of the run the rule picked, and only when it was cut short.
using CheckpointCheck = std::function<CheckpointAnswer(std::size_t run)>;

// The run that stands for `point` among `runs` is core's find_run (the same experiment,
// the best standing, the latest of equal standing); its standing decides the fate.
PointFate point_fate(const TrainConfig& point, const std::vector<const RunRecord*>& runs,
                     const CheckpointCheck& checkpoint);

}  // namespace normlab
