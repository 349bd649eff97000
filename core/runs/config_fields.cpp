#include "config_fields.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <limits>

namespace normlab {

namespace {

// An enum's choices from its table, whose rows are in the enum's order.
template <std::size_t N, typename Info>
std::vector<Choice> choices_of(const Info (&table)[N]) {
  std::vector<Choice> out;
  for (const auto& row : table) out.push_back({row.name, row.label, row.formula, row.help});
  return out;
}

// The shortest text that reads back as the same double; whole numbers without exponent.
std::string number_text(double value) {
  char text[40];
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    std::snprintf(text, sizeof text, "%.0f", value);
    return text;
  }
  for (int digits = 1; digits <= 17; ++digits) {
    std::snprintf(text, sizeof text, "%.*g", digits, value);
    if (std::strtod(text, nullptr) == value) break;
  }
  return text;
}

std::size_t choice_index(const ConfigField& f, const std::string& name) {
  for (std::size_t i = 0; i < f.choices.size(); ++i) {
    if (f.choices[i].name == name) return i;
  }
  throw UserError(f.noun + " must be " + accepted_values(f) + ", not '" + name + "'");
}

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kMaxSteps = 10'000'000;

std::vector<ConfigField> make_fields() {
  std::deque<ConfigField> f;  // not a vector: `add` hands out references that must stay valid
  auto add = [&](ConfigField field) -> ConfigField& { return f.emplace_back(std::move(field)); };
  using S = Section;
  using W = Widget;

  auto& norm = add(
      {"norm", "norm", "Norm placement", "norm placement", "where each block normalises", S::Placement, W::Buttons});
  norm.choices = choices_of(kPlacements);
  norm.in_design_name = true;
  norm.member = Member<NormPlacement>([](TrainConfig& c) -> NormPlacement& { return c.model.norm; });

  auto& lr = add({"peak_lr", "lr", "Peak learning rate", "peak learning rate",
                  "peak learning rate after warmup: the course compares 1e-3 and 6e-3", S::Schedule, W::Rate, 0, 1});
  lr.above_min = true;
  lr.suggestions = {"1e-3", "6e-3"};
  lr.in_design_name = true;
  lr.member = Member<double>([](TrainConfig& c) -> double& { return c.peak_lr; });

  auto whole = [&](const char* key, const char* flag, const char* label, const char* noun, const char* help,
                   Section section, double min, double max, Member<int> member) -> ConfigField& {
    auto& field = add({key, flag, label, noun, help, section, W::WholeNumber, min, max});
    field.member = member;
    return field;
  };
  auto& warmup = whole("warmup_steps", "warmup", "Warmup", "warmup", "linear warmup steps", S::Schedule, 1, kMaxSteps,
                       [](TrainConfig& c) -> int& { return c.warmup_steps; });
  warmup.unit = " step(s)";
  warmup.in_design_name = true;
  whole("steps", "steps", "Steps", "steps", "optimiser updates", S::Schedule, 1, kMaxSteps,
        [](TrainConfig& c) -> int& { return c.steps; });
  whole("layers", "layers", "Layers", "layers", "blocks", S::Model, 1, 64,
        [](TrainConfig& c) -> int& { return c.model.layers; });
  whole("d_model", "d-model", "Width (d_model)", "d_model", "model width", S::Model, 8, 4096,
        [](TrainConfig& c) -> int& { return c.model.d_model; });
  whole("heads", "heads", "Heads", "heads", "attention heads; must divide d_model", S::Model, 1, 4096,
        [](TrainConfig& c) -> int& { return c.model.heads; });
  auto& norm_type =
      add({"norm_type", "norm-type", "Norm type", "norm type", "how each norm rescales its input", S::Model, W::Menu});
  norm_type.choices = choices_of(kNormTypes);
  norm_type.since_version = 2;  // earlier run files all used LayerNorm, the default
  norm_type.in_design_name = true;
  norm_type.member = Member<NormType>([](TrainConfig& c) -> NormType& { return c.model.norm_type; });

  auto& dyt_alpha0 = add({"dyt_alpha0", "dyt-alpha0", "DyT \u03b1\u2080", "DyT alpha0",
                          "where each DyT's \u03b1 starts (tanh(\u03b1 x)): small squashes little, large saturates; "
                          "the paper's default 0.5; only with norm type dyt",
                          S::Model, W::Decimal, 0, 100});
  dyt_alpha0.above_min = true;
  dyt_alpha0.step = 0.25;
  dyt_alpha0.since_version = 5;  // earlier runs had no DyT
  dyt_alpha0.in_design_name = true;
  dyt_alpha0.member = Member<double>([](TrainConfig& c) -> double& { return c.model.dyt_alpha0; });

  // A switch is off or on; the "on" choice carries the formula the panel and --help show.
  auto model_switch = [&](const char* key, const char* flag, const char* label, const char* help, Choice on,
                          Member<Switch> member) {
    auto& field = add({key, flag, label, label, help, S::Model, W::Menu});
    on.name = "on";
    on.label = "On";
    field.choices = {{"off", "Off"}, std::move(on)};
    field.since_version = 5;  // earlier runs had neither switch: off
    field.in_design_name = true;
    field.member = member;
  };
  model_switch("qk_norm", "qk-norm", "QK-norm",
               "RMS-normalise each head's queries and keys, with a learnt gain, before their dot product",
               {"", "", "q \u2190 q / rms(q) \u00b7 g_q, k \u2190 k / rms(k) \u00b7 g_k, per head",
                "Caps the attention logits' growth, reported to widen the range of learning rates that train "
                "(Henry et al. 2020; Wortsman et al. 2023)"},
               [](TrainConfig& c) -> Switch& { return c.model.qk_norm; });
  model_switch("scaled_residual_init", "scaled-init", "Scaled init",
               "start the matrices that write into the residual stream (attention output, MLP down) with a "
               "smaller spread; not with deepnorm, which sets its own",
               {"", "", "W_out, W_down ~ N(0, (0.02 / \u221a(2N))\u00b2)",
                "Each of the 2N sub-layers then adds a smaller update at first, so the stream's size at the top "
                "does not grow with depth (GPT-2)"},
               [](TrainConfig& c) -> Switch& { return c.model.scaled_residual_init; });

  whole("vocab", "vocab", "Vocabulary", "vocabulary size", "BPE vocabulary size", S::Model, 64, 65536,
        [](TrainConfig& c) -> int& { return c.model.vocab; });
  whole("context", "context", "Context", "context", "tokens per sequence", S::Model, 2, 4096,
        [](TrainConfig& c) -> int& { return c.model.context; })
      .unit = " token(s)";
  whole("batch_size", "batch", "Batch", "batch size", "sequences per step", S::Training, 1, 4096,
        [](TrainConfig& c) -> int& { return c.batch_size; })
      .unit = " sequence(s)";

  auto& clip = add({"clip_grad_norm", "clip", "Gradient clipping", "gradient clipping norm",
                    "clip the gradient norm at this value; 0 = off (the course uses no clipping)", S::Training,
                    W::Decimal, 0, 1e6});
  clip.zero_text = "off";
  clip.step = 0.25;
  clip.member = Member<double>([](TrainConfig& c) -> double& { return c.clip_grad_norm; });

  whole("eval_interval", "eval-interval", "Evaluate every", "evaluation interval", "steps between held-out evaluations",
        S::Training, 1, kMaxSteps, [](TrainConfig& c) -> int& { return c.eval_interval; })
      .unit = " step(s)";

  auto& stats = whole("layer_stats_every", "layer-stats-every", "Inside the model", "layer statistics interval",
                      "record the per-layer statistics at every step of the first 100, then every this many steps "
                      "and at each evaluation; 0 = off",
                      S::Training, 0, kMaxSteps, [](TrainConfig& c) -> int& { return c.layer_stats_every; });
  stats.unit = " step(s)";
  stats.zero_text = "off";
  stats.since_version = 3;  // earlier run files recorded no statistics
  stats.shapes_result = false;

  auto& text = whole("text_every", "text-every", "Text every", "text interval",
                     "continue the fixed held-out prompts, greedily and by sampling, at every this many "
                     "evaluations and at the last, and keep the text; 0 = off",
                     S::Training, 0, kMaxSteps, [](TrainConfig& c) -> int& { return c.text_every; });
  text.unit = " evaluation(s)";
  text.zero_text = "off";
  text.since_version = 7;
  text.older_files_text = "0";  // earlier run files recorded no text
  text.shapes_result = false;

  auto& seed = add({"seed", "seed", "Seed", "seed", "seeds the model and the batches", S::Training, W::WholeNumber, 0,
                    double(std::numeric_limits<std::uint64_t>::max())});
  seed.member = Member<std::uint64_t>([](TrainConfig& c) -> std::uint64_t& { return c.seed; });

  // A text setting chosen from a drop-down list of `choices`.
  auto menu = [&](const char* key, const char* flag, const char* label, const char* noun, const char* help,
                  std::vector<Choice> choices, Member<std::string> member) -> ConfigField& {
    auto& field = add({key, flag, label, noun, help, S::DeviceAndData, W::Menu});
    field.choices = std::move(choices);
    field.member = member;
    return field;
  };

  auto& device = menu("device", "device", "Device", "device", "auto takes the GPU when LibTorch sees one",
                      {{"auto", "Auto"}, {"cpu", "CPU"}, {"cuda", "CUDA GPU"}},
                      [](TrainConfig& c) -> std::string& { return c.device; });
  device.shapes_result = false;

  auto& tf32 =
      menu("tf32", "tf32", "TF32 matmuls", "TF32 setting",
           "let fp32 matmuls on the GPU round their inputs to TF32 (10-bit mantissa): faster, "
           "slightly less exact; auto = on GPUs that have it (Ampere on); no effect on the CPU",
           {{"auto", "Auto"}, {"on", "On"}, {"off", "Off"}}, [](TrainConfig& c) -> std::string& { return c.tf32; });
  tf32.since_version = 3;  // earlier runs never ran on a GPU

  auto& autocast =
      menu("autocast", "autocast", "Autocast", "autocast",
           "run the forward pass in bf16 where torch's autocast deems it safe: faster on GPUs; on a CPU "
           "with bf16 instructions no faster at the CPU scale than oneDNN's fp32 matmuls, losses "
           "within what the thread count changes; off keeps everything in fp32 (the course's numbers)",
           {{"off", "Off (fp32)"}, {"bf16", "bf16"}}, [](TrainConfig& c) -> std::string& { return c.autocast; });
  autocast.since_version = 3;

  auto& matmul = menu("cpu_matmul", "cpu-matmul", "CPU matmuls", "CPU matmul kernel",
                      "the kernel behind fp32 linear layers on the CPU: oneDNN, or LibTorch's own (MKL sgemm, which "
                      "takes a slower path on AMD CPUs); auto times a few steps with each, once per CPU model, "
                      "thread count and shape (kept in the cache), and takes LibTorch's only when it is at least "
                      "5 % faster; the same fp32 arithmetic summed in another order, so losses differ as with "
                      "another thread count, a chaotic run's by up to about 0.1 nats; libtorch is what runs before "
                      "version 6 used; no effect on the GPU or under autocast",
                      {{"auto", "Auto (the faster here)"}, {"onednn", "oneDNN"}, {"libtorch", "LibTorch (MKL)"}},
                      [](TrainConfig& c) -> std::string& { return c.cpu_matmul; });
  matmul.since_version = 6;
  matmul.older_files_text = "libtorch";  // what every run before version 6 used
  matmul.shapes_result = false;

  auto& precision = menu("cpu_precision", "cpu-precision", "CPU precision", "CPU precision",
                         "what linear layers multiply in on the CPU: fp32, or bf16 on the CPU's bf16 units "
                         "(AVX512-BF16 or AMX; fp32 where it has none) with fp32 accumulation, master weights and "
                         "optimiser state, attention, norms and loss in fp32; no effect on the GPU or under autocast",
                         {{"fp32", "fp32"}, {"bf16", "bf16 where the CPU has it"}},
                         [](TrainConfig& c) -> std::string& { return c.cpu_precision; });
  precision.since_version = 10;  // earlier runs multiplied in fp32

  auto& loss = menu("fused_loss", "fused-loss", "Fused loss", "fused loss",
                    "compute the output projection and the loss together, a few hundred positions at a time, "
                    "never holding the whole batch's logits: faster and lighter; the same arithmetic summed in "
                    "another order, so losses differ in their last digits; off is what runs before version 10 did",
                    {{"on", "On"}, {"off", "Off"}}, [](TrainConfig& c) -> std::string& { return c.fused_loss; });
  loss.since_version = 10;
  loss.older_files_text = "off";  // earlier runs materialised the logits
  loss.shapes_result = false;

  auto& attention =
      menu("fused_attention", "fused-attention", "Fused attention", "fused attention",
           "on an AVX-512 CPU, compute causal attention as one operator that reads the packed "
           "q, k and v in place and recomputes the probabilities in backward: faster; the same "
           "arithmetic summed in another order, so losses differ in their last digits; off is "
           "ATen's scaled_dot_product_attention, what runs before version 12 used; no effect on "
           "the GPU, under autocast or with QK-norm",
           {{"on", "On"}, {"off", "Off"}}, [](TrainConfig& c) -> std::string& { return c.fused_attention; });
  attention.since_version = 12;
  attention.older_files_text = "off";  // earlier runs took ATen's attention
  attention.shapes_result = false;

  auto& threads = whole("threads", "threads", "CPU threads", "threads",
                        "threads LibTorch trains with on the CPU; 0 = OMP_NUM_THREADS, else one per core",
                        S::DeviceAndData, 0, 1024, [](TrainConfig& c) -> int& { return c.threads; });
  threads.zero_text = "one per core";
  threads.shapes_result = false;

  auto& parallel = menu("cpu_parallel", "cpu-parallel", "CPU threads share", "how CPU threads share a step",
                        "how a step's CPU threads share it: batch gives each thread an equal slice of the batch to "
                        "take forward and backward alone, the slices' gradients summed in a fixed order (where the "
                        "threads divide the batch; the steps that record the layer statistics take it whole); "
                        "operators divides every operator between the threads, which then wait for each other "
                        "after each of a step's hundreds of small operators; the same arithmetic summed in "
                        "another order, so losses differ as with another thread count; operators is what runs "
                        "before version 11 did; no effect with one thread or on the GPU",
                        {{"batch", "Slices of the batch"}, {"operators", "Each operator"}},
                        [](TrainConfig& c) -> std::string& { return c.cpu_parallel; });
  parallel.since_version = 11;
  parallel.older_files_text = "operators";  // what every run before version 11 used
  parallel.shapes_result = false;

  auto& corpus = add({"corpus", "corpus", "Corpus", "corpus",
                      "the text to train on: a corpus's name (kjv, the King James Bible; bookshelf, 59 MB of "
                      "English from Debian's packages; see normlab-cli corpora) or a UTF-8 text file; empty: kjv",
                      S::DeviceAndData, W::File});
  corpus.member = Member<std::string>([](TrainConfig& c) -> std::string& { return c.corpus_path; });

  auto& decay = add({"weight_decay", "weight-decay", "Weight decay", "weight decay", "AdamW weight decay on matrices",
                     S::Hidden, W::None, 0, kInfinity});
  decay.member = Member<double>([](TrainConfig& c) -> double& { return c.weight_decay; });

  whole("eval_batches", "eval-batches", "Evaluation batches", "evaluation batches", "held-out batches per evaluation",
        S::Hidden, 1, 1000, [](TrainConfig& c) -> int& { return c.eval_batches; })
      .widget = W::None;

  auto& checkpoints = whole("checkpoint_interval", "checkpoint-interval", "Checkpoint every", "checkpoint interval",
                            "seconds between checkpoints of the whole training state beside the run file (RUN.ckpt, "
                            "to resume from), each written with a save; 0 = at every save",
                            S::DeviceAndData, 0, 86400, [](TrainConfig& c) -> int& { return c.checkpoint_interval; });
  checkpoints.unit = " s";
  checkpoints.zero_text = "every save";
  checkpoints.since_version = 4;  // earlier runs wrote no checkpoints
  checkpoints.shapes_result = false;

  auto& final_checkpoint =
      menu("final_checkpoint", "final-checkpoint", "Final checkpoint", "final checkpoint",
           "when the run is done: drop its checkpoint, or keep it with the final weights and "
           "the optimiser's state",
           {{"drop", "Drop"}, {"keep", "Keep"}}, [](TrainConfig& c) -> std::string& { return c.final_checkpoint; });
  final_checkpoint.since_version = 4;
  final_checkpoint.shapes_result = false;

  auto& final_weights =
      menu("final_weights", "final-weights", "Final weights", "final weights",
           "when the run is done: keep its parameters beside the run file (RUN.weights, about "
           "10.6 MB at the course's shape), for `normlab-cli sample` and the window's prompts, or "
           "drop them",
           {{"keep", "Keep"}, {"drop", "Drop"}}, [](TrainConfig& c) -> std::string& { return c.final_weights; });
  final_weights.since_version = 8;
  final_weights.older_files_text = "drop";  // earlier runs kept no weights
  final_weights.shapes_result = false;
  return {f.begin(), f.end()};
}

}  // namespace

