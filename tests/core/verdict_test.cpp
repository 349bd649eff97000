// A run's verdict, evidence and sentence (core/runs/verdict.h) on records built to show
// each verdict, on the course's recorded runs, and on tiny runs trained to stall, learn,
// diverge and overfit.
#include "core/runs/verdict.h"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>

#include "core/sweeps/sweep.h"
#include "core/training/layer_stats.h"
#include "core/training/predictions.h"
#include "core/training/trainer.h"

#include "test_support.h"

namespace normlab::test {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kBaseline = 6.13;

// A run evaluated every 50 steps at `losses` (the first at step 0), training loss alongside
// (the held-out loss minus `gap` at every step, on the line between two evaluations), with
// warmup 30.
RunRecord record(std::vector<double> losses, RunStatus status = RunStatus::Running, double gap = 0.2) {
  RunRecord run;
  run.config.name = "r";
  run.config.warmup_steps = 30;
  run.config.steps = 600;
  run.baseline_loss = kBaseline;
  run.status = status;
  for (std::size_t i = 0; i < losses.size(); ++i) {
    const int step = int(i) * 50;
    if (step > 0) {
      for (int s = step - 49; s <= step; ++s) {
        const double heldout = losses[i - 1] + (losses[i] - losses[i - 1]) * (s - (step - 50)) / 50.0;
        run.steps.push_back({s, 0.1 * s, 1e-3, heldout - gap, 0});
      }
    }
    run.evals.push_back({step, 0.1 * step, losses[i]});
  }
  return run;
}

// Adds context use and frequency mismatch at every evaluation, and both gradient norms per
// layer at the last one: layer l's gradient is first * ratio^(l / (layers - 1)).
void add_statistics(RunRecord& run, double context_use, double mismatch, double first_to_last, int layers = 8) {
  for (const EvalMetrics& e : run.evals) {
    run.add_point({"context_use", 0, e.step, {context_use}});
    run.add_point({"frequency_mismatch", 0, e.step, {mismatch}});
  }
  std::vector<double> grads;
  for (int l = 0; l < layers; ++l) grads.push_back(0.3 * std::pow(first_to_last, 1.0 - double(l) / (layers - 1)));
  for (const char* name : {"attention_grad_norm", "mlp_grad_norm"}) {
    run.add_point({name, layers, run.evals.back().step, grads});
  }
}

TEST(Verdict, EachHasANameLabelWordAndHelp) {
  std::set<std::string> names, words;  // each told apart in files and in the table
  for (const VerdictInfo& v : kVerdicts) {
    EXPECT_TRUE(names.insert(v.name).second) << v.name;
    EXPECT_TRUE(words.insert(v.word).second) << v.word;
    EXPECT_STRNE(v.label, "");
    EXPECT_STRNE(v.word, "");
    EXPECT_LE(std::string(v.word).size(), 8u) << v.word;
    EXPECT_STRNE(v.help, "");
  }
}

// docs/verdicts.md lists every verdict and threshold as the code has them: a verdict added,
// renamed or retuned here without its page fails.
TEST(Verdict, ItsPageListsEveryVerdictAndThreshold) {
  std::ifstream in(fs::path(NORMLAB_SOURCE_DIR) / "docs" / "verdicts.md");
  const std::string page((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(page.empty());
  for (const VerdictInfo& v : kVerdicts) {
    EXPECT_THAT(page, HasSubstr("| `" + std::string(v.name) + "` | " + v.word + " | " + v.help + " |")) << v.name;
  }
  const auto value = [](double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return std::string(text);
  };
  EXPECT_THAT(page, HasSubstr("| `kStallMargin` | " + value(kStallMargin) + " nats |"));
  EXPECT_THAT(page, HasSubstr("| `kAboveBaselineBand` | " + value(kAboveBaselineBand) + " nats |"));
  EXPECT_THAT(page, HasSubstr("| `kStretchEvaluations` | " + value(kStretchEvaluations) + " |"));
  EXPECT_THAT(page, HasSubstr("| `kExplodedRise` | " + value(kExplodedRise) + " nat |"));
  EXPECT_THAT(page, HasSubstr("| `kOverfittingRise` | " + value(kOverfittingRise) + " nats |"));
  EXPECT_THAT(page, HasSubstr("| `kLittleContextUse` | " + value(kLittleContextUse) + " nats |"));
  EXPECT_THAT(page, HasSubstr("| `kStarvedGradient`, `kWeakGradient` | " + value(kStarvedGradient) + ", " +
                              value(kWeakGradient) + " |"));
}

TEST(Verdict, ReadsStatisticsTheEngineRecords) {
  // The series the verdict reads by name are rows of the engine's tables: a renamed
  // statistic fails here, not silently in every sentence. A run trained with layer
  // statistics has each, and its sentence uses them.
  EXPECT_NE(find_statistic("attention_grad_norm"), nullptr);
  EXPECT_NE(find_statistic("mlp_grad_norm"), nullptr);
  EXPECT_EQ(prediction_statistics()[0].name, "context_use");
  EXPECT_EQ(prediction_statistics()[1].name, "frequency_mismatch");
}

TEST(Verdict, AQueuedOrNeverEvaluatedRunHasNotStarted) {
  RunRecord queued = record({}, RunStatus::Queued);
  const RunVerdict v = judge(queued);
  EXPECT_EQ(v.verdict, Verdict::NotStarted);
  EXPECT_EQ(v.since_step, -1);
  EXPECT_EQ(v.sentence, "Queued: not trained yet.");
  EXPECT_EQ(judge(record({}, RunStatus::Running)).verdict, Verdict::NotStarted);
}

TEST(Verdict, TheFirstFiftyStepsAreTooEarly) {
  // Every placement is still above the baseline at step 50 of an 8-layer run.
  const RunVerdict v = judge(record({9.1, 6.9}));
  EXPECT_EQ(v.verdict, Verdict::TooEarly);
  EXPECT_EQ(v.since_step, -1);
  EXPECT_THAT(v.sentence, HasSubstr("0.77 nats above the unigram baseline (6.90 vs 6.13 nats)"));
  EXPECT_EQ(headline(v), "too early to tell");
  EXPECT_EQ(judge(record({9.1})).verdict, Verdict::TooEarly);
  // On the band, but not yet for a stretch after the warmup.
  EXPECT_EQ(judge(record({9.1, 6.5, 6.2, 6.18})).verdict, Verdict::TooEarly);
}

TEST(Verdict, BelowTheBaselineIsLearning) {
  RunRecord run = record({9.1, 6.5, 5.9, 5.5, 5.3});
  add_statistics(run, 0.84, 0.03, 0.8);
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::Learning);
  EXPECT_EQ(v.since_step, 100);
  EXPECT_NEAR(v.evidence.to_baseline, 5.3 - kBaseline, 1e-12);
  EXPECT_NEAR(v.evidence.gap, 0.2, 1e-9);
  EXPECT_NEAR(v.evidence.gradient_ratio, 0.8, 1e-9);
  EXPECT_EQ(v.evidence.layers, 8);
  EXPECT_TRUE(v.missing.empty());
  EXPECT_EQ(v.sentence,
            "Learning: below the unigram baseline since step 100, 0.83 nats under it at step 200 (5.30 vs 6.13 "
            "nats); held-out sits 0.20 nats above training loss; it uses the context (0.84 nats); the gradient "
            "reaches every layer (layer 1's gradient is 0.8 of layer 8's).");
  // The short form, for a narrow place, says the same.
  EXPECT_EQ(headline(v), "learning since step 100");
  EXPECT_EQ(gradient_clause(v.evidence), "layer 1's gradient is 0.8 of layer 8's");
}

TEST(Verdict, WithinTheMarginForAStretchAfterWarmupIsOnTheBaseline) {
  RunRecord run = record({9.1, 6.4, 6.2, 6.19, 6.15, 6.16});
  add_statistics(run, 0.02, 0.01, 1e-12);
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::OnBaseline);
  EXPECT_EQ(v.since_step, 100);
  EXPECT_EQ(v.sentence,
            "On the unigram baseline since step 100 (6.16 vs 6.13 nats at step 250); it uses almost no context "
            "(0.02 nats); its average prediction is the token frequencies (0.01 nats off); layer 1's gradient is "
            "1e-12 of layer 8's: the update does not reach the first layers.");
  // A stretch inside the warmup does not count: a long warmup's run sits there before it starts.
  RunRecord long_warmup = record({9.1, 6.2, 6.19, 6.18});
  long_warmup.config.warmup_steps = 200;
  EXPECT_EQ(judge(long_warmup).verdict, Verdict::TooEarly);
  // Just under the margin below still counts as on it; just past it is learning.
  EXPECT_EQ(judge(record({9.1, 6.2, 6.1, 6.05, 6.04})).verdict, Verdict::OnBaseline);
  EXPECT_EQ(judge(record({9.1, 6.5, 6.3, 6.05, 6.0})).verdict, Verdict::Learning);
  EXPECT_EQ(judge(record({9.1, 6.2, 6.1, 6.05, 6.0})).verdict, Verdict::LeftBaseline) << "after a stretch on it";
  // Far above it is not on it.
  EXPECT_EQ(judge(record({9.1, 7.0, 6.9, 6.8, 6.7})).verdict, Verdict::TooEarly);
}

TEST(Verdict, ARunThatEndedOnTheBandEndedOnTheBaseline) {
  const RunVerdict v = judge(record({9.1, 6.5, 6.2}, RunStatus::Done));
  EXPECT_EQ(headline(v), "on the baseline since step 100");
  EXPECT_EQ(gradient_clause(v.evidence), "") << "no layer statistics in this record";
  EXPECT_EQ(v.verdict, Verdict::OnBaseline);
  EXPECT_EQ(v.since_step, 100);
  EXPECT_THAT(v.sentence, HasSubstr("Ended on the unigram baseline, on it since step 100"));
}

TEST(Verdict, SatOnTheBaselineThenEscapedLeftIt) {
  RunRecord run = record({9.1, 6.3, 6.17, 6.15, 6.14, 6.0, 5.6, 5.2});
  add_statistics(run, 0.6, 0.05, 0.05);
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::LeftBaseline);
  EXPECT_EQ(v.since_step, 250);
  EXPECT_THAT(v.sentence, HasSubstr("Sat on the unigram baseline, then left it at step 250; now 0.93 nats under it"));
  EXPECT_THAT(v.sentence, HasSubstr("layer 1's gradient is 5e-2 of layer 8's: the first layers learn slowly"));
  EXPECT_EQ(headline(v), "left the baseline at step 250");
  // Passing through the band on the way down is no stretch.
  EXPECT_EQ(judge(record({9.1, 6.2, 6.1, 5.8})).verdict, Verdict::Learning);
}

