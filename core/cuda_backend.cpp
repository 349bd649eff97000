#include "cuda_backend.h"

#include <dlfcn.h>

#include <filesystem>
#include <mutex>
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

// Beside the LibTorch in use, then in the source set-up's wheel, then where
// `normlab-cli gpu install` puts it.
std::vector<fs::path> candidate_dirs() {
  std::vector<fs::path> candidates{loaded_libtorch_dir()};
  for (auto& dir : pinned_wheel_dirs()) candidates.push_back(std::move(dir));
  candidates.push_back(cuda_install_dir() / "torch" / "lib");
  return candidates;
}

CudaBackend load() {
  CudaBackend backend;
  std::string errors;
  for (const auto& dir : candidate_dirs()) {
    const auto library = dir / "libtorch_cuda.so";
    std::error_code error;
    if (dir.empty() || !fs::exists(library, error)) continue;
    // RTLD_GLOBAL: the CUDA libraries it pulls in must serve later LibTorch lookups too.
    if (dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      backend.loaded = true;
      backend.library = library.string();
      return backend;
    }
    errors += std::string(errors.empty() ? "" : "; ") + dlerror();
  }
  backend.reason = errors.empty()
      ? "no libtorch_cuda.so " NORMLAB_TORCH_VERSION " beside LibTorch or in " + cache_dir().string()
      : errors;
  return backend;
}

}  // namespace

const CudaBackend& load_cuda_backend() {
  static const CudaBackend backend = load();
  return backend;
}

std::string find_cuda_backend() {
  for (const auto& dir : candidate_dirs()) {
    std::error_code error;
    if (!dir.empty() && fs::exists(dir / "libtorch_cuda.so", error)) return (dir / "libtorch_cuda.so").string();
  }
  return {};
}

namespace {

std::mutex probe_mutex;
std::function<std::string()> driver_probe;  // set by tests

std::string look_for_driver() {
  std::error_code error;
  if (fs::exists("/proc/driver/nvidia", error)) return "/proc/driver/nvidia";
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) return {};
  dlclose(driver);
  return "libcuda.so.1";
}

}  // namespace

std::string find_nvidia_driver() {
  std::function<std::string()> probe;
  {
    std::lock_guard lock(probe_mutex);
    probe = driver_probe;
  }
  return probe ? probe() : look_for_driver();
}

bool nvidia_driver_present() { return !find_nvidia_driver().empty(); }

void set_nvidia_driver_probe(std::function<std::string()> probe) {
  std::lock_guard lock(probe_mutex);
  driver_probe = std::move(probe);
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
