// The lab's tests run under a QCoreApplication: were a widget needed, they could not run.
#include <QCoreApplication>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "lab/lab.h"

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

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && std::string(argv[1]) == "--train-until-killed") return train_until_killed(argc, argv);
  ::testing::InitGoogleTest(&argc, argv);
  QTemporaryDir home;  // no settings, data or cache of the person running them
  qputenv("XDG_CONFIG_HOME", home.filePath(QStringLiteral("config")).toUtf8());
  qputenv("XDG_DATA_HOME", home.filePath(QStringLiteral("data")).toUtf8());
  qputenv("NORMLAB_CACHE_DIR", home.filePath(QStringLiteral("cache")).toUtf8());
  QCoreApplication app(argc, argv);
  return RUN_ALL_TESTS();
}