const std::vector<ConfigField>& config_fields() {
  static const std::vector<ConfigField> fields = make_fields();
  return fields;
}

std::string accepted_values(const ConfigField& f) {
  if (!f.choices.empty()) {
    std::string text;
    for (std::size_t i = 0; i < f.choices.size(); ++i) {
      if (i > 0) text += i + 1 == f.choices.size() ? " or " : ", ";
      text += "'" + f.choices[i].name + "'";
    }
    return text;
  }
  if (f.widget == Widget::File) return "a file";
  if (std::isinf(f.max)) return number_text(f.min) + " or more";
  if (f.above_min) return "above " + number_text(f.min) + " and at most " + number_text(f.max);
  return "between " + number_text(f.min) + " and " + number_text(f.max);
}

const ConfigField& config_field(const std::string& key) {
  for (const ConfigField& field : config_fields()) {
    if (field.key == key) return field;
  }
  throw std::out_of_range("no config field '" + key + "'");
}

void check_field(const ConfigField& f, const TrainConfig& config) {
  visit_field(f, config, [&](const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_arithmetic_v<T>) {
      const double v = double(value);
      const bool ok = std::isfinite(v) && (f.above_min ? v > f.min : v >= f.min) && v <= f.max;
      if (!ok) throw UserError(f.noun + " must be " + accepted_values(f));
    } else if constexpr (std::is_enum_v<T>) {
      if (std::size_t(value) >= f.choices.size()) throw UserError(f.noun + " has no such value");
    } else if (!f.choices.empty()) {
      choice_index(f, value);
    }
  });
}

