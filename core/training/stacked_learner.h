#pragma once
// Runs of one shape (stack_refusal) stepped as one stacked model (stacked_model.h): one
// forward and backward for all of them, then each run's own clipping and AdamW update
// at its own rate. Each run keeps its Learner, whose model parameters and optimiser
// state become views of the stack's tensors: evaluation, text, checkpoints, weights and
// a step taken alone (Learner::step, as a step that records layer statistics is) read
// and write the same numbers the stack does. On a CUDA device the stacked update is
// replayed as one CUDA graph (graphed_step.h).
#include <memory>
#include <string>
#include <torch/torch.h>
#include <vector>

#include "core/data/dataset.h"
#include "core/model/stacked_model.h"
#include "core/runs/config.h"

#include "graphed_step.h"
#include "learner.h"
#include "trainer.h"  // stack_refusal

namespace normlab {

class StackedLearner {
 public:
  // The runs' learners, built as each run builds its own (with no CUDA graph of their
  // own), on `device`. std::invalid_argument when their models cannot stack.
  StackedLearner(const std::vector<Learner*>& learners, torch::Device device, bool cuda_graph = true);
  StackedLearner(const StackedLearner&) = delete;  // the graph's update holds `this`
  StackedLearner& operator=(const StackedLearner&) = delete;

  // One update of every run: run r's batch (on the device) at its rate lrs[r]. Returns the
  // runs' training losses as an (R) tensor on the device; reading it is a host sync.
  torch::Tensor step(const std::vector<Batch>& batches, const std::vector<double>& lrs);

  int runs() const { return model_.runs(); }
  // "replayed", "eager" (not asked, or not yet captured) or why the capture failed.
  std::string cuda_graph_state() const;

 private:
  // Forward and backward of the stack, then each run's clipping and AdamW update from
  // its slice of the gradients. `lrs` is the rates as doubles, or an (R) float32 tensor
  // on the device for a CUDA graph to replay.
  template <typename LearningRates>
  torch::Tensor update(const Batch& batch, const LearningRates& lrs);

  std::vector<Learner*> learners_;
  StackedModel model_;
  std::vector<torch::Tensor> optimiser_state_;  // the runs' AdamW moments and step counts, stacked
  std::unique_ptr<GraphedStep> graphed_;        // null on the CPU or when not asked
};

}  // namespace normlab
