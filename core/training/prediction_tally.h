#pragma once
// Adds up, batch by batch on the device, what predictions.h reports: the sum of the
// next-token distributions, and of their entropies, in float64.
// One host copy at the end.
#include <torch/torch.h>

#include "predictions.h"

namespace normlab {

class PredictionTally {
 public:
  // `unigram_log_probs`: (vocab) float64 (Dataset::unigram_log_probs), on the logits' device.
  explicit PredictionTally(torch::Tensor unigram_log_probs);

  // The predictions `logits` (..., vocab), of any float type.
  void add(const torch::Tensor& logits);
  PredictionStats result() const;

 private:
  torch::Tensor log_u_;
  torch::Tensor sum_q_;        // (vocab)
  torch::Tensor sum_entropy_;  // scalar
  std::int64_t positions_ = 0;
};

}  // namespace normlab
