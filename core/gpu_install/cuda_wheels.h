#pragma once
// The wheels that hold LibTorch's CUDA backend and the NVIDIA libraries it loads, pinned
// to the exact files the source set-up installs (core/gpu_install/cuda_wheels.cpp, generated).
#include <cstdint>
#include <string>
#include <vector>

namespace normlab {

struct PinnedWheel {
  std::string project;    // as the package index names it: "torch", "nvidia-cublas"
  std::string filename;   // "torch-2.11.0-cp311-cp311-manylinux_2_28_x86_64.whl"
  std::int64_t size = 0;  // bytes
  std::string sha256;     // lower-case hex
};

const std::vector<PinnedWheel>& cuda_wheels();

}  // namespace normlab
