// The CUDA backend is loaded at run time, not linked (core/device/cuda_backend.h). In the source
// build it sits beside the pinned LibTorch, so it must load and register itself, GPU or not.
#include "core/device/cuda_backend.h"

#include <ATen/detail/CUDAHooksInterface.h>
#include <cstdlib>
#include <iostream>
#include <torch/cuda.h>

#include "core/device/cuda_graph.h"

#include "test_support.h"

namespace normlab::test {
namespace {

// In a process of its own: LibTorch keeps its first answer about CUDA, so a test that ran
// before this one in the same process and asked it (a device "auto" run does) would leave
// the stub hooks in place whatever this test loads.
TEST(CudaBackend, LoadsAndRegistersWithLibTorch) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts the program afresh
  // A failure shows the child's reasons, written to its stderr.
  EXPECT_EXIT(
      {
        bool ok = true;
        const auto fail = [&ok](const std::string& why) {
          ok = false;
          std::cerr << why << "\n";
        };
        const CudaBackend& backend = load_cuda_backend();
        if (!backend.loaded) fail("not loaded: " + backend.reason);
        if (backend.library.find("libtorch_cuda.so") == std::string::npos) fail("loaded " + backend.library);
        // Without the backend LibTorch answers with stub hooks that know no CUDA runtime.
        if (!at::detail::getCUDAHooks().hasCUDART()) fail("LibTorch still has its stub CUDA hooks");
        if (&load_cuda_backend() != &backend) fail("loaded twice");  // once per process
        // The graph library, found by name beside libnormlab_idle_threads.so, loads with it.
        if (const auto why = cuda_graph_unavailable_reason(); !why.empty()) fail("no CUDA graphs: " + why);
        std::exit(ok ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

// Issue 47: what a run on a GPU may take is the GPU's free memory, asked of the driver
// LibTorch loaded. Where LibTorch finds a GPU it is known; without one it is 0, unknown,
// and no run is refused for it. In a process of its own, as above.
TEST(CudaBackend, FreeGpuMemoryIsKnownWhereLibTorchFoundAGpuAndUnknownElsewhere) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        load_cuda_backend();
        const bool gpu = torch::cuda::is_available();
        const double free = cuda_free_memory_bytes();
        std::cerr << (gpu ? "a GPU" : "no GPU") << ", free memory " << free << " bytes\n";
        std::exit((gpu ? free > 0 : free == 0) ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(CudaBackend, VersionIsThePinnedOne) { EXPECT_EQ(libtorch_version(), NORMLAB_TORCH_VERSION); }

}  // namespace
}  // namespace normlab::test
