#pragma once
// A sweep's summary chart as an SVG picture, so the command line leaves one beside the
// summary CSV: final held-out loss against the varied setting, one line per placement
// (the mean over seeds, with the min-max band), the unigram baseline across, stalled
// runs as hollow marks and diverged ones as crosses along the top.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sweep.h"

namespace normlab {

struct SweepChart {
  std::string title;    // "Final held-out loss against depth (CPU scale, 600 steps)"
  std::string setting;  // config field key of the varied setting
  std::vector<SweepResult> results;
  int width = 900, height = 560;
  // A point (placement, value) ringed: the one whose runs the window shows.
  std::optional<std::pair<NormPlacement, double>> selected;
};

std::string sweep_chart_svg(const SweepChart& chart);
// "Final held-out loss against depth (600 steps of 8 x 64 tokens)", "… against peak
// learning rate, with QK-norm (…)" when the sweep fixes a norm type or switch
std::string sweep_chart_title(const Sweep& sweep);

// Each point's mark and where the picture draws it (pixels from the top left), so a
// pointer can find the point under it. Diverged points sit along the top.
struct SweepMark {
  SweepPoint point;
  double cx = 0, cy = 0;
};
std::vector<SweepMark> sweep_chart_marks(const SweepChart& chart);

}  // namespace normlab
