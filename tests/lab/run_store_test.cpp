// The store judges each run again as its record changes (core/runs/verdict.h) and says so
// once per change of verdict, not once per step: the table, the details and the status bar
// follow it.
#include "lab/run_store.h"

#include <gtest/gtest.h>

namespace normlab::lab {
namespace {

RunRecord queued_run() {
  RunRecord run;
  run.config.name = "post";
  run.config.model.norm = NormPlacement::Post;
  run.config.warmup_steps = 30;
  run.status = RunStatus::Queued;
  return run;
}

TEST(RunStoreVerdict, FollowsTheRecordAndSaysEachChangeOnce) {
  RunStore store;
  const int id = store.add(queued_run(), {});
  std::vector<Verdict> said;
  QObject::connect(&store, &RunStore::verdict_changed, [&](int changed) {
    EXPECT_EQ(changed, id);
    said.push_back(store.find(id)->verdict.verdict);
  });
  EXPECT_EQ(store.find(id)->verdict.verdict, Verdict::NotStarted);
  RunRecord header = queued_run();
  header.baseline_loss = 6.13;
  store.mark_started(id, header);
  store.append_eval(id, {0, 0, 9.1});
  const double held_out[] = {6.5, 6.2, 6.18, 6.16, 6.15, 6.15};
  for (int i = 0; i < 6; ++i) {
    const int step = 50 * (i + 1);
    std::vector<StepMetrics> steps;
    for (int s = step - 49; s <= step; ++s) steps.push_back({s, 0.1 * s, 1e-3, held_out[i], 1000});
    store.append_steps(id, steps);
    store.append_eval(id, {step, 0.1 * step, held_out[i]});
    store.append_points(id, {{"context_use", 0, step, {0.02}}});
  }
  // Too early from the first evaluation through step 150, on the baseline from then on,
  // since step 100: each said once, whatever the steps and points between.
  EXPECT_EQ(said, (std::vector<Verdict>{Verdict::TooEarly, Verdict::OnBaseline}));
  EXPECT_EQ(store.find(id)->verdict.since_step, 100);
  EXPECT_NE(store.find(id)->verdict.sentence.find("almost no context (0.02 nats)"), std::string::npos)
      << "the evidence follows the points";

  RunRecord done = store.find(id)->record;
  done.status = RunStatus::Done;
  done.evals.push_back({350, 35, 5.2});
  store.finish(id, done);
  EXPECT_EQ(said, (std::vector<Verdict>{Verdict::TooEarly, Verdict::OnBaseline, Verdict::LeftBaseline}));
  EXPECT_EQ(store.find(id)->verdict.since_step, 350);
}

TEST(RunStoreVerdict, ARestoredRunComesJudged) {
  RunStore store;
  RunRecord run = queued_run();
  run.status = RunStatus::Done;
  run.baseline_loss = 6.13;
  run.evals = {{0, 0, 9.1}, {50, 5, 6.0}, {100, 10, 5.4}};
  const int id = store.add(run, {});
  EXPECT_EQ(store.find(id)->verdict.verdict, Verdict::Learning);
  EXPECT_EQ(store.find(id)->verdict.since_step, 50);
}

}  // namespace
}  // namespace normlab::lab
