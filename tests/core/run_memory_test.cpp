// The memory estimate's parts (core/runs/run_cost.h): its parameter count is the model's,
// and runs side by side add up in one process. Against measured peaks: bench/memory-estimate.sh.
#include <algorithm>
#include <gtest/gtest.h>
#include <tuple>

#include "core/model/model.h"
#include "core/runs/run_cost.h"

namespace normlab::test {
namespace {

TEST(MemoryEstimate, CountsTheModelsParameters) {
  for (const auto& [layers, width, context] : {std::tuple{8, 128, 128}, std::tuple{3, 96, 40}}) {
    TrainConfig c;
    c.model.layers = layers;
    c.model.d_model = width;
    c.model.heads = 4;
    c.model.context = context;
    EXPECT_EQ(parameter_count(c.model), double(Gpt(c.model)->parameter_count())) << layers << " x " << width;
  }
}

TEST(MemoryEstimate, GrowsWithTheShapeAndSumsRunsSideBySide) {
  TrainConfig small, wide;
  wide.model.d_model = 1024;
  wide.model.heads = 16;
  const MemoryEstimate s = estimate_memory(small), w = estimate_memory(wide);
  EXPECT_GT(w.weights, 8 * s.weights);
  EXPECT_GT(w.activations, s.activations);
  EXPECT_EQ(s.total(), s.process + s.weights + std::max(s.activations, s.evaluation));
  EXPECT_DOUBLE_EQ(estimate_memory({small, wide, small}, 1), w.total()) << "one at a time: the largest";
  EXPECT_DOUBLE_EQ(estimate_memory({small, wide, small}, 2), w.total() + s.total() - s.process)
      << "two at once in one process: the two largest, the process once";
}

}  // namespace
}  // namespace normlab::test
