#include "sweep_standing.h"

#include <algorithm>

#include "core/sweeps/point_fate.h"

#include "lab.h"
#include "run_store.h"

namespace normlab::lab {

namespace {
// Two points can share a run only through duplicate values; it counts once.
void add_once(std::vector<int>& ids, int id) {
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}
}  // namespace

SweepStanding stand(const Sweep& sweep, const Lab& lab) {
  SweepStanding s;
  s.runs = expand(sweep);
  const RunStore& store = lab.store();
  for (const SweepRun& run : s.runs) {
    const PointFate fate = lab.fate_of(run.config);
    const RunEntry* entry = fate.run < 0 ? nullptr : &store.runs()[std::size_t(fate.run)];
    s.ids.push_back(entry ? entry->id : 0);
    switch (fate.fate) {
      case Fate::Reuse: s.results.push_back(summarise(run, entry->record)); break;
      case Fate::Wait: add_once(s.pending, entry->id); break;
      case Fate::Resume:
        s.results.push_back(summarise(run, entry->record));  // drawn until it trains on
        add_once(s.to_resume, entry->id);
        break;
      case Fate::Train:
        if (entry) s.results.push_back(summarise(run, entry->record));  // drawn until it trains again
        s.to_train.push_back(run.config);
        break;
    }
  }
  return s;
}

}  // namespace normlab::lab
