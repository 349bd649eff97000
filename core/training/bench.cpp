#include "bench.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sys/resource.h>
#include <unistd.h>

#include "core/data/corpus.h"
#include "core/model/linear.h"
#include "core/runs/run_cost.h"
#include "core/system/atomic_file.h"
#include "core/system/paths.h"

#include "layer_stats.h"
#include "learner.h"
#include "stacked_learner.h"
#include "text_samples.h"
#include "trainer.h"
#include "training_state.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

double now_s() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

void synchronize(torch::Device device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

// Best of several square fp32 products, large enough to reach the device's dense rate,
// through the kernel the run's linear layers use (normlab::linear).
double measure_matmul_flops(torch::Device device) {
  const std::int64_t n = device.is_cuda() ? 8192 : 1024;
  auto a = torch::randn({n, n}, torch::TensorOptions().device(device));
  auto b = torch::randn({n, n}, torch::TensorOptions().device(device));
  double best = 1e30;
  for (int rep = 0; rep < 8; ++rep) {
    synchronize(device);
    const double start = now_s();
    auto c = normlab::linear(a, b);
    synchronize(device);
    best = std::min(best, now_s() - start);
  }
  return 2.0 * n * n * n / best;
}

// The record at the run's last step, with made-up numbers: every step, evaluation and
// recorded statistic a checkpoint then carries.
RunRecord record_at_end(const TrainConfig& config) {
  RunRecord run;
  run.config = config;
  for (int step = 1; step <= config.steps; ++step) {
    run.steps.push_back({step, 0.1 * step, config.peak_lr / 3, 5.0 + 1.0 / step, 1e4 + step});
    if (step % config.eval_interval == 0) run.evals.push_back({step, 0.1 * step, 5.0 + 1.0 / step});
    if (!records_layer_stats(config, step)) continue;
    for (const StatisticInfo& statistic : layer_statistics()) {
      if (!records(statistic, config.model)) continue;
      const int layers = statistic.per_layer ? config.model.layers : 0;
      run.add_point({statistic.name, layers, step, std::vector<double>(std::max(layers, 1), 1.0 / step)});
    }
  }
  return run;
}

}  // namespace

CheckpointCost measure_checkpoint(const TrainConfig& config, int repeats) {
  validate(config);
  Environment environment = describe_device(config.device, config.threads);
  const torch::Device device = prepare_device(config, environment);
  Learner learner(config, config.model.vocab, device);
  std::mt19937_64 rng(config.seed);
  torch::Tensor starts = torch::zeros({std::min(kBatchChunkSteps, config.steps), config.batch_size},
                                      torch::TensorOptions(device).dtype(torch::kInt64));
  RunRecord run = record_at_end(config);
  const TrainingState state{learner, rng, starts, run};
  const fs::path file = cache_dir() / ("bench-" + std::to_string(::getpid()) + ".ckpt");
  CheckpointCost cost;
  std::vector<double> serialise, write;
  for (int i = 0; i < repeats; ++i) {
    const double start = now_s();
    const std::string bytes = checkpoint_bytes(state, content_hash("data"));
    const double made = now_s();
    write_file_atomically(file, bytes);
    write.push_back(1e3 * (now_s() - made));
    serialise.push_back(1e3 * (made - start));
    cost.bytes = bytes.size();
  }
  std::error_code ignored;
  fs::remove(file, ignored);
  cost.serialise_ms = median(serialise);
  cost.write_ms = median(write);
  return cost;
}

