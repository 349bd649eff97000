#include "graphed_decode.h"

#include <exception>

#include "core/device/cuda_graph.h"

namespace normlab {

GraphedDecode::GraphedDecode(Step step) : step_(std::move(step)) {}
GraphedDecode::~GraphedDecode() = default;

torch::Tensor GraphedDecode::next(const torch::Tensor& ids, std::int64_t position, const void* cache) {
  const auto position_tensor = [&] { return torch::full({1}, position, ids.options().dtype(torch::kInt64)); };
  const auto eager = [&] { return step_(ids, position_tensor()); };
  if (!failure_.empty()) return eager();
  if (cache != cache_ || ids.size(0) != rows_) {
    graph_.reset();
    cache_ = cache;
    rows_ = ids.size(0);
    warmed_ = false;
  }
  if (!graph_) {
    if (!warmed_) {
      warmed_ = true;
      return eager();
    }
    try {
      ids_ = ids.clone();
      position_ = position_tensor();
      auto graph = std::make_unique<CudaGraph>();
      graph->capture([&] { logits_ = step_(ids_, position_); });
      graph_ = std::move(graph);  // recorded, not run: the replay below runs it
    } catch (const std::exception& error) {
      failure_ = error.what();
      return eager();
    }
  }
  ids_.copy_(ids);
  position_.fill_(position);
  graph_->replay();
  replayed_ = true;
  return logits_.clone();
}

std::string GraphedDecode::state() const {
  if (!failure_.empty()) return failure_;
  return replayed_ ? "replayed" : "eager";
}

}  // namespace normlab
