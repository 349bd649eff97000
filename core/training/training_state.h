#pragma once
// The trainer's state between two steps as a checkpoint's bytes (checkpoint.h), and back.
// Torch: the trainer's side of checkpoints, not the UI's.
#include <filesystem>
#include <random>
#include <string>
#include <torch/torch.h>

#include "core/runs/run_record.h"

#include "learner.h"

namespace normlab {

// Batch start offsets are drawn and sent to the device this many steps at a time.
inline constexpr int kBatchChunkSteps = 1024;

// Everything that decides the rest of a run, by reference to the trainer's own. The
// model draws no random numbers after its initialisation, so torch's generators are not
// part of it.
struct TrainingState {
  Learner& learner;
  std::mt19937_64& batch_rng;   // as it stands after drawing batch_starts
  torch::Tensor& batch_starts;  // the chunk of batch offsets the last step's batch came from
  RunRecord& run;               // its points up to the step
};

// The training data as checkpoints name it: a changed corpus, or a tokenizer trained
// differently, gives other token ids. Read on the host, before the ids move to a device.
std::string data_fingerprint(const Dataset& data);

// The checkpoint of `state` at its record's last step, as the file's bytes.
std::string checkpoint_bytes(const TrainingState& state, const std::string& data_fingerprint);

// Overwrites `state` with the checkpoint at `path`: the learner's tensors, the sampler and
// the record's points (the rest of the record stays). batch_starts comes back on the CPU.
// UserError naming the file when its payload is damaged, was made from other training
// data than `data_fingerprint`, or does not fit the learner.
void restore_checkpoint(const std::filesystem::path& path, const std::string& data_fingerprint, TrainingState& state);

}  // namespace normlab
