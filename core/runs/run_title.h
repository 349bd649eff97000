#pragma once
// What a run is called on screen, kept apart from its name in files (config.name), which
// sweeps and seed groups go by: what the user called it, else what sets its settings
// apart from the defaults of its scale.
#include <string>
#include <vector>

#include "config.h"

namespace normlab {

// Whether a title names the seed: a group of seeds is called by its runs' title without it.
enum class SeedInTitle { Said, Unsaid };

// The design as default_run_name says it ("pre-norm lr 6e-3 warmup 30"), then each other
// setting that shapes the result and differs from the defaults of the run's scale (the
// CPU scale's when its batch and context are that scale's, else the full course's):
// "pre-norm lr 6e-3 warmup 30 · steps 300, layers 16, seed 1338".
std::string run_title(const TrainConfig& config, SeedInTitle seed = SeedInTitle::Said);

// The label the user gave the run, else its title.
std::string display_name(const TrainConfig& config);

// display_name, and where another of `runs` reads the same, what tells this one apart:
// the first setting that differs from each of those ("pre-norm lr 1e-3 warmup 30 · seed
// 1338", "… · threads 2"), else `started` (when it started), when given.
std::string distinct_name(const TrainConfig& config, const std::vector<const TrainConfig*>& runs,
                          const std::string& started = {});

}  // namespace normlab
