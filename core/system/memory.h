#pragma once

namespace normlab {

// Keeps freed memory in the process for reuse instead of handing it back to the OS.
// Every training step frees and reallocates the same large buffers (the logits alone
// are 134 MB at 32 x 128 tokens); glibc otherwise unmaps each one and the next step
// page-faults it in again, which measured 10-15 % of a CPU step. Call once at start-up.
void keep_freed_memory_for_reuse();

// Hands the heap's free pages back to the OS, at most once every kHandBackIntervalSeconds
// in the process; true when it did. The trainer calls it after each save, so what a long
// run outgrew or a save built and freed does not stay in the process for good. Each time,
// every run in the process faults its step's buffers back in: at every save, every 5 s for
// each of five runs side by side, that was about 12 % of their CPU time in the kernel; once
// a minute, a fraction of a percent.
inline constexpr double kHandBackIntervalSeconds = 60;
bool hand_back_freed_memory();

// The memory a run may still take, in bytes: the kernel's MemAvailable, or less where an
// address-space limit (ulimit -v) says so; 0 when neither can be read.
double available_memory_bytes();

}  // namespace normlab
