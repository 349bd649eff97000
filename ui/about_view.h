#pragma once
// "About this experiment": what the two placements are, why post-norm wants warmup, and
// how to read the chart, in a few paragraphs; then every placement, norm type, switch,
// layer statistic and sweep preset this build has, written from the engine's tables.
#include <QTextBrowser>

namespace normlab::ui {

class AboutView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit AboutView(QWidget* parent = nullptr);
  // The lists at the page's end, from kPlacements, kNormTypes, config_fields' switches,
  // layer_statistics and kSweepPresets.
  static QString choices_html();
  // A piece of the page made from measured runs by scripts/figures.py (its block NAME in
  // resources/about/NAME.html), so the figures the page quotes are those the docs show.
  static QString measured_html(const QString& name);
};

}  // namespace normlab::ui
