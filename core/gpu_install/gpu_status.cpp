#include "gpu_status.h"

#include <cstdio>

#include "core/device/cuda_backend.h"
#include "core/system/paths.h"

#include "cuda_wheels.h"

namespace normlab {

GpuFacts probe_gpu(bool try_loading) {
  GpuFacts facts;
  facts.driver = find_nvidia_driver();
  facts.libraries = find_cuda_backend();
  if (facts.driver.empty()) return facts;
  CudaDriverReport report = ask_cuda_driver();
  facts.driver_version = report.version;
  facts.devices = std::move(report.devices);
  facts.driver_error = std::move(report.error);
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
      line("GPU " + std::to_string(i),
           d.name + ", compute capability " + std::to_string(d.major) + "." + std::to_string(d.minor));
    }
    if (f.devices.empty()) line("GPUs", "none: " + f.driver_error);
  }
  if (f.libraries.empty()) {
    line("CUDA libraries", "not installed (LibTorch " NORMLAB_TORCH_VERSION
                           "'s CUDA backend; looked beside LibTorch and in " +
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
