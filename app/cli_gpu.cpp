#include "cli_gpu.h"

#include <chrono>
#include <cstdio>
#include <unistd.h>

#include "core/gpu_install/cuda_install.h"
#include "core/gpu_install/gpu_status.h"
#include "core/runs/config.h"

namespace normlab {

namespace {

#ifdef NORMLAB_GPU_INSTALL
using Clock = std::chrono::steady_clock;

// A bar redrawn in place on a terminal; elsewhere (a log) a line each time another 5 % is done.
class ProgressBar {
 public:
  void show(const CudaInstallProgress& p) {
    const auto now = Clock::now();
    const double fraction = p.total > 0 ? double(p.done) / double(p.total) : 0;
    const bool changed = p.file != file_ || p.stage != stage_;
    const bool due = tty_ ? now - last_ >= std::chrono::milliseconds(200) : fraction >= logged_ + 0.05;
    if (!changed && !due) return;
    if (!changed && p.stage == CudaInstallProgress::Stage::Download) {
      const double seconds = std::chrono::duration<double>(now - last_).count();
      if (seconds > 0) rate_ = 0.7 * rate_ + 0.3 * double(p.done - done_) / seconds;
    }
    file_ = p.file;
    stage_ = p.stage;
    last_ = now;
    done_ = p.done;
    logged_ = fraction;
    constexpr int kWidth = 24;
    const int filled = int(fraction * kWidth + 0.5);
    std::fprintf(stderr, "%s[%s%s] %5.1f %% of %.2f GB  %s %d/%d %s", tty_ ? "\r\033[K" : "",
                 std::string(std::size_t(filled), '#').c_str(), std::string(std::size_t(kWidth - filled), '.').c_str(),
                 100 * fraction, double(p.total) / 1e9, stage_name(p.stage), p.index, p.count, p.file.c_str());
    if (p.stage == CudaInstallProgress::Stage::Download && rate_ > 0) std::fprintf(stderr, "  %.0f MB/s", rate_ / 1e6);
    std::fputs(tty_ ? "" : "\n", stderr);
    std::fflush(stderr);
  }
  void end() {
    if (tty_) std::fputc('\n', stderr);
  }

 private:
  bool tty_ = isatty(STDERR_FILENO) != 0;
  std::string file_;
  CudaInstallProgress::Stage stage_{};
  Clock::time_point last_ = Clock::now();
  std::int64_t done_ = 0;
  double rate_ = 0, logged_ = -1;
};
#endif

int install(const GpuOptions& options, const std::atomic<bool>& cancel) {
#ifndef NORMLAB_GPU_INSTALL
  (void)options, (void)cancel;
  throw UserError("this normlab-cli was built without gpu install (NORMLAB_GPU_INSTALL=OFF)");
#else
  CudaInstallOptions install;
  if (!options.index_url.empty()) install.index_url = options.index_url;
  std::printf("fetching LibTorch %s's CUDA libraries (%s) from %s into %s\n", NORMLAB_TORCH_VERSION,
              cuda_download_size_text().c_str(), install.index_url.c_str(), install.target.c_str());
  std::fflush(stdout);
  ProgressBar bar;
  const bool done = install_cuda_libraries(install, [&](const CudaInstallProgress& p) {
    bar.show(p);
    return !cancel;
  });
  bar.end();
  if (!done) {
    std::fprintf(stderr, "normlab-cli: stopped; run gpu install again to go on where it stopped\n");
    return 130;
  }
  std::printf("installed into %s\n", install.target.c_str());
  const GpuFacts facts = probe_gpu(/*try_loading=*/true);
  std::fputs(gpu_status_text(facts).c_str(), stdout);
  return 0;
#endif
}

}  // namespace

CLI::App* add_gpu_command(CLI::App& app, GpuOptions& options) {
  CLI::App* gpu = app.add_subcommand("gpu", "what NormLab finds of a GPU, and installing its CUDA libraries");
  gpu->require_subcommand(1);
  gpu->add_subcommand("status",
                      "the NVIDIA driver, its GPUs (name, compute capability), the CUDA libraries, and why "
                      "NormLab trains on the CPU when it does");
  CLI::App* install = gpu->add_subcommand("install", "download LibTorch " NORMLAB_TORCH_VERSION
                                                     "'s CUDA libraries (the pinned wheels, " +
                                                         cuda_download_size_text() +
                                                         ") into the user's cache, each checked against its SHA-256; "
                                                         "an interrupted download resumes");
  install
      ->add_option("--index-url", options.index_url,
                   "the package index (PEP 691), as pip's --index-url; default $PIP_INDEX_URL, else "
                   "https://pypi.org/simple")
      ->type_name("URL");
  return gpu;
}

int run_gpu(const CLI::App& gpu, const GpuOptions& options, const std::atomic<bool>& cancel) {
  if (gpu.got_subcommand("install")) return install(options, cancel);
  std::fputs(gpu_status_text(probe_gpu(/*try_loading=*/true)).c_str(), stdout);
  return 0;
}

}  // namespace normlab
