// Every UI test runs offscreen with its own settings, data and cache folders, so it
// neither reads nor changes anything of the person running it.
#include <gtest/gtest.h>

#include <QApplication>
#include <QTemporaryDir>

#include "plurals.h"

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
  return RUN_ALL_TESTS();
}
