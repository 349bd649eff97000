#pragma once
// A trained run asked to continue any text: `normlab-cli sample` and the window's prompt
// box. The weights come from beside the run file: its final weights (RUN.weights, kept by a
// done run) or else its checkpoint (RUN.ckpt: a stopped run's, or a done one's that kept its
// whole state), checked against the run's corpus and tokenizer before any token is decoded.
// No torch here.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
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

// UserError, one line naming the fault, for anything a user can fix: a bad request.
void check_request(const SampleRequest& request);

class TrainedModel {
 public:
  // The run in `run_file` (whose record is `run`) with its weights, on the CPU; `stage`
  // hears each set-up step. UserError naming the fault: no weights beside it, a missing,
  // damaged or mismatched file (another shape, corpus or tokenizer).
  TrainedModel(const RunRecord& run, const std::filesystem::path& run_file,
               const std::function<void(const std::string&)>& stage = {});
  ~TrainedModel();
  TrainedModel(const TrainedModel&) = delete;
  TrainedModel& operator=(const TrainedModel&) = delete;

  // UserError for a bad request or a prompt without tokens. One call at a time.
  Sample sample(const SampleRequest& request) const;

  const std::filesystem::path& weights_file() const;  // the file the weights came from

 private:
  struct Parts;
  std::unique_ptr<Parts> parts_;
};

}  // namespace normlab
