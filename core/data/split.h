#pragma once
// Which tokens are held out: every kHeldoutEvery-th chunk of kChunkTokens ids of the
// corpus, so both sets come from the whole text. The dataset splits by this rule, and the
// corpora's listing measures its baseline on the same split. No torch.
#include <cstddef>
#include <vector>

namespace normlab {

inline constexpr int kChunkTokens = 2048;
inline constexpr int kHeldoutEvery = 10;

// Whether chunk number `chunk` (0-based) is held out.
inline bool is_heldout_chunk(std::size_t chunk) { return chunk % kHeldoutEvery == kHeldoutEvery - 1; }

// The unigram baseline over the whole held-out split, nats per token: each held-out token
// predicted by its add-one smoothed frequency among the training tokens.
double unigram_baseline(const std::vector<int>& ids, int vocab_size, int chunk_tokens = kChunkTokens);

}  // namespace normlab