TEST(Verdict, HeldOutRisingWhileTrainingFallsIsOverfitting) {
  RunRecord run = record({9.1, 5.5, 5.0, 4.9, 4.95, 5.0, 5.1});
  // The training loss keeps falling: 0.2 under held-out until step 150, then ever further.
  for (StepMetrics& s : run.steps) s.train_loss = 5.5 - 0.004 * s.step;
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::Overfitting);
  EXPECT_EQ(v.since_step, 150);
  EXPECT_NEAR(v.evidence.lowest_heldout, 4.9, 1e-12);
  EXPECT_THAT(v.sentence, HasSubstr("Overfitting since step 150: held-out loss up from 4.90 to 5.10 nats at step 300"));
  // Rising as much while the training loss rises too is no overfitting, and a rise of
  // noise's size is none either.
  EXPECT_EQ(judge(record({9.1, 5.5, 5.0, 4.9, 4.95, 5.0, 5.1})).verdict, Verdict::Learning);
  RunRecord noise = record({9.1, 5.5, 5.0, 4.9, 4.91, 4.92, 4.93});
  for (StepMetrics& s : noise.steps) s.train_loss = 5.5 - 0.004 * s.step;
  EXPECT_EQ(judge(noise).verdict, Verdict::Learning);
}

TEST(Verdict, NonFiniteOrExplodedLossDiverged) {
  RunRecord nan = record({9.1, 6.5, 5.9});
  nan.steps[70].train_loss = std::nan("");
  nan.evals.back().val_loss = std::nan("");
  nan.status = RunStatus::Diverged;
  RunVerdict v = judge(nan);
  EXPECT_EQ(v.verdict, Verdict::Diverged);
  EXPECT_EQ(v.since_step, 71);
  EXPECT_EQ(v.sentence.rfind("Diverged at step 71: the loss became non-finite", 0), 0u) << v.sentence;

  v = judge(record({9.1, 6.5, 5.9, 7.2, 8.4}));
  EXPECT_EQ(v.verdict, Verdict::Diverged);
  EXPECT_EQ(v.since_step, 150);
  EXPECT_THAT(v.sentence, HasSubstr("held-out loss exploded from 5.90 to 8.40 nats"));
}

