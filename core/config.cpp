#include "config.h"

#include <cmath>
#include <cstdio>

namespace normlab {

std::string to_string(NormPlacement norm) { return norm == NormPlacement::Pre ? "pre" : "post"; }

NormPlacement parse_norm(const std::string& text) {
  if (text == "pre") return NormPlacement::Pre;
  if (text == "post") return NormPlacement::Post;
  throw UserError("norm placement must be 'pre' or 'post', not '" + text + "'");
}

const char* formula(NormPlacement norm) {
  return norm == NormPlacement::Pre ? "x \u2190 x + f(Norm x)" : "x \u2190 Norm(x + f(x))";
}

namespace {
void require(bool ok, const std::string& what) {
  if (!ok) throw UserError(what);
}
}  // namespace

void validate(const TrainConfig& c) {
  const ModelConfig& m = c.model;
  require(m.layers >= 1 && m.layers <= 64, "layers must be between 1 and 64");
  require(m.d_model >= 8 && m.d_model <= 4096, "d_model must be between 8 and 4096");
  require(m.heads >= 1 && m.d_model % m.heads == 0,
          "heads must divide d_model (" + std::to_string(m.d_model) + ")");
  require(m.context >= 2 && m.context <= 4096, "context must be between 2 and 4096 tokens");
  require(m.vocab >= 64 && m.vocab <= 65536, "vocabulary size must be between 64 and 65536");
  require(std::isfinite(c.peak_lr) && c.peak_lr > 0 && c.peak_lr <= 1,
          "peak learning rate must be above 0 and at most 1");
  require(c.steps >= 1 && c.steps <= 10'000'000, "steps must be between 1 and 10000000");
  require(c.warmup_steps >= 1, "warmup must be at least 1 step");
  require(c.batch_size >= 1 && c.batch_size <= 4096, "batch size must be between 1 and 4096");
  require(std::isfinite(c.weight_decay) && c.weight_decay >= 0, "weight decay must be 0 or more");
  require(std::isfinite(c.clip_grad_norm) && c.clip_grad_norm >= 0,
          "gradient clipping norm must be 0 (off) or more");
  require(c.threads >= 0 && c.threads <= 1024, "threads must be between 0 (LibTorch's default) and 1024");
  require(c.eval_interval >= 1, "evaluation interval must be at least 1 step");
  require(c.eval_batches >= 1 && c.eval_batches <= 1000,
          "evaluation batches must be between 1 and 1000");
  require(c.device == "auto" || c.device == "cpu" || c.device == "cuda",
          "device must be auto, cpu or cuda, not '" + c.device + "'");
}

std::string format_lr(double lr) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", lr);
  std::string s = text;
  // "0.001" -> "1e-3", "0.0006" -> "6e-4": the form the course uses.
  if (lr > 0 && lr < 0.01) {
    const int exponent = int(std::floor(std::log10(lr) + 1e-9));
    std::snprintf(text, sizeof text, "%.3g", lr / std::pow(10.0, exponent));
    s = std::string(text) + "e" + std::to_string(exponent);
  }
  return s;
}

std::string default_run_name(const TrainConfig& c) {
  return to_string(c.model.norm) + "-norm lr " + format_lr(c.peak_lr) + " warmup " +
         std::to_string(c.warmup_steps);
}

}  // namespace normlab
