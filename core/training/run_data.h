#pragma once
// What a run's config names besides the model: its corpus, the tokenizer trained on it and
// its token ids split for training and held out. The trainer and the trained model set
// them up the same way. Torch: the dataset holds the ids as tensors.
#include <functional>
#include <string>

#include "core/data/corpus.h"
#include "core/data/dataset.h"
#include "core/data/tokenizer.h"
#include "core/runs/config.h"

namespace normlab {

struct RunData {
  Corpus corpus;
  Tokenizer tokenizer;
  Dataset data;  // on the host
};

// The corpus (config.corpus_path, else the King James text), its tokenizer (cached per
// corpus and vocabulary) and ids; `stage` hears each step as it begins. UserError for a
// corpus that cannot be read or is too short.
RunData prepare_run_data(const TrainConfig& config, const std::function<void(const std::string&)>& stage = {});

}  // namespace normlab
