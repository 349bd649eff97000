// What the process does with memory a step frees (core/system/memory.h).
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <thread>
#include <vector>

#include "core/system/memory.h"

namespace normlab {
namespace {

long thread_minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// A step's worth of large buffers taken, written and freed, as a slice's or a side-by-side
// run's thread does: more than one of glibc's 64 MB thread heaps. Returns the minor page
// faults of doing it a second time.
long faults_of_a_second_step() {
  constexpr std::size_t kBuffer = 40u << 20;
  volatile unsigned char sink = 0;
  const auto step = [&] {
    std::vector<unsigned char*> buffers;
    for (int i = 0; i < 3; ++i) {
      auto* buffer = static_cast<unsigned char*>(std::malloc(kBuffer));
      std::memset(buffer, i + 1, kBuffer);
      buffers.push_back(buffer);
    }
    for (unsigned char* buffer : buffers) {
      sink = sink + buffer[kBuffer / 2];
      std::free(buffer);
    }
  };
  step();
  const long before = thread_minor_faults();
  step();
  return thread_minor_faults() - before;
}

// Issue 46: a 32 x 128 step in two slices faulted about 28 000 pages in every step, as
// glibc unmapped each slice thread's wholly free heaps at its end. With freed memory kept
// for reuse, a thread's second step finds the first's pages (360 faults would be 1 %).
TEST(FreedMemory, AThreadsNextStepReusesItsPagesWithoutFaults) {
  keep_freed_memory_for_reuse();
  long faults = 0;
  std::thread([&] { faults = faults_of_a_second_step(); }).join();
  EXPECT_LT(faults, 360) << "of the " << 3 * (40 << 20) / 4096 << " pages a step writes";
}

// The heap goes back to the OS at most once an interval, whichever run in the process asks:
// five runs side by side each asking every few seconds made their buffers fault in again
// and again.
TEST(FreedMemory, IsHandedBackAtMostOnceAnInterval) {
  hand_back_freed_memory();
  EXPECT_FALSE(hand_back_freed_memory());
  std::thread([] { EXPECT_FALSE(hand_back_freed_memory()); }).join();
}

}  // namespace
}  // namespace normlab
