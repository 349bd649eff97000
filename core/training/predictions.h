#pragma once
// What a model's next-token predictions on the held-out positions say beyond their loss:
// how much they depend on the context, and how far their average is from the frequency
// predictor whose loss is the baseline. Recorded at every evaluation as scalar series.
// No torch: the window and the command line read the names from here.
//
// With q_c the model's next-token distribution after context c, q̄ the mean of q_c over
// the evaluated positions and u the add-one smoothed training unigram:
//   context use        C = mean_c KL(q_c ‖ q̄) = H(q̄) − mean_c H(q_c)
// the mutual information between context and prediction: 0 exactly when the model
// predicts the same distribution after every context, whatever distribution that is;
//   frequency mismatch KL(q̄ ‖ u)
// 0 when the predictions average to the unigram. A model that has learnt which tokens are
// common and nothing about context has both near 0, and its held-out loss near the
// baseline. All in nats, computed in float64.
#include <string>
#include <vector>

#include "layer_stats.h"

namespace normlab {

struct PredictionStats {
  double context_use = 0;
  double frequency_mismatch = 0;
};

// The two series, in this order, each one value per evaluation (per_layer false).
const std::vector<StatisticInfo>& prediction_statistics();

// The points an evaluation at `step` adds to its run's record, in prediction_statistics() order.
std::vector<SeriesPoint> prediction_points(const PredictionStats& stats, int step);

// "context use 0.842 nats · frequency mismatch 0.021 nats · …": those of the two
// statistics `run` recorded at `step`; empty when none.
std::string statistics_line(const RunRecord& run, int step);

// What the evaluation at `step` of `run` found, for a terminal: one line of the two
// statistics, then each prompt with its greedy and sampled continuation when the run wrote
// text there; line breaks in the text shown as "↵". Empty when nothing was recorded there.
std::string evaluation_text(const RunRecord& run, int step);

}  // namespace normlab
