#pragma once
// SIGINT and SIGTERM, taken on a thread of their own instead of whichever thread the
// kernel picks.
//
// Why: oneDNN's JIT GEMM kernels (the CPU linear layers, core/model/linear.cpp, and LibTorch's
// own oneDNN paths) point the stack register into a heap workspace while they run
// (uxlfoundation/oneDNN#4845, fixed upstream after the oneDNN LibTorch 2.11 carries). A
// signal handled on a thread inside one has its frame written there by the kernel: the
// heap is corrupted and the process aborts later in malloc or free. With the signals
// blocked in every thread, none is ever interrupted by them; one thread waits for them
// with sigwait() and runs ordinary code, not a signal handler.
#include <functional>

namespace normlab {

// Blocks SIGINT and SIGTERM in the calling thread, and so in every thread started from it
// afterwards (threads inherit the mask), and starts the thread that waits for them:
// `on_stop(signal)` runs there for each one. Call it first in main, while the process
// has no other thread; once only.
void route_stop_signals(std::function<void(int signal)> on_stop);

// In a child process between fork and exec: unblocks the signals again, so the program
// started there can be stopped as usual.
void unblock_stop_signals();

}  // namespace normlab
