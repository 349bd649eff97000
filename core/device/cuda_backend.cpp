#include "cuda_backend.h"

#include <cstddef>
#include <dlfcn.h>
#include <filesystem>
#include <mutex>
#include <torch/torch.h>
#include <vector>

#include "core/system/paths.h"

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

constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;  // ..._MINOR

// Calls `function` of the CUDA driver `driver` with `args`: its CUresult (0 is success), or
// -1 when the driver lacks the function.
template <typename... Args>
int call(void* driver, const char* function, Args... args) {
  using Function = int (*)(Args...);
  auto f = reinterpret_cast<Function>(dlsym(driver, function));
  return f ? f(args...) : -1;
}

// The same with the driver LibTorch loaded; false when it is not loaded or the call fails.
template <typename... Args>
bool call_driver(const char* function, Args... args) {
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) return false;
  const bool ok = call(driver, function, args...) == 0;
  dlclose(driver);
  return ok;
}

}  // namespace

CudaDriverReport ask_cuda_driver() {
  CudaDriverReport report;
  // Not closed: LibTorch may load the same driver later, and a driver that was initialised
  // should not be unloaded under it.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) {
    const char* error = dlerror();
    report.error = error ? error : "libcuda.so.1 cannot be loaded";
    return report;
  }
  for (const char* function :
       {"cuInit", "cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGetName", "cuDeviceGetAttribute"}) {
    if (!dlsym(driver, function)) {
      report.error = "libcuda.so.1 lacks the CUDA driver API";
      return report;
    }
  }
  if (const int status = call(driver, "cuInit", 0u); status != 0) {
    report.error =
        "cuInit failed with CUDA error " + std::to_string(status) + (status == 100 ? " (no CUDA-capable device)" : "");
    return report;
  }
  call(driver, "cuDriverGetVersion", &report.version);
  int devices = 0;
  call(driver, "cuDeviceGetCount", &devices);
  for (int i = 0; i < devices; ++i) {
    CudaDevice device;
    char name[256] = {};
    call(driver, "cuDeviceGetName", name, int(sizeof name), i);
    device.name = name;
    call(driver, "cuDeviceGetAttribute", &device.major, kComputeCapabilityMajor, i);
    call(driver, "cuDeviceGetAttribute", &device.minor, kComputeCapabilityMinor, i);
    report.devices.push_back(device);
  }
  if (devices == 0) report.error = "the driver lists no GPU";
  return report;
}

std::string cuda_device_name() {
  char name[256] = {};
  return call_driver("cuDeviceGetName", name, int(sizeof name), 0) ? name : "CUDA GPU";
}

int cuda_compute_capability_major() {
  int major = 0;
  return call_driver("cuDeviceGetAttribute", &major, kComputeCapabilityMajor, 0) ? major : 0;
}

double cuda_free_memory_bytes() {
  // Only a driver already loaded: loading and initialising one here would cost seconds
  // where no run asked for the GPU.
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (!driver) return 0;
  double free_bytes = 0;
  int device = 0;
  void* context = nullptr;
  if (call(driver, "cuInit", 0u) == 0 && call(driver, "cuDeviceGet", &device, 0) == 0 &&
      call(driver, "cuDevicePrimaryCtxRetain", &context, device) == 0) {
    if (call(driver, "cuCtxPushCurrent_v2", context) == 0) {
      std::size_t free = 0, total = 0;
      if (call(driver, "cuMemGetInfo_v2", &free, &total) == 0) free_bytes = double(free);
      void* popped = nullptr;
      call(driver, "cuCtxPopCurrent_v2", &popped);
    }
    call(driver, "cuDevicePrimaryCtxRelease_v2", device);
  }
  dlclose(driver);
  return free_bytes;
}

std::string libtorch_version() { return TORCH_VERSION; }

}  // namespace normlab
