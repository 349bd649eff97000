#pragma once
// A sweep's summary chart as an SVG picture, so the command line leaves one beside the
// summary CSV: final held-out loss against the varied setting, one line per placement
// (the mean over seeds, with the min-max band), the unigram baseline across, stalled
// runs as hollow marks and diverged ones as crosses along the top.
#include <string>
#include <vector>

#include "sweep.h"

namespace normlab {

struct SweepChart {
  std::string title;    // "Final held-out loss against depth (CPU scale, 600 steps)"
  std::string setting;  // config field key of the varied setting
  std::vector<SweepResult> results;
  int width = 900, height = 560;
};

std::string sweep_chart_svg(const SweepChart& chart);

}  // namespace normlab
