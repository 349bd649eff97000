// The settings panel refuses what the engine would refuse, and says why.
#include <gtest/gtest.h>

#include <QComboBox>
#include <QCoreApplication>
#include <QLineEdit>
#include <QSpinBox>
#include <QTest>

#include "settings_panel.h"

namespace normlab::ui {
namespace {

// Counted texts read as English: "1 run", "2 runs" (ui_test_main installs the plurals as
// the app's main does).
TEST(EnglishPlurals, OneRunTwoRuns) {
  const auto counted = [](int n) { return QCoreApplication::translate("MainWindow", "%n run(s) restored", nullptr, n); };
  EXPECT_EQ(counted(1), QStringLiteral("1 run restored"));
  EXPECT_EQ(counted(2), QStringLiteral("2 runs restored"));
  EXPECT_EQ(counted(0), QStringLiteral("0 runs restored"));
  EXPECT_EQ(QCoreApplication::translate("MainWindow", "run(s)"), QStringLiteral("run(s)")) << "no count, no change";
  // Words that change with the count: (singular|plural).
  const auto moved = [](int n) {
    return QCoreApplication::translate("MainWindow", "%n run(s) could not be read. (It was|They were) moved; (its|their) data stays",
                                       nullptr, n);
  };
  EXPECT_EQ(moved(1).toStdString(), "1 run could not be read. It was moved; its data stays");
  EXPECT_EQ(moved(3).toStdString(), "3 runs could not be read. They were moved; their data stays");
}

TEST(SettingsPanel, RoundTripsAConfig) {
  SettingsPanel panel;
  TrainConfig c;
  c.model.norm = NormPlacement::Post;
  c.peak_lr = 6e-3;
  c.warmup_steps = 200;
  c.model.layers = 4;
  c.corpus_path = "/tmp/some.txt";
  panel.set_config(c);
  const TrainConfig back = panel.config();
  EXPECT_EQ(back.model.norm, NormPlacement::Post);
  EXPECT_DOUBLE_EQ(back.peak_lr, 6e-3);
  EXPECT_EQ(back.warmup_steps, 200);
  EXPECT_EQ(back.model.layers, 4);
  EXPECT_EQ(back.corpus_path, "/tmp/some.txt");
  EXPECT_TRUE(panel.problem().isEmpty());
}

TEST(SettingsPanel, HeadsThatDoNotDivideTheWidthAreRefusedWithTheReason) {
  SettingsPanel panel;
  TrainConfig c;
  c.model.d_model = 32;
  c.model.heads = 3;
  panel.set_config(c);
  EXPECT_TRUE(panel.problem().contains(QStringLiteral("heads must divide d_model"), Qt::CaseInsensitive)) << panel.problem().toStdString();
}

TEST(SettingsPanel, LearningRateRefusesLettersAndOutOfRangeValues) {
  SettingsPanel panel;
  auto* lr = panel.findChild<QComboBox*>(QStringLiteral("learningRate"));
  ASSERT_NE(lr, nullptr);
  lr->lineEdit()->clear();
  QTest::keyClicks(lr->lineEdit(), QStringLiteral("6x"));
  EXPECT_EQ(lr->currentText(), QStringLiteral("6"));  // the letter never got in
  lr->setEditText(QStringLiteral("6e-3"));
  EXPECT_TRUE(panel.problem().isEmpty());
  lr->setEditText(QStringLiteral("3"));
  EXPECT_FALSE(panel.problem().isEmpty());
}

}  // namespace
}  // namespace normlab::ui
