// Built with AVX-512 (core/model/CMakeLists.txt): one head of one sequence's causal
// attention, forward and backward, as small register-blocked products over the lower
// triangle only, with ATen's AVX-512 exp_u20 (the polynomial of its own softmax).
#include <ATen/cpu/vec/vec.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "causal_attention.h"

namespace normlab::detail {

namespace {
using Vec = at::vec::Vectorized<float>;
constexpr std::int64_t kWidth = 16;  // floats in a 512-bit register
constexpr int kRows = 4;             // rows of a product's tile, and of a strip of scores

__mmask16 tail_mask(std::int64_t left) { return __mmask16(left >= kWidth ? 0xffffu : (1u << left) - 1u); }

// C(r, c) = Σ_{k in [k0, k1)} A(r, k) B(k, c) (or += with `accumulate`) for R rows and NV
// 16-float columns of C, the last masked. A(r, k) = a[r·a_row + k·a_k]: a row-major A, or
// with a_row = 1 a transposed one, read in place; B's rows are contiguous.
template <int R, int NV>
void tile(const float* a, std::int64_t a_row, std::int64_t a_k, const float* b, std::int64_t ldb, float* c,
          std::int64_t ldc, std::int64_t k0, std::int64_t k1, __mmask16 last, bool accumulate) {
  __m512 sum[R][NV];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? last : __mmask16(0xffff);
      sum[r][v] = accumulate ? _mm512_maskz_loadu_ps(m, c + r * ldc + v * kWidth) : _mm512_setzero_ps();
    }
  }
  for (std::int64_t k = k0; k < k1; ++k) {
    const float* row = b + k * ldb;
    __m512 bv[NV];
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v)
      bv[v] = v == NV - 1 ? _mm512_maskz_loadu_ps(last, row + v * kWidth) : _mm512_loadu_ps(row + v * kWidth);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * a_row + k * a_k]);
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) sum[r][v] = _mm512_fmadd_ps(av, bv[v], sum[r][v]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < NV; ++v) {
      const __mmask16 m = v == NV - 1 ? last : __mmask16(0xffff);
      _mm512_mask_storeu_ps(c + r * ldc + v * kWidth, m, sum[r][v]);
    }
  }
}

template <int R>
void tile_columns(int vectors, const float* a, std::int64_t a_row, std::int64_t a_k, const float* b, std::int64_t ldb,
                  float* c, std::int64_t ldc, std::int64_t k0, std::int64_t k1, __mmask16 last, bool accumulate) {
  switch (vectors) {
    case 1: return tile<R, 1>(a, a_row, a_k, b, ldb, c, ldc, k0, k1, last, accumulate);
    case 2: return tile<R, 2>(a, a_row, a_k, b, ldb, c, ldc, k0, k1, last, accumulate);
    case 3: return tile<R, 3>(a, a_row, a_k, b, ldb, c, ldc, k0, k1, last, accumulate);
    default: return tile<R, 4>(a, a_row, a_k, b, ldb, c, ldc, k0, k1, last, accumulate);
  }
}

// The product above for `rows` ≤ kRows rows of C and any number of columns.
void strip(const float* a, std::int64_t a_row, std::int64_t a_k, const float* b, std::int64_t ldb, float* c,
           std::int64_t ldc, int rows, std::int64_t columns, std::int64_t k0, std::int64_t k1,
           bool accumulate = false) {
  for (std::int64_t c0 = 0; c0 < columns; c0 += 4 * kWidth) {
    const std::int64_t n = std::min<std::int64_t>(4 * kWidth, columns - c0);
    const int vectors = int((n + kWidth - 1) / kWidth);
    const __mmask16 last = tail_mask(n - (vectors - 1) * kWidth);
    switch (rows) {
      case 1: tile_columns<1>(vectors, a, a_row, a_k, b + c0, ldb, c + c0, ldc, k0, k1, last, accumulate); break;
      case 2: tile_columns<2>(vectors, a, a_row, a_k, b + c0, ldb, c + c0, ldc, k0, k1, last, accumulate); break;
      case 3: tile_columns<3>(vectors, a, a_row, a_k, b + c0, ldb, c + c0, ldc, k0, k1, last, accumulate); break;
      default: tile_columns<4>(vectors, a, a_row, a_k, b + c0, ldb, c + c0, ldc, k0, k1, last, accumulate); break;
    }
  }
}

