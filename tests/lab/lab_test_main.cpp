// The lab's tests run under a QCoreApplication: were a widget needed, they could not run.
#include <QCoreApplication>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "core/runs/presets.h"
#include "lab/lab.h"
#include "lab/lesson.h"

#include "test_support.h"

namespace {

// The process a test kills: a lab on `folder` training two long runs side by side, with a
// third queued behind them.
int train_until_killed(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  normlab::lab::Lab lab(QString::fromLocal8Bit(argv[2]));
  lab.set_side_by_side(2);
  const QString corpus = QString::fromLocal8Bit(argv[3]);
  for (int steps : {1'000'000, 1'000'000, 30}) {
    normlab::TrainConfig config = normlab::lab::test::tiny_config(corpus, steps);
    config.threads = 1;              // as the test's reference run
    config.checkpoint_interval = 0;  // a checkpoint with every save
    lab.queue_run(config);
  }
  return app.exec();
}

// The process a lesson's test kills: a lab on `folder` whose lesson has two predictions
// made, their long runs training side by side, and is on its third question.
int lesson_until_killed(int argc, char** argv) {
  QCoreApplication app(argc, argv);
  normlab::lab::Lab lab(QString::fromLocal8Bit(argv[2]));
  lab.set_side_by_side(2);
  normlab::TrainConfig base = normlab::lab::test::tiny_config(QString::fromLocal8Bit(argv[3]), 1'000'000);
  base.threads = 1;
  base.eval_interval = 50;
  base.checkpoint_interval = 0;  // a checkpoint with every save
  normlab::lab::Lesson lesson(lab);
  lesson.begin_with(normlab::workshop_runs(base), "cpu");
  lesson.predict(normlab::LessonOutcome::Stalls);
  lesson.go_on();
  lesson.predict(normlab::LessonOutcome::Learns);
  lesson.go_on();
  return app.exec();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--train-until-killed") return train_until_killed(argc, argv);
  if (argc == 4 && std::string(argv[1]) == "--lesson-until-killed") return lesson_until_killed(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  QTemporaryDir home;  // no settings, data or cache of the person running them
  qputenv("XDG_CONFIG_HOME", home.filePath(QStringLiteral("config")).toUtf8());
  qputenv("XDG_DATA_HOME", home.filePath(QStringLiteral("data")).toUtf8());
  qputenv("NORMLAB_CACHE_DIR", home.filePath(QStringLiteral("cache")).toUtf8());
  QCoreApplication app(argc, argv);
  return RUN_ALL_TESTS();
}
