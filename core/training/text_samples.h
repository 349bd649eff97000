#pragma once
// The text a run writes: fixed held-out prompts, the same for every run on a corpus, and
// each one continued greedily (the most likely token each time) and by sampling. A model
// blind to its context writes one frequent token again and again greedily, and frequent
// words in any order when sampled. Sampling draws from generators of its own, seeded by
// (run seed, step, prompt), so the text is the same across a resume and training draws
// nothing it would not draw without it.
#include <cstdint>
#include <functional>
#include <torch/torch.h>
#include <vector>

#include "core/runs/config.h"

namespace normlab {

inline constexpr int kPromptCount = 3;
inline constexpr int kPromptTokens = 24;
inline constexpr int kContinuationTokens = 40;

// kPromptCount windows of the held-out ids (on any device), at a quarter, half and three
// quarters of the split, each kPromptTokens long or half the context when that is shorter.
std::vector<std::vector<int>> fixed_prompts(const torch::Tensor& heldout_ids, int context);
// What follows each prompt in the held-out text: kContinuationTokens, or as many as the
// context leaves after the prompt.
std::vector<std::vector<int>> fixed_references(const torch::Tensor& heldout_ids, int context);

// Prompt i followed by reference i, one row each: the batch whose true next tokens a run's
// text shades by their probability. Undefined when the references differ in length.
torch::Tensor prompts_with_references(const std::vector<std::vector<int>>& prompts,
                                      const std::vector<std::vector<int>>& references);

// Whether a run of `config` records its text at its `evaluation`-th evaluation (0: the one
// before the first step), which comes at `step`: every text_every-th, and the last.
bool records_text(const TrainConfig& config, int evaluation, int step);
// How many of a whole run's evaluations record text.
int text_recordings(const TrainConfig& config);

// The seed of prompt `prompt`'s samples at evaluation `step` of a run seeded `run_seed`.
std::uint64_t sample_seed(std::uint64_t run_seed, int step, int prompt);

// A model continuing rows of tokens. start: (rows, time) int64 ids on the model's device,
// forgetting any before -> (rows, vocab) next-token logits; next: (rows, 1), the tokens just
// chosen, after those already seen -> the same. `context` is the most start and next see
// together: past it, start is called again with the last `context` tokens.
struct Decoder {
  std::function<torch::Tensor(const torch::Tensor&ids)> start, next;
  int context = 0;
};

struct Continuation {
  std::vector<int> greedy;
  std::vector<int> sampled;
};

// Each prompt continued `tokens` tokens both ways; prompt i's samples drawn at
// `temperature` from a generator seeded seeds[i].
// Prompts of one length are continued together, in one batch. On a CUDA device, by
// continue_prompts_on_device.
std::vector<Continuation> continue_prompts(const Decoder& decoder, const std::vector<std::vector<int>>& prompts,
                                           int tokens, double temperature, const std::vector<std::uint64_t>& seeds,
                                           torch::Device device);

// The same, every token chosen on the model's device, for a GPU: no host sync per token,
// and one read of all the tokens at the end (`host_reads`, when given, counts it).
// Greedy tokens are the logits' argmax there, as on the host. Samples are drawn by the
// Gumbel-max trick, argmax(logits / temperature + G), with G = -log(-log u) and u a hash
// of (seeds[i], position, token) computed there: no generator state, the same text across
// a resume, but other draws than continue_prompts's generator makes.
std::vector<Continuation> continue_prompts_on_device(const Decoder& decoder,
                                                     const std::vector<std::vector<int>>& prompts, int tokens,
                                                     double temperature, const std::vector<std::uint64_t>& seeds,
                                                     torch::Device device, int* host_reads = nullptr);

}  // namespace normlab
