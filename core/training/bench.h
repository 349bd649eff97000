#pragma once
// Training-step speed for one config on one device, and how close it comes to the
// device's own dense matmul rate.
#include "core/runs/run_record.h"

#include "step_profile.h"

namespace normlab {

// The step from which a step's buffers are reused: the heap grows over the first few steps
// (the fused loss's chunks, the optimiser's state, the layers' workspaces) and then stays;
// issue 46 asks for at most 50 minor faults a step after step 10.
inline constexpr int kFaultsSettleSteps = 10;

struct BenchResult {
  Environment environment;
  std::int64_t parameters = 0;
  int measured_steps = 0;
  double median_ms_per_step = 0;
  double tokens_per_s = 0;  // at the median step time
  // Minor page faults of the process a timed step, over the timed steps after the first
  // kFaultsSettleSteps the learner took (warm-up and recording steps included), or over all
  // timed steps where too few came after (page_faults_from_step says which).
  double page_faults_per_step = 0;
  int page_faults_from_step = 0;   // the first step counted, 1-based
  double model_flop_per_step = 0;  // 6 x matmul parameters x tokens + attention
  double achieved_flop_per_s = 0;
  double matmul_flop_per_s = 0;  // measured square fp32 matmul on the same device
  // With the layer statistics on: as many steps again that record them, interleaved with
  // the others so a busy machine slows both alike; 0 when off.
  double median_ms_per_recorded_step = 0;
  int recorded_steps_per_run = 0;  // of config.steps, how many record them
  // With text on (text_every > 0): one text recording as an evaluation makes it, timed
  // alone after each block of steps; 0 when off.
  double median_ms_per_text = 0;
  int text_recordings_per_run = 0;
  // On a CUDA GPU: "replayed" when the timed steps replayed a CUDA graph, "eager" when
  // not asked, else why the capture failed. "eager" on the CPU.
  std::string cuda_graph = "eager";
  std::string cuda_graph_recording = "eager";  // the graph of the steps that record the layer statistics
  std::string cuda_graph_decode = "eager";     // the graph of the text decoder's step (graphed_decode.h)
  // With profile steps asked: where they went, by kind (step_profile.h); steps 0 otherwise.
  StepProfile profile;
};

// Random tokens (speed does not depend on the text); `warmup` steps are not timed. With
// `cuda_graph` (on a CUDA GPU), steps after the first few replay a graph (learner.h).
// With `profiled` > 0, that many more steps run under the profiler, after the timed ones.
BenchResult benchmark(const TrainConfig& config, int warmup, int steps, bool cuda_graph = true, int profiled = 0);

// Runs of one shape stacked (stacked_learner.h) against the same runs stepped one after
// another: `runs` runs of `config` with seeds config.seed, config.seed + 1, ...
struct StackBenchResult {
  Environment environment;
  int runs = 0;
  int measured_steps = 0;
  double stacked_ms_per_step = 0;    // median: one step of every run, stacked
  double single_ms_per_step = 0;     // median: one step of each run alone, one after another, all of them
  double speedup = 0;                // single_ms_per_step / stacked_ms_per_step: above 1, stacking is faster
  std::string cuda_graph = "eager";  // the stack's, as BenchResult's
};

// Random tokens; `warmup` steps of each untimed, then `steps` of each, stacked and single
// steps interleaved so a busy machine slows both alike. UserError when runs < 1.
StackBenchResult benchmark_stack(const TrainConfig& config, int runs, int warmup, int steps, bool cuda_graph = true);
// The result as one JSON object with the run's shape and the field "stack".
std::string to_json_text(const StackBenchResult& result, const TrainConfig& config);

// One checkpoint of a run of `config` (checkpoint.h) at its last step, when its record is
// largest: made and written atomically `repeats` times into the cache folder, whose disk
// is usually the runs' own. Medians.
struct CheckpointCost {
  std::size_t bytes = 0;
  double serialise_ms = 0;  // the state and record into the file's bytes, checksum included
  double write_ms = 0;      // write, fsync and rename
};
CheckpointCost measure_checkpoint(const TrainConfig& config, int repeats = 5);

// The results as one JSON object (`normlab-cli bench --json`).
std::string to_json_text(const BenchResult& result, const CheckpointCost& checkpoint, const TrainConfig& config);

}  // namespace normlab
