#pragma once
// What a run is doing, said in words from its record alone: a verdict (learning, on the
// unigram baseline, diverged, …), the numbers it rests on with their steps, and one plain
// sentence built from them. Pure functions of a RunRecord: no torch, no Qt. The window, the
// command line, the sweeps' summaries, run CSVs and `normlab-cli explain` all read runs
// through here, so a sweep's table and a run's verdict never disagree.
#include <string>
#include <vector>

#include "config.h"
#include "run_record.h"

namespace normlab {

enum class Verdict { NotStarted, TooEarly, Learning, OnBaseline, LeftBaseline, Overfitting, Diverged };
struct VerdictInfo {
  Verdict value;
  const char* name;   // "on-baseline": in files, CSV columns and `explain --json`
  const char* label;  // "on the baseline": in sentences and the window's table tooltip
  const char* word;   // at most 8 characters, for the run table's narrow column
  const char* help;   // what it means, one sentence
};
inline constexpr VerdictInfo kVerdicts[] = {
    {Verdict::NotStarted, "not-started", "not started", "\u2014", "queued, or never evaluated"},
    {Verdict::TooEarly, "too-early", "too early to tell", "early",
     "not enough evaluations since the warmup to tell whether it learns"},
    {Verdict::Learning, "learning", "learning", "learning",
     "its held-out loss is below the unigram baseline: it uses the context"},
    {Verdict::OnBaseline, "on-baseline", "on the baseline", "baseline",
     "its held-out loss sits on the unigram baseline: it has learnt which tokens are common and nothing more"},
    {Verdict::LeftBaseline, "left-baseline", "left the baseline", "escaped",
     "it sat on the unigram baseline, then escaped below it"},
    {Verdict::Overfitting, "overfitting", "overfitting", "overfit",
     "its held-out loss rises while its training loss falls: it memorises its training text"},
    {Verdict::Diverged, "diverged", "diverged", "diverged", "its loss became non-finite or exploded"},
};
static_assert(in_enum_order(kVerdicts));
const VerdictInfo& info(Verdict verdict);

// The thresholds, each with why it is what it is.
//
// Held-out loss more than this below the unigram baseline means the model uses the context:
// the one definition of "stalled" (the sweeps' classify reads it through judge). A trained
// run at the CPU scale ends 1 to 2 nats below the baseline; a stalled one within a few
// hundredths of it.
inline constexpr double kStallMargin = 0.1;
// Held-out loss up to this far above the baseline still sits on it: the baseline is the
// frequencies of the training split, and a model that has learnt them lands a few hundredths
// above on the held-out positions (post-norm at the CPU scale: +0.00 to +0.09 nats).
inline constexpr double kAboveBaselineBand = 0.15;
// Evaluations in a row that make a stretch: on the baseline for this many after the warmup
// before the verdict says so (at the CPU scale 100 steps, at full scale 200), and rising for
// this many before it says overfitting. One or two evaluations in the band happen on the
// way down in every run that learns.
inline constexpr int kStretchEvaluations = 3;
// Held-out loss this far above its lowest has exploded: no schedule brings it back within a
// run (ordinary noise between evaluations is hundredths of a nat).
inline constexpr double kExplodedRise = 1.0;
// Held-out loss this far above its lowest, rising over a stretch while training loss falls,
// is overfitting rather than noise (evaluation noise at the CPU scale: about 0.01 nats).
inline constexpr double kOverfittingRise = 0.05;
// Context use (mutual information between context and prediction, nats) under this is
// "almost none": a model that has learnt only the frequencies measures a few hundredths,
// one that learns 0.5 nats and more.
inline constexpr double kLittleContextUse = 0.1;
// The first layer's gradient against the last's: under kStarvedGradient the update does not
// reach the first layers (post-norm's 1e-10 and less at the CPU scale); under kWeakGradient
// it reaches them weakly. Pre-norm's ratio is of order 1.
inline constexpr double kStarvedGradient = 1e-3;
inline constexpr double kWeakGradient = 0.1;

// The numbers a verdict rests on. NaN (or -1 for a step) where the record lacks them.
struct VerdictEvidence {
  int step = -1;              // the last evaluation's step
  double heldout = 0;         // held-out loss there
  double baseline = 0;        // the run's unigram baseline
  double to_baseline = 0;     // heldout − baseline: negative below it
  double lowest_heldout = 0;  // and its step
  int lowest_step = -1;
  double training = 0;     // training loss over the steps up to `step` (RunRecord::final_losses)
  double gap = 0;          // the held-out loss over those steps − training
  int gap_from_step = -1;  // the first of those steps
  double context_use = 0;  // nats, at the last evaluation that recorded it, and its step
  int context_step = -1;
  double frequency_mismatch = 0;  // nats, at context_step
  // The first layer's gradient norm over the last layer's: the median over the evaluations
  // from gradient_from_step to gradient_step (since the verdict took hold).
  double gradient_ratio = 0;
  int gradient_from_step = -1;
  int gradient_step = -1;
  int layers = 0;
};

struct RunVerdict {
  Verdict verdict = Verdict::NotStarted;
  // Where it took hold: on the baseline since, below it since, escaped at, turned at, diverged
  // at; -1 while it is too early or not started.
  int since_step = -1;
  VerdictEvidence evidence;
  std::vector<std::string> missing;  // what the record lacks that the sentence would have said
  std::string sentence;              // one plain sentence (or two joined), for people
};

// The verdict of `run` now, from its record alone: after each evaluation while it trains,
// and once it has ended.
RunVerdict judge(const RunRecord& run);

// A few words for a narrow place (beside the Inside view's heatmaps): the verdict's label and
// where it took hold, "learning since step 100", "left the baseline at step 300", "too early
// to tell".
std::string headline(const RunVerdict& verdict);
// "layer 1's gradient is 11 times layer 8's": the gradient evidence in words, empty where the
// record has no layer statistics.
std::string gradient_clause(const VerdictEvidence& evidence);

// "Only the placement differs. Pre-norm left … ; post-norm is still …": what differs between
// two runs' settings (or "The same settings") and between their verdicts.
std::string compare_sentence(const RunRecord& a, const RunRecord& b);

// One JSON object: the run's name, title and status, its verdict, since_step, sentence,
// missing and the evidence's fields (null where unknown).
std::string verdict_json_text(const RunRecord& run, const RunVerdict& verdict);
// `normlab-cli explain --json`: one run's object as above; for several, {"runs": [...]}, and
// with exactly two their "comparison" (compare_sentence).
std::string explain_json_text(const std::vector<const RunRecord*>& runs);

// `normlab-cli explain`: the run's title, status and verdict, its sentence, and the
// evidence's numbers with their steps, one per line (for a terminal).
std::string explain_text(const RunRecord& run);

}  // namespace normlab
