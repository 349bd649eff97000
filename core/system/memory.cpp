#include "memory.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <malloc.h>
#include <string>
#include <sys/resource.h>

namespace normlab {

void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_MAX, 0);              // large blocks from the heap, not fresh mappings
  mallopt(M_TRIM_THRESHOLD, INT_MAX);  // and never shrink the heap between steps
  // One arena for every thread. glibc gives other threads (a sliced step's, a side-by-side
  // run's) arenas of their own, made of 64 MB heaps that it unmaps as soon as one is wholly
  // free, whatever the trim threshold says: at the end of every step. A 32 x 128 step at
  // two threads in slices then faulted 28 000 pages back in (bench's page-fault line). The
  // arena's lock is taken a few thousand times a step, each for well under a microsecond.
  mallopt(M_ARENA_MAX, 1);
  // MKL's own allocator maps and unmaps its packing buffers at every product: 300-1000
  // minor page faults a full-scale step in the fused loss's weight gradient (bench --profile's
  // page-fault line). Its environment switch hands them to malloc, which keeps them (read
  // at MKL's first call, so set before any; a user's own setting wins).
  setenv("MKL_DISABLE_FAST_MM", "1", /*overwrite=*/0);
}

bool hand_back_freed_memory() {
  // One clock for the process: every run in it shares the one heap.
  static std::atomic<std::int64_t> last_ns{std::numeric_limits<std::int64_t>::min() / 2};
  const std::int64_t now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  std::int64_t last = last_ns.load();
  const std::int64_t interval = std::int64_t(kHandBackIntervalSeconds * 1e9);
  if (now - last < interval || !last_ns.compare_exchange_strong(last, now)) return false;
  malloc_trim(0);
  return true;
}

namespace {
// A "Name:   123 kB" line of a /proc file, in bytes; 0 when absent.
double proc_kb(const char* file, const std::string& name) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + ":", 0) == 0) return std::stod(line.substr(name.size() + 1)) * 1024;
  }
  return 0;
}
}  // namespace

double available_memory_bytes() {
  double available = proc_kb("/proc/meminfo", "MemAvailable");
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const double left = double(limit.rlim_cur) - proc_kb("/proc/self/status", "VmSize");
    available = available > 0 ? std::min(available, std::max(left, 0.0)) : std::max(left, 0.0);
  }
  return available;
}

}  // namespace normlab
