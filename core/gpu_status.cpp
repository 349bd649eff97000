#include "gpu_status.h"

#include <dlfcn.h>

#include <cstdio>

#include "cuda_backend.h"
#include "cuda_wheels.h"
#include "paths.h"

namespace normlab {

namespace {

// The CUDA driver API, called through dlopen so that nothing links libcuda.
void ask_driver(GpuFacts& facts) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) {
    const char* error = dlerror();
    facts.driver_error = error ? error : "libcuda.so.1 cannot be loaded";
    return;
  }
  auto function = [&](const char* name) { return dlsym(driver, name); };
  using Init = int (*)(unsigned);
  using IntOut = int (*)(int*);
  using Name = int (*)(char*, int, int);
  using Attribute = int (*)(int*, int, int);
  auto init = reinterpret_cast<Init>(function("cuInit"));
  auto version = reinterpret_cast<IntOut>(function("cuDriverGetVersion"));
  auto count = reinterpret_cast<IntOut>(function("cuDeviceGetCount"));
  auto name = reinterpret_cast<Name>(function("cuDeviceGetName"));
  auto attribute = reinterpret_cast<Attribute>(function("cuDeviceGetAttribute"));
  int devices = 0;
  if (!init || !version || !count || !name || !attribute) {
    facts.driver_error = "libcuda.so.1 lacks the CUDA driver API";
  } else if (const int status = init(0); status != 0) {
    facts.driver_error = "cuInit failed with CUDA error " + std::to_string(status) +
                         (status == 100 ? " (no CUDA-capable device)" : "");
  } else {
    version(&facts.driver_version);
    count(&devices);
    for (int i = 0; i < devices; ++i) {
      GpuFacts::Device device;
      char text[256] = {};
      name(text, int(sizeof text), i);
      device.name = text;
      attribute(&device.major, 75, i);  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
      attribute(&device.minor, 76, i);  // ..._MINOR
      facts.devices.push_back(device);
    }
    if (devices == 0) facts.driver_error = "the driver lists no GPU";
  }
  // Not closed: LibTorch may load the same driver later, and a driver that was
  // initialised should not be unloaded under it.
}

}  // namespace

GpuFacts probe_gpu(bool try_loading) {
  GpuFacts facts;
  facts.driver = find_nvidia_driver();
  facts.libraries = find_cuda_backend();
  if (facts.driver.empty()) return facts;
  ask_driver(facts);
  if (try_loading && !facts.libraries.empty()) {
    const CudaBackend& backend = load_cuda_backend();
    if (!backend.loaded) facts.library_error = backend.reason;
  }
  return facts;
}

bool gpu_usable(const GpuFacts& facts) {
  return !facts.devices.empty() && !facts.libraries.empty() && facts.library_error.empty();
}

std::string cuda_download_size_text() {
  double bytes = 0;
  for (const auto& wheel : cuda_wheels()) bytes += double(wheel.size);
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

std::string gpu_status_text(const GpuFacts& f) {
  std::string text;
  auto line = [&](const std::string& label, const std::string& value) { text += label + ": " + value + "\n"; };
  if (f.driver.empty()) {
    line("NVIDIA driver", "none (no /proc/driver/nvidia, no libcuda.so.1)");
  } else {
    std::string driver = "found (" + f.driver + ")";
    if (f.driver_version > 0) {
      driver += ", supports CUDA " + std::to_string(f.driver_version / 1000) + "." +
                std::to_string(f.driver_version % 1000 / 10);
    }
    line("NVIDIA driver", driver);
    for (std::size_t i = 0; i < f.devices.size(); ++i) {
      const auto& d = f.devices[i];
      line("GPU " + std::to_string(i), d.name + ", compute capability " + std::to_string(d.major) + "." +
                                            std::to_string(d.minor));
    }
    if (f.devices.empty()) line("GPUs", "none: " + f.driver_error);
  }
  if (f.libraries.empty()) {
    line("CUDA libraries", "not installed (LibTorch " NORMLAB_TORCH_VERSION "'s CUDA backend; looked beside LibTorch and in " +
                               cuda_install_dir().parent_path().string() + ")");
  } else if (!f.library_error.empty()) {
    line("CUDA libraries", f.libraries + ", but they fail to load: " + f.library_error);
  } else {
    line("CUDA libraries", f.libraries);
  }
  if (gpu_usable(f)) {
    line("NormLab trains on", "the GPU (" + f.devices.front().name + ") with --device auto or cuda");
  } else if (f.driver.empty()) {
    line("NormLab trains on", "the CPU: there is no NVIDIA driver to reach a GPU through");
  } else if (f.devices.empty()) {
    line("NormLab trains on", "the CPU: the driver lists no GPU it can use");
  } else {
    line("NormLab trains on", "the CPU, until the CUDA libraries are installed: normlab-cli gpu install (" +
                                  cuda_download_size_text() + ")");
  }
  return text;
}

std::string gpu_notice(const GpuFacts& f, const std::string& install_action) {
  if (f.driver.empty() || !f.libraries.empty()) return {};
  const std::string what = f.devices.empty() ? "An NVIDIA driver" : "An NVIDIA GPU (" + f.devices.front().name + ")";
  return what + " is here but not NormLab's CUDA libraries: " + install_action + " fetches them (" +
         cuda_download_size_text() + ")";
}

}  // namespace normlab
