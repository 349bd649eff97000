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
  // Where an operand's packed copy lives: its own tensor, or the calling thread's scratch
  // buffer, grown as needed and kept, for an operand used at once and dropped (an activation
  // packed for one product): a steady step then allocates nothing for it. A scratch operand
  // is valid until the thread's next scratch operand is made.
  enum class Storage { kOwn, kScratch };
  // `right`: K × N, bf16 or fp32 (rounded to bf16), any strides, so a transposed view is
  // packed as it is read. Needs fits(K, N).
  explicit TileOperand(const torch::Tensor& right, Storage storage = Storage::kOwn);
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

// m (R × C, bf16, unit column stride) transposed into a new contiguous C × R tensor, 32 × 32
// blocks at a time in registers (AVX-512, which every CPU with AMX has): the left operand of a
// product that needs mᵀ, such as a weight's gradient gᵀ x.
// With Storage::kScratch the result is in the calling thread's scratch buffer for transposes,
// valid until its next scratch transpose.
torch::Tensor transposed_bf16(const torch::Tensor& m, TileOperand::Storage storage = TileOperand::Storage::kOwn);

}  // namespace normlab
