#pragma once
// Threads that each take a slice of a CPU step's batch (--cpu-parallel batch, learner.h).
//
// Why: at the course's CPU scale a step is a few hundred small operators. Divided between
// two threads (LibTorch's OpenMP), each operator ends with the threads waiting for each
// other, and with the short spin every NormLab program runs with (idle_threads.cpp) the
// waiting one has often gone to sleep and must be woken. Each thread taking half of the
// batch through the whole forward and backward alone waits once a step instead.
#include <ATen/ThreadLocalState.h>
#include <condition_variable>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace normlab {

class SliceWorkers {
 public:
  // A thread a slice, each set to one LibTorch thread. LibTorch keeps the last count any
  // thread set as the one new threads start with; the constructor sets it back to the
  // calling thread's, so making these threads changes nothing for any other.
  explicit SliceWorkers(int slices);
  ~SliceWorkers();
  SliceWorkers(const SliceWorkers&) = delete;
  SliceWorkers& operator=(const SliceWorkers&) = delete;

  int slices() const { return int(threads_.size()); }
  // work(i) for every slice i, each on its thread, while the caller waits; returns when all
  // are done, rethrowing the first slice's error. Each slice runs under the caller's
  // LibTorch thread state (grad mode, autocast, an active profiler's callbacks), as
  // LibTorch's own autograd threads do.
  void run(const std::function<void(int slice)>& work);

 private:
  void serve(int slice);

  std::vector<std::thread> threads_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int)>* work_ = nullptr;
  const at::ThreadLocalState* state_ = nullptr;  // the caller's, which each slice runs under
  unsigned long long round_ = 0;                 // bumped for each run(): a worker takes each round once
  int running_ = 0;
  int ready_ = 0;  // threads set up
  bool stopping_ = false;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace normlab
