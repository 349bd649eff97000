// Makes LibTorch's idle OpenMP threads sleep soon instead of spinning, in every program
// that links normlab_core: they all load this library, and `-z initfirst` runs its
// constructor before any other library's.
//
// Why: libgomp's threads spin about 300,000 times before they sleep. Two NormLab
// processes (the app and the command line, two windows, two test programs) then burn
// each other's cores. Measured on 2 cores, two CPU-scale runs at once with 2 threads
// each: 22x as long as one after the other; with GOMP_SPINCOUNT=1000, 1.08x (10,000 still
// gave 3.0x). The price is a run alone at 2 threads: 5% on the AMD EPYC where this was
// chosen, 30% on an Intel Xeon (docs/speed.md, the spin-cost block); 0 cost a lone run 40%.
//
// How: libgomp reads its environment once, as it is initialised, and has no call to
// change it later; and a setenv() this early is undone when libc initialises. So, when
// neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY is set (the user's choice wins), the program
// starts itself again with the variable added. Nothing else has been initialised yet, so
// this costs only the loader's work once more: about 10 ms of CPU (`normlab-cli --version`
// took 1.05x the CPU time of one started with the variable set, whole processes timed in 20 alternating pairs).
#include <cstring>
#include <unistd.h>
#include <vector>

namespace {

constexpr char kSpinCount[] = "GOMP_SPINCOUNT=1000";

bool names(const char* entry, const char* name) {
  const std::size_t length = std::strlen(name);
  return std::strncmp(entry, name, length) == 0 && entry[length] == '=';
}

// glibc passes initialisers the program's arguments and environment.
__attribute__((constructor)) void start_with_sleeping_idle_threads(int, char** argv, char** envp) {
  std::vector<char*> environment;
  for (char** entry = envp; entry && *entry; ++entry) {
    if (names(*entry, "GOMP_SPINCOUNT") || names(*entry, "OMP_WAIT_POLICY")) return;
    environment.push_back(*entry);
  }
  environment.push_back(const_cast<char*>(kSpinCount));
  environment.push_back(nullptr);
  execve("/proc/self/exe", argv, environment.data());  // returns only if it failed: go on as we are
}

}  // namespace
