// The lesson's rules (core/runs/lesson.h): the course's questions in order, how a verdict
// answers a question (on the course's recorded CPU-scale runs, as they trained and once
// done), right and wrong, the score, and the file that keeps the lesson.
#include "core/runs/lesson.h"

#include <algorithm>
#include <filesystem>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <optional>

#include "core/runs/config_fields.h"
#include "core/runs/presets.h"
#include "core/system/user_error.h"

namespace normlab::test {
namespace {

namespace fs = std::filesystem;

RunRecord recorded(const char* file) { return read_json(fs::path(NORMLAB_TEST_DATA) / "verdicts" / file); }

// The run as it stood at `step` while it trained: its points up to there, still running.
RunRecord as_at(RunRecord run, int step) {
  auto up_to = [step](auto& points) {
    points.erase(std::remove_if(points.begin(), points.end(), [step](const auto& p) { return p.step > step; }),
                 points.end());
  };
  up_to(run.steps);
  up_to(run.evals);
  for (Series& s : run.series) {
    std::size_t keep = 0;
    while (keep < s.steps.size() && s.steps[keep] <= step) ++keep;
    s.steps.resize(keep);
    s.values.resize(keep * std::size_t(s.width()));
  }
  run.status = RunStatus::Running;
  return run;
}

std::optional<LessonOutcome> lesson_answer(const RunRecord& run) {
  return settled_outcome(judge(run).verdict, run.status);
}

TEST(Lesson, EveryVerdictHasItsRowInTheAnswerTable) {
  for (const VerdictInfo& v : kVerdicts) {
    EXPECT_EQ(answer_of(v.value).verdict, v.value) << v.name;
    const VerdictAnswer& row = answer_of(v.value);
    // An answer shows a view that proves it; a verdict that answers nothing shows none.
    EXPECT_EQ(row.answers, row.proofs[0].link != nullptr) << v.name;
  }
  EXPECT_FALSE(answer_of(Verdict::NotStarted).answers);
  EXPECT_FALSE(answer_of(Verdict::TooEarly).answers);
  EXPECT_EQ(answer_of(Verdict::OnBaseline).outcome, LessonOutcome::Stalls);
  EXPECT_EQ(answer_of(Verdict::LeftBaseline).outcome, LessonOutcome::Learns);
  EXPECT_EQ(answer_of(Verdict::Diverged).outcome, LessonOutcome::Diverges);
  EXPECT_STREQ(answer_of(Verdict::OnBaseline).proofs[0].link, "statistic:attention_grad_norm");
  EXPECT_STREQ(answer_of(Verdict::OnBaseline).proofs[1].link, "text");
  EXPECT_STREQ(answer_of(Verdict::LeftBaseline).proofs[0].link, "curves");
}

TEST(Lesson, OutcomesReadBackByName) {
  for (const LessonOutcomeInfo& o : kLessonOutcomes) EXPECT_EQ(parse_outcome(o.name), o.value);
  EXPECT_THROW(parse_outcome("soars"), UserError);
}

TEST(Lesson, ItsQuestionsAreTheCoursesRunsInTheCoursesOrder) {
  const std::vector<TrainConfig> course = workshop_runs(scaled(TrainConfig{}, Scale::Cpu));
  const LessonState lesson = new_lesson(course, "cpu");
  ASSERT_EQ(lesson.questions.size(), 5u);
  EXPECT_EQ(lesson.current, 0);
  EXPECT_FALSE(lesson.at_summary());
  EXPECT_EQ(question_text(lesson.questions[0].config), "Pre-norm, lr 1e-3, 30-step warmup: will it learn?");
  EXPECT_EQ(question_text(lesson.questions[3].config), "Post-norm, lr 6e-3, 30-step warmup: will it learn?");
  EXPECT_EQ(question_text(lesson.questions[4].config), "Post-norm, lr 1e-3, 200-step warmup: will it learn?");
  for (const LessonQuestion& q : lesson.questions) {
    EXPECT_FALSE(q.prediction || q.outcome || q.further);
  }
  TrainConfig deeper = course[1];
  deeper.model.layers = 16;
  EXPECT_EQ(settings_text(deeper), "Post-norm, 16 layers, lr 1e-3, 30-step warmup");
}

// The course's recorded CPU-scale runs: each answers as the course says once done.
TEST(Lesson, TheCoursesRecordedRunsAnswerAsTheCourseSays) {
  EXPECT_EQ(lesson_answer(recorded("pre-norm_lr_1e-3_warmup_30.json")), LessonOutcome::Learns);
  EXPECT_EQ(lesson_answer(recorded("post-norm_lr_1e-3_warmup_30.json")), LessonOutcome::Stalls);
  EXPECT_EQ(lesson_answer(recorded("pre-norm_lr_6e-3_warmup_30.json")), LessonOutcome::Learns);
  EXPECT_EQ(lesson_answer(recorded("post-norm_lr_6e-3_warmup_30.json")), LessonOutcome::Stalls);
  EXPECT_EQ(lesson_answer(recorded("post-norm_lr_1e-3_warmup_200.json")), LessonOutcome::Learns);
  EXPECT_EQ(lesson_answer(recorded("post-norm_lr_6e-3_warmup_30-step-50.json")), std::nullopt) << "too early";
  EXPECT_EQ(lesson_answer(recorded("pre-norm_lr_1e-3_warmup_30-queued.json")), std::nullopt) << "not started";
}

// While it trains, a run that learns answers as soon as its verdict says so; one on the
// baseline answers only once done, since a run on the baseline can still leave it.
TEST(Lesson, ARunOnTheBaselineAnswersOnlyOnceDone) {
  const RunRecord stalled = recorded("post-norm_lr_1e-3_warmup_30.json");
  const RunRecord early = as_at(stalled, 300);
  ASSERT_EQ(judge(early).verdict, Verdict::OnBaseline) << "the rule below must matter on this run";
  EXPECT_EQ(lesson_answer(early), std::nullopt);
  RunRecord stopped = early;
  stopped.status = RunStatus::Stopped;
  EXPECT_EQ(lesson_answer(stopped), std::nullopt) << "stopped on the baseline: its fate is not known";

  const RunRecord learns = recorded("pre-norm_lr_1e-3_warmup_30.json");
  std::optional<int> first_answer;
  for (const EvalMetrics& e : learns.evals) {
    if (!first_answer && lesson_answer(as_at(learns, e.step)) == LessonOutcome::Learns) first_answer = e.step;
  }
  ASSERT_TRUE(first_answer);
  EXPECT_LT(*first_answer, learns.config.steps) << "the answer comes while it trains";

  // The long warmup: never answered "stalls" on its way, "learns" in the end.
  const RunRecord escapes = recorded("post-norm_lr_1e-3_warmup_200.json");
  for (const EvalMetrics& e : escapes.evals) {
    EXPECT_NE(lesson_answer(as_at(escapes, e.step)), LessonOutcome::Stalls) << "at step " << e.step;
  }
}

TEST(Lesson, SaysRightOrWrongAndScores) {
  LessonState lesson = new_lesson(workshop_runs(scaled(TrainConfig{}, Scale::Cpu)), "cpu");
  lesson.questions[0].prediction = LessonOutcome::Learns;
  lesson.questions[0].outcome = LessonOutcome::Learns;
  lesson.questions[1].prediction = LessonOutcome::Learns;
  lesson.questions[1].outcome = LessonOutcome::Stalls;
  lesson.questions[2].prediction = LessonOutcome::Diverges;  // still training
  EXPECT_TRUE(lesson.questions[0].right());
  EXPECT_FALSE(lesson.questions[1].right());
  EXPECT_FALSE(lesson.questions[2].right());
  EXPECT_EQ(answer_text(lesson.questions[0]), "Right: it learnt.");
  EXPECT_EQ(answer_text(lesson.questions[1]),
            "Not this time: it stalled on the unigram baseline (you said it learns).");
  EXPECT_EQ(answer_text(lesson.questions[2]), "");
  const LessonScore s = score(lesson);
  EXPECT_EQ(s.predicted, 3);
  EXPECT_EQ(s.answered, 2);
  EXPECT_EQ(s.right, 1);
  EXPECT_EQ(score_text(s), "You predicted 1 of 2 runs right. 1 still training: their answers come in here.");
}

TEST(Lesson, ItsFileKeepsEverything) {
  LessonState lesson = new_lesson(workshop_runs(scaled(TrainConfig{}, Scale::Full)), "full");
  lesson.questions[0].prediction = LessonOutcome::Stalls;
  lesson.questions[0].outcome = LessonOutcome::Learns;
  lesson.questions[0].verdict = "learning";
  lesson.questions[0].verdict_step = 200;
  lesson.questions[0].sentence = "Below the baseline \u2014 it learns.";
  lesson.questions[0].run = "pre-norm lr 1e-3 warmup 30";
  lesson.questions[1].prediction = LessonOutcome::Diverges;
  TrainConfig mine = lesson.questions[1].config;
  mine.model.layers = 24;
  mine.warmup_steps = 500;
  lesson.questions.push_back({mine, true, LessonOutcome::Learns, std::nullopt, "", -1, "", ""});
  lesson.current = 2;
  lesson.left = true;

  const LessonState back = lesson_from_json_text(lesson_json_text(lesson));
  EXPECT_EQ(back.scale, "full");
  EXPECT_EQ(back.current, 2);
  EXPECT_TRUE(back.left);
  ASSERT_EQ(back.questions.size(), 6u);
  for (std::size_t i = 0; i < back.questions.size(); ++i) {
    const LessonQuestion &a = lesson.questions[i], &b = back.questions[i];
    EXPECT_TRUE(same_experiment(a.config, b.config)) << i;
    EXPECT_EQ(a.config.name, b.config.name) << i;
    EXPECT_EQ(a.further, b.further) << i;
    EXPECT_EQ(a.prediction, b.prediction) << i;
    EXPECT_EQ(a.outcome, b.outcome) << i;
    EXPECT_EQ(a.verdict, b.verdict) << i;
    EXPECT_EQ(a.verdict_step, b.verdict_step) << i;
    EXPECT_EQ(a.sentence, b.sentence) << i;
    EXPECT_EQ(a.run, b.run) << i;
  }
  EXPECT_EQ(back.questions[5].config.model.layers, 24);
  EXPECT_EQ(back.questions[5].config.steps, 3000);

  EXPECT_THROW(lesson_from_json_text("{\"version\": 1"), UserError);
  EXPECT_THROW(lesson_from_json_text("{\"version\": 99, \"scale\": \"cpu\"}"), UserError);
  std::string beyond = lesson_json_text(lesson);
  beyond.replace(beyond.find("\"current\": 2"), 12, "\"current\": 7");
  EXPECT_THROW(lesson_from_json_text(beyond), UserError) << "a current question it does not have";
}

}  // namespace
}  // namespace normlab::test