TEST(Verdict, SaysWhatTheRecordLacks) {
  RunRecord run = record({9.1, 6.4, 6.2, 6.19, 6.15});
  run.config.layer_stats_every = 0;
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::OnBaseline);
  EXPECT_THAT(v.missing, ::testing::ElementsAre("context use", "layer statistics (off for this run)"));
  EXPECT_THAT(v.sentence, HasSubstr("No layer statistics were recorded"));
  EXPECT_THAT(v.sentence, Not(HasSubstr("context")));
  EXPECT_TRUE(std::isnan(v.evidence.gradient_ratio));

  RunRecord no_baseline = record({9.1, 6.4});
  no_baseline.baseline_loss = 0;
  const RunVerdict nb = judge(no_baseline);
  EXPECT_EQ(nb.verdict, Verdict::TooEarly);
  EXPECT_THAT(nb.missing, ::testing::Contains("unigram baseline"));
  EXPECT_THAT(nb.sentence, HasSubstr("no unigram baseline"));
}

TEST(Verdict, JsonHasTheVerdictItsStepSentenceAndEvidence) {
  RunRecord run = record({9.1, 6.4, 6.2, 6.19, 6.15});
  add_statistics(run, 0.02, 0.01, 1e-12);
  const RunVerdict v = judge(run);
  const auto json = nlohmann::json::parse(verdict_json_text(run, v));
  EXPECT_EQ(json.at("verdict"), "on-baseline");
  EXPECT_EQ(json.at("since_step"), 100);
  EXPECT_EQ(json.at("sentence"), v.sentence);
  EXPECT_NEAR(json.at("evidence").at("heldout_minus_baseline").get<double>(), 6.15 - kBaseline, 1e-12);
  EXPECT_NEAR(json.at("evidence").at("first_to_last_gradient_ratio").get<double>(), 1e-12, 1e-24);
  EXPECT_EQ(json.at("evidence").at("context_use"), 0.02);
  const auto queued = nlohmann::json::parse(verdict_json_text(record({}, RunStatus::Queued), judge(record({}))));
  EXPECT_TRUE(queued.at("since_step").is_null());
  EXPECT_TRUE(queued.at("evidence").at("heldout_loss").is_null());
}

