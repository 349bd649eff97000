#pragma once
// A run as data: what was asked, where it ran, and every point it produced.
// Read and written as JSON (versioned schema) and CSV. No torch: the UI includes this.
// The trainer's own per-step and per-evaluation columns are fixed (StepMetrics,
// EvalMetrics); any further statistic is a named Series, per layer if it has layers,
// which files, CSV, the window's worker and its store carry without knowing its name.
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "config.h"

namespace normlab {

// Stopped: by the user. Interrupted: the process ended (killed, crashed) while it ran.
enum class RunStatus { Queued, Running, Done, Stopped, Diverged, Failed, Interrupted };
std::string to_string(RunStatus status);
RunStatus parse_status(const std::string& text);

struct StepMetrics {
  int step = 0;       // optimiser updates done, 1-based
  double wall_s = 0;  // since training started
  double lr = 0;
  double train_loss = 0;  // nats per token
  double tokens_per_s = 0;
};

struct EvalMetrics {
  int step = 0;  // 0 = before the first update
  double wall_s = 0;
  double val_loss = 0;  // mean held-out loss over the fixed evaluation batches
};

// A statistic recorded at some steps, by name. With layers > 0 it is a layer × step
// grid: one value per layer at each recorded step.
struct Series {
  std::string name;
  int layers = 0;  // 0: one value per step
  std::vector<int> steps;
  std::vector<double> values;  // step-major: the value at steps[i] for `layer` is values[i * width() + layer]

  int width() const { return layers > 0 ? layers : 1; }
  double at(std::size_t i, int layer = 0) const { return values[i * std::size_t(width()) + std::size_t(layer)]; }
};

// One step's values of one series, as the trainer reports them.
struct SeriesPoint {
  std::string series;
  int layers = 0;
  int step = 0;
  std::vector<double> values;  // one per layer, or one
};

// What a run wrote at one evaluation: each fixed prompt continued (core/training/text_samples.h).
struct TextSample {
  int step = 0;
  std::vector<std::string> greedy;   // one per prompt: the most likely token each time
  std::vector<std::string> sampled;  // one per prompt: each token drawn from the prediction
  // One per prompt, when the run has references: the probability the model gave each of
  // the reference's tokens, after the prompt and the reference's tokens before it.
  std::vector<std::vector<double>> reference_probability;
};

struct RunText {
  std::vector<std::string> prompts;  // held-out text at fixed places, the same for every run on the corpus
  // One per prompt (none in files before version 8): the held-out text that follows it,
  // token by token, each as it reads inside the text (Tokenizer::piece).
  std::vector<std::vector<std::string>> references;
  std::vector<TextSample> samples;  // by step; each holds one text per prompt
};

struct Environment {
  std::string app_version;
  std::string libtorch_version;
  std::string device;       // "cpu" or "cuda"
  std::string device_name;  // "CPU, 2 threads" or the GPU's name
  int threads = 0;
  std::string precision = "fp32";  // "tf32 matmuls", ", bf16 autocast" added when on
  // The engine's commit (host.h's engine_commit(): the last commit that changed core/, app/,
  // cmake/ or CMakeLists.txt, "+changes" when built with uncommitted changes there) and the
  // CPU's model name (cpu_model()); empty in files written before they were kept.
  std::string engine;
  std::string cpu;
};

struct RunRecord {
  TrainConfig config;  // config.name is the run's name
  Environment environment;
  std::int64_t parameters = 0;
  std::int64_t train_tokens = 0;
  std::int64_t heldout_tokens = 0;
  double baseline_loss = 0;  // unigram-frequency held-out loss, nats
  // The text it trained on: its name ("kjv", "bookshelf", or the file's name) and its
  // content hash (corpus.h), set when the corpus is read; empty in files that predate them.
  std::string corpus_name;
  std::string corpus_hash;
  RunStatus status = RunStatus::Queued;
  std::string message;  // why it ended, when not simply done
  std::vector<StepMetrics> steps;
  std::vector<EvalMetrics> evals;
  std::vector<Series> series;  // further statistics, each name once
  RunText text;                // empty when it records none (config.text_every 0, or files before version 7)

