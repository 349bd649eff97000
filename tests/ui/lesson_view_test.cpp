// The lesson in the window, clicked as a learner would: offered at a first launch and from
// the Run menu, a right and a wrong prediction with the views that prove them, leaving
// while a run trains and coming back, the summary and one further experiment.
#include "ui/lesson_view.h"

#include <QAction>
#include <QCoreApplication>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QPushButton>
#include <QSpinBox>
#include <QStatusBar>
#include <QTabWidget>
#include <gtest/gtest.h>
#include <memory>

#include "core/runs/config_fields.h"
#include "core/runs/lesson_text.h"
#include "core/runs/presets.h"
#include "lab/lab.h"
#include "lab/lesson.h"
#include "lab/qstring.h"
#include "lab/run_archive.h"
#include "lab/run_store.h"
#include "tests/lab/corpus_fixture.h"
#include "ui/inside_view.h"
#include "ui/main_window.h"
#include "ui/settings_panel.h"
#include "ui/text_view.h"

#include "test_support.h"

namespace normlab::ui {
namespace {

namespace words = lesson_text;

class LessonViewTest : public test::CorpusFixture {
 protected:
  void open_window(bool offer = false) {
    MainWindowOptions options;
    options.data_folder = folder_.filePath(QStringLiteral("runs"));
    options.report_error = [](const QString& title, const QString& text) {
      ADD_FAILURE() << title.toStdString() << ": " << text.toStdString();
    };
    options.offer_lesson = offer;
    window_ = std::make_unique<MainWindow>(options);
    window_->show();
    QCoreApplication::processEvents();
  }
  LessonView& view() { return window_->lesson_view(); }
  lab::Lesson& lesson() { return window_->lesson(); }
  bool panel_shown() const { return window_->lesson_dock()->isVisible(); }
  // Clicks `button` as a person can: only when it is shown and enabled.
  static void click(QPushButton* button) {
    ASSERT_TRUE(button->isVisible()) << button->objectName().toStdString();
    ASSERT_TRUE(button->isEnabled()) << button->objectName().toStdString();
    button->click();
    QCoreApplication::processEvents();
  }
  // The course's five runs on the tiny model; with `trained`, each as if trained here before
  // (pre-norm and the long warmup learn, post-norm with the short warmup stalls).
  std::vector<TrainConfig> tiny_course(int steps, bool trained) {
    TrainConfig base = test::tiny_config(corpus_, steps);
    base.threads = 1;
    base.eval_interval = 50;
    base.checkpoint_interval = 0;  // a checkpoint with every save
    const std::vector<TrainConfig> course = workshop_runs(base);
    for (const TrainConfig& c : course) {
      if (!trained) break;
      RunRecord run = test::synthetic_run(c.model.norm, c.peak_lr, c.warmup_steps, c.steps, c.eval_interval);
      run.config = c;
      window_->store().add(run, {});
    }
    return course;
  }
  std::string shown() { return view().text().toStdString(); }

