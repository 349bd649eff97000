#pragma once
// A run as data: what was asked, where it ran, and every point it produced.
// Read and written as JSON (versioned schema) and CSV. No torch: the UI includes this.
#include <filesystem>
#include <string>
#include <vector>

#include "config.h"

namespace normlab {

enum class RunStatus { Queued, Running, Done, Stopped, Diverged, Failed };
std::string to_string(RunStatus status);
RunStatus parse_status(const std::string& text);

struct StepMetrics {
  int step = 0;             // optimiser updates done, 1-based
  double wall_s = 0;        // since training started
  double lr = 0;
  double train_loss = 0;    // nats per token
  double tokens_per_s = 0;
};

struct EvalMetrics {
  int step = 0;             // 0 = before the first update
  double wall_s = 0;
  double val_loss = 0;      // mean held-out loss over the fixed evaluation batches
};

struct Environment {
  std::string app_version;
  std::string libtorch_version;
  std::string device;       // "cpu" or "cuda"
  std::string device_name;  // "CPU, 2 threads" or the GPU's name
  int threads = 0;
};

struct RunRecord {
  TrainConfig config;       // config.name is the run's name
  Environment environment;
  std::int64_t parameters = 0;
  std::int64_t train_tokens = 0;
  std::int64_t heldout_tokens = 0;
  double baseline_loss = 0; // unigram-frequency held-out loss, nats
  RunStatus status = RunStatus::Queued;
  std::string message;      // why it ended, when not simply done
  std::vector<StepMetrics> steps;
  std::vector<EvalMetrics> evals;

  // Last held-out loss, or NaN when there was no evaluation yet.
  double final_val_loss() const;
};

inline constexpr int kRunSchemaVersion = 1;

std::string to_json_text(const RunRecord& run);
RunRecord from_json_text(const std::string& text);  // UserError on anything malformed

// Both write atomically: a temp file beside the target, then rename.
void write_json(const RunRecord& run, const std::filesystem::path& path);
// One row per step: run, step, wall_s, lr, train_loss, val_loss (empty between evaluations).
void write_csv(const std::vector<RunRecord>& runs, const std::filesystem::path& path);
RunRecord read_json(const std::filesystem::path& path);  // UserError naming the file and the fault

// Writes `contents` to `path` via a temp file and rename; UserError on failure.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace normlab
