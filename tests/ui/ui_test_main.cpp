// Every UI test runs offscreen with its own settings, data and cache folders, so it
// neither reads nor changes anything of the person running it; and each test starts from
// no saved settings, whatever the tests before it in this process saved.
#include <QApplication>
#include <QSettings>
#include <QTemporaryDir>
#include <gtest/gtest.h>

#include "ui/plurals.h"

namespace {

// A window saves its session when it closes (the side-by-side choice, the last config,
// the chart's options) and the next window restores it: without this, one test's choices
// would be the next one's first session (ctest runs each test alone and never sees it).
class CleanSettings : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo&) override {
    QSettings settings;
    settings.clear();
    settings.sync();
  }
};

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QTemporaryDir home;
  qputenv("XDG_CONFIG_HOME", home.filePath(QStringLiteral("config")).toUtf8());
  qputenv("XDG_DATA_HOME", home.filePath(QStringLiteral("data")).toUtf8());
  qputenv("NORMLAB_CACHE_DIR", home.filePath(QStringLiteral("cache")).toUtf8());
  QApplication app(argc, argv);
  normlab::ui::install_english_plurals();
  QCoreApplication::setOrganizationName(QStringLiteral("NormLabTests"));
  QCoreApplication::setApplicationName(QStringLiteral("NormLabTests"));
  ::testing::UnitTest::GetInstance()->listeners().Append(new CleanSettings);  // owned by gtest
  return RUN_ALL_TESTS();
}
