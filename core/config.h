#pragma once
// Everything a run is made of. Plain data, no torch: the UI includes this.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace normlab {

// Raised for any input a user can fix: a bad option, corpus or file.
struct UserError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

enum class NormPlacement { Pre, Post };
std::string to_string(NormPlacement norm);
NormPlacement parse_norm(const std::string& text);  // "pre" | "post", else UserError
// The block's update rule in one line, e.g. "x ← x + f(Norm x)".
const char* formula(NormPlacement norm);

struct ModelConfig {
  int layers = 8;
  int d_model = 128;
  int heads = 4;
  int context = 128;
  int vocab = 8192;
  NormPlacement norm = NormPlacement::Pre;
};

struct TrainConfig {
  std::string name;         // empty: derived from the settings (see default_run_name)
  ModelConfig model;
  double peak_lr = 1e-3;
  int warmup_steps = 30;
  int steps = 3000;
  int batch_size = 32;
  double weight_decay = 0.1;
  double clip_grad_norm = 0.0;  // 0 = no clipping
  std::uint64_t seed = 1337;
  std::string device = "auto";  // auto | cpu | cuda
  int threads = 0;              // CPU threads; 0 = LibTorch's default (OMP_NUM_THREADS, else one per core)
  int eval_interval = 100;
  int eval_batches = 16;
  std::string corpus_path;  // empty: the King James text from `bible`
};

// Throws UserError naming the first invalid field and why.
void validate(const TrainConfig& config);

// "post-norm lr 6e-3 warmup 30", short enough for a legend.
std::string default_run_name(const TrainConfig& config);

// "6e-3", "1e-3", "2.5e-4": how the app writes learning rates.
std::string format_lr(double lr);

}  // namespace normlab
