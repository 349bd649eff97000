#include "run_cost.h"

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

double remaining_flops(const RunRecord& run) {
  const double done = run.steps.empty() ? 0 : double(run.steps.back().step) / run.config.steps;
  return (1 - done) * run_flops(run.config);
}

}  // namespace normlab
