#include "sweep_standing.h"

#include <algorithm>

#include "run_store.h"

namespace normlab::lab {

SweepStanding stand(const Sweep& sweep, const RunStore& store) {
  SweepStanding s;
  s.runs = expand(sweep);
  const std::vector<const RunRecord*> records = store.records();
  for (const SweepRun& run : s.runs) {
    const int found = find_run(run.config, records);
    const RunEntry* entry = found < 0 ? nullptr : &store.runs()[std::size_t(found)];
    s.ids.push_back(entry ? entry->id : 0);
    switch (entry ? progress_of(entry->record.status) : RunProgress::CutShort) {
      case RunProgress::Result: s.results.push_back(summarise(run, entry->record)); break;
      case RunProgress::Pending:
        // Two points can share a run only through duplicate values; count it once.
        if (std::find(s.pending.begin(), s.pending.end(), entry->id) == s.pending.end()) s.pending.push_back(entry->id);
        break;
      case RunProgress::CutShort:
        if (entry) s.results.push_back(summarise(run, entry->record));  // drawn until it trains again
        s.to_train.push_back(run.config);
        break;
    }
  }
  return s;
}

}  // namespace normlab::lab