TEST(Verdict, ASweepsOutcomeIsTheVerdictOfAnEndedRun) {
  const std::vector<std::vector<double>> cases = {{9.1, 5.5},
                                                  {9.1, 6.95},
                                                  {9.1, 7.4},
                                                  {9.1, 6.0},
                                                  {9.1, 6.5, 6.2, 6.19, 6.15},
                                                  {9.1, 6.3, 6.17, 6.15, 6.14, 6.0, 5.6},
                                                  {9.1, 6.5, 5.9, 7.2, 8.4}};
  for (const auto& losses : cases) {
    const RunRecord run = record(losses, RunStatus::Done);
    const Verdict v = judge(run).verdict;
    const Outcome o = classify(run);
    const bool below = v == Verdict::Learning || v == Verdict::LeftBaseline || v == Verdict::Overfitting;
    EXPECT_EQ(o == Outcome::Trained, below) << info(v).name;
    EXPECT_EQ(o == Outcome::Diverged, v == Verdict::Diverged) << info(v).name;
    EXPECT_EQ(o == Outcome::Stalled, !below && v != Verdict::Diverged) << info(v).name;
  }
}

TEST(Verdict, TwoRunsComparedInASentence) {
  RunRecord pre = record({9.1, 6.5, 5.9, 5.5, 5.3}, RunStatus::Done);
  pre.config.model.norm = NormPlacement::Pre;
  RunRecord post = record({9.1, 6.4, 6.2, 6.19, 6.15}, RunStatus::Done);
  post.config.model.norm = NormPlacement::Post;
  EXPECT_EQ(compare_sentence(pre, post),
            "Only the norm placement differs. Pre-norm is below the baseline since step 100 (5.30 nats at step "
            "200); post-norm ended on it, there since step 100 (6.15 nats).");
  RunRecord deep = post;  // named as its run names say it
  deep.config.model.norm = NormPlacement::DeepNorm;
  EXPECT_THAT(compare_sentence(pre, deep), HasSubstr("; deepnorm ended on it, there since step 100"));
  RunRecord faster = pre;
  faster.config.peak_lr = 6e-3;
  faster.config.model.norm = NormPlacement::Post;
  EXPECT_THAT(compare_sentence(faster, pre), HasSubstr("The norm placement and the peak learning rate differ."));
  RunRecord reseeded = pre;
  reseeded.config.seed = 7;
  EXPECT_THAT(compare_sentence(pre, reseeded), HasSubstr("Only the seed differs. The run with seed 1337 is below"));
  RunRecord slower = pre;
  slower.config.peak_lr = 3e-4;
  EXPECT_THAT(compare_sentence(slower, pre),
              HasSubstr("Only the peak learning rate differs. The run at lr 3e-4 is below the baseline"));
  EXPECT_THAT(compare_sentence(pre, pre), HasSubstr("The same settings. The first run is below"));
}