  // Last held-out loss, or NaN when there was no evaluation yet.
  double final_val_loss() const;
  // The training and held-out loss over one stretch of steps: the kGapWindow training steps
  // up to `step` (one step's loss is noisy) from the first evaluation on, and the held-out
  // loss at each of them, read off the line between the evaluations around it (it is
  // measured only there). Both over the same steps, so early in a run, when the loss falls
  // fast, the gap does not set steps 1–50 against the model of step 50. NaN without
  // training steps there; the held-out NaN when a step lies past the last evaluation.
  struct LossesOverSteps {
    int first_step = -1, last_step = -1;
    double training = 0, heldout = 0;
    double gap() const { return heldout - training; }
  };
  LossesOverSteps losses_up_to(int step) const;
  // Those up to the last evaluation; NaN without one after training steps.
  LossesOverSteps final_losses() const;
  // The training loss of final_losses().
  double final_train_loss() const { return final_losses().training; }
  // The mean training loss over the kGapWindow steps up to `step`, as in losses_up_to.
  double train_loss_at(int step) const { return losses_up_to(step).training; }
  // How far the held-out loss sits above the training loss over the steps up to the last
  // evaluation: what the model learnt of its training text that does not carry over to
  // unseen text.
  double generalisation_gap() const { return final_losses().gap(); }
  static constexpr std::size_t kGapWindow = 50;
  const Series* find_series(const std::string& name) const;  // nullptr if not recorded
  // Appends to the series of that name, which it creates on first use.
  void add_point(const SeriesPoint& point);
};

// Whether the two trained the same steps and evaluations to the same losses: one run's
// file read twice, not the same settings trained again.
bool same_points(const RunRecord& a, const RunRecord& b);

// Where a run stands for a sweep or a resume, best first: it ended with a result (done, diverged),
// it is queued or training, or it was cut short or failed (and trains again).
enum class RunProgress { Result, Pending, CutShort };
RunProgress progress_of(RunStatus status);

// A run a file shows as running was cut short (its process ended, or it was exported
// mid-run): it becomes Interrupted with `why` as its message. Queued runs stay queued.
// True if it changed.
bool mark_interrupted(RunRecord& run, const std::string& why);
// A run whose file says running but has not changed for this long has lost its process
// (a trainer saves at least every few seconds): whoever reads the file treats it as cut short.
inline constexpr double kLostAfterSeconds = 60;

// Version 2 added named series and the fields marked since_version 2, version 3 the
// layer statistics' interval, version 4 the checkpoint settings, version 5 DyT's α₀ and the
// QK-norm and scaled-init switches, version 6 the CPU matmul kernel, version 7 the text a
// run writes (text, config.text_every), version 8 config.final_weights, the text's
// references and the user's label and note, version 9 baseline_loss on the evaluated
// positions rather than the whole held-out split; older files still load, with those
// fields at their defaults (the switches off, no text, no weights, no note) or, for the
// kernel, at what they ran with (LibTorch's), a name of the user's own as the label, and
// the baseline from their series "unigram_loss" (versions 7 and 8 recorded it there).
// Version 10 added the CPU precision and the fused loss (older files: fp32, unfused),
// version 11 how CPU threads share a step (older files: each operator), version 12 the
// fused CPU attention (older files: ATen's).
inline constexpr int kRunSchemaVersion = 12;

// The run file's text, streamed: the numbers are written as they are formatted.
void write_json_text(std::ostream& out, const RunRecord& run);
std::string to_json_text(const RunRecord& run);
RunRecord from_json_text(const std::string& text);  // UserError on anything malformed

// Both write atomically: a temp file beside the target, then rename.
void write_json(const RunRecord& run, const std::filesystem::path& path);
// One wide, tidy table, one row per run and step it trained or evaluated at (step 0: the
// held-out loss before training): run, step, wall_s, lr, train_loss, val_loss, then a
// column per further series ("name", or "name[layer]" per layer), then its display name
// and note, and its settings, a column per field of the settings table ("config.peak_lr",
// "config.norm"). Cells a run did not record at that step are empty.
void write_csv(const std::vector<RunRecord>& runs, const std::filesystem::path& path);
RunRecord read_json(const std::filesystem::path& path);  // UserError naming the file and the fault

}  // namespace normlab
