#include "dataset.h"

#include <cmath>

#include "core/system/user_error.h"

namespace normlab {

Dataset::Dataset(const std::vector<int>& ids, int vocab_size, int context, int chunk_tokens)
    : vocab_size_(vocab_size), context_(context) {
  std::vector<std::int64_t> train, heldout;
  train.reserve(ids.size());
  for (std::size_t begin = 0, chunk = 0; begin < ids.size(); begin += chunk_tokens, ++chunk) {
    const std::size_t end = std::min(ids.size(), begin + chunk_tokens);
    auto& into = is_heldout_chunk(chunk) ? heldout : train;
    into.insert(into.end(), ids.begin() + begin, ids.begin() + end);
  }
  const std::size_t needed = std::size_t(context) + 2;
  if (heldout.size() < needed || train.size() < needed) {
    throw UserError("corpus too short: it gives " + std::to_string(ids.size()) + " tokens, too few to hold out 1 in " +
                    std::to_string(kHeldoutEvery) + " chunks of " + std::to_string(chunk_tokens) +
                    " and still fill a context of " + std::to_string(context) +
                    " (use a longer text or a shorter context)");
  }
  train_ = torch::tensor(train, torch::kInt64);
  heldout_ = torch::tensor(heldout, torch::kInt64);
}

Batch split_windows(const torch::Tensor& windows) {
  using torch::indexing::Slice;
  const auto context = windows.size(1) - 1;
  return {windows.index({Slice(), Slice(0, context)}).contiguous(),
          windows.index({Slice(), Slice(1, context + 1)}).contiguous()};
}

Batch Dataset::windows(const torch::Tensor& ids, const torch::Tensor& starts) const {
  auto index = starts.unsqueeze(1) + torch::arange(context_ + 1, starts.options()).unsqueeze(0);
  return split_windows(ids.take(index));
}

void Dataset::to(torch::Device device) {
  train_ = train_.to(device);
  heldout_ = heldout_.to(device);
}

torch::Tensor Dataset::sample_starts(int batch_size, int steps, std::mt19937_64& rng) const {
  std::uniform_int_distribution<std::int64_t> pick(0, train_.numel() - context_ - 1);
  auto starts = torch::empty({steps, batch_size}, torch::kInt64);
  auto* out = starts.data_ptr<std::int64_t>();
  for (std::int64_t i = 0; i < starts.numel(); ++i) out[i] = pick(rng);
  return starts;
}

Batch Dataset::train_windows(const torch::Tensor& starts) const { return windows(train_, starts); }

std::vector<Batch> Dataset::heldout_batches(int batch_size, int count) const {
  const std::int64_t last_start = heldout_.numel() - context_ - 1;
  const std::int64_t windows_total = std::int64_t(batch_size) * count;
  std::vector<Batch> batches;
  for (int b = 0; b < count; ++b) {
    std::vector<std::int64_t> starts(batch_size);
    for (int i = 0; i < batch_size; ++i) {
      const std::int64_t k = std::int64_t(b) * batch_size + i;
      starts[i] = windows_total > 1 ? last_start * k / (windows_total - 1) : 0;
    }
    batches.push_back(windows(heldout_, torch::tensor(starts, heldout_.options())));
  }
  return batches;
}

torch::Tensor Dataset::unigram_log_probs() const {
  auto counts = torch::bincount(train_, {}, vocab_size_).to(torch::kFloat64) + 1.0;
  return (counts / counts.sum()).log();
}

double Dataset::unigram_loss(const std::vector<Batch>& batches) const {
  const torch::Tensor log_probs = unigram_log_probs();
  double nats = 0;
  std::int64_t positions = 0;
  for (const Batch& batch : batches) {
    nats -= log_probs.index_select(0, batch.targets.reshape({-1})).sum().item<double>();
    positions += batch.targets.numel();
  }
  return positions > 0 ? nats / double(positions) : std::nan("");
}

double unigram_baseline(const std::vector<int>& ids, int vocab_size, int chunk_tokens) {
  std::vector<double> counts(std::size_t(vocab_size), 1.0);  // add-one, as unigram_log_probs
  double total = vocab_size;
  const auto heldout = [&](std::size_t i) { return is_heldout_chunk(i / std::size_t(chunk_tokens)); };
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (!heldout(i)) counts[std::size_t(ids[i])] += 1, total += 1;
  }
  double nats = 0;
  std::size_t positions = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (heldout(i)) nats -= std::log(counts[std::size_t(ids[i])] / total), ++positions;
  }
  return positions > 0 ? nats / double(positions) : std::nan("");
}

}  // namespace normlab