// The first n entries of a score row become exp(scale·s - top), where top is their largest
// scaled score, and the entries n..end zeros; returns top and sets `sum` to the exps' sum.
float exp_row(float* s, std::int64_t n, std::int64_t end, float scale, float& sum) {
  const __m512 lowest = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  const __m512 times = _mm512_set1_ps(scale);
  __m512 most = lowest;
  for (std::int64_t j = 0; j < n; j += kWidth) {
    const __mmask16 m = tail_mask(n - j);
    most = _mm512_max_ps(most, _mm512_mask_mul_ps(lowest, m, _mm512_maskz_loadu_ps(m, s + j), times));
  }
  const float top = _mm512_reduce_max_ps(most);
  const __m512 shift = _mm512_set1_ps(top);
  __m512 total = _mm512_setzero_ps();
  for (std::int64_t j = 0; j < n; j += kWidth) {
    const __mmask16 m = tail_mask(n - j);
    const __m512 x = _mm512_fmsub_ps(_mm512_maskz_loadu_ps(m, s + j), times, shift);
    const __m512 e = _mm512_maskz_mov_ps(m, Vec(x).exp_u20());
    _mm512_mask_storeu_ps(s + j, m, e);
    total = _mm512_add_ps(total, e);
  }
  std::fill(s + n, s + end, 0.0f);
  sum = _mm512_reduce_add_ps(total);
  return top;
}

// The first n entries of a score row become exp(scale·s - lse), the rest up to end zeros.
void probabilities_row(float* s, std::int64_t n, std::int64_t end, float scale, float lse) {
  const __m512 times = _mm512_set1_ps(scale), shift = _mm512_set1_ps(lse);
  for (std::int64_t j = 0; j < n; j += kWidth) {
    const __mmask16 m = tail_mask(n - j);
    const __m512 x = _mm512_fmsub_ps(_mm512_maskz_loadu_ps(m, s + j), times, shift);
    _mm512_mask_storeu_ps(s + j, m, Vec(x).exp_u20());
  }
  std::fill(s + n, s + end, 0.0f);
}

// dst(c, r) = src(r, c) for `rows` × `columns` floats, rows ld_src and ld_dst apart; in
// 4 × 4 blocks of SSE registers, the edges one by one.
void transpose(const float* src, std::int64_t ld_src, std::int64_t rows, std::int64_t columns, float* dst,
               std::int64_t ld_dst) {
  std::int64_t r = 0;
  for (; r + 4 <= rows; r += 4) {
    std::int64_t c = 0;
    for (; c + 4 <= columns; c += 4) {
      const float* from = src + r * ld_src + c;
      __m128 a = _mm_loadu_ps(from), b = _mm_loadu_ps(from + ld_src), e = _mm_loadu_ps(from + 2 * ld_src),
             f = _mm_loadu_ps(from + 3 * ld_src);
      _MM_TRANSPOSE4_PS(a, b, e, f);
      float* to = dst + c * ld_dst + r;
      _mm_storeu_ps(to, a);
      _mm_storeu_ps(to + ld_dst, b);
      _mm_storeu_ps(to + 2 * ld_dst, e);
      _mm_storeu_ps(to + 3 * ld_dst, f);
    }
    for (; c < columns; ++c)
      for (std::int64_t i = r; i < r + 4; ++i) dst[c * ld_dst + i] = src[i * ld_src + c];
  }
  for (; r < rows; ++r)
    for (std::int64_t c = 0; c < columns; ++c) dst[c * ld_dst + r] = src[r * ld_src + c];
}

float dot(const float* a, const float* b, std::int64_t n) {
  __m512 sum = _mm512_setzero_ps();
  for (std::int64_t d = 0; d < n; d += kWidth) {
    const __mmask16 m = tail_mask(n - d);
    sum = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + d), _mm512_maskz_loadu_ps(m, b + d), sum);
  }
  return _mm512_reduce_add_ps(sum);
}

// Each thread's buffers, grown to the largest head it has seen and kept: no allocation
// in a steady step.
std::vector<float>& buffer(int which, std::size_t size) {
  thread_local std::vector<float> buffers[4];
  auto& b = buffers[which];
  if (b.size() < size) b.resize(size);
  return b;
}
}  // namespace

