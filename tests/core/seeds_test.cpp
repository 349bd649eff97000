#include "core/runs/seeds.h"

#include <cmath>
#include <set>

#include "core/runs/presets.h"

#include "test_support.h"

namespace normlab::test {
namespace {

TEST(Seeds, RepeatsSeedMajorWithOwnNames) {
  const std::vector<TrainConfig> course = workshop_runs(scaled(TrainConfig{}, Scale::Cpu));
  const auto runs = repeat_over_seeds(course, 3);
  ASSERT_EQ(runs.size(), 15u);
  std::set<std::string> names;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const TrainConfig& expected = course[i % 5];
    EXPECT_EQ(runs[i].seed, expected.seed + i / 5) << "every run of the course once per seed, in turn";
    EXPECT_EQ(runs[i].name, expected.name + " seed " + std::to_string(runs[i].seed));
    EXPECT_TRUE(differ_only_in_seed(runs[i], expected));
    names.insert(runs[i].name);
  }
  EXPECT_EQ(names.size(), runs.size());
  EXPECT_EQ(seed_group_name(runs[7]), course[2].name);
  EXPECT_EQ(seed_group_name(course[2]), course[2].name) << "a name without a seed stays whole";
  EXPECT_EQ(repeat_over_seeds(course, 1)[4].name, course[4].name) << "one seed: names as before";
  EXPECT_THROW(repeat_over_seeds(course, 0), UserError);
  EXPECT_FALSE(differ_only_in_seed(course[0], course[2])) << "another rate is another experiment";
}

RunRecord run_with(std::uint64_t seed, std::vector<double> train, std::vector<double> heldout) {
  RunRecord r;
  r.config.seed = seed;
  r.baseline_loss = 7;
  for (std::size_t i = 0; i < train.size(); ++i)
    r.steps.push_back({int(i + 1), 0.1 * double(i + 1), 1e-3, train[i], 100});
  for (std::size_t i = 0; i < heldout.size(); ++i) r.evals.push_back({int(i * 10), 1.0 * double(i), heldout[i]});
  return r;
}

TEST(Seeds, GroupsRunsThatDifferOnlyInTheirSeed) {
  RunRecord a = run_with(1, {}, {}), b = run_with(2, {}, {}), c = run_with(3, {}, {}), other = run_with(1, {}, {});
  other.config.peak_lr = 6e-3;
  b.config.threads = 4;  // speed only
  EXPECT_EQ(seed_groups({&a, &other, &b, &c}), (std::vector<std::vector<std::size_t>>{{0, 2, 3}, {1}}));
}

TEST(Seeds, SpreadIsTheMeanAndRangeOfTheRunsThatGotThere) {
  const double nan = std::nan("");
  const RunRecord a = run_with(1, {6, 5, 4}, {8, 6, 5});
  const RunRecord b = run_with(2, {8, 7}, {8, 7, nan});  // stopped early; its last held-out loss blew up
  const RunRecord c = run_with(3, {7, 6, 5}, {8, 5, 6});
  const SeedSpread s = seed_spread({&a, &b, &c});
  EXPECT_EQ(s.runs, 3);
  ASSERT_EQ(s.mean.steps.size(), 3u);
  EXPECT_DOUBLE_EQ(s.mean.steps[0].train_loss, 7);
  EXPECT_DOUBLE_EQ(s.mean.steps[1].train_loss, 6);
  EXPECT_DOUBLE_EQ(s.mean.steps[2].train_loss, 4.5) << "the runs that reached step 3";
  EXPECT_EQ(s.mean.steps[2].step, 3);
  ASSERT_EQ(s.mean.evals.size(), 3u);
  EXPECT_DOUBLE_EQ(s.mean.evals[1].val_loss, 6);
  EXPECT_DOUBLE_EQ(s.low[1].val_loss, 5);
  EXPECT_DOUBLE_EQ(s.high[1].val_loss, 7);
  EXPECT_DOUBLE_EQ(s.mean.evals[2].val_loss, 5.5) << "a non-finite loss is left out";
  EXPECT_DOUBLE_EQ(s.low[2].val_loss, 5);
  EXPECT_DOUBLE_EQ(s.high[2].val_loss, 6);
  EXPECT_EQ(s.low[2].step, 20);
  EXPECT_DOUBLE_EQ(s.mean.baseline_loss, 7);
}

// Queued runs and runs not yet past their start have nothing to average; a seed run twice
// counts once; runs cut short (stopped, interrupted, failed) would make the mean jump
// where they end, so they join only a group with nothing else to show.
TEST(Seeds, AMeanIsOverTheSeedsWithDataEachOnce) {
  RunRecord done = run_with(1, {6, 5}, {8, 6}), copy = run_with(1, {9, 9}, {9, 9}), running = run_with(2, {8}, {8});
  RunRecord queued = run_with(3, {}, {}), starting = run_with(4, {}, {}), interrupted = run_with(5, {7, 7}, {7, 7});
  done.status = copy.status = RunStatus::Done;
  running.status = starting.status = RunStatus::Running;
  interrupted.status = RunStatus::Interrupted;
  const std::vector<const RunRecord*> group{&done, &copy, &running, &queued, &starting, &interrupted};
  EXPECT_EQ(runs_in_mean(group), (std::vector<const RunRecord*>{&done, &running}));
  const SeedSpread s = seed_spread(group);
  EXPECT_EQ(s.runs, 2);
  ASSERT_EQ(s.mean.steps.size(), 2u);
  EXPECT_DOUBLE_EQ(s.mean.steps[0].train_loss, 7) << "the first copy of seed 1 and the running seed 2";
  EXPECT_DOUBLE_EQ(s.mean.steps[1].train_loss, 5);
  EXPECT_DOUBLE_EQ(s.high[0].val_loss, 8) << "neither the copy nor the interrupted run widens the range";

  RunRecord rerun = run_with(5, {6, 6}, {6, 6});
  rerun.status = RunStatus::Done;
  EXPECT_EQ(runs_in_mean({&interrupted, &rerun}), (std::vector<const RunRecord*>{&rerun}))
      << "a seed trained again stands for its interrupted first try";
  RunRecord stopped = run_with(6, {5}, {5});
  stopped.status = RunStatus::Stopped;
  EXPECT_EQ(runs_in_mean({&queued, &interrupted, &stopped}), (std::vector<const RunRecord*>{&interrupted, &stopped}))
      << "with nothing else to show, the runs cut short";
  EXPECT_EQ(seed_spread({&queued, &starting}).runs, 0);
}

}  // namespace
}  // namespace normlab::test
