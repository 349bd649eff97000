// The About tab's lists against the engine's tables.
#include "ui/about_view.h"

#include <QFile>
#include <QRegularExpression>
#include <QTextDocument>
#include <gtest/gtest.h>
#include <string>

#include "core/runs/config.h"
#include "core/runs/config_fields.h"
#include "core/sweeps/sweep.h"
#include "core/training/layer_stats.h"
#include "lab/qstring.h"

namespace normlab::ui {
namespace {

// Issue 47: the About tab named placements, norm types, switches and statistics in
// hand-written prose, which a new row in a table would not reach. Its lists are written
// from the tables: every row is on the page, by its label, its name and its help.
TEST(AboutView, ListsEveryRowOfTheEnginesTables) {
  const AboutView about;
  const QString page = about.toPlainText();
  const auto listed = [&](const std::string& label, const std::string& name, const std::string& help) {
    EXPECT_TRUE(page.contains(lab::qstr(label + " (" + name + ")"))) << label << " (" << name << ") is not listed";
    EXPECT_TRUE(page.contains(lab::qstr(help))) << name << ": its help is not on the page";
  };
  for (const PlacementInfo& row : kPlacements) listed(row.label, row.name, row.help);
  for (const NormTypeInfo& row : kNormTypes) listed(row.label, row.name, row.help);
  int switches = 0;
  for (const ConfigField& field : config_fields()) {
    if (!std::holds_alternative<Member<Switch>>(field.member)) continue;
    listed(field.label, "--" + field.flag, field.help);
    ++switches;
  }
  EXPECT_GE(switches, 2) << "the switches were not read";
  for (const StatisticInfo& row : layer_statistics()) listed(row.label, row.name, row.help);
  for (const SweepPresetInfo& row : kSweepPresets) listed(row.label, row.name, row.help);
  for (const PlacementInfo& row : kPlacements) {
    EXPECT_TRUE(page.contains(QString::fromUtf8(row.formula))) << row.name << ": its formula";
  }
}

// Issue 50: the page quoted full-scale losses in its prose, where no remade figure could
// reach them. They now come from the corpus-flip block that scripts/figures.py writes into
// resources/about/corpus-flip.html: the page shows that block's text as the checkout has it
// (a build compiled from an older file fails here).
TEST(AboutView, ShowsTheFlipAsTheFiguresScriptWroteIt) {
  QFile source(QStringLiteral(NORMLAB_ABOUT_PIECES "/corpus-flip.html"));
  ASSERT_TRUE(source.open(QIODevice::ReadOnly)) << "cannot read " << NORMLAB_ABOUT_PIECES;
  const QRegularExpression block(QStringLiteral("<!-- corpus-flip -->\\n(.*)<!-- /corpus-flip -->"),
                                 QRegularExpression::DotMatchesEverythingOption);
  const QRegularExpressionMatch match = block.match(QString::fromUtf8(source.readAll()));
  ASSERT_TRUE(match.hasMatch()) << "the file has no corpus-flip block";
  QTextDocument piece;
  piece.setHtml(match.captured(1));
  const QString page = AboutView().toPlainText();
  const QStringList paragraphs = piece.toPlainText().split(QLatin1Char('\n'), Qt::SkipEmptyParts);
  ASSERT_GE(paragraphs.size(), 2) << "the block says next to nothing";
  for (const QString& paragraph : paragraphs) {
    EXPECT_TRUE(page.contains(paragraph.trimmed())) << "not on the page: " << paragraph.toStdString();
  }
  EXPECT_FALSE(page.contains(QStringLiteral("lacks its measured figures")));
}

}  // namespace
}  // namespace normlab::ui