// The course's five runs at the CPU scale (`normlab-cli train --preset workshop --scale cpu
// --device cpu --threads 1`, the README's course-cpu block), trimmed by trim.py beside them,
// with one seen at step 50 and one still queued: the verdicts the lesson stands on.
struct Recorded {
  const char* file;
  std::vector<Verdict> expected;  // any of these
};
class RecordedRuns : public ::testing::TestWithParam<Recorded> {};

TEST_P(RecordedRuns, SayWhatTheCourseSays) {
  const RunRecord run = read_json(fs::path(NORMLAB_TEST_DATA) / "verdicts" / GetParam().file);
  const RunVerdict v = judge(run);
  EXPECT_THAT(GetParam().expected, ::testing::Contains(v.verdict)) << info(v.verdict).name << ": " << v.sentence;
  EXPECT_FALSE(v.sentence.empty());
  if (v.verdict == Verdict::OnBaseline) {
    // Post-norm's evidence: no context, and the update does not reach the first layers.
    EXPECT_LT(v.evidence.context_use, kLittleContextUse) << v.sentence;
    EXPECT_LT(v.evidence.gradient_ratio, kStarvedGradient) << v.sentence;
    EXPECT_THAT(v.sentence, HasSubstr("the update does not reach the first layers"));
    EXPECT_EQ(classify(run), Outcome::Stalled);
  }
  if (v.verdict == Verdict::Learning || v.verdict == Verdict::LeftBaseline) {
    EXPECT_GT(v.evidence.context_use, kLittleContextUse) << v.sentence;
    EXPECT_GT(v.evidence.gradient_ratio, kWeakGradient) << v.sentence;
    EXPECT_EQ(classify(run), Outcome::Trained);
  }
}

