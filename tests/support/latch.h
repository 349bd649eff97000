#pragma once
// What tests use of C++20's std::latch (the project builds as C++17): threads count down
// and wait until all have, so a test says "these overlap" by an event, not by sleeping.
// A test whose threads never all arrive waits on; ctest's timeout reports it.
#include <condition_variable>
#include <mutex>

namespace normlab::test {

class Latch {
 public:
  explicit Latch(int count) : count_(count) {}
  Latch(const Latch&) = delete;
  Latch& operator=(const Latch&) = delete;

  void count_down() {
    std::lock_guard lock(mutex_);
    if (count_ > 0 && --count_ == 0) opened_.notify_all();
  }
  void wait() {
    std::unique_lock lock(mutex_);
    opened_.wait(lock, [this] { return count_ == 0; });
  }
  void arrive_and_wait() {
    count_down();
    wait();
  }

 private:
  std::mutex mutex_;
  std::condition_variable opened_;
  int count_;
};

}  // namespace normlab::test
