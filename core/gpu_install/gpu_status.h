#pragma once
// What `normlab-cli gpu status` reports and the window's one-line GPU notice: is there an
// NVIDIA driver, which GPUs it lists, and are NormLab's CUDA libraries installed. No torch.
#include <string>
#include <vector>

#include "core/device/cuda_backend.h"

namespace normlab {

struct GpuFacts {
  std::string driver;      // where the driver was found; empty: no driver
  int driver_version = 0;  // the CUDA version the driver supports, 12040 for 12.4; 0: unknown
  std::vector<CudaDevice> devices;
  std::string driver_error;   // why the driver listed no GPU
  std::string libraries;      // the libtorch_cuda.so that would be loaded; empty: none
  std::string library_error;  // why it failed to load, when loading was tried
};

// Cheap without a driver: then neither libcuda nor libtorch_cuda is touched. With one, asks
// the driver for its GPUs and, when `try_loading`, loads the CUDA backend to see that it works.
GpuFacts probe_gpu(bool try_loading);

// Whether NormLab can train on a GPU here.
bool gpu_usable(const GpuFacts& facts);

// A few "label: value" lines, ending with what NormLab trains on and, when it is the CPU,
// what would change that.
std::string gpu_status_text(const GpuFacts& facts);

// One line with an action when a GPU is there but NormLab cannot use it yet; empty otherwise.
// `install_action` names how to install in the caller's words (a command or a menu item).
std::string gpu_notice(const GpuFacts& facts, const std::string& install_action);

// "2.7 GB": what `gpu install` downloads.
std::string cuda_download_size_text();

}  // namespace normlab
