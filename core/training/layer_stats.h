#pragma once
// What the trainer records inside the model ("Inside the model"): one table of
// statistics, each a named Series in the run record, per layer or per step. No torch:
// the window and the command line read the names, labels and units from here.
#include <string>
#include <vector>

#include "core/runs/run_record.h"

namespace normlab {

struct StatisticInfo {
  std::string name;   // the series' name in run files and CSV columns
  std::string label;  // "Attention gradient norm"
  std::string unit;   // what the numbers are in, for colour bars and readouts
  std::string help;   // what to look for, one sentence
  bool per_layer;     // false: one value per step
  // The models that have it (a parameter only some designs have), nullptr for every model;
  // `only_for` says which in words: "runs with norm type DyT".
  bool (*recorded_for)(const ModelConfig& model) = nullptr;
  std::string only_for;
  // Values that start at 0 or change sign (ReZero's α): drawn on a linear colour scale,
  // where every other statistic's spans decades and is drawn on a log one.
  bool signed_values = false;
};

// In display order. Adding a statistic: one row in layer_stats.cpp.
const std::vector<StatisticInfo>& layer_statistics();
const StatisticInfo* find_statistic(const std::string& name);  // nullptr if none of ours
// Whether a model of this config has the statistic to record.
bool records(const StatisticInfo& statistic, const ModelConfig& model);

// Every step up to here, then every config.layer_stats_every steps: the mechanism the
// view shows forms within the first 10 to 20 updates.
inline constexpr int kDenseStatisticSteps = 100;

// Whether the update numbered `step` (1-based) records the statistics: densely at the
// start, then at the configured interval, and at every evaluation; never when off.
bool records_layer_stats(const TrainConfig& config, int step);

// Each statistic's latest values in `run`, one line each, layer 1 first:
// "  attention_grad_norm    1.2e-10 3.4e-08 … 0.26  (L2 norm)". Empty when none recorded.
std::string layers_summary(const RunRecord& run);

}  // namespace normlab
