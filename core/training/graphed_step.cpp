#include "graphed_step.h"

#include <exception>

#include "core/device/cuda_graph.h"

namespace normlab {

GraphedStep::GraphedStep(Update update) : update_(std::move(update)) {}
GraphedStep::~GraphedStep() = default;

std::vector<torch::Tensor> GraphedStep::step(const Batch& batch, double lr) { return step(batch, lr, nullptr); }
std::vector<torch::Tensor> GraphedStep::step(const Batch& batch, const std::vector<double>& lrs) {
  return step(batch, 0.0, &lrs);
}

std::vector<torch::Tensor> GraphedStep::step(const Batch& batch, double lr, const std::vector<double>* lrs) {
  if (!failure_.empty() || ++steps_seen_ <= kEagerSteps) return {};
  if (!graph_) {
    try {
      capture(batch, lr, lrs);
    } catch (const std::exception& error) {
      failure_ = error.what();
      return {};
    }
  } else if (batch.inputs.sizes() != batch_.inputs.sizes() ||
             (lrs ? lr_.numel() != std::int64_t(lrs->size()) : lr_.dim() != 0)) {
    return {};
  }
  batch_.inputs.copy_(batch.inputs);
  batch_.targets.copy_(batch.targets);
  if (lrs) lr_.copy_(torch::tensor(at::ArrayRef<double>(*lrs), torch::dtype(torch::kFloat32)));
  else lr_.fill_(lr);
  graph_->replay();
  std::vector<torch::Tensor> outputs;
  for (const auto& output : outputs_) outputs.push_back(output.clone());
  return outputs;
}

// Records the update without running it; the replay that follows runs it.
void GraphedStep::capture(const Batch& batch, double lr, const std::vector<double>* lrs) {
  batch_ = {batch.inputs.clone(), batch.targets.clone()};
  const auto options = batch.inputs.options().dtype(torch::kFloat32);
  lr_ = lrs ? torch::tensor(at::ArrayRef<double>(*lrs), torch::dtype(torch::kFloat32)).to(options.device())
            : torch::full({}, lr, options);
  auto graph = std::make_unique<CudaGraph>();
  graph->capture([&] { outputs_ = update_(batch_, lr_); });
  graph_ = std::move(graph);
}

}  // namespace normlab
