#pragma once
// A finished run's final parameters, kept beside its run file (RUN.json -> RUN.weights) so
// that it can continue text later, in another process: about 10.6 MB at the course's
// shape, a quarter of a checkpoint, which also holds the optimiser's state. The file is
// framed as checkpoints are (headed_file.h): a header naming the run, its config, the step,
// and the hashes of its tokenizer and of the model's shape, then a LibTorch archive of the
// parameters and buffers by name. The trainer makes the bytes
// (TrainCallbacks::on_weights_due); whoever keeps the run's files writes them.
// No torch in this header: the lab removes and looks for these files.
#include <filesystem>
#include <string>

#include "core/runs/run_record.h"

namespace normlab {

inline constexpr int kWeightsVersion = 1;

struct WeightsHeader {
  TrainConfig config;          // the run's, its name included
  std::string tokenizer_hash;  // content hash of the tokenizer's model file
  std::string shape_hash;      // content hash of every tensor's name and sizes
  int step = 0;                // optimiser updates the weights had
};

// RUN.json -> RUN.weights.
std::filesystem::path weights_path(const std::filesystem::path& run_file);

// The header of the weights file at `path`, its size checked against it; UserError naming
// the file and the fault (absent, not a weights file, another format version, truncated).
WeightsHeader read_weights_header(const std::filesystem::path& path);

// Whether a run that ended as `run` keeps a weights file: a done one whose config says so
// (final_weights keep) and that keeps no checkpoint, which holds the same weights. A stopped
// run has its checkpoint; a diverged one's weights are not finite.
bool keeps_weights(const RunRecord& run);

}  // namespace normlab
