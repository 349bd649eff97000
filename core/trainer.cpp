#include "trainer.h"

#include <dlfcn.h>

#include <chrono>
#include <cmath>
#include <random>

#include "corpus.h"
#include "cuda_backend.h"
#include "dataset.h"
#include "layer_stats.h"
#include "learner.h"
#include "schedule.h"
#include "tokenizer.h"

namespace normlab {

namespace {

// The GPU's name from the CUDA driver LibTorch already loaded; no CUDA headers needed.
std::string cuda_device_name() {
  using GetName = int (*)(char*, int, int);
  if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD)) {
    auto get_name = reinterpret_cast<GetName>(dlsym(driver, "cuDeviceGetName"));
    char name[256] = {};
    const bool ok = get_name && get_name(name, sizeof name, 0) == 0;
    dlclose(driver);
    if (ok) return name;
  }
  return "CUDA GPU";
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

Environment describe_device(const std::string& device, int threads) {
  Environment env;
  env.app_version = NORMLAB_VERSION;
  env.libtorch_version = libtorch_version();
  const bool has_cuda = load_cuda_backend().loaded && torch::cuda::is_available();
  if (device == "cuda" && !has_cuda) {
    throw UserError("device 'cuda' was asked for, but LibTorch sees no CUDA GPU here; "
                    "use 'auto' or 'cpu'");
  }
  if (device == "cuda" || (device == "auto" && has_cuda)) {
    env.device = "cuda";
    env.device_name = cuda_device_name();
    env.threads = torch::get_num_threads();
  } else {
    env.device = "cpu";
    env.threads = threads > 0 ? threads : torch::get_num_threads();
    env.device_name = "CPU, " + std::to_string(env.threads) + (env.threads == 1 ? " thread" : " threads");
  }
  return env;
}

RunRecord train(const TrainConfig& requested, const TrainCallbacks& callbacks,
                const std::atomic<bool>* cancel) {
  auto stage = [&](const std::string& what) { if (callbacks.on_stage) callbacks.on_stage(what); };
  auto cancelled = [&] { return cancel && cancel->load(std::memory_order_relaxed); };

  validate(requested);
  RunRecord run;
  run.config = requested;
  if (run.config.name.empty()) run.config.name = default_run_name(run.config);
  const TrainConfig& config = run.config;
  run.environment = describe_device(config.device, config.threads);
  const torch::Device device = select_device(run.environment);

  stage("Reading the corpus");
  const Corpus corpus =
      config.corpus_path.empty() ? load_default_corpus() : load_corpus(config.corpus_path);
  stage("Preparing the " + std::to_string(config.model.vocab) +
        "-token BPE tokenizer (trained once per corpus, then cached)");
  const Tokenizer tokenizer = Tokenizer::for_corpus(corpus, config.model.vocab);
  stage("Tokenizing the corpus");
  const Dataset data(encode_corpus(corpus, tokenizer), tokenizer.vocab_size(), config.model.context);
  run.train_tokens = data.train_tokens();
  run.heldout_tokens = data.heldout_tokens();
  run.baseline_loss = data.unigram_baseline();

  Learner learner(config, tokenizer.vocab_size(), device);
  run.parameters = learner.parameter_count();
  std::vector<Batch> heldout = data.heldout_batches(config.batch_size, config.eval_batches);
  for (auto& batch : heldout) batch = to_device(batch, device);
  std::mt19937_64 rng(config.seed);

  const auto start = std::chrono::steady_clock::now();
  auto evaluate = [&](int step) {
    run.evals.push_back({step, seconds_since(start), learner.evaluate(heldout)});
    if (callbacks.on_eval) callbacks.on_eval(run.evals.back(), run);
  };

  run.status = RunStatus::Running;
  if (callbacks.on_start) callbacks.on_start(run);
  stage("Training");
  evaluate(0);
  const double tokens_per_step = double(config.batch_size) * config.model.context;
  for (int step = 1; step <= config.steps; ++step) {
    if (cancelled()) {
      run.status = RunStatus::Stopped;
      run.message = "stopped by the user after " + std::to_string(step - 1) + " steps";
      break;
    }
    const auto step_start = std::chrono::steady_clock::now();
    const Batch batch = data.sample_train(config.batch_size, rng);
    const double lr = learning_rate(step - 1, config.steps, config.warmup_steps, config.peak_lr);
    std::vector<SeriesPoint> statistics;
    const double loss_value =
        learner.step(batch, lr, records_layer_stats(config, step) ? &statistics : nullptr);
    const double step_seconds = seconds_since(step_start);
    run.steps.push_back({step, seconds_since(start), lr, loss_value, tokens_per_step / step_seconds});
    if (callbacks.on_step) callbacks.on_step(run.steps.back());
    for (SeriesPoint& point : statistics) {
      point.step = step;
      run.add_point(point);
      if (callbacks.on_point) callbacks.on_point(point);
    }
    if (!std::isfinite(loss_value)) {
      run.status = RunStatus::Diverged;
      run.message = "training loss became " + std::string(std::isnan(loss_value) ? "NaN" : "infinite") +
                    " at step " + std::to_string(step);
      break;
    }
    if (step % config.eval_interval == 0 || step == config.steps) evaluate(step);
  }
  if (run.status == RunStatus::Running) run.status = RunStatus::Done;
  return run;
}

}  // namespace normlab
