#include "memory.h"

#include <climits>
#include <malloc.h>

namespace normlab {

void keep_freed_memory_for_reuse() {
  mallopt(M_MMAP_MAX, 0);              // large blocks from the heap, not fresh mappings
  mallopt(M_TRIM_THRESHOLD, INT_MAX);  // and never shrink the heap between steps
}

void hand_back_freed_memory() { malloc_trim(0); }

}  // namespace normlab
