// The lesson driven headless (lab/lesson.h): a prediction starts its run or reuses one
// trained before, the answer comes when the run's verdict settles, the learner may go on
// meanwhile, and the lesson kept beside the runs comes back after leaving, closing, and a
// process killed with SIGKILL.
#include "lab/lesson.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QProcess>
#include <gtest/gtest.h>

#include "core/runs/config_fields.h"
#include "core/runs/presets.h"
#include "core/system/atomic_file.h"
#include "lab/lab.h"

#include "corpus_fixture.h"
#include "test_support.h"

namespace normlab::lab {
namespace {

class LessonTest : public test::CorpusFixture {
 protected:
  QString runs() const { return folder_.filePath(QStringLiteral("runs")); }
  QString lesson_file() const { return Lesson::file_in(runs()); }
  // The course's five runs on the tiny model, `steps` long, evaluated every 50 steps.
  std::vector<TrainConfig> tiny_course(int steps) const {
    TrainConfig base = test::tiny_config(corpus_, steps);
    base.threads = 1;
    base.eval_interval = 50;
    return workshop_runs(base);
  }
  // As if trained here before: pre-norm and the long warmup learn, post-norm with the
  // short warmup stays on the baseline (test::synthetic_run's curves).
  static RunRecord trained_before(const TrainConfig& config) {
    RunRecord run =
        test::synthetic_run(config.model.norm, config.peak_lr, config.warmup_steps, config.steps, config.eval_interval);
    run.config = config;
    return run;
  }
  LessonState saved() const { return lesson_from_json_text(read_whole_file(lesson_file().toStdString())); }
};

TEST_F(LessonTest, RunsTrainedBeforeWithTheSameSettingsAnswerAtOnce) {
  Lab lab(runs());
  const std::vector<TrainConfig> course = tiny_course(600);
  for (const TrainConfig& config : course) lab.store().add(trained_before(config), {});
  Lesson lesson(lab);
  lesson.begin_with(course, "cpu");
  QList<int> answered;
  QObject::connect(&lesson, &Lesson::answered, [&](int question) { answered << question; });
  ASSERT_EQ(lesson.state().questions.size(), 5u);
  EXPECT_FALSE(lesson.can_go_on()) << "a prediction comes first";

  lesson.predict(LessonOutcome::Learns);  // pre-norm: right
  EXPECT_EQ(answered, QList<int>{0});
  const LessonQuestion& first = lesson.state().questions[0];
  EXPECT_EQ(first.outcome, LessonOutcome::Learns);
  EXPECT_TRUE(first.right());
  EXPECT_TRUE(lesson.reused(0));
  EXPECT_EQ(first.verdict, "learning");
  EXPECT_EQ(first.sentence, lab.store().runs()[0].verdict.sentence);
  EXPECT_EQ(lab.store().runs().size(), 5u) << "nothing trains again";
  EXPECT_FALSE(lab.queue().busy());

  lesson.predict(LessonOutcome::Stalls);  // a second prediction for the same question changes nothing
  EXPECT_EQ(lesson.state().questions[0].prediction, LessonOutcome::Learns);
  lesson.go_on();
  lesson.predict(LessonOutcome::Learns);  // post-norm, short warmup: wrong
  EXPECT_EQ(lesson.state().questions[1].outcome, LessonOutcome::Stalls);
  EXPECT_FALSE(lesson.state().questions[1].right());
  EXPECT_EQ(lesson.state().questions[1].verdict, "on-baseline");

  const LessonScore s = score(lesson.state());
  EXPECT_EQ(s.right, 1);
  EXPECT_EQ(s.answered, 2);
  // What the file keeps is what the lesson holds.
  const LessonState file = saved();
  EXPECT_EQ(file.current, 1);
  EXPECT_EQ(file.questions[1].prediction, LessonOutcome::Learns);
  EXPECT_EQ(file.questions[1].outcome, LessonOutcome::Stalls);
  EXPECT_EQ(file.questions[1].run, lab.store().runs()[1].record.config.name);

  while (!lesson.state().at_summary()) {
    if (!lesson.state().questions[std::size_t(lesson.state().current)].prediction)
      lesson.predict(LessonOutcome::Stalls);
    lesson.go_on();
  }
  EXPECT_EQ(score(lesson.state()).answered, 5);
  EXPECT_EQ(score(lesson.state()).right, 2) << "pre-norm at 1e-3, post-norm at 6e-3";
  EXPECT_EQ(saved().current, 5) << "at the summary";
}

// A prediction trains its run; the learner goes on while it trains; the answer comes once
// its verdict settles. The run here is made to diverge (as the engine's verdict tests do).
TEST_F(LessonTest, APredictionTrainsItsRunAndTheAnswerComesWhenItsVerdictSettles) {
  Lab lab(runs());
  lab.set_side_by_side(2);
  std::vector<TrainConfig> course = tiny_course(50);
  TrainConfig& blows_up = course[2];
  blows_up.peak_lr = 1.0;
  blows_up.warmup_steps = 1;
  blows_up.weight_decay = 1000;
  blows_up.eval_interval = 5;
  blows_up.name = default_run_name(blows_up);
  Lesson lesson(lab);
  lesson.begin_with({course[2], course[0]}, "cpu");
  QList<int> answered;
  QObject::connect(&lesson, &Lesson::answered, [&](int question) { answered << question; });

  lesson.predict(LessonOutcome::Learns);
  ASSERT_EQ(lab.store().runs().size(), 1u);
  const int run = lab.store().runs()[0].id;
  EXPECT_EQ(lesson.run_of(0), run);
  EXPECT_TRUE(lab.queue().is_queued(run));
  EXPECT_FALSE(lesson.reused(0));
  EXPECT_FALSE(lesson.state().questions[0].outcome) << "not before its verdict settles";
  ASSERT_TRUE(lesson.can_go_on());
  lesson.go_on();  // while it trains
  EXPECT_EQ(lesson.state().current, 1);
  lesson.predict(LessonOutcome::Learns);
  ASSERT_EQ(lab.store().runs().size(), 2u) << "the next run trains beside it";

  ASSERT_TRUE(test::wait_until([&] { return lesson.state().questions[0].outcome.has_value(); }, kTrainTimeoutMs));
  EXPECT_EQ(lesson.state().questions[0].outcome, LessonOutcome::Diverges);
  EXPECT_FALSE(lesson.state().questions[0].right());
  EXPECT_EQ(lesson.state().questions[0].verdict, "diverged");
  ASSERT_FALSE(answered.isEmpty());
  EXPECT_EQ(answered.front(), 0);
  EXPECT_EQ(saved().questions[0].outcome, LessonOutcome::Diverges) << "kept as it settles";
  ASSERT_TRUE(test::wait_until([&] { return !lab.queue().busy(); }, kTrainTimeoutMs));
  // Ordinary runs afterwards: in the store and the runs folder like any other.
  for (const RunEntry& r : lab.store().runs()) EXPECT_TRUE(QFile::exists(r.file));
}

// Leaving keeps the lesson as it is; closing the lab while its run trains, and opening it
// again, picks it up where it was: the run trains on.
TEST_F(LessonTest, ALeftOrClosedLessonComesBackWhereItWas) {
  std::vector<TrainConfig> course = tiny_course(1'000'000);
  for (TrainConfig& c : course) c.checkpoint_interval = 0;  // a checkpoint with every save
  {
    Lab lab(runs());
    Lesson lesson(lab);
    lesson.begin_with(course, "cpu");
    lesson.predict(LessonOutcome::Stalls);
    lesson.go_on();
    // Past its first evaluation, which saves it with a checkpoint.
    ASSERT_TRUE(test::wait_until(
        [&] {
          const RunEntry* run = lab.store().find(lesson.run_of(0));
          return run && !run->record.steps.empty() && run->record.steps.back().step > 60;
        },
        kTrainTimeoutMs));
    lesson.leave();
  }  // closed while its run trains
  {
    Lab lab(runs());
    lab.restore();
    ASSERT_EQ(lab.store().runs().size(), 1u);
    Lesson lesson(lab);
    EXPECT_TRUE(lesson.load().isEmpty());
    ASSERT_TRUE(lesson.begun());
    EXPECT_TRUE(lesson.state().left);
    EXPECT_EQ(lesson.state().current, 1);
    EXPECT_EQ(lesson.state().questions[0].prediction, LessonOutcome::Stalls);
    EXPECT_FALSE(lab.queue().busy()) << "a lesson left waits for the learner";
    lesson.open();
    EXPECT_FALSE(lesson.state().left);
    EXPECT_EQ(lab.store().runs().size(), 1u) << "its own run goes on, no new one";
    EXPECT_TRUE(lab.queue().is_queued(lesson.run_of(0)));
  }  // closed again: its run is left for the next
  {
    Lab lab(runs());
    lab.restore();
    Lesson lesson(lab);
    lesson.load();
    EXPECT_FALSE(lesson.state().left);
    EXPECT_EQ(lab.store().runs().size(), 1u);
    EXPECT_TRUE(lab.queue().is_queued(lesson.run_of(0))) << "a lesson not left goes on as the lab opens";
    lab.stop_all();
  }
}

TEST_F(LessonTest, AFileItCannotReadIsSaidAndKept) {
  QDir().mkpath(runs());
  write_file_atomically(lesson_file().toStdString(), "{\"version\": 1, \"scale\": ");
  Lab lab(runs());
  lab.restore();
  EXPECT_EQ(lab.store().runs().size(), 0u) << "the lesson's file is no run";
  Lesson lesson(lab);
  EXPECT_FALSE(lesson.load().isEmpty());
  EXPECT_FALSE(lesson.begun());
  EXPECT_EQ(read_whole_file(lesson_file().toStdString()), "{\"version\": 1, \"scale\": ");
}

TEST_F(LessonTest, AtTheSummaryAFurtherExperimentIsAskedTheSameWay) {
  Lab lab(runs());
  const std::vector<TrainConfig> course = tiny_course(600);
  for (const TrainConfig& config : course) lab.store().add(trained_before(config), {});
  Lesson lesson(lab);
  lesson.begin_with(course, "cpu");
  TrainConfig mine = course[1];
  mine.model.layers = 3;
  lesson.ask_further(mine);
  EXPECT_EQ(lesson.state().questions.size(), 5u) << "only at the summary";
  while (!lesson.state().at_summary()) {
    lesson.predict(LessonOutcome::Learns);
    lesson.go_on();
  }
  lesson.ask_further(mine);
  ASSERT_EQ(lesson.state().questions.size(), 6u);
  EXPECT_EQ(lesson.state().current, 5);
  EXPECT_TRUE(lesson.state().questions[5].further);
  lesson.predict(LessonOutcome::Stalls);
  ASSERT_EQ(lab.store().runs().size(), 6u) << "a design not trained before trains";
  EXPECT_EQ(lab.store().runs().back().record.config.model.layers, 3);
  EXPECT_TRUE(lab.queue().is_queued(lab.store().runs().back().id));
  lab.stop_all();
  lesson.start_over();
  EXPECT_EQ(lesson.state().questions.size(), 5u) << "the course's questions again";
  EXPECT_FALSE(lesson.state().questions[0].prediction);
}

// A real process killed with SIGKILL while the lesson's two runs train: the next lab on
// its folder picks the lesson up at the question it was on, and both runs go on.
TEST_F(LessonTest, AfterAKillTheLessonGoesOnWhereItWas) {
  QProcess child;
  child.setProcessChannelMode(QProcess::ForwardedChannels);
  child.start(QCoreApplication::applicationFilePath(), {QStringLiteral("--lesson-until-killed"), runs(), corpus_});
  ASSERT_TRUE(child.waitForStarted());
  ASSERT_TRUE(test::wait_until(
      [&] {
        int training = 0;
        for (const QString& name : QDir(runs()).entryList({QStringLiteral("*.json")}, QDir::Files)) {
          try {
            const RunRecord run = read_json(QDir(runs()).filePath(name).toStdString());
            if (run.status == RunStatus::Running && !run.steps.empty()) ++training;
          } catch (const std::exception&) {
          }
        }
        return training == 2;
      },
      kTrainTimeoutMs));
  child.kill();
  ASSERT_TRUE(child.waitForFinished());

  Lab lab(runs());
  lab.restore();
  ASSERT_EQ(lab.store().runs().size(), 2u);
  Lesson lesson(lab);
  ASSERT_TRUE(lesson.load().isEmpty()) << lesson.problem().toStdString();
  ASSERT_EQ(lesson.state().questions.size(), 5u);
  EXPECT_EQ(lesson.state().current, 2) << "the question it was on";
  EXPECT_EQ(lesson.state().questions[0].prediction, LessonOutcome::Stalls);
  EXPECT_EQ(lesson.state().questions[1].prediction, LessonOutcome::Learns);
  EXPECT_FALSE(lesson.state().questions[2].prediction);
  EXPECT_EQ(lab.store().runs().size(), 2u) << "its runs go on from their checkpoints, none afresh";
  for (int q : {0, 1}) {
    const int run = lesson.run_of(q);
    ASSERT_NE(run, 0);
    EXPECT_TRUE(lab.queue().is_queued(run)) << q;
  }
  lab.stop_all();
}

}  // namespace
}  // namespace normlab::lab
