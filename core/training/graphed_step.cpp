#include "graphed_step.h"

#include <exception>

#include "core/device/cuda_graph.h"

namespace normlab {

GraphedStep::GraphedStep(Update update) : update_(std::move(update)) {}
GraphedStep::~GraphedStep() = default;

torch::Tensor GraphedStep::step(const Batch& batch, double lr) {
  if (!failure_.empty() || ++steps_seen_ <= kEagerSteps) return {};
  if (!graph_) {
    try {
      capture(batch, lr);
    } catch (const std::exception& error) {
      failure_ = error.what();
      return {};
    }
  } else if (batch.inputs.sizes() != batch_.inputs.sizes()) {
    return {};
  }
  batch_.inputs.copy_(batch.inputs);
  batch_.targets.copy_(batch.targets);
  lr_.fill_(lr);
  graph_->replay();
  return loss_.clone();
}

// Records the update without running it; the replay that follows runs it.
void GraphedStep::capture(const Batch& batch, double lr) {
  batch_ = {batch.inputs.clone(), batch.targets.clone()};
  lr_ = torch::full({}, lr, batch.inputs.options().dtype(torch::kFloat32));
  auto graph = std::make_unique<CudaGraph>();
  graph->begin();
  try {
    loss_ = update_(batch_, lr_);
  } catch (...) {
    try {
      graph->end();  // closes the stream's capture, so the eager steps that follow can run
    } catch (const std::exception&) {
    }
    throw;
  }
  graph->end();
  graph_ = std::move(graph);
}

}  // namespace normlab
