#pragma once
// What a run costs in arithmetic, by its settings: the scale by which the time measured
// for one run gives another's on the same device (the window's and the queue's time
// estimates) and what the bench divides by its time.
#include <string>
#include <vector>

#include "config.h"
#include "run_record.h"

namespace normlab {

// Floating-point operations of a whole run: each training step's forward and backward
// pass and each evaluation's forward pass.
double run_flops(const TrainConfig& config);
// The same for one training step alone (no evaluation).
double step_flops(const TrainConfig& config);
// What is left of a run's work: all of run_flops before its first step, none once done.
double remaining_flops(const RunRecord& run);

// The model's parameters, counted from its shape (the head shares the token embedding).
double parameter_count(const ModelConfig& model);

// Peak memory of training `config` on a CPU, in bytes, by its parts: fitted to the peak
// resident memory normlab-cli measured at 17 shapes (bench/memory-estimate.sh checks it).
struct MemoryEstimate {
  double process = 0;      // LibTorch loaded, the tokenizer and the token ids
  double weights = 0;      // parameters, gradients and AdamW's two moments, with the allocator's slack
  double activations = 0;  // what a training step keeps for its backward pass, its logits included
  double evaluation = 0;   // an evaluation's logits, also in float64 for the prediction statistics
  // The step and the evaluation come one after the other: the larger of the two counts.
  double total() const { return process + weights + (activations > evaluation ? activations : evaluation); }
};
MemoryEstimate estimate_memory(const TrainConfig& config);
// Runs side by side in one process: the `at_once` largest together, the process counted once.
double estimate_memory(const std::vector<TrainConfig>& configs, int at_once);

// What is asked before runs start: their estimate beside the memory they may take where
// they train. On the CPU that is the process's peak resident memory against the host's
// available memory; on a GPU what the GPU's memory holds (the weights with their gradients
// and moments, a step's activations or an evaluation's logits: the estimate without the
// process's own host memory) against the GPU's free memory.
struct MemoryCheck {
  bool gpu = false;
  double needed = 0;  // bytes
  double limit = 0;   // bytes: available on the host, or free on the GPU; 0: unknown
  // Over the limit; an unknown limit is never exceeded (nothing to say it will not fit).
  bool over() const { return limit > 0 && needed > limit; }
};
// `configs`, `at_once` of them side by side, against `limit` (the caller's query of the
// host or the GPU, 0 when it could not tell).
MemoryCheck memory_check(const std::vector<TrainConfig>& configs, int at_once, bool gpu, double limit);
// "about 22.8 GB of memory (estimate) and 3.0 GB is available", or on a GPU "about 22.8 GB
// of GPU memory (estimate) and 3.0 GB is free on the GPU".
std::string memory_shortfall(const MemoryCheck& check);

}  // namespace normlab
