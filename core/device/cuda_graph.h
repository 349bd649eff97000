#pragma once
// A CUDA graph: the kernels this thread queues on its current stream between begin() and
// end(), recorded once and then replayed with one launch. LibTorch's graph class lives in
// its CUDA library, which NormLab loads at run time (cuda_backend.h), so the class is
// reached through libnormlab_cuda_graphs.so (cuda_graph_capture.cpp), loaded after it.
// No torch in this header.
#include <functional>
#include <string>

namespace normlab {

class CudaGraph {
 public:
  // Throws std::runtime_error when the CUDA backend or the graph library is not loaded.
  CudaGraph();
  ~CudaGraph();
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;

  // Each throws std::runtime_error with CUDA's or LibTorch's reason. Memory allocated
  // between begin() and end() comes from the graph's own pool, which it keeps.
  void begin();
  void end();
  void replay();
  // begin(), `work`, end(): records what `work` queues without running it. When `work`
  // throws, the capture is closed (so eager work can follow) and the error rethrown.
  void capture(const std::function<void()>& work);

 private:
  void* graph_ = nullptr;
};

// Why CudaGraph cannot be made here; empty when it can.
std::string cuda_graph_unavailable_reason();

}  // namespace normlab
