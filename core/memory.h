#pragma once

namespace normlab {

// Keeps freed memory in the process for reuse instead of handing it back to the OS.
// Every training step frees and reallocates the same large buffers (the logits alone
// are 134 MB at 32 x 128 tokens); glibc otherwise unmaps each one and the next step
// page-faults it in again, which measured 10-15 % of a CPU step. Call once at start-up.
void keep_freed_memory_for_reuse();

}  // namespace normlab
