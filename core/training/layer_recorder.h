#pragma once
// Measures the statistics of layer_stats.h around one training step. It only reads:
// the probes it arms are detached, and it draws no random numbers, so a step that
// records computes the same numbers as one that does not.
#include <memory>
#include <torch/torch.h>
#include <vector>

#include "core/model/model.h"
#include "core/runs/run_record.h"

namespace normlab {

class LayerRecorder {
 public:
  // Before the forward pass: asks each block to measure its own forward pass.
  explicit LayerRecorder(Gpt& model);
  ~LayerRecorder();  // disarms the blocks
  LayerRecorder(const LayerRecorder&) = delete;
  LayerRecorder& operator=(const LayerRecorder&) = delete;

  // After backward, before clipping and the update: gradients, and the weights the
  // update is compared with.
  void after_backward();
  // After the update: every recorded statistic's values, in the table's order, as one
  // float64 vector left on the model's device (statistic_points reads it).
  torch::Tensor after_update();

  struct State;  // what the table's measures read

 private:
  std::unique_ptr<State> state_;
};

// after_update's values, read to the host, as the statistics a model of `model` records:
// step numbers left 0. Reads model.layers values for a per-layer statistic, one otherwise.
std::vector<SeriesPoint> statistic_points(const ModelConfig& model, const double* values);

}  // namespace normlab
