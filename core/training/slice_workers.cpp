#include "slice_workers.h"

#include <torch/torch.h>

namespace normlab {

SliceWorkers::SliceWorkers(int slices) : errors_(std::size_t(std::max(1, slices))) {
  const int threads = torch::get_num_threads();
  for (int slice = 0; slice < slices; ++slice) threads_.emplace_back([this, slice] { serve(slice); });
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return ready_ == slices; });
  torch::set_num_threads(threads);  // the count new threads start with, back to what it was
}

SliceWorkers::~SliceWorkers() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  for (auto& thread : threads_) thread.join();
}

void SliceWorkers::serve(int slice) {
  // LibTorch's lazy set-up first, so it cannot later copy another thread's count over this one.
  torch::get_num_threads();
  torch::set_num_threads(1);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++ready_;
  }
  done_.notify_all();
  unsigned long long seen = 0;
  for (;;) {
    const std::function<void(int)>* work = nullptr;
    const at::ThreadLocalState* state = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || round_ != seen; });
      if (stopping_) return;
      seen = round_;
      work = work_;
      state = state_;
    }
    try {
      const at::ThreadLocalStateGuard caller(*state);
      (*work)(slice);
    } catch (...) {
      errors_[std::size_t(slice)] = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      --running_;
    }
    done_.notify_all();
  }
}

void SliceWorkers::run(const std::function<void(int slice)>& work) {
  for (auto& error : errors_) error = nullptr;
  const at::ThreadLocalState state;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    work_ = &work;
    state_ = &state;
    running_ = int(threads_.size());
    ++round_;
  }
  wake_.notify_all();
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return running_ == 0; });
  }
  for (const auto& error : errors_) {
    if (error) std::rethrow_exception(error);
  }
}

}  // namespace normlab