BenchResult benchmark(const TrainConfig& config, int warmup, int steps, bool cuda_graph, int profiled) {
  validate(config);
  if (steps < 1 || warmup < 0) throw UserError("bench needs at least 1 measured step");
  BenchResult result;
  result.environment = describe_device(config.device, config.threads);
  const torch::Device device = prepare_device(config, result.environment);

  const ModelConfig& m = config.model;
  Learner learner(config, m.vocab, device, cuda_graph);
  result.parameters = learner.parameter_count();
  std::mt19937_64 rng(config.seed);
  std::uniform_int_distribution<std::int64_t> token(0, m.vocab - 1);
  auto random_batch = [&] {
    std::vector<std::int64_t> ids(std::size_t(config.batch_size) * (m.context + 1));
    for (auto& id : ids) id = token(rng);
    return split_windows(torch::tensor(ids, torch::kInt64).view({config.batch_size, m.context + 1}));
  };

  // A text recording (text_samples.h) on random held-out ids: the prompts continued both
  // ways, then the pass that gives the reference text's probabilities.
  const bool text_on = config.text_every > 0;
  const auto heldout = torch::randint(m.vocab, {4 * (m.context + kContinuationTokens)}, torch::kInt64);
  const auto prompts = fixed_prompts(heldout, m.context);
  const auto references = prompts_with_references(prompts, fixed_references(heldout, m.context)).to(device);
  const std::vector<std::uint64_t> seeds(prompts.size(), config.seed);
  auto record_text = [&] {
    continue_prompts(learner.decoder(), prompts, kContinuationTokens, 1.0, seeds, device);
    learner.true_token_probabilities(references);  // on the host: the recording has finished
  };

  for (int i = 0; i < warmup; ++i) learner.step(to_device(random_batch(), device), config.peak_lr);
  if (text_on && warmup > 0) record_text();  // its first shapes set up, as a run's earlier evaluations did
  // Timed in blocks of steps with one sync at the end of each, as training reads losses
  // in bulk: per-step syncs would charge a GPU for idling. Batches are made beforehand.
  // With the layer statistics on, each block is followed by as many recording steps, each
  // timed alone (they copy their statistics to the host), so load hits both alike.
  const bool statistics_on = config.layer_stats_every > 0;
  const int blocks = std::min(steps, 5);
  std::vector<double> times, recorded_times, text_times;
  long faults = 0, all_faults = 0;
  int taken = warmup, counted = 0, first_counted = 0;  // steps the learner took; timed steps whose faults count
  for (int block = 0; block < blocks; ++block) {
    const int count = steps / blocks + (block < steps % blocks ? 1 : 0);
    std::vector<Batch> batches;
    for (int i = 0; i < count; ++i) batches.push_back(to_device(random_batch(), device));
    synchronize(device);
    const long faults_before = minor_page_faults();
    const double start = now_s();
    torch::Tensor loss;
    for (const Batch& batch : batches) loss = learner.step(batch, config.peak_lr);
    loss.item<double>();  // read, so the block has finished
    times.push_back((now_s() - start) / count);
    const long block_faults = minor_page_faults() - faults_before;
    all_faults += block_faults;
    if (taken >= kFaultsSettleSteps) {
      if (counted == 0) first_counted = taken + 1;
      faults += block_faults;
      counted += count;
    }
    taken += count + (statistics_on ? count : 0);
    for (int i = 0; statistics_on && i < count; ++i) {
      const Batch batch = to_device(random_batch(), device);
      synchronize(device);
      const double recorded_start = now_s();
      std::vector<SeriesPoint> statistics;
      learner.step(batch, config.peak_lr, &statistics).item<double>();
      recorded_times.push_back(now_s() - recorded_start);
    }
    if (text_on) {
      synchronize(device);
      const double text_start = now_s();
      record_text();
      text_times.push_back(now_s() - text_start);
    }
  }
  if (statistics_on) {
    result.median_ms_per_recorded_step = 1e3 * median(recorded_times);
    for (int step = 1; step <= config.steps; ++step) result.recorded_steps_per_run += records_layer_stats(config, step);
  }
  if (text_on) {
    result.median_ms_per_text = 1e3 * median(text_times);
    result.text_recordings_per_run = text_recordings(config);
  }
  if (profiled > 0) {
    std::vector<Batch> batches;
    for (int i = 0; i < profiled; ++i) batches.push_back(to_device(random_batch(), device));
    int next = 0;
    result.profile = profile_steps(
        [&] {
          learner.step(batches[next++], config.peak_lr);
          synchronize(device);
        },
        profiled, device.is_cuda());
  }
  const double tokens = double(config.batch_size) * m.context;
  result.model_flop_per_step = step_flops(config);
  result.measured_steps = steps;
  result.median_ms_per_step = 1e3 * median(times);
  result.tokens_per_s = tokens / median(times);
  result.page_faults_per_step = counted > 0 ? double(faults) / counted : double(all_faults) / steps;
  result.page_faults_from_step = counted > 0 ? first_counted : warmup + 1;
  result.achieved_flop_per_s = result.model_flop_per_step / median(times);
  result.matmul_flop_per_s = measure_matmul_flops(device);
  result.cuda_graph = learner.cuda_graph_state();
  result.cuda_graph_recording = learner.recording_graph_state();
  result.cuda_graph_decode = learner.decode_graph_state();
  return result;
}

