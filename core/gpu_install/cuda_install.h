#pragma once
// `normlab-cli gpu install` and Help ▸ Install GPU support…: fetches the pinned wheels that
// hold LibTorch's CUDA backend (core/gpu_install/cuda_wheels.h) from the package index pip uses, checks
// each against its pinned SHA-256, and unpacks their libraries into the user's cache, where
// load_cuda_backend() finds them. No torch, no Qt. Built unless NORMLAB_GPU_INSTALL is OFF
// (the GPU check's machine, which has neither these libraries' -dev packages nor a network).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "core/system/paths.h"

#include "cuda_wheels.h"

namespace normlab {

struct CudaInstallOptions {
  // A PEP 691 simple index: $PIP_INDEX_URL when set (the index pip would use), else PyPI's.
  std::string index_url = default_index_url();
  std::filesystem::path target = cuda_install_dir();
  std::filesystem::path downloads;  // where wheels arrive (<name>.part until checked); default beside target
  std::vector<PinnedWheel> wheels = cuda_wheels();

  static std::string default_index_url();
};

struct CudaInstallProgress {
  enum class Stage { Download, Check, Unpack } stage = Stage::Download;
  std::string file;                  // the wheel in hand
  int index = 0, count = 0;          // its place among the wheels, from 1
  std::int64_t done = 0, total = 0;  // bytes over all wheels
};

// "Downloading", "Checking", "Unpacking": what a stage is called, in the progress lines and dialog.
const char* stage_name(CudaInstallProgress::Stage stage);

// Return false to stop (the install then ends without error and unfinished downloads stay
// to be resumed).
using CudaInstallCallback = std::function<bool(const CudaInstallProgress&)>;

// Downloads what is missing (resuming partial files), checks every wheel, then unpacks
// them all and puts the result in place in one rename: `target` is either the old install
// or the complete new one, never half of it. The checked wheels are deleted once unpacked.
// Throws UserError with one line (offline, a file the index lacks, a checksum mismatch:
// the damaged file is deleted, so the next try downloads it again). False when stopped.
bool install_cuda_libraries(const CudaInstallOptions& options, const CudaInstallCallback& progress);

// Lower-case hex SHA-256 of a file's bytes.
std::string sha256_of_file(const std::filesystem::path& file);

}  // namespace normlab