std::string field_text(const ConfigField& f, const TrainConfig& config) {
  return visit_field(f, config, [&](const auto& value) -> std::string {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_enum_v<T>) return f.choices.at(std::size_t(value)).name;
    else if constexpr (std::is_same_v<T, std::string>) return value;
    else if constexpr (std::is_floating_point_v<T>) return number_text(value);
    else return std::to_string(value);
  });
}

std::string shown_text(const ConfigField& f, const TrainConfig& config) {
  return visit_field(f, config, [&](const auto& value) -> std::string {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_floating_point_v<T>) {
      if (value > 0 && value < 0.01) {
        const std::string short_form = format_lr(double(value));
        if (std::strtod(short_form.c_str(), nullptr) == double(value)) return short_form;
      }
    }
    return field_text(f, config);
  });
}

void set_field_text(const ConfigField& f, TrainConfig& config, const std::string& text) {
  visit_field(f, config, [&](auto& value) {
    using T = std::decay_t<decltype(value)>;
    if constexpr (std::is_enum_v<T>) {
      value = T(choice_index(f, text));
    } else if constexpr (std::is_same_v<T, std::string>) {
      if (!f.choices.empty()) choice_index(f, text);
      value = text;
    } else {
      char* end = nullptr;
      errno = 0;
      const bool whole = std::is_integral_v<T>;
      const double number = whole ? double(std::strtoull(text.c_str(), &end, 10)) : std::strtod(text.c_str(), &end);
      const bool ok = !text.empty() && *end == '\0' && errno != ERANGE && std::isfinite(number) &&
                      (!whole || text.find('-') == std::string::npos);
      if (!ok) throw UserError(f.noun + " needs " + (whole ? "a whole number" : "a number") + ", not '" + text + "'");
      if constexpr (std::is_integral_v<T>) {
        if (number > f.max) throw UserError(f.noun + " must be " + accepted_values(f));  // before T wraps it
        value = T(std::strtoull(text.c_str(), nullptr, 10));
      } else {
        value = number;
      }
    }
  });
}

