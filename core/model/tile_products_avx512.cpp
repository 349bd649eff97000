// Built with AVX-512 (core/model/CMakeLists.txt), which every CPU with AMX has: the tile path's
// element-wise kernels. ATen's 32 x 32 bf16 transpose in registers, and GELU forward and
// backward with ATen's own vectorised formulas (its erf and exp), writing bf16 for the products
// that come next.
#include <ATen/cpu/vec/vec.h>
#include <ATen/native/cpu/Gelu.h>
#include <algorithm>
#include <cmath>
#include <cstdint>

namespace normlab::detail {

namespace {
using Vec = at::vec::Vectorized<float>;
constexpr std::int64_t kWidth = Vec::size();

void store_bf16(at::BFloat16* out, const Vec& values, std::int64_t count) {
  const __m256i rounded = at::vec::cvtfp32_bf16(__m512(values));  // to nearest even, as LibTorch's cast
  if (count == kWidth) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), rounded);
  } else {
    _mm256_mask_storeu_epi16(out, __mmask16((1u << count) - 1u), rounded);
  }
}
}  // namespace

void transpose_bf16_avx512(const at::BFloat16* from, std::int64_t from_stride, at::BFloat16* to, std::int64_t to_stride,
                           std::int64_t rows, std::int64_t columns) {
  constexpr std::int64_t kBlock = 32;
  for (std::int64_t row = 0; row < rows; row += kBlock) {
    for (std::int64_t column = 0; column < columns; column += kBlock) {
      at::vec::transpose_mxn<at::BFloat16>(
          from + row * from_stride + column, from_stride, to + column * to_stride + row, to_stride,
          static_cast<int>(std::min(kBlock, rows - row)), static_cast<int>(std::min(kBlock, columns - column)));
    }
  }
}

void gelu_to_bf16_avx512(const float* x, at::BFloat16* out, std::int64_t count) {
  for (std::int64_t i = 0; i < count; i += kWidth) {
    const auto n = std::min(kWidth, count - i);
    store_bf16(out + i, at::native::vectorized_gelu(Vec::loadu(x + i, n)), n);
  }
}

void gelu_backward_to_bf16_avx512(const float* x, const float* gradient, at::BFloat16* out, float* column_sums,
                                  std::int64_t rows, std::int64_t columns) {
  // ATen's GELU backward: dy · (Φ(x) + x φ(x))
  const Vec alpha(float(M_SQRT1_2)), beta(float(M_2_SQRTPI * M_SQRT1_2 * 0.5)), half(0.5f), one(1.0f),
      minus_half(-0.5f);
  for (std::int64_t row = 0; row < rows; ++row) {
    const float* x_row = x + row * columns;
    const float* gradient_row = gradient + row * columns;
    at::BFloat16* out_row = out + row * columns;
    for (std::int64_t column = 0; column < columns; column += kWidth) {
      const auto n = std::min(kWidth, columns - column);
      const Vec value = Vec::loadu(x_row + column, n);
      const Vec cdf = half * (one + (value * alpha).erf());
      const Vec pdf = beta * (value * value * minus_half).exp();
      const Vec result = Vec::loadu(gradient_row + column, n) * (cdf + value * pdf);
      store_bf16(out_row + column, result, n);
      (Vec::loadu(column_sums + column, n) + result).store(column_sums + column, n);
    }
  }
}

}  // namespace normlab::detail
