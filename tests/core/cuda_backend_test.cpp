// The CUDA backend is loaded at run time, not linked (core/device/cuda_backend.h). In the source
// build it sits beside the pinned LibTorch, so it must load and register itself, GPU or not.
#include <ATen/detail/CUDAHooksInterface.h>

#include "core/device/cuda_backend.h"
#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;

TEST(CudaBackend, LoadsAndRegistersWithLibTorch) {
  const CudaBackend& backend = load_cuda_backend();
  ASSERT_TRUE(backend.loaded) << backend.reason;
  EXPECT_THAT(backend.library, HasSubstr("libtorch_cuda.so"));
  // Without the backend LibTorch answers with stub hooks that know no CUDA runtime.
  EXPECT_TRUE(at::detail::getCUDAHooks().hasCUDART());
  EXPECT_EQ(&load_cuda_backend(), &backend);  // once per process
}

TEST(CudaBackend, VersionIsThePinnedOne) {
  EXPECT_EQ(libtorch_version(), NORMLAB_TORCH_VERSION);
}

}  // namespace
}  // namespace normlab::test
