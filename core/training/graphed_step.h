#pragma once
// The training step as a CUDA graph: the update's few hundred kernels, captured once and
// then replayed with one launch, where launching them one by one takes the GPU longer
// than running them at the course's size. The batch and the learning rate are copied into
// tensors the graph reads before each replay, and what it writes (the loss, and for a
// step that records them the layer statistics) is copied out.
#include <functional>
#include <memory>
#include <string>
#include <torch/torch.h>
#include <vector>

#include "core/data/dataset.h"

namespace normlab {

class CudaGraph;

class GraphedStep {
 public:
  // One whole update of `batch` at the rate in `lr` (a float32 scalar on the device),
  // queued on the current stream, returning its loss and whatever else it measures.
  // Called eagerly never: only to capture.
  using Update = std::function<std::vector<torch::Tensor>(const Batch& batch, const torch::Tensor& lr)>;
  // The steps before the capture run eagerly: the first ones set up cuBLAS, the autograd
  // engine and the allocator's blocks, which must not happen inside a capture.
  static constexpr int kEagerSteps = 3;

  explicit GraphedStep(Update update);
  ~GraphedStep();

  // The step's outputs as Update returns them (tensors of their own), or none when the
  // caller is to take this step eagerly: before the capture, for a batch of another shape,
  // and for every step once a capture has failed (failure() says why).
  std::vector<torch::Tensor> step(const Batch& batch, double lr);
  // The same for an update of several runs at once (a stack's, stacked_learner.h): `lr`
  // is then a float32 (runs) tensor on the device, one rate a run.
  std::vector<torch::Tensor> step(const Batch& batch, const std::vector<double>& lrs);
  bool captured() const { return graph_ != nullptr; }
  const std::string& failure() const { return failure_; }

 private:
  // `lrs` null: one rate, `lr`, in a scalar tensor.
  std::vector<torch::Tensor> step(const Batch& batch, double lr, const std::vector<double>* lrs);
  void capture(const Batch& batch, double lr, const std::vector<double>* lrs);

  Update update_;
  int steps_seen_ = 0;
  std::unique_ptr<CudaGraph> graph_;
  Batch batch_;  // the graph's inputs
  torch::Tensor lr_;
  std::vector<torch::Tensor> outputs_;
  std::string failure_;
};

}  // namespace normlab
