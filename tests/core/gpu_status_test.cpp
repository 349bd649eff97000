// What `gpu status` and the window's GPU notice say, with no driver (this machine) and,
// through the driver probe the tests replace, with one.
#include "core/gpu_install/gpu_status.h"

#include <dlfcn.h>

#include "core/device/cuda_backend.h"

#include "test_support.h"

namespace normlab {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Restores the real driver look-up when the test ends.
struct DriverProbe {
  explicit DriverProbe(std::function<std::string()> probe) { set_nvidia_driver_probe(std::move(probe)); }
  ~DriverProbe() { set_nvidia_driver_probe({}); }
};

GpuFacts h200(std::string libraries) {
  GpuFacts f;
  f.driver = "/proc/driver/nvidia";
  f.driver_version = 12040;
  f.devices.push_back({"NVIDIA H200", 9, 0});
  f.libraries = std::move(libraries);
  return f;
}

// Cheap because nothing is asked or loaded: the driver's library is not opened (asking it
// fills in a version, GPUs or why there are none) and neither is the CUDA backend.
TEST(GpuStatus, WithoutADriverAsksNothingAndLoadsNoCudaLibrary) {
  DriverProbe none([] { return std::string(); });
  const auto loaded = [](const char* library) { return dlopen(library, RTLD_LAZY | RTLD_NOLOAD) != nullptr; };
  const bool driver_before = loaded("libcuda.so.1"), backend_before = loaded("libtorch_cuda.so");  // by other tests
  const GpuFacts facts = probe_gpu(/*try_loading=*/true);
  EXPECT_EQ(facts.driver_version, 0) << "the driver was not asked";
  EXPECT_TRUE(facts.devices.empty());
  EXPECT_EQ(facts.driver_error, "") << "the driver was not asked";
  EXPECT_EQ(facts.library_error, "") << "no load was tried";
  EXPECT_TRUE(driver_before || !loaded("libcuda.so.1")) << "libcuda stays unloaded";
  EXPECT_TRUE(backend_before || !loaded("libtorch_cuda.so")) << "the 1 GB backend stays unloaded";
  EXPECT_FALSE(gpu_usable(facts));
  const std::string text = gpu_status_text(facts);
  EXPECT_THAT(text, HasSubstr("NVIDIA driver: none (no /proc/driver/nvidia, no libcuda.so.1)"));
  EXPECT_THAT(text, HasSubstr("NormLab trains on: the CPU: there is no NVIDIA driver"));
  EXPECT_EQ(gpu_notice(facts, "Install"), "") << "nothing to install without a driver";
}

TEST(GpuStatus, ADriverTheProbeReportsIsAskedForItsGpus) {
  DriverProbe found([] { return std::string("/proc/driver/nvidia (stand-in)"); });
  EXPECT_TRUE(nvidia_driver_present()) << "the trainer and the lab see the same probe";
  const GpuFacts facts = probe_gpu(/*try_loading=*/false);
  EXPECT_EQ(facts.driver, "/proc/driver/nvidia (stand-in)");
  const std::string text = gpu_status_text(facts);
  EXPECT_THAT(text, HasSubstr("NVIDIA driver: found (/proc/driver/nvidia (stand-in))"));
  if (facts.devices.empty()) {  // no libcuda here: the status says why there is no GPU
    EXPECT_FALSE(facts.driver_error.empty());
    EXPECT_THAT(text, HasSubstr("GPUs: none: " + facts.driver_error));
    EXPECT_THAT(text, HasSubstr("NormLab trains on: the CPU: the driver lists no GPU"));
  } else {
    EXPECT_THAT(text, HasSubstr("GPU 0: " + facts.devices[0].name));
  }
}

TEST(GpuStatus, AGpuWithoutTheLibrariesSaysHowToInstallThem) {
  const GpuFacts facts = h200("");
  const std::string text = gpu_status_text(facts);
  EXPECT_THAT(text, HasSubstr("NVIDIA driver: found (/proc/driver/nvidia), supports CUDA 12.4\n"));
  EXPECT_THAT(text, HasSubstr("GPU 0: NVIDIA H200, compute capability 9.0\n"));
  EXPECT_THAT(text, HasSubstr("CUDA libraries: not installed"));
  EXPECT_THAT(
      text, HasSubstr("NormLab trains on: the CPU, until the CUDA libraries are installed: normlab-cli gpu install ("));
  const std::string notice = gpu_notice(facts, "Help \u25b8 Install GPU support\u2026");
  EXPECT_THAT(notice, HasSubstr("NVIDIA H200"));
  EXPECT_THAT(notice,
              HasSubstr("Help \u25b8 Install GPU support\u2026 fetches them (" + cuda_download_size_text() + ")"));
  EXPECT_EQ(notice.find('\n'), std::string::npos) << "one line";
}

TEST(GpuStatus, AGpuWithItsLibrariesTrainsThere) {
  const GpuFacts facts = h200("/home/u/.cache/normlab/cuda-2.11.0/torch/lib/libtorch_cuda.so");
  EXPECT_TRUE(gpu_usable(facts));
  EXPECT_THAT(gpu_status_text(facts), HasSubstr("NormLab trains on: the GPU (NVIDIA H200)"));
  EXPECT_EQ(gpu_notice(facts, "x"), "");
}

TEST(GpuStatus, LibrariesThatFailToLoadSayWhy) {
  GpuFacts facts = h200("/x/libtorch_cuda.so");
  facts.library_error = "libcudnn.so.9: cannot open shared object file";
  EXPECT_FALSE(gpu_usable(facts));
  EXPECT_THAT(gpu_status_text(facts),
              HasSubstr("CUDA libraries: /x/libtorch_cuda.so, but they fail to load: libcudnn.so.9"));
}

TEST(GpuStatus, TheDownloadSizeIsThePinnedWheels) {
  EXPECT_THAT(cuda_download_size_text(), ::testing::MatchesRegex("[0-9]+\\.[0-9] GB"));
}

}  // namespace
}  // namespace normlab
