#include "point_fate.h"

#include <cstdio>

#include "sweep.h"

namespace normlab {

PointFate point_fate(const TrainConfig& point, const std::vector<const RunRecord*>& runs,
                     const CheckpointCheck& checkpoint) {
  const int found = find_run(point, runs);
  if (found < 0) return {Fate::Train, -1, -1, "not trained before with these settings"};
  const RunRecord& run = *runs[std::size_t(found)];
  const std::string status = to_string(run.status);
  switch (progress_of(run.status)) {
    case RunProgress::Result: {
      const std::string as = run.config.name == point.name ? "" : " as \u201c" + run.config.name + "\u201d";
      char loss[64];
      std::snprintf(loss, sizeof loss, ", final held-out %.3f nats", run.final_val_loss());
      return {Fate::Reuse, found, -1, status + " before with the same settings" + as + loss};
    }
    case RunProgress::Pending: return {Fate::Wait, found, -1, status + " already with the same settings"};
    case RunProgress::CutShort: break;
  }
  const CheckpointAnswer answer = checkpoint(std::size_t(found));
  if (!answer.refused.empty()) return {Fate::Train, found, -1, status + ", trained afresh: " + answer.refused};
  return {Fate::Resume, found, answer.step,
          status + ", goes on from its checkpoint at step " + std::to_string(answer.step)};
}

}  // namespace normlab
