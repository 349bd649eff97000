#pragma once
// Adds up, batch by batch on the device, what predictions.h reports: the sum of the
// next-token distributions, of their entropies and of the unigram's losses, in float64.
// One host copy at the end.
#include <torch/torch.h>

#include "predictions.h"

namespace normlab {

class PredictionTally {
 public:
  // `unigram_log_probs`: (vocab) float64 (Dataset::unigram_log_probs), on the logits' device.
  explicit PredictionTally(torch::Tensor unigram_log_probs);

  // The predictions `logits` (..., vocab), of any float type, made for `targets` (...).
  void add(const torch::Tensor& logits, const torch::Tensor& targets);
  PredictionStats result() const;

 private:
  torch::Tensor log_u_;
  torch::Tensor sum_q_;             // (vocab)
  torch::Tensor sum_entropy_;       // scalar
  torch::Tensor sum_unigram_loss_;  // scalar
  std::int64_t positions_ = 0;
};

}  // namespace normlab
