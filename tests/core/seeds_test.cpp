#include "seeds.h"

#include <cmath>
#include <set>

#include "presets.h"
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
  for (std::size_t i = 0; i < train.size(); ++i) r.steps.push_back({int(i + 1), 0.1 * double(i + 1), 1e-3, train[i], 100});
  for (std::size_t i = 0; i < heldout.size(); ++i) r.evals.push_back({int(i * 10), 1.0 * double(i), heldout[i]});
  return r;
}

TEST(Seeds, GroupsRunsThatDifferOnlyInTheirSeed) {
  RunRecord a = run_with(1, {}, {}), b = run_with(2, {}, {}), c = run_with(3, {}, {}), other = run_with(1, {}, {});
  other.config.peak_lr = 6e-3;
  b.config.threads = 4;  // speed only
  EXPECT_EQ(seed_groups({&a, &other, &b, &c}),
            (std::vector<std::vector<std::size_t>>{{0, 2, 3}, {1}}));
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

}  // namespace
}  // namespace normlab::test
