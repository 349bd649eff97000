#pragma once
// The model's last step, the output projection and the cross-entropy, fused and taken a
// few hundred positions at a time: the (positions, vocab) logits of the whole batch, 16.8 MB
// at the CPU scale and 134 MB at full scale, never exist at once. With gradients, each
// chunk's gradient is made in the same pass, while its logits are at hand, and kept for
// backward: the loss and the gradients equal the unfused ones within fp32 rounding.
#include <functional>
#include <torch/torch.h>

namespace normlab {

// Positions per chunk: 256 x 8192 fp32 logits are 8 MB, which stay in cache between the
// product that makes them and the passes over them.
inline constexpr std::int64_t kLossChunkPositions = 256;

// Whether the calling thread's models use the fused loss (on) or materialise the logits
// and call cross_entropy (off, as before version 10 of the run files). Per thread.
void set_fused_loss(bool on);
bool fused_loss();

// Mean cross-entropy, nats, of softmax(x Wᵀ) for (..., width) hidden states x, the
// (vocab, width) output weight W and (...) next tokens. `each_chunk`, when given, sees each
// chunk's (positions, vocab) fp32 logits, in order, for what else is read off them
// (evaluation's prediction tally). Products through linear.h's product().
torch::Tensor output_loss(const torch::Tensor& hidden, const torch::Tensor& weight, const torch::Tensor& targets,
                          const std::function<void(const torch::Tensor& logits)>& each_chunk = {});

}  // namespace normlab
