#pragma once
// Shared by every core test: temp folders, a private cache, a synthetic corpus and a
// tiny run config (the engine's shape of tests/support/tiny_config.h).
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <stdio.h>
#include <stdlib.h>
#include <string>
#include <torch/torch.h>
#include <unistd.h>
#include <vector>

#include "core/runs/config.h"
#include "tests/support/synthetic_corpus.h"
#include "tests/support/tiny_config.h"

namespace normlab::test {

namespace fs = std::filesystem;

// LibTorch's thread count on this thread, set to `threads` (0: left as it is) and put back
// to what it was on destruction, whatever the test asserts between: the suite runs at one
// thread (torch_threads.cpp), and a run or bench inside a test sets its own.
class TorchThreads {
 public:
  explicit TorchThreads(int threads = 0) : before_(torch::get_num_threads()) {
    if (threads > 0) torch::set_num_threads(threads);
  }
  ~TorchThreads() { torch::set_num_threads(before_); }
  TorchThreads(const TorchThreads&) = delete;
  TorchThreads& operator=(const TorchThreads&) = delete;

 private:
  const int before_;
};

// A fresh folder, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "normlab-test-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const fs::path& path() const { return path_; }
  fs::path operator/(const std::string& name) const { return path_ / name; }

 private:
  fs::path path_;
};

inline void write_file(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

#ifdef NORMLAB_CLI
// Starts `normlab-cli args` in `folder` without waiting for it; its output goes to
// stdout.txt and stderr.txt there.
inline pid_t start_cli(const fs::path& folder, const std::string& args) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::chdir(folder.c_str());
    const std::string command = "exec '" NORMLAB_CLI "' " + args + " > stdout.txt 2> stderr.txt";
    ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}
#endif

inline std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::string> read_lines(const fs::path& path) {
  std::istringstream in(read_file(path));
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The message of the UserError that `action` throws; a test failure when it throws none.
template <typename Action>
std::string user_error(Action&& action) {
  try {
    action();
  } catch (const UserError& error) {
    return error.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return {};
}

// Every test gets its own NORMLAB_CACHE_DIR, so nothing touches ~/.cache/normlab.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("NORMLAB_CACHE_DIR")) saved_ = old;
    ::setenv("NORMLAB_CACHE_DIR", cache_dir().c_str(), 1);
  }
  void TearDown() override {
    if (saved_.empty()) ::unsetenv("NORMLAB_CACHE_DIR");
    else ::setenv("NORMLAB_CACHE_DIR", saved_.c_str(), 1);
  }

  fs::path cache_dir() const { return temp_ / "cache"; }
  fs::path corpus_file(const std::string& text, const std::string& name = "corpus.txt") const {
    const fs::path path = temp_ / name;
    write_file(path, text);
    return path;
  }

  TempDir temp_;

 private:
  std::string saved_;
};

}  // namespace normlab::test
