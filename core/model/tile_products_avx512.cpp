// Built with AVX-512 (core/model/CMakeLists.txt): ATen's 32 x 32 bf16 transpose in registers,
// which every CPU with AMX can run.
#include <ATen/cpu/vec/vec.h>
#include <algorithm>
#include <cstdint>

namespace normlab::detail {

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

}  // namespace normlab::detail
