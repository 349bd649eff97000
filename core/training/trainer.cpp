#include "trainer.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <string_view>

#include "core/data/corpora.h"
#include "core/device/cuda_backend.h"
#include "core/system/host.h"
#include "core/system/memory.h"

#include "checkpoint.h"
#include "layer_recorder.h"
#include "layer_stats.h"
#include "learner.h"
#include "prediction_tally.h"
#include "run_data.h"
#include "schedule.h"
#include "stacked_learner.h"
#include "text_samples.h"
#include "training_state.h"
#include "weights.h"
#include "weights_io.h"

namespace normlab {
namespace fs = std::filesystem;

namespace {

// A GPU's losses are read at least this often, so the chart still moves live.
constexpr double kLossReadInterval_s = 0.03;
constexpr std::size_t kMaxPendingSteps = 512;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// How long the run has trained: the wall time of its last point.
double wall_time(const RunRecord& run) {
  return std::max(run.steps.empty() ? 0.0 : run.steps.back().wall_s, run.evals.empty() ? 0.0 : run.evals.back().wall_s);
}

}  // namespace

Environment describe_device(const std::string& device, int threads) {
  Environment env;
  env.app_version = NORMLAB_VERSION;
  env.libtorch_version = libtorch_version();
  env.engine = engine_commit();
  env.cpu = cpu_model();
  // Without a driver there is no GPU to find: the backend is not even loaded.
  const bool has_cuda =
      device != "cpu" && nvidia_driver_present() && load_cuda_backend().loaded && torch::cuda::is_available();
  if (device == "cuda" && !has_cuda) {
    throw UserError(
        "device 'cuda' was asked for, but LibTorch sees no CUDA GPU here; "
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

namespace {

// The record a run starts from: its config checked and named, the device described. A
// checkpoint that cannot continue it is refused here, before the corpus is read; it is
// read again, with the data compared, once it is.
RunRecord checked_record(const TrainConfig& requested, const fs::path* checkpoint) {
  validate(requested);
  RunRecord run;
  run.config = requested;
  if (run.config.name.empty()) run.config.name = default_run_name(run.config);
  run.environment = describe_device(run.config.device, run.config.threads);
  if (checkpoint) resumable_checkpoint(*checkpoint, run.config);
  return run;
}

// One run, fresh or from a checkpoint, from its set-up to its end. The constructor sets
// it up; run(), called once, trains it and hands its record over. A stack of runs
// (train_stacked) takes the steps itself and drives each run's bookkeeping through
// begin(), stops_before(), after_step() and end() instead, as run() does.
class TrainingRun {
 public:
  // `own_cuda_graph` false: the learner replays no CUDA graph of its own (a stack's run).
  TrainingRun(const TrainConfig& requested, const fs::path* checkpoint, const TrainCallbacks& callbacks,
              const std::atomic<bool>* cancel, bool own_cuda_graph = true);
  RunRecord run();

  // Before the first step: the clocks, on_start, the evaluation at step 0 (resuming: a
  // save). Returns the first step to take.
  int begin();
  // Cancelled before `step`: then the run has stopped (its pending losses read) and
  // only end() is left.
  bool stops_before(int step);
  double lr_at(int step) const;
  Batch batch_for(int step);
  // Step `step`'s update of `batch` at `lr` through this run's own learner, its layer
  // statistics left in `statistics` (on the device) when the step records them.
  torch::Tensor step_alone(int step, const Batch& batch, double lr, torch::Tensor& statistics);
  // What follows a step's update: its loss (a scalar tensor on the device) and its layer
  // statistics (after_update's vector on the device; undefined when the step recorded
  // none) read together when due, then the evaluation or save it brings. False when the
  // run diverged at it or at a step before: then only end() is left.
  bool after_step(int step, double lr, const torch::Tensor& loss, const torch::Tensor& statistics);
  // The run's end (its checkpoint and weights when kept), its record handed over.
  RunRecord end();
  Learner& learner() { return learner_; }
  torch::Device device() const { return device_; }

 private:
  // Losses wait on the device and are read together: each read is a host sync, which
  // would leave a GPU idle once per step. The CPU computes synchronously, so there every
  // step is read at once. A step's layer statistics wait with its loss and are read in
  // the same copy.
  struct PendingStep {
    int step;
    double lr;
    torch::Tensor loss;
    torch::Tensor statistics;  // after_update's vector (layer_recorder.h); undefined when not recorded
  };

  void stage(const std::string& what) const;
  bool cancelled() const;
  RunData prepare_data();
  bool take_step(int step);
  bool read_losses();
  void record_statistics(int step, std::vector<SeriesPoint>&& statistics);
  void evaluate(int step, bool with_checkpoint);
  void prepare_references();
  void record_text(int step);
  void save(bool with_checkpoint);
  void write_checkpoint();
  void stop_before(int step);
  void finish();

  // Set up in this order, each from the ones before it.
  const TrainCallbacks& callbacks_;
  const std::atomic<bool>* const cancel_;
  const fs::path* const checkpoint_;  // the one resumed from; null for a fresh run
  RunRecord record_;
  const TrainConfig& config_;  // the record's
  const torch::Device device_;
  std::string fingerprint_;  // the training data as checkpoints name it, taken by prepare_data
  RunData run_data_;
  const Tokenizer& tokenizer_;
  const Dataset& data_;                          // on the device
  const torch::Tensor unigram_log_probs_;        // on the device, for context use and frequency mismatch
  const std::vector<std::vector<int>> prompts_;  // the text's fixed prompts, when the run records text
  torch::Tensor prompted_references_;            // each prompt and its reference, (prompts, time) on the device
  Learner learner_;
  std::vector<Batch> heldout_;
  // The run's batches, drawn a chunk of steps at a time in the order a step-by-step draw
  // would take them, and sent to the device once per chunk rather than once per step.
  std::mt19937_64 rng_;
  torch::Tensor starts_;  // the chunk the current step's batch comes from
  TrainingState state_;
  const double tokens_per_step_;
  const bool read_every_step_;

  // Set as training starts.
  std::chrono::steady_clock::time_point start_;      // a resumed run's is as far back as it had trained
  std::chrono::steady_clock::time_point last_read_;  // when losses were last read; the steps since then share that time
  std::chrono::steady_clock::time_point last_save_, last_checkpoint_;
  int checkpointed_ = 0;  // the step of the last checkpoint, or where this process began
  std::vector<PendingStep> pending_;
};

// The set-up: the record, the device, the corpus, its tokenizer and token ids, the learner,
// the held-out batches and, resuming, the checkpoint's state.
TrainingRun::TrainingRun(const TrainConfig& requested, const fs::path* checkpoint, const TrainCallbacks& callbacks,
                         const std::atomic<bool>* cancel, bool own_cuda_graph)
    : callbacks_(callbacks),
      cancel_(cancel),
      checkpoint_(checkpoint),
      record_(checked_record(requested, checkpoint)),
      config_(record_.config),
      device_(prepare_device(config_, record_.environment)),
      run_data_(prepare_data()),
      tokenizer_(run_data_.tokenizer),
      data_(run_data_.data),
      unigram_log_probs_(data_.unigram_log_probs()),
      prompts_(config_.text_every > 0 ? fixed_prompts(data_.heldout_ids(), config_.model.context)
                                      : std::vector<std::vector<int>>{}),
      learner_(config_, tokenizer_.vocab_size(), device_, own_cuda_graph),
      rng_(config_.seed),
      state_{learner_, rng_, starts_, record_},
      tokens_per_step_(double(config_.batch_size) * config_.model.context),
      read_every_step_(!device_.is_cuda()) {
  record_.parameters = learner_.parameter_count();
  for (const auto& prompt : prompts_) record_.text.prompts.push_back(tokenizer_.decode(prompt));
  if (!prompts_.empty()) prepare_references();
  heldout_ = data_.heldout_batches(config_.batch_size, config_.eval_batches);
  record_.baseline_loss = data_.unigram_loss(heldout_);  // on the positions the held-out loss averages
  if (checkpoint_) {
    stage("Resuming from the checkpoint");
    restore_checkpoint(*checkpoint_, fingerprint_, state_);
    starts_ = starts_.to(device_);
  }
  // Room for every row at once: grown by doubling, each outgrown buffer would stay in the
  // process as free memory (keep_freed_memory_for_reuse), as large again as the record.
  // Pages are only touched as the steps fill them.
  record_.steps.reserve(std::size_t(config_.steps));
  record_.evals.reserve(std::size_t(config_.steps / config_.eval_interval) + 2);
}

void TrainingRun::stage(const std::string& what) const {
  if (callbacks_.on_stage) callbacks_.on_stage(what);
}

bool TrainingRun::cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }

// The corpus as token ids on the run's device; their counts and fingerprint are taken on
// the host first.
RunData TrainingRun::prepare_data() {
  RunData prepared = prepare_run_data(config_, [this](const std::string& what) { stage(what); });
  const Dataset& data = prepared.data;
  record_.train_tokens = data.train_tokens();
  record_.heldout_tokens = data.heldout_tokens();
  record_.corpus_name = corpus_name(config_.corpus_path);
  record_.corpus_hash = prepared.corpus.hash;
  fingerprint_ = data_fingerprint(data);
  prepared.data.to(device_);  // batches are cut where the model is
  return prepared;
}

// Trains from the record's last step to the end, stopping early when cancelled or when
// the loss stops being finite.
RunRecord TrainingRun::run() {
  for (int step = begin(); step <= config_.steps; ++step) {
    if (stops_before(step) || !take_step(step)) break;
  }
  return end();
}

int TrainingRun::begin() {
  const int first_step = int(record_.steps.size()) + 1;
  start_ = std::chrono::steady_clock::now() - std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                                  std::chrono::duration<double>(wall_time(record_)));
  last_read_ = std::chrono::steady_clock::now();
  last_save_ = last_checkpoint_ = last_read_;
  checkpointed_ = int(record_.steps.size());

  record_.status = RunStatus::Running;
  if (callbacks_.on_start) callbacks_.on_start(record_);
  stage("Training");
  if (checkpoint_) save(false);  // the files go back to the checkpoint's step
  else evaluate(0, false);
  return first_step;
}

bool TrainingRun::stops_before(int step) {
  if (!cancelled()) return false;
  stop_before(step);
  return true;
}

RunRecord TrainingRun::end() {
  finish();
  return std::move(record_);
}

double TrainingRun::lr_at(int step) const {
  return learning_rate(step - 1, config_.steps, config_.warmup_steps, config_.peak_lr);
}

torch::Tensor TrainingRun::step_alone(int step, const Batch& batch, double lr, torch::Tensor& statistics) {
  return records_layer_stats(config_, step) ? learner_.step(batch, lr, statistics) : learner_.step(batch, lr);
}

Batch TrainingRun::batch_for(int step) {
  const int row = (step - 1) % kBatchChunkSteps;
  if (row == 0) {
    auto chunk = data_.sample_starts(config_.batch_size, std::min(kBatchChunkSteps, config_.steps - step + 1), rng_);
    starts_ = device_.is_cuda() ? chunk.pin_memory().to(device_, /*non_blocking=*/true) : chunk;
  }
  return data_.train_windows(starts_[row]);
}

// One optimiser update, its loss read when due, its statistics recorded, then the
// evaluation or save it brings. False when the run diverged at it or at a step before.
bool TrainingRun::take_step(int step) {
  const double lr = lr_at(step);
  torch::Tensor statistics;  // left on the device, read with the loss
  const auto loss = step_alone(step, batch_for(step), lr, statistics);
  return after_step(step, lr, loss, statistics);
}

bool TrainingRun::after_step(int step, double lr, const torch::Tensor& loss, const torch::Tensor& statistics) {
  pending_.push_back({step, lr, loss, statistics});
  const bool evaluating = evaluates_at(config_, step);
  const bool saving = evaluating || seconds_since(last_save_) >= kSaveIntervalSeconds;
  // A checkpoint comes with a save and holds every loss up to its step, so they are read
  // first. The last step's is left to the end, which keeps it only if asked.
  const bool checkpointing = saving && step < config_.steps && callbacks_.on_checkpoint_due &&
                             seconds_since(last_checkpoint_) >= config_.checkpoint_interval;
  bool finite = true;
  if (read_every_step_ || evaluating || checkpointing || pending_.size() >= kMaxPendingSteps ||
      seconds_since(last_read_) >= kLossReadInterval_s) {
    finite = read_losses();
  }
  if (!finite) return false;
  if (evaluating) evaluate(step, checkpointing);
  else if (saving) save(checkpointing);
  return true;
}

// Records the pending steps and their statistics, read in one copy; false when one's
// loss was not finite (the run diverged there, its statistics stand, and the steps after
// it are dropped).
bool TrainingRun::read_losses() {
  if (pending_.empty()) return true;
  std::vector<torch::Tensor> losses;
  for (const auto& p : pending_) losses.push_back(p.loss);
  std::vector<torch::Tensor> flat{torch::stack(losses).to(torch::kFloat64)};
  for (const auto& p : pending_) {
    if (p.statistics.defined()) flat.push_back(p.statistics);
  }
  const auto values = torch::cat(flat).to(torch::kCPU).contiguous();
  const double* statistics = values.data_ptr<double>() + pending_.size();
  const double block_start = std::chrono::duration<double>(last_read_ - start_).count();
  const double per_step = seconds_since(last_read_) / double(pending_.size());
  bool finite = true;
  for (std::size_t i = 0; i < pending_.size() && finite; ++i) {
    const double loss = values.data_ptr<double>()[i];
    record_.steps.push_back(
        {pending_[i].step, block_start + per_step * double(i + 1), pending_[i].lr, loss, tokens_per_step_ / per_step});
    if (callbacks_.on_step) callbacks_.on_step(record_.steps.back());
    if (pending_[i].statistics.defined()) {
      record_statistics(pending_[i].step, statistic_points(config_.model, statistics));
      statistics += pending_[i].statistics.numel();
    }
    if (!std::isfinite(loss)) {
      finite = false;
      record_.status = RunStatus::Diverged;
      record_.message = "training loss became " + std::string(std::isnan(loss) ? "NaN" : "infinite") + " at step " +
                        std::to_string(pending_[i].step);
    }
  }
  pending_.clear();
  last_read_ = std::chrono::steady_clock::now();
  return finite;
}

// The per-layer and other statistics a step measured, numbered and added to the record.
void TrainingRun::record_statistics(int step, std::vector<SeriesPoint>&& statistics) {
  for (SeriesPoint& point : statistics) {
    point.step = step;
    record_.add_point(point);
    if (callbacks_.on_point) callbacks_.on_point(point);
  }
}

// The held-out loss at `step`, what the same predictions say (predictions.h), the text
// when due, then a save. Whatever else a run measures at its evaluations belongs here,
// before on_eval hands the record on.
void TrainingRun::evaluate(int step, bool with_checkpoint) {
  PredictionTally predictions(unigram_log_probs_);
  record_.evals.push_back({step, seconds_since(start_), learner_.evaluate(heldout_, &predictions)});
  record_statistics(step, prediction_points(predictions.result(), step));
  const int evaluation = int(record_.evals.size()) - 1;
  if (!prompts_.empty() && records_text(config_, evaluation, step)) record_text(step);
  if (callbacks_.on_eval) callbacks_.on_eval(record_.evals.back(), record_);
  save(with_checkpoint);
  last_read_ = std::chrono::steady_clock::now();  // evaluation time is not training time
}

// The held-out text after each prompt, its tokens kept in the record to be shaded by the
// probability the run gives them, and prompt and reference together as one batch of ids.
void TrainingRun::prepare_references() {
  const auto references = fixed_references(data_.heldout_ids(), config_.model.context);
  // A split too short to give every prompt as long a reference: none, rather than some.
  const torch::Tensor rows = prompts_with_references(prompts_, references);
  if (!rows.defined()) return;
  for (const auto& reference : references) {
    auto& pieces = record_.text.references.emplace_back();
    for (const int id : reference) pieces.push_back(tokenizer_.piece(id));
  }
  prompted_references_ = rows.to(device_);
}

// Each fixed prompt continued both ways, decoded, and the held-out text shaded.
void TrainingRun::record_text(int step) {
  std::vector<std::uint64_t> seeds;
  for (int i = 0; i < int(prompts_.size()); ++i) seeds.push_back(sample_seed(config_.seed, step, i));
  const auto continuations = continue_prompts(learner_.decoder(), prompts_, kContinuationTokens, 1.0, seeds, device_);
  TextSample sample{step, {}, {}, {}};
  for (const Continuation& c : continuations) {
    sample.greedy.push_back(tokenizer_.decode(c.greedy));
    sample.sampled.push_back(tokenizer_.decode(c.sampled));
  }
  if (!record_.text.references.empty()) {
    const auto reference_tokens = std::int64_t(record_.text.references[0].size());
    const auto probabilities = learner_.true_token_probabilities(prompted_references_).slice(1, -reference_tokens);
    for (std::int64_t i = 0; i < probabilities.size(0); ++i) {
      auto& row = sample.reference_probability.emplace_back();
      for (std::int64_t t = 0; t < reference_tokens; ++t) {
        row.push_back(std::round(probabilities[i][t].item<double>() * 1e4) / 1e4);  // 4 digits: enough to shade by
      }
    }
  }
  record_.text.samples.push_back(std::move(sample));
}

void TrainingRun::save(bool with_checkpoint) {
  if (with_checkpoint) write_checkpoint();
  last_save_ = std::chrono::steady_clock::now();
  if (callbacks_.on_save_due) callbacks_.on_save_due(record_);
  hand_back_freed_memory();
}

// Once per step at most, and only for those who asked for checkpoints.
void TrainingRun::write_checkpoint() {
  if (!callbacks_.on_checkpoint_due || int(record_.steps.size()) == checkpointed_) return;
  callbacks_.on_checkpoint_due(checkpoint_bytes(state_, fingerprint_));
  checkpointed_ = int(record_.steps.size());
  last_checkpoint_ = last_read_ = std::chrono::steady_clock::now();  // writing is not training time
}

// Cancelled before `step`: the run stops with the pending losses read, unless one of
// them diverged.
void TrainingRun::stop_before(int step) {
  if (!read_losses()) return;
  record_.status = RunStatus::Stopped;
  record_.message = "stopped by the user after " + std::to_string(step - 1) + " steps";
}

void TrainingRun::finish() {
  if (record_.status == RunStatus::Running) record_.status = RunStatus::Done;
  if (keeps_checkpoint(record_)) write_checkpoint();
  if (keeps_weights(record_) && callbacks_.on_weights_due) {
    callbacks_.on_weights_due(
        weights_bytes(learner_.model(), config_, tokenizer_hash(tokenizer_), int(record_.steps.size())));
  }
}

}  // namespace

RunRecord train(const TrainConfig& config, const TrainCallbacks& callbacks, const std::atomic<bool>* cancel) {
  return TrainingRun(config, nullptr, callbacks, cancel).run();
}

std::vector<RunRecord> train_stacked(const std::vector<TrainConfig>& configs,
                                     const std::vector<TrainCallbacks>& callbacks, const std::atomic<bool>* cancel) {
  if (const std::string refusal = stack_refusal(configs); !refusal.empty())
    throw UserError("these runs cannot train as one stack: " + refusal);
  if (!callbacks.empty() && callbacks.size() != configs.size())
    throw std::invalid_argument("train_stacked takes one set of callbacks a run, or none");
  const std::vector<TrainCallbacks> none(configs.size());
  const auto& each = callbacks.empty() ? none : callbacks;
  const std::size_t count = configs.size();
  std::vector<std::unique_ptr<TrainingRun>> runs;
  std::vector<Learner*> learners;
  for (std::size_t r = 0; r < count; ++r) {
    runs.push_back(std::make_unique<TrainingRun>(configs[r], nullptr, each[r], cancel, /*own_cuda_graph=*/false));
    learners.push_back(&runs.back()->learner());
  }
  StackedLearner stack(learners, runs.front()->device());
  std::vector<RunRecord> records(count);
  std::vector<bool> training(count, true);  // false once a run has ended (stopped or diverged)
  const auto end = [&](std::size_t r) {
    records[r] = runs[r]->end();
    training[r] = false;
  };
  for (auto& run : runs) run->begin();
  const int steps = configs.front().steps;  // stack_refusal holds the runs to one length
  for (int step = 1; step <= steps; ++step) {
    for (std::size_t r = 0; r < count; ++r) {
      if (training[r] && runs[r]->stops_before(step)) end(r);
    }
    if (std::none_of(training.begin(), training.end(), [](bool t) { return t; })) break;
    // A run that has ended still fills its place in the stack (its weights are no longer
    // read), so the stack keeps one shape and one graph.
    std::vector<Batch> batches;
    std::vector<double> lrs;
    bool statistics = false;
    for (std::size_t r = 0; r < count; ++r) {
      batches.push_back(runs[r]->batch_for(step));
      lrs.push_back(runs[r]->lr_at(step));
      statistics = statistics || (training[r] && records_layer_stats(configs[r], step));
    }
    std::vector<torch::Tensor> points(count);  // each run's statistics, on the device
    std::vector<torch::Tensor> losses(count);
    if (statistics) {
      // The layer statistics are measured inside one model's step: at such a step each
      // run steps alone, through its learner, on the stack's tensors.
      for (std::size_t r = 0; r < count; ++r) {
        if (!training[r]) continue;
        losses[r] = runs[r]->step_alone(step, batches[r], lrs[r], points[r]);
      }
    } else {
      const auto stacked = stack.step(batches, lrs);
      for (std::size_t r = 0; r < count; ++r) losses[r] = stacked[std::int64_t(r)];
    }
    for (std::size_t r = 0; r < count; ++r) {
      if (training[r] && !runs[r]->after_step(step, lrs[r], losses[r], points[r])) end(r);
    }
  }
  for (std::size_t r = 0; r < count; ++r) {
    if (training[r]) end(r);
  }
  return records;
}

RunRecord resume(const TrainConfig& config, const fs::path& checkpoint, const TrainCallbacks& callbacks,
                 const std::atomic<bool>* cancel) {
  return TrainingRun(config, &checkpoint, callbacks, cancel).run();
}

}  // namespace normlab
