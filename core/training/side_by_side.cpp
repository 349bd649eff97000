#include "side_by_side.h"

#include <ATen/Parallel.h>
#include <algorithm>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>

namespace normlab {

int cpu_threads() { return std::max(1, at::intraop_default_num_threads()); }

int default_side_by_side(const std::string& device, int cores) {
  if (device == "cuda") return 8;
  return std::max(2, cores / 2);
}

int threads_per_run(int side_by_side, int cores) { return std::max(1, cores / std::max(1, side_by_side)); }

int threads_in_wave(std::size_t i, std::size_t count, int side_by_side, int cores) {
  const std::size_t places = std::max(side_by_side, 1);
  const std::size_t wave_start = i / places * places;
  return threads_per_run(int(std::min(places, count - wave_start)), cores);
}

std::vector<double> finish_times(const std::vector<double>& running, const std::vector<double>& pending, int slots) {
  std::vector<double> ends = running;
  // When each slot is next free: idle ones at once, the others as runs end. With more runs
  // running than slots (the limit was lowered), a slot frees only as the number running
  // drops below it: at the latest `slots` ends.
  std::vector<double> free_at = running;
  std::sort(free_at.begin(), free_at.end(), std::greater<>());
  free_at.resize(std::max(slots, 1), 0.0);
  for (const double seconds : pending) {
    const auto slot = std::min_element(free_at.begin(), free_at.end());
    *slot += seconds;
    ends.push_back(*slot);
  }
  return ends;
}

void train_side_by_side(std::size_t count, int side_by_side, const std::function<void(std::size_t)>& train) {
  std::mutex mutex;
  std::size_t next = 0;
  std::exception_ptr failure;
  auto work = [&] {
    for (;;) {
      std::size_t i;
      {
        std::lock_guard lock(mutex);
        if (next == count || failure) return;
        i = next++;
      }
      try {
        train(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::min<std::size_t>(count, std::max(side_by_side, 1));
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  work();  // this thread is one of them
  for (auto& worker : workers) worker.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace normlab