StackBenchResult benchmark_stack(const TrainConfig& config, int runs, int warmup, int steps, bool cuda_graph) {
  validate(config);
  if (runs < 1 || steps < 1 || warmup < 0) throw UserError("bench --stack needs at least 1 run and 1 measured step");
  StackBenchResult result;
  result.environment = describe_device(config.device, config.threads);
  const torch::Device device = prepare_device(config, result.environment);
  const ModelConfig& m = config.model;
  std::vector<std::unique_ptr<Learner>> single, in_stack;
  std::vector<Learner*> stacked_learners;
  for (int r = 0; r < runs; ++r) {
    TrainConfig run = config;
    run.seed = config.seed + std::uint64_t(r);
    single.push_back(std::make_unique<Learner>(run, m.vocab, device, cuda_graph));
    in_stack.push_back(std::make_unique<Learner>(run, m.vocab, device, /*cuda_graph=*/false));
    stacked_learners.push_back(in_stack.back().get());
  }
  StackedLearner stack(stacked_learners, device, cuda_graph);
  std::mt19937_64 rng(config.seed);
  std::uniform_int_distribution<std::int64_t> token(0, m.vocab - 1);
  auto random_batches = [&] {
    std::vector<Batch> batches;
    for (int r = 0; r < runs; ++r) {
      std::vector<std::int64_t> ids(std::size_t(config.batch_size) * (m.context + 1));
      for (auto& id : ids) id = token(rng);
      batches.push_back(
          to_device(split_windows(torch::tensor(ids, torch::kInt64).view({config.batch_size, m.context + 1})), device));
    }
    return batches;
  };
  const std::vector<double> lrs(std::size_t(runs), config.peak_lr);
  std::vector<double> stacked_times, single_times;
  for (int i = 0; i < warmup + steps; ++i) {
    const auto batches = random_batches();
    synchronize(device);
    double start = now_s();
    stack.step(batches, lrs).sum().item<double>();  // read, so the step has finished
    const double stacked = now_s() - start;
    start = now_s();
    torch::Tensor loss;
    for (int r = 0; r < runs; ++r) loss = single[std::size_t(r)]->step(batches[std::size_t(r)], config.peak_lr);
    loss.item<double>();
    const double alone = now_s() - start;
    if (i < warmup) continue;
    stacked_times.push_back(stacked);
    single_times.push_back(alone);
  }
  result.runs = runs;
  result.measured_steps = steps;
  result.stacked_ms_per_step = 1e3 * median(stacked_times);
  result.single_ms_per_step = 1e3 * median(single_times);
  result.speedup = result.single_ms_per_step / result.stacked_ms_per_step;
  result.cuda_graph = stack.cuda_graph_state();
  return result;
}

