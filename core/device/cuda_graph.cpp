#include "cuda_graph.h"

#include <dlfcn.h>
#include <stdexcept>

#include "cuda_backend.h"

namespace normlab {

namespace {

struct GraphLibrary {
  const char* (*create)(void**) = nullptr;
  void (*destroy)(void*) = nullptr;
  const char* (*begin)(void*) = nullptr;
  const char* (*end)(void*) = nullptr;
  const char* (*replay)(void*) = nullptr;
  std::string unavailable;  // why the functions above are not set
};

template <typename Function>
void find(void* library, const char* name, Function& function, std::string& unavailable) {
  function = reinterpret_cast<Function>(dlsym(library, name));
  if (!function && unavailable.empty()) unavailable = std::string("no ") + name + " in " NORMLAB_CUDA_GRAPHS_LIBRARY;
}

GraphLibrary load() {
  GraphLibrary graphs;
  const CudaBackend& backend = load_cuda_backend();
  if (!backend.loaded) {
    graphs.unavailable = "no CUDA backend: " + backend.reason;
    return graphs;
  }
  // By name: it lies beside libnormlab_idle_threads.so, on every program's run path.
  void* library = dlopen(NORMLAB_CUDA_GRAPHS_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    graphs.unavailable = dlerror();
    return graphs;
  }
  find(library, "normlab_cuda_graph_create", graphs.create, graphs.unavailable);
  find(library, "normlab_cuda_graph_destroy", graphs.destroy, graphs.unavailable);
  find(library, "normlab_cuda_graph_begin", graphs.begin, graphs.unavailable);
  find(library, "normlab_cuda_graph_end", graphs.end, graphs.unavailable);
  find(library, "normlab_cuda_graph_replay", graphs.replay, graphs.unavailable);
  return graphs;
}

const GraphLibrary& graph_library() {
  static const GraphLibrary graphs = load();
  return graphs;
}

void check(const char* error, const char* what) {
  if (error) throw std::runtime_error(std::string("CUDA graph ") + what + ": " + error);
}

}  // namespace

std::string cuda_graph_unavailable_reason() { return graph_library().unavailable; }

CudaGraph::CudaGraph() {
  const GraphLibrary& graphs = graph_library();
  if (!graphs.unavailable.empty()) throw std::runtime_error("no CUDA graphs: " + graphs.unavailable);
  check(graphs.create(&graph_), "set-up");
}

CudaGraph::~CudaGraph() { graph_library().destroy(graph_); }

void CudaGraph::begin() { check(graph_library().begin(graph_), "capture"); }
void CudaGraph::end() { check(graph_library().end(graph_), "capture"); }
void CudaGraph::replay() { check(graph_library().replay(graph_), "replay"); }

void CudaGraph::capture(const std::function<void()>& work) {
  begin();
  try {
    work();
  } catch (...) {
    try {
      end();
    } catch (const std::exception&) {
    }
    throw;
  }
  end();
}

}  // namespace normlab
