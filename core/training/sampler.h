#pragma once
// A trained run asked to continue any text: `normlab-cli sample`. The weights come from the
// run's checkpoint (RUN.ckpt: a stopped run's, or a done one's that kept its final weights),
// checked against the run's corpus and tokenizer before any token is decoded. No torch here.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab {

struct SampleRequest {
  std::string prompt;
  int tokens = 40;           // to write after the prompt
  double temperature = 1.0;  // 0: greedy, the likeliest token each time
  std::uint64_t seed = 0;
  int top = 0;  // also the model's likeliest next tokens after the prompt, this many
};

struct NextToken {
  std::string text;    // the token decoded alone
  double model = 0;    // its probability under the model after the prompt
  double unigram = 0;  // under the training frequencies (the baseline's predictor)
};

struct Sample {
  int prompt_tokens = 0;  // the prompt's tokens the model saw (the last `context` at most)
  std::string continuation;
  std::vector<NextToken> top;  // likeliest first
};

// UserError, one line naming the fault: an empty prompt, a missing, damaged or mismatched
// checkpoint (another shape, corpus or tokenizer), bad numbers.
Sample sample_run(const RunRecord& run, const std::filesystem::path& checkpoint, const SampleRequest& request);

}  // namespace normlab
