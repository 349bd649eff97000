// The one file that calls LibTorch's CUDA library directly. Built alone into
// libnormlab_cuda_graphs.so, which cuda_graph.cpp loads only once the CUDA backend is
// loaded, so the programs still start where the CUDA libraries are absent. A C interface,
// so its loader needs no CUDA headers; errors come back as text, never as exceptions.
#include <ATen/cuda/CUDAGraph.h>
#include <c10/util/Exception.h>
#include <exception>
#include <string>

namespace {

thread_local std::string last_error;

template <typename Work>
const char* guarded(Work work) {
  try {
    work();
    return nullptr;
  } catch (const c10::Error& error) {
    last_error = error.what_without_backtrace();
  } catch (const std::exception& error) {
    last_error = error.what();
  }
  return last_error.c_str();
}

at::cuda::CUDAGraph* as_graph(void* graph) { return static_cast<at::cuda::CUDAGraph*>(graph); }

}  // namespace

#define NORMLAB_EXPORT extern "C" __attribute__((visibility("default")))

NORMLAB_EXPORT const char* normlab_cuda_graph_create(void** graph) {
  return guarded([&] { *graph = new at::cuda::CUDAGraph(); });
}

NORMLAB_EXPORT void normlab_cuda_graph_destroy(void* graph) { delete as_graph(graph); }

// Thread-local capture: runs side by side, each on its own thread, capture while others
// read their losses back, which a global capture would forbid.
NORMLAB_EXPORT const char* normlab_cuda_graph_begin(void* graph) {
  return guarded([&] { as_graph(graph)->capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal); });
}

NORMLAB_EXPORT const char* normlab_cuda_graph_end(void* graph) {
  return guarded([&] { as_graph(graph)->capture_end(); });
}

NORMLAB_EXPORT const char* normlab_cuda_graph_replay(void* graph) {
  return guarded([&] { as_graph(graph)->replay(); });
}
