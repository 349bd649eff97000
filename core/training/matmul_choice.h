#pragma once
// `--cpu-matmul auto`: which kernel the CPU's fp32 linear layers are faster with, oneDNN or
// LibTorch's own (MKL), found by timing a few training steps of the run's shape with each.
// Which one wins depends on the CPU (MKL takes an AVX2 path on AMD CPUs, where oneDNN is
// about 2x faster; on Intel Xeons MKL measured 1.10-1.16x faster), so it is measured once
// per CPU model, thread count, shape and LibTorch, and kept in the cache.
#include <string>

#include "core/runs/config.h"

namespace normlab {

struct MatmulChoice {
  bool onednn = true;
  double onednn_ms = 0, libtorch_ms = 0;  // a step with each: the fastest of a few, alternated
  bool measured_now = false;              // false: read from the cache
};

// The rule: LibTorch's kernel only when its step is at least 5 % faster, since oneDNN's is
// the one the project's figures were made with and a near tie is noise.
bool onednn_wins(double onednn_ms, double libtorch_ms);

// What `config` (its shape, the calling thread's thread count) trains fastest with on this
// CPU: from cache_dir()/cpu-matmul.json, or measured now (about 8 steps) and kept there.
// A damaged cache file is measured over. Processes measuring at once take turns (a lock
// beside the file), so the second reads what the first measured.
MatmulChoice choose_cpu_matmul(const TrainConfig& config);

// "oneDNN 41.2 ms a step, LibTorch 88.0": what a run's precision says auto chose from.
std::string describe(const MatmulChoice& choice);

// The cache's key for `config` on this machine: "CPU model|threads|shape|LibTorch".
std::string matmul_choice_key(const TrainConfig& config);

}  // namespace normlab
