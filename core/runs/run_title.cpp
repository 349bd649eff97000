#include "run_title.h"

#include <algorithm>
#include <filesystem>

#include "config_fields.h"
#include "presets.h"

namespace normlab {

namespace {

// The defaults the run's settings are measured against: a run at the CPU scale would
// otherwise say its batch, context, steps and evaluations every time.
TrainConfig scale_defaults(const TrainConfig& config) {
  const TrainConfig cpu = scaled(TrainConfig{}, Scale::Cpu);
  const bool at_cpu_scale = config.batch_size == cpu.batch_size && config.model.context == cpu.model.context;
  return at_cpu_scale ? cpu : scaled(TrainConfig{}, Scale::Full);
}

}  // namespace

std::string run_title(const TrainConfig& config, SeedInTitle seed) {
  const TrainConfig defaults = scale_defaults(config);
  std::string rest;
  for (const ConfigField& field : config_fields()) {
    if (!field.shapes_result || field.in_design_name) continue;
    if (seed == SeedInTitle::Unsaid && field.key == "seed") continue;
    std::string value = shown_text(field, config);
    if (value == shown_text(field, defaults)) continue;
    if (field.widget == Widget::File && value == kDefaultCorpusName) continue;  // the default, by its name
    if (field.widget == Widget::File) value = std::filesystem::path(value).filename().string();  // the folder is noise
    rest += (rest.empty() ? " \u00b7 " : ", ") + field.flag + " " + value;
  }
  return design_name(config) + rest;
}

std::string display_name(const TrainConfig& config) { return config.label.empty() ? run_title(config) : config.label; }

std::string distinct_name(const TrainConfig& config, const std::vector<const TrainConfig*>& runs,
                          const std::string& started) {
  const std::string name = display_name(config);
  std::vector<const TrainConfig*> alike;
  for (const TrainConfig* other : runs) {
    if (other != &config && display_name(*other) == name) alike.push_back(other);
  }
  if (alike.empty()) return name;
  for (const ConfigField& field : config_fields()) {
    const std::string value = shown_text(field, config);
    const bool apart = std::all_of(alike.begin(), alike.end(),
                                   [&](const TrainConfig* other) { return shown_text(field, *other) != value; });
    if (!apart) continue;
    const std::string shown = field.widget == Widget::File ? std::filesystem::path(value).filename().string() : value;
    return name + " \u00b7 " + field.flag + " " + (shown.empty() ? "(built in)" : shown);
  }
  return started.empty() ? name : name + " \u00b7 " + started;
}

}  // namespace normlab
