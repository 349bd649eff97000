#pragma once
// Token ids split into training and held-out sets, with batch sampling and the
// unigram baseline.
#include <torch/torch.h>

#include <cstdint>
#include <random>
#include <vector>

namespace normlab {

struct Batch {
  torch::Tensor inputs;   // (batch, context) int64
  torch::Tensor targets;  // inputs shifted by one
};

// (batch, context + 1) token windows -> inputs and next-token targets.
Batch split_windows(const torch::Tensor& windows);

class Dataset {
 public:
  // Every `kHeldoutEvery`-th chunk of `chunk_tokens` ids is held out, so both sets
  // come from the whole corpus. UserError when either set is too small for `context`.
  Dataset(const std::vector<int>& ids, int vocab_size, int context,
          int chunk_tokens = kChunkTokens);

  static constexpr int kChunkTokens = 2048;
  static constexpr int kHeldoutEvery = 10;

  // Random windows from the training set, drawn from `rng`.
  Batch sample_train(int batch_size, std::mt19937_64& rng) const;
  // The same evenly spaced held-out windows on every call.
  std::vector<Batch> heldout_batches(int batch_size, int count) const;

  // Held-out cross-entropy (nats) of predicting every token by its add-one smoothed
  // training-set frequency.
  double unigram_baseline() const;

  std::int64_t train_tokens() const { return train_.numel(); }
  std::int64_t heldout_tokens() const { return heldout_.numel(); }
  const torch::Tensor& train_ids() const { return train_; }
  const torch::Tensor& heldout_ids() const { return heldout_; }

 private:
  Batch windows(const torch::Tensor& ids, const std::vector<std::int64_t>& starts) const;

  torch::Tensor train_;
  torch::Tensor heldout_;
  int vocab_size_;
  int context_;
};

}  // namespace normlab
