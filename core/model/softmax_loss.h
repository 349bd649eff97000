#pragma once
// The cross-entropy of a chunk of logits and its gradient in one pass over each row, with
// one exp a logit: what log_softmax, then exp_ of its result, did in two (each with an exp
// a logit), which were most of the fused loss's own time (bench --profile's "loss").
#include <optional>
#include <torch/torch.h>

namespace normlab {

// For contiguous fp32 CPU logits (positions, vocab) and their int64 targets (positions),
// replaces each row with softmax(row) - one_hot(target), the gradient of that row's loss,
// and returns the sum of the rows' losses, logsumexp(row) - row[target], in fp64, summed in
// row order whatever the thread count. Returns nullopt, touching nothing, where it does not
// apply (another device or dtype, or a CPU without AVX-512): take the ATen operators then.
// With `rounded` (a contiguous bf16 tensor of the logits' shape), the gradient goes there
// instead, rounded to bf16 as a cast of it would be, in the same pass: what bf16 products
// take next, without a pass that reads the fp32 gradient again; the logits are then left
// holding each row's unnormalised exponentials.
std::optional<double> softmax_loss_in_place(torch::Tensor& logits, const torch::Tensor& targets,
                                            torch::Tensor* rounded = nullptr);

namespace detail {
// The AVX-512 rows [first, last): each row's loss into losses[i]. softmax_loss_avx512.cpp,
// built for AVX-512; call only where the CPU has it.
// With `rounded`, the gradient goes there in bf16 (see softmax_loss_in_place).
void softmax_loss_rows_avx512(float* logits, const std::int64_t* targets, std::int64_t vocab, std::int64_t first,
                              std::int64_t last, double* losses, at::BFloat16* rounded = nullptr);
}  // namespace detail

}  // namespace normlab
