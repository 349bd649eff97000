// Built with AVX-512 (core/model/CMakeLists.txt) and ATen's AVX-512 vector type, whose
// exp_u20 is the polynomial ATen's own softmax and flash attention use (about 20 ulp).
#include <ATen/cpu/vec/vec.h>
#include <cmath>
#include <limits>

#include "softmax_loss.h"

namespace normlab::detail {

namespace {
using Vec = at::vec::Vectorized<float>;
constexpr std::int64_t kWidth = Vec::size();

__mmask16 tail_mask(std::int64_t left) { return __mmask16((1u << left) - 1u); }
}  // namespace

void softmax_loss_rows_avx512(float* logits, const std::int64_t* targets, std::int64_t vocab, std::int64_t first,
                              std::int64_t last, double* losses, at::BFloat16* rounded) {
  const std::int64_t whole = vocab - vocab % kWidth;
  const __mmask16 tail = tail_mask(vocab - whole);
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  for (std::int64_t row = first; row < last; ++row) {
    float* x = logits + row * vocab;
    // 1: the row's largest logit, so no exp overflows
    __m512 most = lowest;
    for (std::int64_t j = 0; j < whole; j += kWidth) most = _mm512_max_ps(most, _mm512_loadu_ps(x + j));
    if (tail) most = _mm512_max_ps(most, _mm512_mask_loadu_ps(lowest, tail, x + whole));
    const float top = _mm512_reduce_max_ps(most);
    const float target_logit = x[targets[row]];
    // 2: exp(x - top) in place, and its sum
    const Vec shift(top);
    __m512 total = _mm512_setzero_ps();
    for (std::int64_t j = 0; j < whole; j += kWidth) {
      const __m512 e = (Vec::loadu(x + j) - shift).exp_u20();
      _mm512_storeu_ps(x + j, e);
      total = _mm512_add_ps(total, e);
    }
    if (tail) {
      const __m512 e = (Vec(_mm512_maskz_loadu_ps(tail, x + whole)) - shift).exp_u20();
      _mm512_mask_storeu_ps(x + whole, tail, e);
      total = _mm512_mask_add_ps(total, tail, total, e);
    }
    const float sum = _mm512_reduce_add_ps(total);
    losses[row] = double(top) + std::log(double(sum)) - double(target_logit);
    // 3: normalised, less one at the target: the loss's gradient with respect to the row
    const __m512 scale = _mm512_set1_ps(1.0f / sum);
    if (rounded) {  // into bf16, rounded to nearest even as LibTorch's cast rounds
      at::BFloat16* out = rounded + row * vocab;
      for (std::int64_t j = 0; j < whole; j += kWidth)
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j),
                            at::vec::cvtfp32_bf16(_mm512_mul_ps(_mm512_loadu_ps(x + j), scale)));
      if (tail) {
        const __m256i last_part = at::vec::cvtfp32_bf16(_mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + whole), scale));
        _mm256_mask_storeu_epi16(out + whole, tail, last_part);
      }
      out[targets[row]] = at::BFloat16(x[targets[row]] * (1.0f / sum) - 1.0f);
      continue;
    }
    for (std::int64_t j = 0; j < whole; j += kWidth)
      _mm512_storeu_ps(x + j, _mm512_mul_ps(_mm512_loadu_ps(x + j), scale));
    if (tail) _mm512_mask_storeu_ps(x + whole, tail, _mm512_mul_ps(_mm512_maskz_loadu_ps(tail, x + whole), scale));
    x[targets[row]] -= 1.0f;
  }
}

}  // namespace normlab::detail
