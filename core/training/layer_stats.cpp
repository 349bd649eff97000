#include "layer_stats.h"

#include <cstdio>

#include "layer_recorder.h"
#include "schedule.h"

namespace normlab {

struct LayerRecorder::State {
  Gpt model;
  std::vector<BlockImpl*> blocks;
  std::vector<BlockProbe> probes;                          // one per block
  std::vector<std::vector<torch::Tensor>> weights_before;  // each block's matrices before the update
  std::vector<torch::Tensor> measured;  // per statistic; kept on the device until one copy serves them all
};

namespace {

using State = LayerRecorder::State;

BlockImpl& block(const State& s, std::size_t layer) { return *s.blocks[layer]; }

// One value per block, as a 1-D tensor.
template <typename PerBlock>
torch::Tensor per_block(const State& s, PerBlock value) {
  std::vector<torch::Tensor> values;
  for (std::size_t layer = 0; layer < s.blocks.size(); ++layer) values.push_back(value(layer).reshape({}));
  return torch::stack(values);
}

// The L2 norm of all of `tensors` taken together, as one vector.
torch::Tensor norm_of_all(const std::vector<torch::Tensor>& tensors) {
  return torch::linalg_vector_norm(torch::stack(torch::_foreach_norm(tensors)), 2, {}, false, torch::kDouble);
}

// ‖g‖ over all the gradients of `parameters`, taken together.
torch::Tensor gradient_norm(const std::vector<torch::Tensor>& parameters) {
  std::vector<torch::Tensor> grads;
  for (const auto& p : parameters) {
    if (p.grad().defined()) grads.push_back(p.grad());
  }
  return grads.empty() ? torch::zeros({}, torch::kDouble) : norm_of_all(grads);
}

std::vector<torch::Tensor> matrices(const BlockImpl& b) {
  std::vector<torch::Tensor> out;
  for (const auto& p : b.parameters()) {
    if (p.dim() >= 2) out.push_back(p);
  }
  return out;
}

// When a statistic can be measured: gradients before clipping and the update change
// them; the relative update needs the update.
enum class Moment { AfterBackward, AfterUpdate };

// DyT's α of a block's norm1 (0) or norm2 (1).
torch::Tensor dyt_alpha(const BlockImpl& b, int which) {
  return (which == 0 ? b.norm1 : b.norm2).ptr()->as<DytImpl>()->alpha;
}

bool has_dyt(const ModelConfig& m) { return info(m.norm).norms && m.norm_type == NormType::Dyt; }
bool has_rezero(const ModelConfig& m) { return m.norm == NormPlacement::ReZero; }

struct Statistic {
  StatisticInfo info;
  Moment moment;
  torch::Tensor (*measure)(const State& s);  // one value per block, or one
};

const std::vector<Statistic>& statistics() {
  static const std::vector<Statistic> table = {
      {{"grad_norm", "Gradient norm, whole model", "L2 norm",
        "the norm of the whole gradient before any clipping: spikes mark unstable steps", false},
       Moment::AfterBackward,
       [](const State& s) { return gradient_norm(s.model->parameters()); }},
      {{"attention_grad_norm", "Attention gradient norm", "L2 norm",
        "how much gradient reaches each block's attention; post-norm starves the lower layers", true},
       Moment::AfterBackward,
       [](const State& s) {
         return per_block(s, [&](std::size_t l) { return gradient_norm(block(s, l).attention->parameters()); });
       }},
      {{"mlp_grad_norm", "MLP gradient norm", "L2 norm", "how much gradient reaches each block's MLP", true},
       Moment::AfterBackward,
       [](const State& s) {
         return per_block(s, [&](std::size_t l) { return gradient_norm(block(s, l).mlp->parameters()); });
       }},
      {{"attention_norm_input_rms", "RMS into the attention's norm", "RMS",
        "the scale the first norm divides by: its backward pass divides the gradient by it too (DyT divides by "
        "nothing: what it squashes; ReZero has no norm: what enters the attention)",
        true},
       Moment::AfterBackward,
       [](const State& s) { return per_block(s, [&](std::size_t l) { return s.probes[l].norm_input_rms[0]; }); }},
      {{"mlp_norm_input_rms", "RMS into the MLP's norm", "RMS", "the scale the second norm divides by", true},
       Moment::AfterBackward,
       [](const State& s) { return per_block(s, [&](std::size_t l) { return s.probes[l].norm_input_rms[1]; }); }},
      {{"update_ratio", "Relative update \u2016\u0394W\u2016/\u2016W\u2016", "per step",
        "how far one step moves each block's matrices, relative to their size", true},
       Moment::AfterUpdate,
       [](const State& s) {
         return per_block(s, [&](std::size_t l) {
           const auto now = matrices(block(s, l));
           return norm_of_all(torch::_foreach_sub(now, s.weights_before[l])) / norm_of_all(s.weights_before[l]);
         });
       }},
      {{"attention_entropy", "Attention entropy", "of log(visible keys)",
        "1: each query spreads its attention evenly; 0: it looks at one key", true},
       Moment::AfterBackward,
       [](const State& s) { return per_block(s, [&](std::size_t l) { return s.probes[l].attention_entropy; }); }},
      {{"attention_dyt_alpha", "DyT \u03b1 before the attention", "\u03b1",
        "the scale inside tanh(\u03b1 x) of each block's first DyT, from \u03b1\u2080: larger squashes more", true,
        has_dyt, "runs with norm type DyT"},
       Moment::AfterUpdate,
       [](const State& s) { return per_block(s, [&](std::size_t l) { return dyt_alpha(block(s, l), 0); }); }},
      {{"mlp_dyt_alpha", "DyT \u03b1 before the MLP", "\u03b1", "the same for each block's second DyT", true, has_dyt,
        "runs with norm type DyT"},
       Moment::AfterUpdate,
       [](const State& s) { return per_block(s, [&](std::size_t l) { return dyt_alpha(block(s, l), 1); }); }},
      {{"rezero_alpha", "ReZero \u03b1", "\u03b1",
        "how much of its sub-layers each block adds to the stream: 0 at the start, so every block begins as "
        "the identity; it may turn negative (a linear colour scale)",
        true, has_rezero, "ReZero runs", /*signed_values=*/true},
       Moment::AfterUpdate,
       [](const State& s) { return per_block(s, [&](std::size_t l) { return block(s, l).rezero_alpha; }); }},
  };
  return table;
}

bool recorded(const Statistic& statistic, const State& s) { return records(statistic.info, s.model->config); }

}  // namespace

bool records(const StatisticInfo& statistic, const ModelConfig& model) {
  return !statistic.recorded_for || statistic.recorded_for(model);
}

const std::vector<StatisticInfo>& layer_statistics() {
  static const std::vector<StatisticInfo> infos = [] {
    std::vector<StatisticInfo> out;
    for (const Statistic& s : statistics()) out.push_back(s.info);
    return out;
  }();
  return infos;
}

const StatisticInfo* find_statistic(const std::string& name) {
  for (const StatisticInfo& info : layer_statistics()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

std::string layers_summary(const RunRecord& run) {
  std::string text;
  for (const StatisticInfo& info : layer_statistics()) {
    const Series* series = run.find_series(info.name);
    if (!series || series->steps.empty()) continue;
    const std::size_t last = series->steps.size() - 1;
    if (text.empty()) text = "  layer statistics at step " + std::to_string(series->steps[last]) + ", layer 1 first:\n";
    char cell[64];
    std::snprintf(cell, sizeof cell, "    %-26s", info.name.c_str());
    text += cell;
    for (int layer = 0; layer < series->width(); ++layer) {
      std::snprintf(cell, sizeof cell, " %8.2g", series->at(last, layer));
      text += cell;
    }
    text += "  (" + info.unit + ")\n";
  }
  return text;
}

bool records_layer_stats(const TrainConfig& config, int step) {
  if (config.layer_stats_every == 0) return false;
  return step <= kDenseStatisticSteps || step % config.layer_stats_every == 0 || evaluates_at(config, step);
}

LayerRecorder::LayerRecorder(Gpt& model) : state_(new State{model, {}, {}, {}, {}}) {
  for (auto& b : *model->blocks) state_->blocks.push_back(b->as<BlockImpl>());
  state_->probes.resize(state_->blocks.size());
  for (std::size_t l = 0; l < state_->probes.size(); ++l) block(*state_, l).set_probe(&state_->probes[l]);
}

LayerRecorder::~LayerRecorder() {
  for (std::size_t l = 0; l < state_->probes.size(); ++l) block(*state_, l).set_probe(nullptr);
}

void LayerRecorder::after_backward() {
  torch::NoGradGuard no_grad;
  State& s = *state_;
  for (std::size_t l = 0; l < s.probes.size(); ++l) {
    block(s, l).set_probe(nullptr);  // the update and any evaluation run unmeasured
    std::vector<torch::Tensor> copies;
    for (const auto& m : matrices(block(s, l))) copies.push_back(m.clone());
    s.weights_before.push_back(std::move(copies));
  }
  s.measured.resize(statistics().size());
  for (std::size_t i = 0; i < statistics().size(); ++i) {
    if (statistics()[i].moment == Moment::AfterBackward && recorded(statistics()[i], s)) {
      s.measured[i] = statistics()[i].measure(s);
    }
  }
}

torch::Tensor LayerRecorder::after_update() {
  torch::NoGradGuard no_grad;
  State& s = *state_;
  const auto& table = statistics();
  for (std::size_t i = 0; i < table.size(); ++i) {
    if (table[i].moment == Moment::AfterUpdate && recorded(table[i], s)) s.measured[i] = table[i].measure(s);
  }
  std::vector<torch::Tensor> flat;
  for (const auto& values : s.measured) {
    if (values.defined()) flat.push_back(values.to(torch::kDouble).reshape({-1}));
  }
  return torch::cat(flat);
}

std::vector<SeriesPoint> statistic_points(const ModelConfig& model, const double* values) {
  std::vector<SeriesPoint> points;
  for (const Statistic& statistic : statistics()) {
    if (!records(statistic.info, model)) continue;
    const int count = statistic.info.per_layer ? model.layers : 1;
    points.push_back({statistic.info.name, statistic.info.per_layer ? model.layers : 0, 0, {values, values + count}});
    values += count;
  }
  return points;
}

}  // namespace normlab
