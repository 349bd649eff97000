// The real app, in its own process: closed while it trains, it stops the run, saves it
// and exits with status 0.
#include <gtest/gtest.h>

#include <QDir>
#include <optional>
#include <QProcess>
#include <QSettings>
#include <QTemporaryDir>

#include "settings_panel.h"
#include "test_support.h"

namespace normlab::ui {
namespace {

TEST(App, ClosingTheWindowDuringTrainingExitsWithZero) {
  QTemporaryDir home;
  ASSERT_TRUE(home.isValid());
  const QString corpus = test::write_synthetic_corpus(home.path());
  {  // the app starts with the last settings: make them a tiny, endless run
    QSettings saved(home.filePath(QStringLiteral("config/NormLab/NormLab.conf")), QSettings::IniFormat);
    SettingsPanel panel;
    panel.set_config(test::tiny_config(corpus, 1'000'000));
    panel.save(saved);
  }
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.insert(QStringLiteral("XDG_CONFIG_HOME"), home.filePath(QStringLiteral("config")));
  env.insert(QStringLiteral("XDG_DATA_HOME"), home.filePath(QStringLiteral("data")));
  env.insert(QStringLiteral("NORMLAB_CACHE_DIR"), home.filePath(QStringLiteral("cache")));
  QProcess app;
  app.setProcessEnvironment(env);
  app.setProcessChannelMode(QProcess::ForwardedChannels);
  app.start(QStringLiteral(NORMLAB_GUI_EXECUTABLE), {QStringLiteral("--start")});
  ASSERT_TRUE(app.waitForStarted(10'000));

  // Training is under way once the run file holds steps (it is rewritten at each evaluation).
  const QDir runs(home.filePath(QStringLiteral("data/NormLab/NormLab/runs")));
  auto saved_run = [&]() -> std::optional<RunRecord> {
    const QStringList files = runs.entryList({QStringLiteral("*.json")}, QDir::Files);
    if (files.isEmpty()) return std::nullopt;
    try {
      return read_json(runs.filePath(files.front()).toStdString());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  };
  ASSERT_TRUE(test::wait_until([&] {
    const auto run = saved_run();
    return run && !run->steps.empty();
  }, 180'000)) << "no training progress saved in " << runs.path().toStdString();

  app.terminate();  // SIGTERM: the app closes its window, as the close button does
  ASSERT_TRUE(app.waitForFinished(60'000));
  EXPECT_EQ(app.exitStatus(), QProcess::NormalExit);
  EXPECT_EQ(app.exitCode(), 0);
  const auto run = saved_run();
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, RunStatus::Stopped);
}

}  // namespace
}  // namespace normlab::ui
