#include "cuda_backend.h"

#include <dlfcn.h>

#include <filesystem>
#include <vector>

#include <torch/torch.h>

#include "paths.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {

// The folder of the libtorch_cpu.so this process runs with.
fs::path loaded_libtorch_dir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&at::globalContext), &info) == 0 || !info.dli_fname) return {};
  return fs::path(info.dli_fname).parent_path();
}

// torch/lib of the pinned wheel in the user's cache (any Python minor version).
std::vector<fs::path> pinned_wheel_dirs() {
  std::vector<fs::path> dirs;
  std::error_code error;
  const auto venv_lib = user_cache_home() / "normlab" / ("torch-" NORMLAB_TORCH_VERSION) / "lib";
  for (const auto& python : fs::directory_iterator(venv_lib, error)) {
    dirs.push_back(python.path() / "site-packages" / "torch" / "lib");
  }
  return dirs;
}

CudaBackend load() {
  CudaBackend backend;
  std::vector<fs::path> candidates{loaded_libtorch_dir()};
  for (auto& dir : pinned_wheel_dirs()) candidates.push_back(std::move(dir));
  std::string errors;
  for (const auto& dir : candidates) {
    const auto library = dir / "libtorch_cuda.so";
    if (dir.empty() || !fs::exists(library)) continue;
    // RTLD_GLOBAL: the CUDA libraries it pulls in must serve later LibTorch lookups too.
    if (dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      backend.loaded = true;
      backend.library = library.string();
      return backend;
    }
    errors += std::string(errors.empty() ? "" : "; ") + dlerror();
  }
  backend.reason = errors.empty()
      ? "no libtorch_cuda.so " NORMLAB_TORCH_VERSION " beside LibTorch or in " +
            (user_cache_home() / "normlab").string()
      : errors;
  return backend;
}

}  // namespace

const CudaBackend& load_cuda_backend() {
  static const CudaBackend backend = load();
  return backend;
}

bool nvidia_driver_present() {
  std::error_code error;
  if (fs::exists("/proc/driver/nvidia", error)) return true;
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver) dlclose(driver);
  return driver != nullptr;
}

namespace {

// Calls `function` of the CUDA driver with `args` when the driver is loaded; false otherwise.
template <typename... Args>
bool call_driver(const char* function, Args... args) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) return false;
  using Function = int (*)(Args...);
  auto call = reinterpret_cast<Function>(dlsym(driver, function));
  const bool ok = call && call(args...) == 0;
  dlclose(driver);
  return ok;
}

}  // namespace

std::string cuda_device_name() {
  char name[256] = {};
  return call_driver("cuDeviceGetName", name, int(sizeof name), 0) ? name : "CUDA GPU";
}

int cuda_compute_capability_major() {
  constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
  int major = 0;
  return call_driver("cuDeviceGetAttribute", &major, kComputeCapabilityMajor, 0) ? major : 0;
}

std::string libtorch_version() { return TORCH_VERSION; }

}  // namespace normlab
