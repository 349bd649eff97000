#pragma once
// Token ids split into training and held-out sets, with batch sampling and the
// unigram baseline.
#include <cstdint>
#include <random>
#include <torch/torch.h>
#include <vector>

#include "split.h"

namespace normlab {

struct Batch {
  torch::Tensor inputs;   // (batch, context) int64
  torch::Tensor targets;  // inputs shifted by one
};

// (batch, context + 1) token windows -> inputs and next-token targets.
Batch split_windows(const torch::Tensor& windows);

class Dataset {
 public:
  // Every `kHeldoutEvery`-th chunk of `chunk_tokens` ids is held out (split.h), so both
  // sets come from the whole corpus. UserError when either set is too small for `context`.
  Dataset(const std::vector<int>& ids, int vocab_size, int context, int chunk_tokens = kChunkTokens);

  static constexpr int kChunkTokens = normlab::kChunkTokens;
  static constexpr int kHeldoutEvery = normlab::kHeldoutEvery;

  // Moves the token ids to `device`, where batches are then cut without a host copy.
  void to(torch::Device device);
  // Start offsets of `steps` batches of `batch_size` random training windows, drawn from
  // `rng` batch by batch: a (steps, batch_size) int64 tensor on the host.
  torch::Tensor sample_starts(int batch_size, int steps, std::mt19937_64& rng) const;
  // The training windows that start at `starts` (int64, on the ids' device).
  Batch train_windows(const torch::Tensor& starts) const;
  // The same evenly spaced held-out windows on every call.
  std::vector<Batch> heldout_batches(int batch_size, int count) const;

  // The add-one smoothed training-set frequency of each token, as log probabilities: a
  // (vocab) float64 tensor on the ids' device. The frequency predictor the baseline is.
  torch::Tensor unigram_log_probs() const;
  // Cross-entropy (nats) of predicting each target of `batches` by unigram_log_probs(): the
  // baseline for a held-out loss measured on the same batches. Over the held-out batches
  // rather than every held-out token, because a sample of a few thousand tokens can be
  // easier or harder than the whole split (by 0.07 nats at the CPU scale on the KJV).
  double unigram_loss(const std::vector<Batch>& batches) const;

  std::int64_t train_tokens() const { return train_.numel(); }
  std::int64_t heldout_tokens() const { return heldout_.numel(); }
  const torch::Tensor& train_ids() const { return train_; }
  const torch::Tensor& heldout_ids() const { return heldout_; }

 private:
  Batch windows(const torch::Tensor& ids, const torch::Tensor& starts) const;

  torch::Tensor train_;
  torch::Tensor heldout_;
  int vocab_size_;
  int context_;
};

}  // namespace normlab
