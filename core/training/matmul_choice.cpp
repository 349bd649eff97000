#include "matmul_choice.h"

#include <chrono>
#include <fcntl.h>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

#include "core/device/cuda_backend.h"
#include "core/model/linear.h"
#include "core/system/atomic_file.h"
#include "core/system/host.h"
#include "core/system/paths.h"

#include "learner.h"

namespace normlab {

namespace fs = std::filesystem;

namespace {

fs::path cache_file() { return cache_dir() / "cpu-matmul.json"; }

nlohmann::json read_cache() {
  std::ifstream in(cache_file());
  if (!in) return nlohmann::json::object();
  nlohmann::json cache = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  return cache.is_object() ? cache : nlohmann::json::object();
}

std::optional<MatmulChoice> cached(const nlohmann::json& cache, const std::string& key) {
  const auto entry = cache.find(key);
  if (entry == cache.end() || !entry->is_object()) return std::nullopt;
  const auto kernel = entry->value("kernel", std::string());
  if (kernel != "onednn" && kernel != "libtorch") return std::nullopt;
  MatmulChoice choice;
  choice.onednn = kernel == "onednn";
  choice.onednn_ms = entry->value("onednn_ms", 0.0);
  choice.libtorch_ms = entry->value("libtorch_ms", 0.0);
  return choice;
}

// Holds an exclusive lock on a file beside the cache while it lives (released at exit
// too, however the process ends).
class CacheLock {
 public:
  CacheLock() {
    fs::create_directories(cache_dir());
    fd_ = ::open((cache_dir() / "cpu-matmul.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ >= 0) ::flock(fd_, LOCK_EX);
  }
  ~CacheLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  CacheLock(const CacheLock&) = delete;
  CacheLock& operator=(const CacheLock&) = delete;

 private:
  int fd_ = -1;
};

// A few steps of `config`'s model on random tokens with each kernel, alternated so load
// falls on both alike; each kernel's fastest step.
MatmulChoice measure(const TrainConfig& config) {
  constexpr int kRounds = 3;
  TrainConfig probe = config;
  probe.cpu_precision = "fp32";
  probe.autocast = "off";
  Learner learner(probe, probe.model.vocab, torch::kCPU, /*cuda_graph=*/false);
  auto generator = at::make_generator<at::CPUGeneratorImpl>(probe.seed);
  const auto ids =
      torch::randint(probe.model.vocab, {probe.batch_size, probe.model.context + 1}, generator, torch::kInt64);
  const Batch batch = split_windows(ids);
  const bool was_onednn = onednn_matmuls();
  auto step_ms = [&](bool onednn) {
    set_onednn_matmuls(onednn);
    const auto start = std::chrono::steady_clock::now();
    learner.step(batch, 0.0).item<double>();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  step_ms(true);  // each kernel's first call sets up its buffers
  step_ms(false);
  MatmulChoice choice;
  choice.onednn_ms = choice.libtorch_ms = std::numeric_limits<double>::infinity();
  for (int round = 0; round < kRounds; ++round) {
    choice.onednn_ms = std::min(choice.onednn_ms, step_ms(true));
    choice.libtorch_ms = std::min(choice.libtorch_ms, step_ms(false));
  }
  set_onednn_matmuls(was_onednn);
  choice.onednn = onednn_wins(choice.onednn_ms, choice.libtorch_ms);
  choice.measured_now = true;
  return choice;
}

}  // namespace

bool onednn_wins(double onednn_ms, double libtorch_ms) { return !(libtorch_ms < 0.95 * onednn_ms); }

std::string describe(const MatmulChoice& choice) {
  char text[96];
  std::snprintf(text, sizeof text, "oneDNN %.3g ms a step, LibTorch %.3g", choice.onednn_ms, choice.libtorch_ms);
  return text;
}

std::string matmul_choice_key(const TrainConfig& config) {
  const ModelConfig& m = config.model;
  std::ostringstream key;
  key << cpu_model() << "|" << torch::get_num_threads() << " threads|" << config.batch_size << "x" << m.context << " d"
      << m.d_model << " L" << m.layers << " h" << m.heads << " V" << m.vocab << "|LibTorch " << libtorch_version();
  // A step in slices of the batch multiplies smaller matrices on each thread: another
  // entry. (Keys of whole-batch steps are as before slices existed.)
  if (const int slices = batch_slices(config, torch::get_num_threads()); slices > 1) key << "|" << slices << " slices";
  return key.str();
}

MatmulChoice choose_cpu_matmul(const TrainConfig& config) {
  static std::mutex one_at_a_time;  // runs side by side in this process
  const std::lock_guard lock(one_at_a_time);
  const std::string key = matmul_choice_key(config);
  if (auto choice = cached(read_cache(), key)) return *choice;
  const CacheLock file_lock;  // and other processes
  nlohmann::json cache = read_cache();
  if (auto choice = cached(cache, key)) return *choice;
  const MatmulChoice choice = measure(config);
  cache[key] = {{"kernel", choice.onednn ? "onednn" : "libtorch"},
                {"onednn_ms", choice.onednn_ms},
                {"libtorch_ms", choice.libtorch_ms}};
  write_file_atomically(cache_file(), cache.dump(2) + "\n");
  return choice;
}

}  // namespace normlab
