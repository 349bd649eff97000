// The About tab's lists against the engine's tables.
#include "ui/about_view.h"

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

}  // namespace
}  // namespace normlab::ui