void causal_attention_head_forward(const HeadInput& in, float* y, std::int64_t y_stride, float* lse) {
  const std::int64_t time = in.time, width = in.width, stride = in.stride;
  float* keys_t = buffer(0, std::size_t(width * time)).data();
  float* scores = buffer(1, std::size_t(kRows * time)).data();
  transpose(in.k, stride, time, width, keys_t, time);
  for (std::int64_t i0 = 0; i0 < time; i0 += kRows) {
    const int rows = int(std::min<std::int64_t>(kRows, time - i0));
    const std::int64_t seen = i0 + rows;  // keys any query of the strip sees
    strip(in.q + i0 * stride, stride, 1, keys_t, time, scores, time, rows, seen, 0, width);
    float inverse[kRows];
    for (int r = 0; r < rows; ++r) {
      float sum = 0;
      const float top = exp_row(scores + r * time, i0 + r + 1, seen, in.scale, sum);
      inverse[r] = 1.0f / sum;
      lse[i0 + r] = top + std::log(sum);
    }
    float* out = y + i0 * y_stride;
    strip(scores, time, 1, in.v, stride, out, y_stride, rows, width, 0, seen);
    for (int r = 0; r < rows; ++r) {
      const __m512 scale = _mm512_set1_ps(inverse[r]);
      for (std::int64_t d = 0; d < width; d += kWidth) {
        const __mmask16 m = tail_mask(width - d);
        float* at = out + r * y_stride + d;
        _mm512_mask_storeu_ps(at, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, at), scale));
      }
    }
  }
}

void causal_attention_head_backward(const HeadInput& in, const float* y, const float* dy, std::int64_t y_stride,
                                    const float* lse, float* dq, float* dk, float* dv, std::int64_t d_stride) {
  const std::int64_t time = in.time, width = in.width, stride = in.stride;
  float* keys_t = buffer(0, std::size_t(width * time)).data();
  float* values_t = buffer(1, std::size_t(width * time)).data();
  // A strip's P, dP and dS, and the whole lower triangle of Pᵀ and dSᵀ: dK and dV sum over
  // the queries after each key, which a key's row of the transposes holds side by side.
  float* p = buffer(2, std::size_t(3 * kRows * time)).data();
  float* dp = p + kRows * time;
  float* ds = dp + kRows * time;
  float* p_t = buffer(3, std::size_t(2 * time * time)).data();
  float* ds_t = p_t + time * time;
  transpose(in.k, stride, time, width, keys_t, time);
  transpose(in.v, stride, time, width, values_t, time);
  const __m512 scale = _mm512_set1_ps(in.scale);
  for (std::int64_t i0 = 0; i0 < time; i0 += kRows) {
    const int rows = int(std::min<std::int64_t>(kRows, time - i0));
    const std::int64_t seen = i0 + rows;
    strip(in.q + i0 * stride, stride, 1, keys_t, time, p, time, rows, seen, 0, width);
    strip(dy + i0 * y_stride, y_stride, 1, values_t, time, dp, time, rows, seen, 0, width);
    for (int r = 0; r < rows; ++r) {
      const std::int64_t i = i0 + r;
      float* row = p + r * time;
      probabilities_row(row, i + 1, seen, in.scale, lse[i]);
      // dS = scale · P ∘ (dP - dY·Y): softmax's backward, dY·Y being Σ_j P dP
      const __m512 delta = _mm512_set1_ps(dot(dy + i * y_stride, y + i * y_stride, width));
      for (std::int64_t j = 0; j < seen; j += kWidth) {
        const __mmask16 m = tail_mask(seen - j);
        const __m512 g = _mm512_sub_ps(_mm512_maskz_loadu_ps(m, dp + r * time + j), delta);
        _mm512_mask_storeu_ps(ds + r * time + j, m,
                              _mm512_mul_ps(_mm512_mul_ps(_mm512_maskz_loadu_ps(m, row + j), g), scale));
      }
    }
    strip(ds, time, 1, in.k, stride, dq + i0 * d_stride, d_stride, rows, width, 0, seen);
    transpose(p, time, rows, seen, p_t + i0, time);
    transpose(ds, time, rows, seen, ds_t + i0, time);
  }
  for (std::int64_t j0 = 0; j0 < time; j0 += kRows) {
    const int rows = int(std::min<std::int64_t>(kRows, time - j0));
    // Keys j0.. against the queries from j0 on; the queries before them do not see them.
    strip(p_t + j0 * time, time, 1, dy, y_stride, dv + j0 * d_stride, d_stride, rows, width, j0, time);
    strip(ds_t + j0 * time, time, 1, in.q, stride, dk + j0 * d_stride, d_stride, rows, width, j0, time);
  }
}

}  // namespace normlab::detail
