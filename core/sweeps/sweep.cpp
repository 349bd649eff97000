#include "sweep.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "core/runs/config_fields.h"
#include "core/runs/run_text.h"
#include "core/runs/seeds.h"
#include "core/system/atomic_file.h"

namespace normlab {

const SweepSettingInfo& sweep_setting(const std::string& key_or_flag) {
  std::string names;
  for (const auto& setting : kSweepSettings) {
    const ConfigField& field = config_field(setting.key);
    if (key_or_flag == field.key || key_or_flag == field.flag) return setting;
    names += std::string(names.empty() ? "" : ", ") + "'" + field.flag + "'";
  }
  throw UserError("a sweep varies one of " + names + ", not '" + key_or_flag + "'");
}

std::vector<SweepRun> expand(const Sweep& sweep) {
  const SweepSettingInfo& setting = sweep_setting(sweep.setting);
  const ConfigField& field = config_field(setting.key);
  if (sweep.values.empty()) throw UserError("a sweep needs at least one value of " + field.noun);
  if (sweep.placements.empty()) throw UserError("a sweep needs at least one placement");
  if (sweep.seeds < 1) throw UserError("a sweep needs at least one seed");
  std::vector<SweepRun> runs;
  for (const std::string& value : sweep.values) {
    for (const NormPlacement placement : sweep.placements) {
      for (int i = 0; i < sweep.seeds; ++i) {
        SweepRun run{value, std::strtod(value.c_str(), nullptr), placement, sweep.base};
        TrainConfig& c = run.config;
        set_field_text(field, c, value);
        c.model.norm = placement;
        validate(c);
        c.name.clear();
        c = with_seed(c, i, sweep.seeds);
        runs.push_back(std::move(run));
      }
    }
  }
  return runs;
}

const OutcomeInfo& info(Outcome outcome) { return kOutcomes[std::size_t(outcome)]; }

Outcome classify(const RunRecord& run) {
  switch (run.status) {
    case RunStatus::Diverged: return Outcome::Diverged;
    case RunStatus::Stopped: return Outcome::Stopped;
    case RunStatus::Failed: return Outcome::Failed;
    case RunStatus::Queued:
    case RunStatus::Running:
    case RunStatus::Interrupted: return Outcome::Stopped;  // cut short before it ended
    case RunStatus::Done: break;
  }
  switch (judge(run).verdict) {
    case Verdict::Diverged: return Outcome::Diverged;
    case Verdict::Learning:
    case Verdict::LeftBaseline:
    case Verdict::Overfitting: return Outcome::Trained;
    case Verdict::NotStarted:
    case Verdict::TooEarly:
    case Verdict::OnBaseline: break;
  }
  return Outcome::Stalled;
}

SweepResult summarise(const SweepRun& run, const RunRecord& record) {
  SweepResult r;
  r.run = record.config.name;
  r.value = run.value;
  r.x = run.x;
  r.placement = run.placement;
  r.seed = record.config.seed;
  r.final_val = record.final_val_loss();
  r.best_val = std::numeric_limits<double>::quiet_NaN();
  for (const EvalMetrics& e : record.evals) {
    if (std::isfinite(e.val_loss) && !(e.val_loss >= r.best_val)) r.best_val = e.val_loss;
  }
  r.baseline = record.baseline_loss;
  r.outcome = classify(record);
  return r;
}

std::string summary_csv(const std::string& setting, const std::vector<SweepResult>& results) {
  std::ostringstream csv;
  csv.precision(9);
  csv << setting << ",placement,seed,final_val_loss,best_val_loss,baseline_loss,outcome,run\n";
  auto number = [&](double value) {
    if (std::isfinite(value)) csv << value;
    csv << ',';
  };
  for (const SweepResult& r : results) {
    csv << r.value << ',' << to_string(r.placement) << ',' << r.seed << ',';
    number(r.final_val);
    number(r.best_val);
    number(r.baseline);
    csv << info(r.outcome).name << ',' << csv_quoted(r.run) << '\n';
  }
  return csv.str();
}

void write_summary_csv(const std::string& setting, const std::vector<SweepResult>& results,
                       const std::filesystem::path& path) {
  write_file_atomically(path, summary_csv(setting, results));
}

std::string sweep_json_text(const Sweep& sweep, const std::vector<SweepResult>& results) {
  using nlohmann::json;
  const auto number = [](double value) { return std::isfinite(value) ? json(value) : json(nullptr); };
  json fixed = json::object();
  for (const ConfigField& field : config_fields()) {
    if (field.key != sweep.setting && field.key != "norm") fixed[field.key] = field_text(field, sweep.base);
  }
  json placements = json::array(), rows = json::array();
  for (const NormPlacement placement : sweep.placements) placements.push_back(to_string(placement));
  for (const SweepResult& r : results) {
    rows.push_back({{"value", r.value},
                    {"placement", to_string(r.placement)},
                    {"seed", r.seed},
                    {"final_val_loss", number(r.final_val)},
                    {"best_val_loss", number(r.best_val)},
                    {"baseline_loss", number(r.baseline)},
                    {"outcome", info(r.outcome).name},
                    {"run", r.run}});
  }
  const json j = {{"sweep", sweep.name},      {"setting", sweep.setting}, {"values", sweep.values},
                  {"placements", placements}, {"seeds", sweep.seeds},     {"fixed", fixed},
                  {"results", rows}};
  return j.dump(2) + "\n";
}

Sweep sweep_from_json_text(const std::string& text) {
  using nlohmann::json;
  try {
    const json j = json::parse(text);
    Sweep sweep;
    sweep.name = j.at("sweep").get<std::string>();
    sweep.setting = sweep_setting(j.at("setting").get<std::string>()).key;
    sweep.values = j.at("values").get<std::vector<std::string>>();
    for (const auto& placement : j.at("placements"))
      sweep.placements.push_back(parse_norm(placement.get<std::string>()));
    sweep.seeds = j.at("seeds").get<int>();
    for (const auto& [key, value] : j.at("fixed").items()) {
      const ConfigField& field = config_field(key);
      set_field_text(field, sweep.base, value.get<std::string>());
    }
    expand(sweep);  // refuses what cannot run, naming it
    return sweep;
  } catch (const json::exception& error) {
    throw UserError(std::string("not a sweep description: ") + error.what());
  } catch (const std::out_of_range& error) {
    throw UserError(std::string("a sweep description names an unknown setting: ") + error.what());
  }
}

std::filesystem::path sweep_description_path(const std::filesystem::path& folder, const std::string& sweep_name) {
  return folder / (file_stem(sweep_name) + kSweepDescriptionSuffix);
}

std::vector<SweepPoint> aggregate(const std::vector<SweepResult>& results) {
  std::vector<NormPlacement> order;
  std::map<std::pair<NormPlacement, double>, std::vector<const SweepResult*>> groups;
  for (const SweepResult& r : results) {
    if (std::find(order.begin(), order.end(), r.placement) == order.end()) order.push_back(r.placement);
    groups[{r.placement, r.x}].push_back(&r);
  }
  std::vector<SweepPoint> points;
  for (const NormPlacement placement : order) {
    for (const auto& [key, group] : groups) {  // ordered by x within a placement
      if (key.first != placement) continue;
      SweepPoint p{placement, key.second};
      double sum = 0;
      int with_loss = 0;
      p.min = std::numeric_limits<double>::infinity();
      p.max = -p.min;
      for (const SweepResult* r : group) {
        ++p.runs;
        p.stalled += r->outcome == Outcome::Stalled;
        p.diverged += r->outcome == Outcome::Diverged;
        // Only finished runs: a stopped one's last loss says where it was cut, not where it ends.
        const bool finished = r->outcome == Outcome::Trained || r->outcome == Outcome::Stalled;
        if (!finished || !std::isfinite(r->final_val)) continue;
        sum += r->final_val;
        ++with_loss;
        p.min = std::min(p.min, r->final_val);
        p.max = std::max(p.max, r->final_val);
      }
      p.mean = with_loss ? sum / with_loss : std::numeric_limits<double>::quiet_NaN();
      if (!with_loss) p.min = p.max = p.mean;
      points.push_back(p);
    }
  }
  return points;
}

int find_run(const TrainConfig& wanted, const std::vector<const RunRecord*>& records) {
  int found = -1;
  for (std::size_t i = 0; i < records.size(); ++i) {
    if (!same_experiment(records[i]->config, wanted)) continue;
    // RunProgress lists the better standing first; the latest of equal standing wins.
    if (found < 0 || progress_of(records[i]->status) <= progress_of(records[std::size_t(found)]->status)) {
      found = int(i);
    }
  }
  return found;
}

bool answers(const RunRecord& run, const TrainConfig& wanted) {
  return progress_of(run.status) == RunProgress::Result && same_experiment(run.config, wanted);
}

SweepPreset parse_sweep_preset(const std::string& name) {
  std::string names;
  for (const auto& preset : kSweepPresets) {
    if (name == preset.name) return preset.value;
    names += std::string(names.empty() ? "'" : "' or '") + preset.name;
  }
  throw UserError("sweep preset must be " + names + "', not '" + name + "'");
}

Sweep sweep_preset(SweepPreset preset, const TrainConfig& base, Scale scale) {
  Sweep sweep;
  sweep.name = kSweepPresets[std::size_t(preset)].name;
  sweep.base = base;
  sweep.base.warmup_steps = kShortWarmup;
  switch (preset) {
    case SweepPreset::Depth:
      sweep.base.peak_lr = 1e-3;  // the course's rate; only the depth moves
      sweep.setting = "layers";
      sweep.values = scale == Scale::Cpu ? std::vector<std::string>{"2", "4", "8", "16"}
                                         : std::vector<std::string>{"2", "4", "8", "16", "24", "32"};
      sweep.placements = {NormPlacement::Pre, NormPlacement::Post};
      break;
    case SweepPreset::LearningRate:
      sweep.setting = "peak_lr";
      sweep.values = {"3e-4", "1e-3", "3e-3", "6e-3", "1e-2"};
      sweep.placements = {NormPlacement::Pre, NormPlacement::Post, NormPlacement::Peri, NormPlacement::DeepNorm};
      break;
  }
  return sweep;
}

std::vector<std::string> starting_values(const std::string& setting, Scale scale) {
  const std::string key = sweep_setting(setting).key;
  const TrainConfig base = scaled(TrainConfig{}, scale);
  for (const SweepPresetInfo& preset : kSweepPresets) {
    Sweep sweep = sweep_preset(preset.value, base, scale);
    if (sweep.setting == key) return sweep.values;
  }
  // The warmup, the one setting no preset varies: the shortest it takes (none to speak of).
  std::vector<std::string> warmups{std::to_string(int(config_field(key).min))};
  for (const TrainConfig& run : workshop_runs(base)) {
    const std::string warmup = std::to_string(run.warmup_steps);
    if (std::find(warmups.begin(), warmups.end(), warmup) == warmups.end()) warmups.push_back(warmup);
  }
  return warmups;
}

}  // namespace normlab
