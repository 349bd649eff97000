#pragma once
// Everything a run is made of. Plain data, no torch: the UI includes this.
// Placements are one table (kPlacements); the settings themselves are another
// (config_fields.h), which validation, the command line, run files and the settings
// panel all read.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "core/system/user_error.h"

namespace normlab {

// Where each block normalises. A closed set: code that differs by placement switches
// over it without a default, so the compiler names every place a new one must go.
enum class NormPlacement { Pre, Post, Peri, DeepNorm, Mix, LayerNormScaling, ReZero };

// The colour family the app draws a design's runs in (green: post-norm with a long
// warmup, the plate's third curve; see core/runs/palette.h).
enum class Hue { Blue, Red, Green, Teal, Amber, Purple, Indigo, Magenta, Olive };

// An enum's table lists its values in enum order, so table[size_t(value)] describes value.
template <typename Row, std::size_t N>
constexpr bool in_enum_order(const Row (&table)[N]) {
  for (std::size_t i = 0; i < N; ++i) {
    if (std::size_t(table[i].value) != i) return false;
  }
  return true;
}

struct PlacementInfo {
  NormPlacement value;
  const char* name;     // in run files, on the command line and in run names: "pre"
  const char* label;    // "Pre-norm"; in lower case it starts the default run name
  const char* formula;  // the block's update rule, "x ← x + f(Norm x)"
  const char* help;     // one sentence for the tooltip and --help
  Hue hue;
  bool final_norm;    // whether the output needs a last norm: the stream is never normalised otherwise
  bool norms = true;  // false: the blocks have no norm at all (ReZero), so the norm type does not apply
};

// Adding a placement: a row here and its line in BlockImpl::update (core/model/model.cpp).
inline constexpr PlacementInfo kPlacements[] = {
    {NormPlacement::Pre, "pre", "Pre-norm", "x \u2190 x + f(Norm x)",
     "Normalise each sub-layer's input; the residual stream is never rescaled", Hue::Blue, true},
    {NormPlacement::Post, "post", "Post-norm", "x \u2190 Norm(x + f(x))",
     "Normalise after each residual addition, as in the 2017 Transformer", Hue::Red, false},
    {NormPlacement::Peri, "peri", "Peri-norm", "x \u2190 x + Norm(f(Norm x))",
     "Normalise each sub-layer's input and its output (sandwich norm: CogView, Peri-LN)", Hue::Teal, true},
    {NormPlacement::DeepNorm, "deepnorm", "DeepNorm", "x \u2190 Norm(\u03b1\u00b7x + f(x)), \u03b1 = (2N)^\u00bc",
     "Post-norm with the residual scaled up by \u03b1 and the value, output and MLP weights scaled down at "
     "init by \u03b2 = (8N)^-\u00bc (DeepNet)",
     Hue::Amber, false},
    {NormPlacement::Mix, "mix", "Mix-norm", "post in the first \u230aN/4\u230b blocks, pre after",
     "Post-norm in the first quarter of the blocks, pre-norm in the rest (Mix-LN)", Hue::Purple, true},
    {NormPlacement::LayerNormScaling, "lns", "LN Scaling", "x \u2190 x + f(Norm(x) / \u221a\u2113)",
     "Pre-norm with each norm's output divided by \u221a\u2113, \u2113 the block's depth from 1, so deep blocks "
     "add less (LayerNorm Scaling, the Curse of Depth)",
     Hue::Indigo, true},
    {NormPlacement::ReZero, "rezero", "ReZero", "x \u2190 x + \u03b1\u00b7f(x), \u03b1\u2080 = 0",
     "No norm anywhere: each block's sub-layers are added through one learnt scalar \u03b1 that starts at 0 "
     "(ReZero)",
     Hue::Magenta, false, false},
};
static_assert(in_enum_order(kPlacements));

// How each norm rescales its input, or (DyT) what takes its place.
enum class NormType { LayerNorm, RmsNorm, Dyt };

struct NormTypeInfo {
  NormType value;
  const char* name;     // "layernorm"
  const char* label;    // "LayerNorm"
  const char* formula;  // what it computes
  const char* help;
  // A norm type that drops normalisation is a design of its own and has its own hue;
  // the others are drawn in their placement's.
  std::optional<Hue> hue = std::nullopt;
};

inline constexpr NormTypeInfo kNormTypes[] = {
    {NormType::LayerNorm, "layernorm", "LayerNorm", "(x − mean) / std · g + b",
     "Centre and scale each position, then a learnt gain and bias"},
    {NormType::RmsNorm, "rmsnorm", "RMSNorm", "x / rms(x) · g",
     "Scale each position by its root mean square, then a learnt gain; no centring, no bias"},
    {NormType::Dyt, "dyt", "DyT", "\u03b3 \u00b7 tanh(\u03b1 x) + \u03b2",
     "No statistics at all: squash each value with tanh at a learnt scale \u03b1 (one per DyT), then a learnt "
     "gain and bias (Dynamic Tanh)",
     Hue::Olive},
};
static_assert(in_enum_order(kNormTypes));

const PlacementInfo& info(NormPlacement norm);
std::string to_string(NormPlacement norm);
NormPlacement parse_norm(const std::string& text);  // a placement's name, else UserError
// The block's update rule in one line, e.g. "x ← x + f(Norm x)".
const char* formula(NormPlacement norm);

// A model switch: a change that combines with every placement and norm type.
enum class Switch { Off, On };

struct ModelConfig {
  int layers = 8;
  int d_model = 128;
  int heads = 4;
  int context = 128;
  int vocab = 8192;
  NormPlacement norm = NormPlacement::Pre;
  NormType norm_type = NormType::LayerNorm;
  double dyt_alpha0 = 0.5;                    // DyT's α at init (the paper's default)
  Switch qk_norm = Switch::Off;               // RMS-normalise queries and keys per head
  Switch scaled_residual_init = Switch::Off;  // GPT-2: stream-writing matrices start at 0.02/√(2N)
};

// Defaults live here; ranges, names and help texts in config_fields().
// The corpus a run trains on when it names none, the King James Bible: the name
// core/data/corpora.h gives it (a test holds the two alike).
inline constexpr const char* kDefaultCorpusName = "kjv";

struct TrainConfig {
  // The run's name in files, sweeps and seed groups; empty: derived from the settings
  // (see default_run_name). What the window shows is its display name (run_title.h).
  std::string name;
  std::string label;  // what the user calls it (--name, a rename); empty: what its settings say (run_title)
  std::string note;   // the user's own words about it
  // Which look of its hue the window draws it in (palette.h), kept in its file so that it
  // looks the same after a restart; -1: none given yet. No part of the experiment.
  int shade = -1;
  ModelConfig model;
  double peak_lr = 1e-3;
  int warmup_steps = 30;
  int steps = 3000;
  int batch_size = 32;
  double weight_decay = 0.1;
  double clip_grad_norm = 0.0;  // 0 = no clipping
  std::uint64_t seed = 1337;
  std::string device = "auto";         // auto | cpu | cuda
  std::string tf32 = "auto";           // auto | on | off: TF32 inside fp32 matmuls on the GPU
  std::string autocast = "off";        // off | bf16: the forward pass under bf16 autocast
  std::string cpu_matmul = "auto";     // auto | onednn | libtorch: the kernel of fp32 linear layers on the CPU
  std::string cpu_precision = "fp32";  // fp32 | bf16: what CPU linear layers multiply in (linear.h)
  std::string fused_loss = "on";       // on | off: the output projection and loss fused, in chunks (output_loss.h)
  std::string fused_attention = "on";  // on | off: the CPU's causal attention as one operator (causal_attention.h)
  int threads = 0;                     // CPU threads; 0 = LibTorch's default (OMP_NUM_THREADS, else one per core)
  std::string cpu_parallel = "batch";  // batch | operators: how a step's CPU threads share it (learner.h)
  int eval_interval = 100;
  int eval_batches = 16;
  int layer_stats_every = 10;             // after the first 100 steps (see layer_stats.h); 0 = off
  int text_every = 1;                     // evaluations between recordings of the run's text; 0 = none
  std::string corpus_path;                // a corpus's name or a file's path; empty: kDefaultCorpusName
  int checkpoint_interval = 60;           // seconds between checkpoints (checkpoint.h); 0 = at every save
  std::string final_checkpoint = "drop";  // drop | keep: whether a finished run keeps its whole final state
  std::string final_weights = "keep";     // keep | drop: whether a finished run keeps its parameters (weights.h)
};

// Throws UserError naming the first invalid field and why.
void validate(const TrainConfig& config);

// "post-norm lr 6e-3 warmup 30": the placement, the norm type, DyT's α₀ and the switches
// when they are not the defaults, the learning rate and the warmup (the fields marked
// in_design_name): "pre-norm DyT alpha0 2 QK-norm lr 1e-3 warmup 30".
std::string design_name(const TrainConfig& config);
// The placement as run names say it: its label in lower case, "pre-norm", "deepnorm".
std::string placement_name(NormPlacement placement);
// What design_name says between the placement and the learning rate, with a leading
// space: " DyT alpha0 2 QK-norm"; empty for LayerNorm with both switches off.
std::string design_options(const TrainConfig& config);
// The run's name in files when it is given none: its design name, the depth when it is
// not the default and a corpus by name when not the default, "peri-norm RMSNorm lr 1e-3
// warmup 30 layers 16", "pre-norm lr 6e-3 warmup 30 bookshelf".
std::string default_run_name(const TrainConfig& config);

// "6e-3", "1e-3", "2.5e-4": how the app writes learning rates.
std::string format_lr(double lr);

}  // namespace normlab
