#pragma once
// The text decoder's one-token step as a CUDA graph (issue 52): a token's forward pass is
// about a hundred small kernels, each of which takes longer to launch than to run at the
// course's size, so a recording of a few hundred tokens spent its time launching them.
// The step (GptImpl::forward_step) reads its ids and position from tensors the graph owns;
// they are written before each replay, and the logits it writes are copied out.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <torch/torch.h>

namespace normlab {

class CudaGraph;

class GraphedDecode {
 public:
  // One position's logits for (rows, 1) ids at `position`, a (1) int64 tensor on their
  // device, queued on the current stream: forward_step over the decoder's cache.
  using Step = std::function<torch::Tensor(const torch::Tensor& ids, const torch::Tensor& position)>;

  explicit GraphedDecode(Step step);
  ~GraphedDecode();

  // The step's logits (a tensor of their own) for `ids` at `position`, after the cache
  // whose buffers `cache` names: the graph is captured over those buffers and that many
  // rows, so other ones capture it again. The first step over them runs eagerly (it sets
  // up the kernels' workspaces, which a capture must not allocate for the first time),
  // and every step does once a capture has failed (state() says why).
  torch::Tensor next(const torch::Tensor& ids, std::int64_t position, const void* cache);
  // "replayed" once a step has replayed the graph, "eager" until then, or why a capture failed.
  std::string state() const;

 private:
  Step step_;
  const void* cache_ = nullptr;  // the buffers and rows the graph reads
  std::int64_t rows_ = 0;
  bool warmed_ = false;  // a step over them has run eagerly
  bool replayed_ = false;
  std::unique_ptr<CudaGraph> graph_;
  torch::Tensor ids_, position_, logits_;  // the graph's inputs and output
  std::string failure_;
};

}  // namespace normlab
