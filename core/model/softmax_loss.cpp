#include "softmax_loss.h"

#include <ATen/Parallel.h>

#include "linear.h"

namespace normlab {

std::optional<double> softmax_loss_in_place(torch::Tensor& logits, const torch::Tensor& targets,
                                            torch::Tensor* rounded) {
  if (!logits.device().is_cpu() || logits.scalar_type() != torch::kFloat || logits.dim() != 2 ||
      !logits.is_contiguous() || targets.scalar_type() != torch::kLong || !cpu_has_avx512())
    return std::nullopt;
  const auto rows = logits.size(0), vocab = logits.size(1);
  TORCH_CHECK(targets.numel() == rows, "softmax_loss_in_place: ", targets.numel(), " targets for ", rows, " rows");
  const auto ids = targets.contiguous();
  const std::int64_t* target = ids.data_ptr<std::int64_t>();
  for (std::int64_t row = 0; row < rows; ++row) {  // the kernel reads row[target]: never outside it
    TORCH_CHECK(target[row] >= 0 && target[row] < vocab, "softmax_loss_in_place: target ", target[row],
                " outside the vocabulary of ", vocab);
  }
  if (rounded) {
    TORCH_CHECK(rounded->scalar_type() == torch::kBFloat16 && rounded->is_contiguous() &&
                    rounded->sizes() == logits.sizes() && rounded->device().is_cpu(),
                "softmax_loss_in_place: the rounded gradient is contiguous bf16 of the logits' shape");
  }
  at::BFloat16* rounded_data = rounded ? rounded->data_ptr<at::BFloat16>() : nullptr;
  std::vector<double> losses(std::size_t(rows), 0.0);
  float* data = logits.data_ptr<float>();
  at::parallel_for(0, rows, 1, [&](std::int64_t first, std::int64_t last) {
    detail::softmax_loss_rows_avx512(data, target, vocab, first, last, losses.data(), rounded_data);
  });
  double sum = 0;
  for (const double loss : losses) sum += loss;
  return sum;
}

}  // namespace normlab
