#pragma once
#include <filesystem>

namespace normlab {

// $XDG_CACHE_HOME, else ~/.cache: where the set-up script puts the pinned LibTorch.
std::filesystem::path user_cache_home();

// $NORMLAB_CACHE_DIR, else user_cache_home()/normlab. Created on demand.
std::filesystem::path cache_dir();

// cache_dir()/cuda-<LibTorch version>, where `normlab-cli gpu install` puts LibTorch's CUDA
// backend and NVIDIA's libraries: torch/lib and nvidia/*/lib, laid out as in site-packages
// so libtorch_cuda.so's RPATH ($ORIGIN/../../nvidia/...) finds its libraries.
std::filesystem::path cuda_install_dir();

}  // namespace normlab
