#pragma once
// The course as a lesson: before each of the course's runs trains, the learner predicts
// its fate (it learns, it stalls on the unigram baseline, it diverges); once the run's
// verdict settles, the lesson says whether the prediction was right, with the run's
// sentence and the view that proves it. Data and rules only, no Qt: the questions and
// their order, how a verdict answers a question, the score, and the state kept beside the
// runs. lab/lesson.h drives it with the lab's runs; every sentence it shows is in
// lesson_text.h.
#include <optional>
#include <string>
#include <vector>

#include "config.h"
#include "run_record.h"
#include "verdict.h"

namespace normlab {

// What the learner can predict, and what a settled verdict says happened.
enum class LessonOutcome { Learns, Stalls, Diverges };
struct LessonOutcomeInfo {
  LessonOutcome value;
  const char* name;    // "stalls": in the lesson's file
  const char* choice;  // "It stalls on the baseline": the button that predicts it
  const char* past;    // "it stalled on the unigram baseline": what the run did
};
inline constexpr LessonOutcomeInfo kLessonOutcomes[] = {
    {LessonOutcome::Learns, "learns", "It learns", "it learnt"},
    {LessonOutcome::Stalls, "stalls", "It stalls on the baseline", "it stalled on the unigram baseline"},
    {LessonOutcome::Diverges, "diverges", "It diverges", "it diverged"},
};
static_assert(in_enum_order(kLessonOutcomes));
const LessonOutcomeInfo& info(LessonOutcome outcome);
LessonOutcome parse_outcome(const std::string& name);  // UserError for any other name

// A view of the window that proves an answer, as the run details' evidence links name it
// ("curves", "text", "statistic:NAME"), and the words of its link.
struct ProofLink {
  const char* link = nullptr;  // nullptr: none
  const char* words = nullptr;
};

// The one table from a run's verdict to the lesson's answer. A verdict that `answers`
// gives its outcome at once while the run trains when `settles_while_training`, else only
// once the run is done: a run on the baseline may still escape it (the long warmup does),
// one below it or diverged does not come back. The proofs: the per-layer gradients and the
// text for a stall, the curves for learning, an escape and a divergence.
struct VerdictAnswer {
  Verdict verdict;
  bool answers;
  LessonOutcome outcome;
  bool settles_while_training;
  ProofLink proofs[2];
};
inline constexpr VerdictAnswer kVerdictAnswers[] = {
    {Verdict::NotStarted, false, LessonOutcome::Learns, false, {}},
    {Verdict::TooEarly, false, LessonOutcome::Learns, false, {}},
    {Verdict::Learning, true, LessonOutcome::Learns, true, {{"curves", "the loss curves"}, {"text", "what it writes"}}},
    {Verdict::OnBaseline,
     true,
     LessonOutcome::Stalls,
     false,
     {{"statistic:attention_grad_norm", "the gradient by layer"}, {"text", "what a stalled model writes"}}},
    {Verdict::LeftBaseline,
     true,
     LessonOutcome::Learns,
     true,
     {{"curves", "the curves: on the baseline, then out"}, {"statistic:attention_grad_norm", "the gradient by layer"}}},
    {Verdict::Overfitting,
     true,
     LessonOutcome::Learns,
     true,
     {{"curves", "the loss curves"}, {"text", "what it writes"}}},
    {Verdict::Diverged, true, LessonOutcome::Diverges, true, {{"curves", "the loss curves"}, {}}},
};
static_assert(sizeof kVerdictAnswers / sizeof kVerdictAnswers[0] == sizeof kVerdicts / sizeof kVerdicts[0]);
const VerdictAnswer& answer_of(Verdict verdict);

// The outcome a run's verdict gives the lesson now: none while it is too early, or on the
// baseline before the run is done.
std::optional<LessonOutcome> settled_outcome(Verdict verdict, RunStatus status);

// One question: a run's settings, the learner's prediction, and what the run did once its
// verdict settled (kept, so the lesson's summary stands even when the run is removed).
struct LessonQuestion {
  TrainConfig config;
  bool further = false;  // the learner's own experiment after the course's runs
  std::optional<LessonOutcome> prediction;
  std::optional<LessonOutcome> outcome;
  std::string verdict;    // the verdict's name when it settled, "left-baseline"
  int verdict_step = -1;  // and the step it took hold at
  std::string sentence;   // the run's sentence then
  std::string run;        // the name of the run that answered
  bool right() const { return prediction && outcome && *prediction == *outcome; }
};

struct LessonState {
  std::string scale;  // "cpu" or "full": the scale the course's runs were made at
  std::vector<LessonQuestion> questions;
  // The question shown; questions.size(): the summary, after the last.
  int current = 0;
  bool left = false;  // the learner left it: it waits, untouched, until they come back
  bool at_summary() const { return current >= int(questions.size()); }
};

// A lesson over the course's runs (workshop_runs), in the course's order: pre-norm first,
// then post-norm at the same rate, the higher rate, and the long warmup last.
LessonState new_lesson(const std::vector<TrainConfig>& course, const std::string& scale);

// "Post-norm, lr 6e-3, 30-step warmup: will it learn?" (the depth too, when not the course's).
std::string question_text(const TrainConfig& config);
// "Post-norm, lr 1e-3, 30-step warmup": the question's settings alone.
std::string settings_text(const TrainConfig& config);
// What the lesson says of an answered question: "Right: it stalled on the unigram baseline."
// or "Not this time: it learnt (you said: it stalls on the baseline)."
std::string answer_text(const LessonQuestion& question);

struct LessonScore {
  int predicted = 0;  // questions with a prediction
  int answered = 0;   // of those, with an outcome
  int right = 0;
};
LessonScore score(const LessonState& state);
// "You predicted 4 of 5 runs right." (and how many still train).
std::string score_text(const LessonScore& score);

// The lesson's file, JSON: versioned, each question's settings as a run file writes them.
std::string lesson_json_text(const LessonState& state);
LessonState lesson_from_json_text(const std::string& text);  // UserError on anything malformed

}  // namespace normlab
