// Every UI test runs offscreen with its own settings, data and cache folders, so it
// neither reads nor changes anything of the person running it; and each test starts from
// no saved settings, whatever the tests before it in this process saved.
//
// The offscreen screen is a laptop's, 1280 x 800 (the platform's own is 800 x 800), or
// what --screen=WIDTHxHEIGHT[@FACTOR] says: its size in device pixels and Qt's scale
// factor, as QT_SCALE_FACTOR sets it (ctest runs the window-fit tests on three).
#include <QApplication>
#include <QFile>
#include <QRegularExpression>
#include <QSettings>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <cstring>
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

// Takes --screen=... out of the arguments; false if it is malformed.
bool take_screen_option(int& argc, char** argv, QString& size, QString& factor) {
  static const QRegularExpression form(QStringLiteral("^--screen=(\\d+)x(\\d+)(?:@([0-9.]+))?$"));
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--screen=", 9) != 0) continue;
    const QRegularExpressionMatch match = form.match(QString::fromLocal8Bit(argv[i]));
    if (!match.hasMatch()) return false;
    size = match.captured(1) + QLatin1Char('x') + match.captured(2);
    factor = match.captured(3);
    std::copy(argv + i + 1, argv + argc + 1, argv + i);  // argv[argc] is the null that ends them
    --argc;
    return true;
  }
  return true;
}

// The offscreen platform on one screen of `size` ("1280x800") pixels, by its configuration file.
void use_offscreen_screen(const QString& size, const QString& folder) {
  const QStringList sides = size.split(QLatin1Char('x'));
  QFile config(folder + QStringLiteral("/offscreen.json"));
  if (!config.open(QIODevice::WriteOnly)) qFatal("cannot write %s", qPrintable(config.fileName()));
  config.write(QStringLiteral(R"({"screens": [{"name": "laptop", "x": 0, "y": 0, "width": %1, "height": %2}]})")
                   .arg(sides[0], sides[1])
                   .toUtf8());
  config.close();
  qputenv("QT_QPA_PLATFORM", "offscreen:configfile=" + config.fileName().toLocal8Bit());
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  QString screen = QStringLiteral("1280x800"), factor;
  if (!take_screen_option(argc, argv, screen, factor)) {
    std::fprintf(stderr, "--screen wants WIDTHxHEIGHT or WIDTHxHEIGHT@FACTOR, as 2560x1600@2\n");
    return 2;
  }
  QTemporaryDir home;
  const QByteArray platform = qgetenv("QT_QPA_PLATFORM");
  if (platform.isEmpty() || platform == "offscreen") use_offscreen_screen(screen, home.path());
  if (!factor.isEmpty()) qputenv("QT_SCALE_FACTOR", factor.toLatin1());
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
