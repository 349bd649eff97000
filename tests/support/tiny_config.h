#pragma once
// The one tiny run every suite trains when it needs a real one: two layers of width 32,
// two heads, a 256-token vocabulary, on the CPU. How long and how wide each suite's run
// is, is one of the two shapes below.
#include <filesystem>

#include "core/runs/config.h"

namespace normlab::test {

struct TinyRun {
  int steps;
  int context;     // tokens a sequence
  int batch_size;  // sequences a step
  int warmup_steps;
  int eval_interval;
  int eval_batches;
  int threads;  // 0: the lab divides the cores between the runs that train side by side
  double peak_lr;
};

// The engine's tests: 150 steps of 8 sequences of 32 tokens, about 100 steps a second on
// one thread.
inline constexpr TinyRun kEngineRun{150, 32, 8, 10, 50, 4, 1, 3e-3};

// The lab's and the window's: 4 sequences of 16 tokens, a step in milliseconds, evaluated
// every 10 steps; the threads left to the lab, the default peak learning rate.
inline TinyRun lab_run(int steps) { return {steps, 16, 4, 5, 10, 2, 0, TrainConfig{}.peak_lr}; }

inline TrainConfig tiny_config(const std::filesystem::path& corpus, const TinyRun& run = kEngineRun) {
  TrainConfig c;
  c.model.layers = 2;
  c.model.d_model = 32;
  c.model.heads = 2;
  c.model.context = run.context;
  c.model.vocab = 256;
  c.batch_size = run.batch_size;
  c.steps = run.steps;
  c.warmup_steps = run.warmup_steps;
  c.eval_interval = run.eval_interval;
  c.eval_batches = run.eval_batches;
  c.threads = run.threads;
  c.peak_lr = run.peak_lr;
  c.device = "cpu";
  c.cpu_matmul = "onednn";  // not auto, which would time steps in every test (matmul_choice_test.cpp)
  c.corpus_path = corpus.string();
  return c;
}

}  // namespace normlab::test
