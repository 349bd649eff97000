// Counted texts read as English: "1 run", "2 runs" (ui_test_main installs the plurals as
// the app's main does).
#include "ui/plurals.h"

#include <QCoreApplication>
#include <gtest/gtest.h>

namespace normlab::ui {
namespace {

TEST(EnglishPlurals, OneRunTwoRuns) {
  const auto counted = [](int n) {
    return QCoreApplication::translate("MainWindow", "%n run(s) restored", nullptr, n);
  };
  EXPECT_EQ(counted(1), QStringLiteral("1 run restored"));
  EXPECT_EQ(counted(2), QStringLiteral("2 runs restored"));
  EXPECT_EQ(counted(0), QStringLiteral("0 runs restored"));
  EXPECT_EQ(QCoreApplication::translate("MainWindow", "run(s)"), QStringLiteral("run(s)")) << "no count, no change";
  // Words that change with the count: (singular|plural).
  const auto moved = [](int n) {
    return QCoreApplication::translate(
        "MainWindow", "%n run(s) could not be read. (It was|They were) moved; (its|their) data stays", nullptr, n);
  };
  EXPECT_EQ(moved(1).toStdString(), "1 run could not be read. It was moved; its data stays");
  EXPECT_EQ(moved(3).toStdString(), "3 runs could not be read. They were moved; their data stays");
}

}  // namespace
}  // namespace normlab::ui
