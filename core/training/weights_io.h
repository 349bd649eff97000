#pragma once
// A model's parameters as a weights file's bytes (weights.h), and back. Torch: the
// trainer's and the trained model's side, not the UI's.
#include <filesystem>
#include <string>
#include <string_view>

#include "core/data/tokenizer.h"
#include "core/model/model.h"
#include "core/runs/config.h"

namespace normlab {

// `tensor` as a file is to hold it: itself, or a copy of it when it is a view of part of
// a larger storage (a stacked run's tensors are, stacked_learner.h), which the file would
// otherwise hold whole.
torch::Tensor as_stored(const torch::Tensor& tensor);

// What a weights file names its tokenizer by: the content hash of its model file.
std::string tokenizer_hash(const Tokenizer& tokenizer);

// `model`'s parameters and buffers, trained `step` steps as `config` says, as the file's bytes.
std::string weights_bytes(Gpt& model, const TrainConfig& config, const std::string& tokenizer_hash, int step);

// Copies the weights in `bytes` (the file at `path`, named in messages) into `model`, built
// from `config` and tokenized by the tokenizer whose hash is `tokenizer_hash`. UserError
// naming the file and the fault: damaged (any byte), another experiment, another
// tokenizer, another model shape; `model` is then untouched.
void load_weights(std::string_view bytes, const std::filesystem::path& path, const TrainConfig& config,
                  const std::string& tokenizer_hash, Gpt& model);

}  // namespace normlab
