#include "tile_products.h"

#include <ATen/Parallel.h>
#include <ATen/native/CPUBlas.h>
#include <ATen/record_function.h>
#include <algorithm>
#include <cstring>

namespace normlab {

namespace detail {
// tile_products_avx512.cpp
void transpose_bf16_avx512(const at::BFloat16* from, std::int64_t from_stride, at::BFloat16* to, std::int64_t to_stride,
                           std::int64_t rows, std::int64_t columns);
}  // namespace detail

namespace {

namespace cpublas = at::native::cpublas;

thread_local bool use_tiles = true;

constexpr std::int64_t kBlockColumns = 64;  // the widest block oneDNN's packed layout takes
constexpr std::int64_t kBlockRows = 256;    // rows of the left operand a call multiplies: its
                                            // rows stay in cache over every column block

std::int64_t block_width(std::int64_t columns, std::int64_t block) {
  return std::min(kBlockColumns, columns - block * kBlockColumns);
}

// Block `first`…`first + width` of Mᵀ, for M (N × K) bf16 with contiguous rows. The tiles'
// layout keeps each pair of rows of the operand (K = 2i, 2i + 1) side by side in a column:
// in Mᵀ those are two neighbours in one of M's rows, so, taken as 32-bit words, the packed block
// is M's rows `first`… transposed. Blocked so that a block of words stays in cache.
void pack_transposed_block(const at::BFloat16* m, std::int64_t row_stride, std::int64_t depth, std::int64_t first,
                           std::int64_t width, at::BFloat16* out) {
  static_assert(sizeof(at::BFloat16) * 2 == sizeof(std::uint32_t));
  const auto pairs = depth / 2;
  constexpr std::int64_t kTile = 16;
  for (std::int64_t pair0 = 0; pair0 < pairs; pair0 += kTile) {
    const auto pair_end = std::min(pairs, pair0 + kTile);
    for (std::int64_t column = 0; column < width; ++column) {
      const auto* from = m + (first + column) * row_stride;
      for (std::int64_t pair = pair0; pair < pair_end; ++pair)
        std::memcpy(out + (pair * width + column) * 2, from + pair * 2, sizeof(std::uint32_t));
    }
  }
}

// The calling thread's scratch buffer `slot` as `elements` bf16 values: grown when too small,
// else the same memory again.
torch::Tensor scratch(int slot, std::int64_t elements) {
  thread_local torch::Tensor buffers[2];
  auto& buffer = buffers[slot];
  if (!buffer.defined() || buffer.numel() < elements) {
    buffer = torch::Tensor();  // the old one back before the new one
    buffer = torch::empty({elements}, torch::TensorOptions().dtype(torch::kBFloat16));
  }
  return buffer.narrow(0, 0, elements);
}
constexpr int kOperandSlot = 0, kTransposeSlot = 1;

}  // namespace

bool tile_products_available() {
  static const bool available = at::hasMKLDNN() && cpublas::could_pack(at::kBFloat16);
  return available;
}

void set_tile_products(bool on) { use_tiles = on; }
bool tile_products() { return use_tiles; }

bool TileOperand::fits(std::int64_t rows, std::int64_t columns) {
  return rows > 0 && rows % 2 == 0 && columns > 0 && columns % 16 == 0;
}

TileOperand::TileOperand(const torch::Tensor& right, Storage storage) : rows_(right.size(0)), columns_(right.size(1)) {
  TORCH_CHECK(right.dim() == 2 && fits(rows_, columns_), "a tile operand is K x N with K even, N a multiple of 16");
  TORCH_CHECK(right.device().is_cpu(), "tile operands are on the CPU");
  RECORD_FUNCTION("normlab::tile_operand", std::vector<c10::IValue>());
  torch::NoGradGuard no_grad;
  data_ = storage == Storage::kScratch ? scratch(kOperandSlot, rows_ * columns_)
                                       : torch::empty({rows_ * columns_}, right.options().dtype(torch::kBFloat16));
  auto* out = data_.data_ptr<at::BFloat16>();
  // As it lies when its rows or (a transposed view) its columns are contiguous bf16; else a copy.
  auto source = right.scalar_type() == torch::kBFloat16 ? right : right.to(torch::kBFloat16);
  if (source.stride(1) != 1 && source.stride(0) != 1) source = source.contiguous();
  const bool columns_contiguous = source.stride(1) == 1;
  const auto blocks = (columns_ + kBlockColumns - 1) / kBlockColumns;
  for (std::int64_t block = 0; block < blocks; ++block) {
    const auto first = block * kBlockColumns, width = block_width(columns_, block);
    auto* block_out = out + first * rows_;
    if (columns_contiguous) {  // LibTorch's (oneDNN's) packing kernel
      cpublas::pack(rows_, width, source.stride(0), width, at::kBFloat16, at::kBFloat16,
                    source.data_ptr<at::BFloat16>() + first, block_out);
    } else {
      pack_transposed_block(source.data_ptr<at::BFloat16>(), source.stride(1), rows_, first, width, block_out);
    }
  }
}

void tile_multiply(const torch::Tensor& left, const TileOperand& right, const torch::Tensor& out, bool accumulate) {
  TORCH_CHECK(
      left.scalar_type() == torch::kBFloat16 && left.dim() == 2 && left.stride(1) == 1 && left.size(1) == right.rows(),
      "the left operand of a tile product is M x K bf16 with unit column stride");
  TORCH_CHECK(out.scalar_type() == torch::kFloat && out.dim() == 2 && out.stride(1) == 1 &&
                  out.size(0) == left.size(0) && out.size(1) == right.columns(),
              "a tile product's result is M x N fp32 with unit column stride");
  const auto rows = left.size(0), depth = right.rows(), columns = right.columns();
  if (rows == 0) return;
  RECORD_FUNCTION("normlab::tile_products", std::vector<c10::IValue>());
  const auto* a = left.data_ptr<at::BFloat16>();
  const auto* b = right.data().data_ptr<at::BFloat16>();
  auto* c = out.data_ptr<float>();
  const auto lda = left.stride(0), ldc = out.stride(0);
  const auto row_blocks = (rows + kBlockRows - 1) / kBlockRows;
  const auto column_blocks = (columns + kBlockColumns - 1) / kBlockColumns;
  at::parallel_for(0, row_blocks * column_blocks, 1, [&](std::int64_t begin, std::int64_t end) {
    for (auto task = begin; task < end; ++task) {
      const auto row_block = task / column_blocks, column_block = task % column_blocks;
      const auto first_row = row_block * kBlockRows, first_column = column_block * kBlockColumns;
      const auto width = block_width(columns, column_block);
      cpublas::brgemm(std::min(kBlockRows, rows - first_row), width, depth, lda, width, ldc, accumulate,
                      a + first_row * lda, b + first_column * depth, c + first_row * ldc + first_column);
    }
    cpublas::brgemm_release();  // the tiles' state, so the thread's other work does not carry it
  });
}

torch::Tensor transposed_bf16(const torch::Tensor& m, TileOperand::Storage storage) {
  TORCH_CHECK(m.dim() == 2 && m.scalar_type() == torch::kBFloat16 && m.stride(1) == 1 && m.device().is_cpu(),
              "transposed_bf16 takes a 2-D CPU bf16 tensor with unit column stride");
  auto out = storage == TileOperand::Storage::kScratch ? scratch(kTransposeSlot, m.numel()).view({m.size(1), m.size(0)})
                                                       : torch::empty({m.size(1), m.size(0)}, m.options());
  if (m.numel() == 0) return out;
  if (!tile_products_available()) return out.copy_(m.t());  // no AVX-512 promised without AMX
  RECORD_FUNCTION("normlab::transpose_bf16", std::vector<c10::IValue>());
  detail::transpose_bf16_avx512(m.data_ptr<at::BFloat16>(), m.stride(0), out.data_ptr<at::BFloat16>(), out.stride(0),
                                m.size(0), m.size(1));
  return out;
}

}  // namespace normlab