std::string to_json_text(const StackBenchResult& r, const TrainConfig& config) {
  const nlohmann::json j = {{"device", r.environment.device_name},
                            {"precision", r.environment.precision},
                            {"libtorch", r.environment.libtorch_version},
                            {"norm", to_string(config.model.norm)},
                            {"layers", config.model.layers},
                            {"d_model", config.model.d_model},
                            {"batch", config.batch_size},
                            {"context", config.model.context},
                            {"stack",
                             {{"runs", r.runs},
                              {"steps", r.measured_steps},
                              {"stacked_ms_per_step", r.stacked_ms_per_step},
                              {"single_ms_per_step", r.single_ms_per_step},
                              {"speedup", r.speedup},
                              {"cuda_graph", r.cuda_graph}}}};
  return j.dump() + "\n";
}

std::string to_json_text(const BenchResult& r, const CheckpointCost& checkpoint, const TrainConfig& config) {
  nlohmann::json j = {{"device", r.environment.device_name},
                      {"precision", r.environment.precision},
                      {"cuda_graph", r.cuda_graph},
                      {"cuda_graph_recording", r.cuda_graph_recording},
                      {"cuda_graph_decode", r.cuda_graph_decode},
                      {"libtorch", r.environment.libtorch_version},
                      {"parameters", r.parameters},
                      {"batch", config.batch_size},
                      {"context", config.model.context},
                      {"steps", r.measured_steps},
                      {"median_ms_per_step", r.median_ms_per_step},
                      {"tokens_per_s", r.tokens_per_s},
                      {"page_faults_per_step", r.page_faults_per_step},
                      {"page_faults_from_step", r.page_faults_from_step},
                      {"model_flop_per_s", r.achieved_flop_per_s},
                      {"matmul_flop_per_s", r.matmul_flop_per_s},
                      {"layer_stats_every", config.layer_stats_every},
                      {"median_ms_per_recorded_step", r.median_ms_per_recorded_step},
                      {"recorded_steps_per_run", r.recorded_steps_per_run},
                      {"run_steps", config.steps},
                      {"text_every", config.text_every},
                      {"median_ms_per_text", r.median_ms_per_text},
                      {"text_recordings_per_run", r.text_recordings_per_run},
                      {"checkpoint_bytes", checkpoint.bytes},
                      {"checkpoint_serialise_ms", checkpoint.serialise_ms},
                      {"checkpoint_write_ms", checkpoint.write_ms},
                      {"checkpoint_interval", config.checkpoint_interval}};
  if (r.profile.steps > 0) {
    nlohmann::json kinds = nlohmann::json::array();  // in kProfileKinds' order
    for (const auto& kind : r.profile.kinds)
      kinds.push_back({{"kind", kind.kind}, {"ms_per_step", kind.ms_per_step}, {"share", kind.share}});
    nlohmann::json operators = nlohmann::json::array();
    for (std::size_t i = 0; i < std::min<std::size_t>(20, r.profile.operators.size()); ++i) {
      const auto& op = r.profile.operators[i];
      operators.push_back({{"name", op.name},
                           {"kind", op.kind},
                           {"ms_per_step", op.ms_per_step},
                           {"calls_per_step", op.calls_per_step}});
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (std::size_t i = 0; i < std::min<std::size_t>(10, r.profile.gpu_kernels.size()); ++i) {
      const auto& kernel = r.profile.gpu_kernels[i];
      kernels.push_back(
          {{"name", kernel.name}, {"ms_per_step", kernel.ms_per_step}, {"calls_per_step", kernel.calls_per_step}});
    }
    j["profile"] = {{"steps", r.profile.steps},
                    {"threads", r.profile.threads},
                    {"ms_per_step", r.profile.ms_per_step},
                    {"kinds", kinds},
                    {"operators", operators},
                    {"gpu_kernels_per_step", r.profile.gpu_kernels_per_step},
                    {"gpu_busy_ms_per_step", r.profile.gpu_busy_ms_per_step},
                    {"gpu_kernels", kernels}};
  }
  return j.dump() + "\n";
}

}  // namespace normlab