INSTANTIATE_TEST_SUITE_P(CourseAtTheCpuScale, RecordedRuns,
                         ::testing::Values(Recorded{"pre-norm_lr_1e-3_warmup_30.json", {Verdict::Learning}},
                                           Recorded{"pre-norm_lr_6e-3_warmup_30.json", {Verdict::Learning}},
                                           Recorded{"post-norm_lr_1e-3_warmup_30.json", {Verdict::OnBaseline}},
                                           Recorded{"post-norm_lr_6e-3_warmup_30.json", {Verdict::OnBaseline}},
                                           Recorded{"post-norm_lr_1e-3_warmup_200.json",
                                                    {Verdict::LeftBaseline, Verdict::Learning}},
                                           Recorded{"post-norm_lr_6e-3_warmup_30-step-50.json", {Verdict::TooEarly}},
                                           Recorded{"pre-norm_lr_1e-3_warmup_30-queued.json", {Verdict::NotStarted}}),
                         [](const ::testing::TestParamInfo<Recorded>& info) {
                           std::string name = fs::path(info.param.file).stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

// Tiny runs trained to show a verdict by construction (the engine's shape, test_support.h).
class TrainedVerdict : public CacheTest {
 protected:
  TrainConfig config_ = tiny_config(corpus_file(synthetic_corpus()));
};

TEST_F(TrainedVerdict, APreNormRunLearnsAndItsEvidenceIsRecorded) {
  const RunRecord run = train(config_);
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::Learning) << v.sentence;
  EXPECT_GT(v.since_step, 0);
  // Read by the names the engine records under: a statistic renamed there is missed here.
  EXPECT_EQ(v.evidence.context_step, run.evals.back().step);
  EXPECT_GT(v.evidence.context_use, kLittleContextUse);
  EXPECT_EQ(v.evidence.gradient_step, run.evals.back().step);
  EXPECT_EQ(v.evidence.layers, config_.model.layers);
  EXPECT_TRUE(v.missing.empty());
}

TEST_F(TrainedVerdict, ARateOfOneCollapsesOntoTheBaseline) {
  // Adam at lr 1 moves every weight by up to 1 a step: the model forgets all but which
  // tokens are common, and stays there.
  config_.peak_lr = 1.0;
  config_.warmup_steps = 1;
  const RunRecord run = train(config_);
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::OnBaseline) << v.sentence;
  EXPECT_LT(v.evidence.context_use, kLittleContextUse) << v.sentence;
  EXPECT_EQ(classify(run), Outcome::Stalled);
}

TEST_F(TrainedVerdict, AnOverflowingRunDivergedAtItsFirstNonFiniteStep) {
  // As TrainerTest.NonFiniteLossEndsAsDiverged: a decoupled decay of lr x decay > 2 blows
  // every matrix up within a few steps.
  config_.peak_lr = 1.0;
  config_.warmup_steps = 1;
  config_.weight_decay = 1000;
  config_.steps = 50;
  config_.eval_interval = 5;
  const RunRecord run = train(config_);
  ASSERT_EQ(run.status, RunStatus::Diverged);
  const RunVerdict v = judge(run);
  EXPECT_EQ(v.verdict, Verdict::Diverged);
  EXPECT_EQ(v.since_step, run.steps.back().step);
  EXPECT_THAT(v.sentence, HasSubstr("the loss became non-finite"));
  EXPECT_EQ(classify(run), Outcome::Diverged);
}

}  // namespace
}  // namespace normlab::test
