#include "run_cost.h"

#include <algorithm>
#include <cstdio>

namespace normlab {

namespace {
// Forward-pass FLOPs per token: 2 per weight of the blocks' matrices (12 d² each: q, k, v,
// output, and the 4d MLP) and of the head, plus attention's scores and weighted sum.
double forward_flops_per_token(const TrainConfig& c) {
  const double layers = c.model.layers, d = c.model.d_model, context = c.model.context, vocab = c.model.vocab;
  return 2 * (12 * layers * d * d + vocab * d) + 4 * layers * context * d;
}
}  // namespace

double step_flops(const TrainConfig& c) {
  // The backward pass costs about twice the forward.
  return 3 * forward_flops_per_token(c) * double(c.batch_size) * c.model.context;
}

double run_flops(const TrainConfig& c) {
  const int evals = c.steps / c.eval_interval + 1 + (c.steps % c.eval_interval != 0);  // step 0 and the last step too
  const double eval_flops = forward_flops_per_token(c) * double(c.batch_size) * c.model.context * c.eval_batches;
  return step_flops(c) * c.steps + eval_flops * evals;
}

double parameter_count(const ModelConfig& m) {
  const double d = m.d_model, norm = 2 * d;  // a LayerNorm's gain and bias
  return m.vocab * d + m.context * d + m.layers * (12 * d * d + 9 * d + 2 * norm) + norm;
}

MemoryEstimate estimate_memory(const TrainConfig& c) {
  // Bytes per unit, fitted to peaks measured with GNU time (bench/memory-estimate.sh checks
  // two): weights 28 a parameter (4 each for the value, the gradient and two moments, the
  // rest the allocator's reuse); per layer and token 12 floats a channel and one a visible
  // key per head; logits 20 bytes an entry in a step, 35 in an evaluation (float64 for the
  // prediction statistics, and the text it records).
  const double tokens = double(c.batch_size) * c.model.context, logits = tokens * c.model.vocab;
  MemoryEstimate e;
  e.process = 200e6;
  e.weights = 28 * parameter_count(c.model);
  e.activations =
      4 * c.model.layers * tokens * (12.0 * c.model.d_model + 1.0 * c.model.heads * c.model.context) + 20 * logits;
  e.evaluation = 35 * logits;
  return e;
}

double estimate_memory(const std::vector<TrainConfig>& configs, int at_once) {
  std::vector<double> each;
  for (const TrainConfig& c : configs) each.push_back(estimate_memory(c).total() - estimate_memory(c).process);
  std::sort(each.rbegin(), each.rend());
  double sum = configs.empty() ? 0 : estimate_memory(configs.front()).process;
  for (std::size_t i = 0; i < each.size() && int(i) < at_once; ++i) sum += each[i];
  return sum;
}

MemoryCheck memory_check(const std::vector<TrainConfig>& configs, int at_once, bool gpu, double limit) {
  MemoryCheck check;
  check.gpu = gpu;
  check.limit = limit;
  check.needed = estimate_memory(configs, at_once);
  if (gpu && !configs.empty()) check.needed -= estimate_memory(configs.front()).process;
  return check;
}

std::string memory_shortfall(const MemoryCheck& check) {
  char said[160];
  std::snprintf(said, sizeof said,
                check.gpu ? "about %.1f GB of GPU memory (estimate) and %.1f GB is free on the GPU"
                          : "about %.1f GB of memory (estimate) and %.1f GB is available",
                check.needed / 1e9, check.limit / 1e9);
  return said;
}

double remaining_flops(const RunRecord& run) {
  const double done = run.steps.empty() ? 0 : double(run.steps.back().step) / run.config.steps;
  return (1 - done) * run_flops(run.config);
}

}  // namespace normlab
