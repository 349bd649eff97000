#pragma once
// A sweep: one setting varied over a list of values, for one or more placements,
// everything else fixed, each point optionally repeated over seeds; and the summary
// of what each run reached. Plain data, no torch, no Qt: the command line and the
// window both run sweeps from here.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/runs/config.h"
#include "core/runs/presets.h"
#include "core/runs/run_record.h"
#include "core/runs/verdict.h"

namespace normlab {

// The settings a sweep may vary, each a config field (its key and flag come from there),
// and each said in default_run_name, so every run of a sweep has its own name.
struct SweepSettingInfo {
  const char* key;  // config field key: "layers"
  bool log_axis;    // learning rates are compared on a log scale
};
inline constexpr SweepSettingInfo kSweepSettings[] = {
    {"layers", false},
    {"peak_lr", true},
    {"warmup_steps", false},
};
// By config key or command-line flag ("peak_lr" or "lr"); UserError listing the choices.
const SweepSettingInfo& sweep_setting(const std::string& key_or_flag);

struct Sweep {
  std::string name;                 // "depth": names the summary file
  std::string setting;              // config field key of the varied setting
  std::vector<std::string> values;  // as a user types them: "2", "3e-4"
  std::vector<NormPlacement> placements;
  int seeds = 1;     // each point runs with base.seed, base.seed + 1, …
  TrainConfig base;  // everything that stays fixed
};

// One run of a sweep.
struct SweepRun {
  std::string value;  // the setting's value as given
  double x = 0;       // the same as a number, for the chart
  NormPlacement placement = NormPlacement::Pre;
  TrainConfig config;  // named, validated
};

// Every run, value-major, then placement, then seed: all placements at one value are
// done before the next value. UserError naming the value or setting that is refused.
std::vector<SweepRun> expand(const Sweep& sweep);

// What a run reached: trained below the baseline, stalled on it, or worse.
enum class Outcome { Trained, Stalled, Diverged, Stopped, Failed };
struct OutcomeInfo {
  Outcome value;
  const char* name;   // in the summary CSV
  const char* label;  // in the chart's legend
};
inline constexpr OutcomeInfo kOutcomes[] = {
    {Outcome::Trained, "trained", "trained"},    {Outcome::Stalled, "stalled", "stalled at the baseline"},
    {Outcome::Diverged, "diverged", "diverged"}, {Outcome::Stopped, "stopped", "stopped"},
    {Outcome::Failed, "failed", "failed"},
};
static_assert(in_enum_order(kOutcomes));
const OutcomeInfo& info(Outcome outcome);

// A run that ended is trained when its verdict says it got below the unigram baseline (by
// more than kStallMargin: core/runs/verdict.h), stalled when it did not, diverged when
// its verdict or status says so: one rule for a sweep's table and a run's verdict.
Outcome classify(const RunRecord& run);

// One row of the summary.
struct SweepResult {
  std::string run;  // the run's name, which is also its files' stem
  std::string value;
  double x = 0;
  NormPlacement placement = NormPlacement::Pre;
  std::uint64_t seed = 0;
  double final_val = 0;  // NaN when the run never evaluated
  double best_val = 0;
  double baseline = 0;
  Outcome outcome = Outcome::Trained;
};
SweepResult summarise(const SweepRun& run, const RunRecord& record);

// One row per run: value, placement, seed, final and best held-out loss, baseline, outcome, run.
std::string summary_csv(const std::string& setting, const std::vector<SweepResult>& results);
void write_summary_csv(const std::string& setting, const std::vector<SweepResult>& results,
                       const std::filesystem::path& path);

// The sweep (its setting, values, placements, seeds and every fixed setting by its
// config key) and its summary rows, as JSON.
std::string sweep_json_text(const Sweep& sweep, const std::vector<SweepResult>& results);
// The sweep that text describes (its results are not read), so the description written
// beside a sweep's runs rebuilds it: in a cluster's array tasks and in a window following
// the folder. UserError saying what is missing or refused.
Sweep sweep_from_json_text(const std::string& text);
// The description's file in a sweep's folder: DIR/<sweep>.sweep.json (never read as a run).
std::filesystem::path sweep_description_path(const std::filesystem::path& folder, const std::string& sweep_name);
inline constexpr const char* kSweepDescriptionSuffix = ".sweep.json";

// A placement's point at one value over its seeds: what the chart draws.
struct SweepPoint {
  NormPlacement placement = NormPlacement::Pre;
  double x = 0;
  double mean = 0, min = 0, max = 0;  // final held-out loss over the runs that finished; NaN if none
  int runs = 0;
  int stalled = 0, diverged = 0;  // how many of the runs
};
// Per placement in first-seen order, then by x.
std::vector<SweepPoint> aggregate(const std::vector<SweepResult>& results);

// Which of `records` ran `wanted` (the same experiment: see same_experiment), the best
// by progress_of, the latest of equal standing; -1 when none did.
int find_run(const TrainConfig& wanted, const std::vector<const RunRecord*>& records);
// The one rule, for the window, the command line and the course experiment alike, that
// says an earlier run answers `wanted` so it is not trained again: the same experiment,
// ended with a result (done or diverged: training it again would diverge again).
bool answers(const RunRecord& run, const TrainConfig& wanted);

// The built-in sweeps, at a scale: "depth" (pre and post at the course's rate and
// warmup, over layers) and "learning rate" (pre, post, peri, deepnorm over the peak
// rate). The CPU scale sweeps fewer depths, so it fits in CPU minutes.
enum class SweepPreset { Depth, LearningRate };
struct SweepPresetInfo {
  SweepPreset value;
  const char* name;   // "depth", "learning-rate": on the command line and in the summary's file name
  const char* label;  // "Depth", in the window
  const char* help;
};
inline constexpr SweepPresetInfo kSweepPresets[] = {
    {SweepPreset::Depth, "depth", "Depth",
     "pre and post at lr 1e-3, warmup 30, over 2 to 32 layers (2 to 16 at the CPU scale)"},
    {SweepPreset::LearningRate, "learning-rate", "Learning rate",
     "pre, post, peri and deepnorm over peak rates 3e-4 to 1e-2, warmup 30"},
};
static_assert(in_enum_order(kSweepPresets));
SweepPreset parse_sweep_preset(const std::string& name);  // UserError listing the presets
// `base` already at `scale`; the preset sets the varied setting, placements and what it fixes.
Sweep sweep_preset(SweepPreset preset, const TrainConfig& base, Scale scale);
// Values to start a sweep of `setting` (a key or flag of kSweepSettings) from, at a scale:
// those of the preset that varies it; for the warmup, which none does, the shortest it
// takes and each the course uses. UserError naming the choices for any other setting.
std::vector<std::string> starting_values(const std::string& setting, Scale scale);

}  // namespace normlab
