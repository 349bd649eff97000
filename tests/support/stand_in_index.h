#pragma once
// A package index on 127.0.0.1 (index_server.py, in its own process) serving two stand-in
// wheels of a few kilobytes laid out as torch's and an NVIDIA library's: gpu install tested
// without the network or its 2.5 GB.
#include <archive.h>
#include <archive_entry.h>
#include <cstdio>
#include <filesystem>
#include <map>
#include <random>
#include <signal.h>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "core/gpu_install/cuda_install.h"

namespace normlab::test {

namespace fs = std::filesystem;

// A zip (a wheel is one) holding these files.
inline void write_wheel(const fs::path& path, const std::map<std::string, std::string>& files) {
  archive* zip = archive_write_new();
  archive_write_set_format_zip(zip);
  if (archive_write_open_filename(zip, path.c_str()) != ARCHIVE_OK)
    throw std::runtime_error("cannot write " + path.string());
  for (const auto& [name, bytes] : files) {
    archive_entry* entry = archive_entry_new();
    archive_entry_set_pathname(entry, name.c_str());
    archive_entry_set_filetype(entry, AE_IFREG);
    archive_entry_set_perm(entry, 0644);
    archive_entry_set_size(entry, la_int64_t(bytes.size()));
    archive_write_header(zip, entry);
    archive_write_data(zip, bytes.data(), bytes.size());
    archive_entry_free(entry);
  }
  archive_write_close(zip);
  archive_write_free(zip);
}

// The index server in its own process, stopped with the test.
class IndexServer {
 public:
  explicit IndexServer(const fs::path& root, std::vector<std::string> options = {}) {
    int pipe_ends[2];
    if (::pipe(pipe_ends) != 0) throw std::runtime_error("pipe");
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(pipe_ends[1], STDOUT_FILENO);
      ::close(pipe_ends[0]);
      std::vector<std::string> words{"python3", NORMLAB_INDEX_SERVER, root.string()};
      words.insert(words.end(), options.begin(), options.end());
      std::vector<char*> argv;
      for (auto& word : words) argv.push_back(word.data());
      argv.push_back(nullptr);
      ::execvp("python3", argv.data());
      ::_exit(127);
    }
    ::close(pipe_ends[1]);
    FILE* out = ::fdopen(pipe_ends[0], "r");
    int port = 0;
    if (std::fscanf(out, "%d", &port) != 1) throw std::runtime_error("the index server did not start");
    std::fclose(out);
    url_ = "http://127.0.0.1:" + std::to_string(port) + "/simple";
  }
  ~IndexServer() {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  const std::string& url() const { return url_; }

 private:
  pid_t pid_ = -1;
  std::string url_;
};

// Two stand-in wheels laid out as torch's and an NVIDIA library's, served from `root`.
struct StandIns {
  explicit StandIns(const fs::path& root) : root(root) {
    fs::create_directories(root / "torch");
    fs::create_directories(root / "nvidia-cublas");
    // Incompressible, so the wheel is big enough to cut its download in the middle.
    std::mt19937 random(7);
    std::string big(40000, ' ');
    for (char& c : big) c = char(random());
    write_wheel(root / "torch" / "torch-9.9.9-cp311-cp311-manylinux_2_28_x86_64.whl",
                {{"torch/lib/libtorch_cuda.so", "backend " + big},
                 {"torch/__init__.py", "import this"},
                 {"torch-9.9.9.dist-info/METADATA", "Name: torch"}});
    write_wheel(root / "nvidia-cublas" / "nvidia_cublas-1.0-py3-none-manylinux_2_27_x86_64.whl",
                {{"nvidia/cu13/lib/libcublas.so.13", "blas"}, {"nvidia/cu13/include/cublas.h", "header"}});
    for (const char* project : {"torch", "nvidia-cublas"}) {
      for (const auto& file : fs::directory_iterator(root / project)) {
        wheels.push_back(
            {project, file.path().filename().string(), std::int64_t(fs::file_size(file)), sha256_of_file(file.path())});
      }
    }
  }
  CudaInstallOptions options(const std::string& index, const fs::path& home) const {
    CudaInstallOptions o;
    o.index_url = index;
    o.target = home / "cuda";
    o.downloads = home / "downloads";
    o.wheels = wheels;
    return o;
  }
  fs::path root;
  std::vector<PinnedWheel> wheels;
};

}  // namespace normlab::test
