#pragma once
// normlab-cli gpu status | gpu install: what the GPU look-up finds, and fetching the CUDA
// libraries an installed NormLab lacks.
#include <CLI/CLI.hpp>
#include <atomic>
#include <string>

namespace normlab {

struct GpuOptions {
  std::string index_url;  // empty: CudaInstallOptions' default
};

// Adds "gpu" with its two subcommands to `app`; returns it.
CLI::App* add_gpu_command(CLI::App& app, GpuOptions& options);

// Runs the subcommand given; `cancel` (Ctrl-C) stops an install, which resumes next time.
int run_gpu(const CLI::App& gpu, const GpuOptions& options, const std::atomic<bool>& cancel);

}  // namespace normlab
