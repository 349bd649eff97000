#pragma once
// bf16 products on the CPU's AMX tiles, through oneDNN's brgemm microkernel as LibTorch exports
// it (at::native::cpublas::brgemm and pack). The left operand is bf16 rows as they lie; the
// right one is packed once into the tiles' layout (TileOperand); the product accumulates in
// fp32 and is written, or added, straight into the caller's fp32 buffer. So no product is
// rounded to bf16 and widened again, a bias goes in as the buffer's starting value, and a
// result can land in a slice of a larger tensor. LibTorch's bf16 linear (oneDNN's inner
// product), the path on CPUs without AMX, returns bf16 that must be widened: at the CPU scale's
// shapes on an AMX Xeon the widening and the bias took as long as the product itself.
#include <cstdint>
#include <torch/torch.h>

namespace normlab {

// Whether this CPU and LibTorch multiply bf16 on tiles (AMX-BF16, oneDNN's ukernel).
bool tile_products_available();
// Whether the calling thread's bf16 products use the tiles where they are available. Per
// thread, like the other matmul settings; on by default (off gives the inner-product path
// back, for tests and comparisons).
void set_tile_products(bool on);
bool tile_products();

// A K × N right operand in the tiles' layout: its columns in blocks of up to 64, each block's
// rows interleaved in pairs, bf16.
class TileOperand {
 public:
  TileOperand() = default;
  // `right`: K × N, bf16 or fp32 (rounded to bf16), any strides, so a transposed view is
  // packed as it is read. Needs fits(K, N).
  explicit TileOperand(const torch::Tensor& right);
  // Whether a K × N operand can be packed: K even and N a multiple of 16.
  static bool fits(std::int64_t rows, std::int64_t columns);
  bool defined() const { return data_.defined(); }
  std::int64_t rows() const { return rows_; }
  std::int64_t columns() const { return columns_; }
  const torch::Tensor& data() const { return data_; }

 private:
  torch::Tensor data_;  // block j (columns 64j…) at j · 64 · K, each rows() × its width
  std::int64_t rows_ = 0, columns_ = 0;
};

// out = left · right, or out += left · right when `accumulate`: left M × K bf16 and out M × N
// fp32, each with unit column stride (row slices of larger tensors will do). Uses the calling
// thread's LibTorch threads.
void tile_multiply(const torch::Tensor& left, const TileOperand& right, const torch::Tensor& out, bool accumulate);

}  // namespace normlab
