// Run names, durations and the speed readout: one form for the command line and the window.
#include "core/runs/run_text.h"

#include <cmath>
#include <set>

#include "core/runs/run_record.h"

#include "test_support.h"

namespace normlab::test {
namespace {

TEST(RunText, FileStemKeepsSafeAsciiOnly) {
  EXPECT_EQ(file_stem("post-norm lr 6e-3 warmup 30"), "post-norm_lr_6e-3_warmup_30");
  EXPECT_EQ(file_stem("tiny, run"), "tiny__run");
  EXPECT_EQ(file_stem("caf\u00e9/x"), "caf___x");  // two UTF-8 bytes, then the slash
  EXPECT_EQ(file_stem(""), "run");
}

TEST(RunText, DurationText) {
  EXPECT_EQ(duration_text(45.4), "45 s");
  EXPECT_EQ(duration_text(185), "3 min 05 s");
  EXPECT_EQ(duration_text(3720), "1 h 02 min");
  EXPECT_EQ(duration_text(-1), "?");
  EXPECT_EQ(duration_text(std::nan("")), "?");
}

TEST(RunText, FirstFreeName) {
  const std::set<std::string> taken = {"a", "a (2)"};
  auto named = [](int n) { return n == 1 ? std::string("a") : "a (" + std::to_string(n) + ")"; };
  EXPECT_EQ(first_free_name(named, [&](const std::string& s) { return taken.count(s) > 0; }), "a (3)");
  EXPECT_EQ(first_free_name(named, [](const std::string&) { return false; }), "a");
}

// The rate shown while a run trains: the tokens of the last few seconds of wall time over
// those seconds, so a momentary fast step, or a slow evaluation, moves it only by its share.
TEST(RunText, TokenRateIsTheTokensOfTheLastSecondsOverThem) {
  TokenRate rate;  // over 5 s
  EXPECT_EQ(rate.value(), 0);
  EXPECT_DOUBLE_EQ(rate.add(0.5, 1000), 2000) << "from the start of training";
  for (int second = 1; second <= 10; ++second) rate.add(second, 1000);  // a step a second
  EXPECT_DOUBLE_EQ(rate.value(), 1000);
  // 0.1 s after the last step: 10,000 tokens/s on its own; six steps since 5 s in the window.
  EXPECT_NEAR(rate.add(10.1, 1000), 6000 / 5.1, 1e-9);
  // After 10 s without a step (a busy machine), that one step over the 10 s.
  EXPECT_NEAR(rate.add(20.1, 1000), 100, 1e-9);
  rate.reset();  // the next run
  EXPECT_EQ(rate.value(), 0);
  EXPECT_DOUBLE_EQ(rate.add(2, 500), 250);
  rate.reset(5000);  // a run resumed with 5000 s on its clock: its first step is its own rate
  EXPECT_DOUBLE_EQ(rate.add(5002, 500), 250);
}

// The time left shown while a run trains is at the pace of the steps since it (re)started:
// a run resumed after hours on a busy machine does not carry that pace on.
TEST(RunText, StepPaceCountsOnlyTheStepsSinceTheStart) {
  const StepPace fresh;
  EXPECT_TRUE(std::isnan(fresh.seconds_left(0, 0, 100))) << "before its first step";
  EXPECT_DOUBLE_EQ(fresh.seconds_left(10, 20, 100), 180);  // 2 s a step, 90 to go
  EXPECT_DOUBLE_EQ(fresh.seconds_left(100, 200, 100), 0);
  const StepPace resumed(1500, 5000);  // 1500 steps took 5000 s before
  EXPECT_TRUE(std::isnan(resumed.seconds_left(1500, 5000, 3000)));
  EXPECT_DOUBLE_EQ(resumed.seconds_per_step(1600, 5100), 1);
  EXPECT_DOUBLE_EQ(resumed.seconds_left(1600, 5100, 3000), 1400);

  RunRecord run;  // a new run starts at 0, a resumed one after the last step it holds
  EXPECT_DOUBLE_EQ(StepPace::of(run).seconds_per_step(10, 20), 2);
  run.steps.resize(2);
  run.steps[0].step = 1499, run.steps[0].wall_s = 4996;
  run.steps[1].step = 1500, run.steps[1].wall_s = 5000;
  EXPECT_DOUBLE_EQ(StepPace::of(run).start_wall_s(), 5000);
  EXPECT_DOUBLE_EQ(StepPace::of(run).seconds_left(1600, 5100, 3000), 1400);
}

}  // namespace
}  // namespace normlab::test
