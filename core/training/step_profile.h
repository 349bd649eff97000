#pragma once
// Where a training step's time goes, by kind of work: LibTorch's profiler around a few
// steps, each operator's own time (its time less that of the operators it calls) summed
// by the kind its name says, so anyone can see what to attack next.
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace normlab {

// The kinds, in the order they are printed. "between operators" is the steps' time that no
// operator covers: the autograd engine's bookkeeping and NormLab's own code.
inline constexpr const char* kProfileKinds[] = {"matmuls",   "attention",         "loss",
                                                "norms",     "element-wise",      "embeddings",
                                                "optimiser", "allocation/copies", "views and dispatch",
                                                "other",     "between operators"};

// The kind of one operator, by its profiler name ("aten::mm", "mkldnn::_linear_pointwise").
// An operator inside a region NormLab marks (record_function "normlab::loss" and the like)
// counts as the region's kind unless it is a matmul.
std::string_view operator_kind(std::string_view name, std::string_view region = {});

struct ProfiledKind {
  std::string kind;
  double ms_per_step = 0;
  double share = 0;  // of the profiled steps' wall time
};
struct ProfiledOperator {
  std::string name;
  std::string kind;
  double ms_per_step = 0;
  long long calls_per_step = 0;
};
// What ran on the GPU: kernels, copies and fills, by name (a graphed step's too: the
// profiler sees the kernels inside a CUDA graph's launch).
struct ProfiledKernel {
  std::string name;
  double ms_per_step = 0;
  double calls_per_step = 0;
};
struct StepProfile {
  int steps = 0;
  double ms_per_step = 0;  // wall time of a profiled step, profiler on
  // The threads whose operators did the step (each slice's where a step takes the batch in
  // slices, else 1): times and calls below are per such thread.
  int threads = 1;
  std::vector<ProfiledKind> kinds;          // every kind of kProfileKinds, in that order
  std::vector<ProfiledOperator> operators;  // by own time, most first
  // On a GPU: what the device ran a step, the kernels by time, most first. Empty on the CPU.
  double gpu_kernels_per_step = 0;
  double gpu_busy_ms_per_step = 0;  // the kernels' summed time
  std::vector<ProfiledKernel> gpu_kernels;
};

// Runs `step` `steps` times under the profiler (CPU operators of the calling thread and of
// the threads it hands slices of the batch to, and
// with `gpu` what the GPU runs; on a GPU `step` must end with a sync for the times to mean
// the device's) and sums their time.
StepProfile profile_steps(const std::function<void()>& step, int steps, bool gpu = false);

}  // namespace normlab
