#pragma once
// A run's whole training state at one step, kept beside its run file (RUN.json ->
// RUN.ckpt) while it trains, so that a killed or stopped run goes on from there with the
// numbers it would have had uninterrupted (resume() in trainer.h). The trainer makes the
// bytes (TrainCallbacks::on_checkpoint_due); whoever keeps the run's files writes them.
// No torch in this header: the lab reads headers to offer a resume.
//
// The file: one line of JSON, the header, then payload_bytes bytes of a LibTorch archive
// holding the model's parameters and buffers, the optimiser's moments and step counts,
// the batch sampler's random state and current chunk of batch offsets, and the run record
// up to the step. Every format version keeps that first line with its "schema" and
// "version", so any NormLab can say which version a file is.
#include <cstdint>
#include <filesystem>
#include <string>

#include "core/runs/config.h"
#include "core/runs/run_record.h"

namespace normlab {

inline constexpr int kCheckpointVersion = 1;

struct CheckpointHeader {
  int version = kCheckpointVersion;
  std::string libtorch_version;  // whose arithmetic made the state
  TrainConfig config;            // the run's, its name included
  std::string data_fingerprint;  // content hashes of the training and held-out token ids
  int step = 0;                  // optimiser updates done
  std::uint64_t payload_bytes = 0;
  std::string payload_hash;  // content_hash of the payload
};

// RUN.json -> RUN.ckpt.
std::filesystem::path checkpoint_path(const std::filesystem::path& run_file);

// The header of the checkpoint at `path`, the file's size checked against it. UserError
// naming the file and the fault: missing, not a NormLab checkpoint, another format
// version, truncated.
CheckpointHeader read_checkpoint_header(const std::filesystem::path& path);

// The header of the checkpoint at `path` when it can continue the run `config` describes
// in this program; UserError naming the file and saying why not: any fault
// read_checkpoint_header finds, another LibTorch (whose arithmetic may differ), another
// experiment (config_fields.h same_experiment). The training data is compared when the
// run resumes, once its corpus is tokenized.
CheckpointHeader resumable_checkpoint(const std::filesystem::path& path, const TrainConfig& config);

// Whether a run that ended as `run` keeps its checkpoint: a stopped one, to go on later;
// a done one when its config keeps the final weights; a diverged one never. Whoever
// writes a run's checkpoints deletes the ones not kept.
bool keeps_checkpoint(const RunRecord& run);

}  // namespace normlab