void copy_field(const ConfigField& f, const TrainConfig& from, TrainConfig& to) {
  visit_field(f, to, [&](auto& target) {
    visit_field(f, from, [&](const auto& source) {
      if constexpr (std::is_same_v<std::decay_t<decltype(source)>, std::decay_t<decltype(target)>>) target = source;
    });
  });
}

void copy_section(Section section, const TrainConfig& from, TrainConfig& to) {
  for (const ConfigField& field : config_fields()) {
    if (field.section == section) copy_field(field, from, to);
  }
}

const ConfigField* first_difference(const TrainConfig& a, const TrainConfig& b) {
  for (const ConfigField& field : config_fields()) {
    if (field.shapes_result && field_text(field, a) != field_text(field, b)) return &field;
  }
  return nullptr;
}

bool same_experiment(const TrainConfig& a, const TrainConfig& b) { return first_difference(a, b) == nullptr; }

std::vector<const ConfigField*> differing_fields(const std::vector<const TrainConfig*>& configs) {
  std::vector<const ConfigField*> fields;
  for (const ConfigField& field : config_fields()) {
    const auto differs = [&](const TrainConfig* c) { return field_text(field, *c) != field_text(field, *configs[0]); };
    if (!configs.empty() && std::any_of(configs.begin() + 1, configs.end(), differs)) fields.push_back(&field);
  }
  return fields;
}

}  // namespace normlab