  std::unique_ptr<MainWindow> window_;
};

TEST_F(LessonViewTest, AFirstLaunchOffersItAndTheRunMenuOpensIt) {
  open_window(/*offer=*/true);
  ASSERT_TRUE(panel_shown()) << "a first launch offers the lesson";
  EXPECT_EQ(view().title(), QString::fromUtf8(words::kTitle));
  EXPECT_NE(shown().find("predicting"), std::string::npos) << shown();
  click(view().not_now_button());
  EXPECT_FALSE(panel_shown());
  EXPECT_FALSE(lesson().begun());

  QAction* lesson_action = nullptr;
  for (QMenu* menu : window_->menuBar()->findChildren<QMenu*>()) {
    if (menu->title() == QObject::tr("&Run") && menu->actions().contains(window_->lesson_action())) {
      lesson_action = window_->lesson_action();
    }
  }
  ASSERT_TRUE(lesson_action) << "in the Run menu";
  lesson_action->trigger();
  EXPECT_TRUE(panel_shown());
  ASSERT_TRUE(test::wait_until([&] { return window_->lab().device_known(); }, 60'000));
  click(view().begin_button());
  ASSERT_TRUE(lesson().begun());
  EXPECT_EQ(lesson().state().questions.size(), 5u);
  EXPECT_TRUE(same_experiment(lesson().state().questions[3].config,
                              window_->lab().course_runs(window_->settings_panel().config())[3]))
      << "the course's runs at this device's scale";
  EXPECT_EQ(view().title(), QString::fromUtf8(words::kQuestionOf).arg(1).arg(5));
  EXPECT_NE(shown().find("Pre-norm, lr 1e-3, 30-step warmup: will it learn?"), std::string::npos) << shown();
  EXPECT_NE(shown().find(words::kNothingSeen), std::string::npos) << shown();
  EXPECT_FALSE(view().next_button()->isEnabled()) << "a prediction first";
}

TEST_F(LessonViewTest, AFolderWithRunsIsNoFirstLaunch) {
  {
    lab::RunArchive writer(folder_.filePath(QStringLiteral("runs")));
    lab::RunArchive::write(test::synthetic_run(NormPlacement::Pre, 1e-3, 30, 600, 50),
                           writer.new_path(QStringLiteral("earlier")));
  }
  open_window(/*offer=*/true);
  EXPECT_EQ(window_->store().runs().size(), 1u);
  EXPECT_FALSE(panel_shown()) << "someone who has runs is not new here";
}

// Right, then wrong, each with its run's sentence and the views that prove it.
TEST_F(LessonViewTest, ARightAndAWrongPredictionAreSaidWithTheirProof) {
  open_window();
  const std::vector<TrainConfig> course = tiny_course(600, /*trained=*/true);
  lesson().begin_with(course, "cpu");
  window_->show_lesson();
  ASSERT_TRUE(panel_shown());
  ASSERT_TRUE(view().choice(LessonOutcome::Learns)->isVisible());

  click(view().choice(LessonOutcome::Learns));  // pre-norm learns: right
  EXPECT_FALSE(view().choice(LessonOutcome::Learns)->isVisible()) << "one prediction a question";
  EXPECT_NE(shown().find("Right: it learnt."), std::string::npos) << shown();
  EXPECT_NE(shown().find(words::kReused), std::string::npos) << "trained before: answered at once";
  EXPECT_NE(shown().find(window_->store().runs()[0].verdict.sentence), std::string::npos) << shown();
  view().follow(QStringLiteral("curves"));
  EXPECT_NE(window_->current_view(), static_cast<QWidget*>(&window_->text_view()));
  EXPECT_EQ(window_->current_view(), window_->view_at(0)) << "the loss curves prove it";

  click(view().next_button());
  EXPECT_EQ(view().title(), QString::fromUtf8(words::kQuestionOf).arg(2).arg(5));
  // The tiny course's depth is said, as it is not the course's.
  EXPECT_NE(shown().find("Post-norm, 2 layers, lr 1e-3, 30-step warmup: will it learn?"), std::string::npos) << shown();
  EXPECT_NE(shown().find("Pre-norm, 2 layers, lr 1e-3, 30-step warmup"), std::string::npos) << "seen so far";
  click(view().choice(LessonOutcome::Learns));  // post-norm with a short warmup stalls: wrong
  EXPECT_NE(shown().find("Not this time: it stalled on the unigram baseline (you said it learns)."), std::string::npos)
      << shown();
  view().follow(QStringLiteral("statistic:attention_grad_norm"));
  EXPECT_EQ(window_->current_view(), static_cast<QWidget*>(window_->findChild<InsideView*>()))
      << "a stall is proved by the gradient by layer";
  view().follow(QStringLiteral("text"));
  EXPECT_EQ(window_->current_view(), static_cast<QWidget*>(&window_->text_view())) << "and by what it writes";
  EXPECT_EQ(score(lesson().state()).right, 1);
}

// Left while its run trains: the run goes on as an ordinary run, and the lesson, opened
// again from the Run menu, is where it was.
TEST_F(LessonViewTest, LeavingMidRunKeepsTheRunAndTheLessonWhereTheyWere) {
  open_window();
  lesson().begin_with(tiny_course(1'000'000, /*trained=*/false), "cpu");
  window_->show_lesson();
  click(view().choice(LessonOutcome::Stalls));
  const int run = lesson().run_of(0);
  ASSERT_NE(run, 0);
  ASSERT_TRUE(test::wait_until(
      [&] {
        QCoreApplication::processEvents();
        return shown().find("Training, step") != std::string::npos;
      },
      kTrainTimeoutMs))
      << shown();
  // Past its first evaluation, saved with a checkpoint.
  ASSERT_TRUE(test::wait_until(
      [&] {
        const RunRecord& r = window_->store().find(run)->record;
        return !r.steps.empty() && r.steps.back().step > 60;
      },
      kTrainTimeoutMs));
  EXPECT_TRUE(view().next_button()->isEnabled()) << "the learner may go on while it trains";

  click(view().leave_button());
  EXPECT_FALSE(panel_shown());
  EXPECT_TRUE(lesson().state().left);
  EXPECT_EQ(window_->statusBar()->currentMessage(), QString::fromUtf8(words::kLeftNote));
  EXPECT_TRUE(window_->lab().queue().is_running(run)) << "its run trains on";

  window_->lesson_action()->trigger();
  EXPECT_TRUE(panel_shown());
  EXPECT_FALSE(lesson().state().left);
  EXPECT_EQ(view().title(), QString::fromUtf8(words::kQuestionOf).arg(1).arg(5));
  EXPECT_EQ(lesson().state().questions[0].prediction, LessonOutcome::Stalls);
  EXPECT_EQ(lesson().run_of(0), run) << "the same run, not another";
  EXPECT_EQ(window_->store().runs().size(), 1u);

  // Stopped before its verdict settled: the lesson says so, and trains it on.
  window_->lab().stop_runs({run});
  ASSERT_TRUE(test::wait_until([&] { return !window_->lab().queue().busy(); }, kTrainTimeoutMs));
  view().refresh();
  EXPECT_NE(shown().find("ended before its fate was clear (stopped)"), std::string::npos) << shown();
  click(view().train_on_button());
  EXPECT_TRUE(window_->lab().queue().is_queued(run)) << "it goes on from its checkpoint";
  window_->lab().stop_all();
}

TEST_F(LessonViewTest, TheSummaryConcludesAndAsksOneMoreTheSameWay) {
  open_window();
  lesson().begin_with(tiny_course(600, /*trained=*/true), "cpu");
  window_->show_lesson();
  for (const LessonOutcome guess : {LessonOutcome::Learns, LessonOutcome::Stalls, LessonOutcome::Learns,
                                    LessonOutcome::Stalls, LessonOutcome::Stalls}) {
    click(view().choice(guess));
    click(view().next_button());
  }
  ASSERT_TRUE(lesson().state().at_summary());
  EXPECT_NE(shown().find("You predicted 4 of 5 runs right."), std::string::npos) << shown();
  EXPECT_NE(shown().find(words::kConclusion), std::string::npos);
  EXPECT_TRUE(view().start_over_button()->isVisible());

  view().further_layers()->setValue(3);
  click(view().ask_button());
  EXPECT_EQ(view().title(), QString::fromUtf8(words::kFurtherQuestion));
  EXPECT_NE(shown().find("Post-norm, 3 layers, lr 1e-3"), std::string::npos) << shown();
  click(view().choice(LessonOutcome::Diverges));
  ASSERT_EQ(window_->store().runs().size(), 6u);
  EXPECT_EQ(window_->store().runs().back().record.config.model.layers, 3);
  EXPECT_EQ(lesson().run_of(5), window_->store().runs().back().id);
  window_->lab().stop_all();
}

}  // namespace
}  // namespace normlab::ui
