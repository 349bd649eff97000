#include "core/training/side_by_side.h"

#include <atomic>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdexcept>

#include "tests/support/latch.h"

namespace normlab {
namespace {

using ::testing::ElementsAre;

TEST(SideBySide, RunsShareTheCoresWithoutTakingMoreThanThereAre) {
  EXPECT_EQ(threads_per_run(1, 2), 2);
  EXPECT_EQ(threads_per_run(2, 2), 1);
  EXPECT_EQ(threads_per_run(3, 2), 1) << "at least one each";
  EXPECT_EQ(threads_per_run(4, 16), 4);
  EXPECT_EQ(threads_per_run(3, 16), 5) << "rounded down: the sum stays within the cores";
  EXPECT_EQ(threads_per_run(0, 8), 8) << "no limit reads as one run";
}

TEST(SideBySide, ALastWaveOfFewerRunsTakesTheCoresTheOthersLeave) {
  const auto threads = [](std::size_t count, int side_by_side, int cores) {
    std::vector<int> each;
    for (std::size_t i = 0; i < count; ++i) each.push_back(threads_in_wave(i, count, side_by_side, cores));
    return each;
  };
  EXPECT_THAT(threads(5, 2, 2), ElementsAre(1, 1, 1, 1, 2)) << "the course on 2 cores";
  EXPECT_THAT(threads(4, 2, 2), ElementsAre(1, 1, 1, 1));
  EXPECT_THAT(threads(5, 3, 16), ElementsAre(5, 5, 5, 8, 8));
  EXPECT_THAT(threads(3, 8, 16), ElementsAre(5, 5, 5)) << "one wave of three";
  EXPECT_THAT(threads(2, 1, 4), ElementsAre(4, 4)) << "one after another: every core each";
}

TEST(SideBySide, TwoRunsAtOnceOnTheCpuAndMoreOnBiggerMachinesAndGpus) {
  EXPECT_EQ(default_side_by_side("cpu", 1), 2) << "the two curves of the course's moment";
  EXPECT_EQ(default_side_by_side("cpu", 2), 2);
  EXPECT_EQ(default_side_by_side("cpu", 16), 8);
  EXPECT_EQ(default_side_by_side("cuda", 2), 8);
  EXPECT_GE(cpu_threads(), 1);
}

TEST(SideBySide, FinishTimesFillEachFreeSlotInQueueOrder) {
  EXPECT_THAT(finish_times({}, {10, 10, 10}, 2), ElementsAre(10, 10, 20));
  EXPECT_THAT(finish_times({5}, {10, 10}, 2), ElementsAre(5, 10, 15));
  EXPECT_THAT(finish_times({}, {1, 2, 3}, 1), ElementsAre(1, 3, 6)) << "one slot: one after another";
  EXPECT_THAT(finish_times({3}, {}, 4), ElementsAre(3));
  // Three running where the limit is now two: the first queued run waits for two of them.
  EXPECT_THAT(finish_times({4, 8, 12}, {10}, 2), ElementsAre(4, 8, 12, 18));
}

// The first kAtOnce runs each wait until all of them have started, so they end only if
// they train at once; the count of runs going shows that no more ever do.
TEST(SideBySide, TrainsEveryRunOnceAndNeverMoreAtOnceThanAsked) {
  constexpr int kRuns = 7, kAtOnce = 3;
  std::atomic<int> running{0}, most{0}, calls[kRuns] = {};
  test::Latch first_wave(kAtOnce);
  train_side_by_side(kRuns, kAtOnce, [&](std::size_t i) {
    const int now = ++running;
    for (int seen = most; now > seen && !most.compare_exchange_weak(seen, now);) {
    }
    if (i < std::size_t(kAtOnce)) first_wave.arrive_and_wait();
    ++calls[i];
    --running;
  });
  for (const auto& count : calls) EXPECT_EQ(count, 1);
  EXPECT_EQ(most, kAtOnce);
}

// One at a time, no run starts after the one that failed. Two at once, the run beside it
// (each of the two waits until the other has started, and it ends only once the failure
// is under way) is let finish, and so is every other that started, before the rethrow.
TEST(SideBySide, AFailureStopsNewRunsAndIsRethrownOnceAllHaveEnded) {
  std::atomic<int> started{0}, ended{0};
  EXPECT_THROW(train_side_by_side(10, 1,
                                  [&](std::size_t i) {
                                    ++started;
                                    if (i == 0) throw std::runtime_error("no corpus");
                                  }),
               std::runtime_error);
  EXPECT_EQ(started, 1) << "the failure stops the queue";

  started = 0;
  std::atomic<bool> beside_ended{false};
  test::Latch both_started(2), failing(1);
  EXPECT_THROW(train_side_by_side(10, 2,
                                  [&](std::size_t i) {
                                    ++started;
                                    if (i < 2) both_started.arrive_and_wait();
                                    if (i == 0) {
                                      failing.count_down();
                                      throw std::runtime_error("no corpus");
                                    }
                                    if (i == 1) {
                                      failing.wait();
                                      beside_ended = true;
                                    }
                                    ++ended;
                                  }),
               std::runtime_error);
  EXPECT_TRUE(beside_ended) << "the run beside the failure was let finish";
  EXPECT_EQ(ended, started - 1) << "the runs that started were let finish";
}

}  // namespace
}  // namespace normlab
