#pragma once
// The loss chart's legend as a list beside the chart: one entry per drawn run, seed group
// and baseline, each name whole (wrapped at its spaces, never cut), scrolling when there
// are more than its height holds. However many runs there are, it never widens the window.
#include <QListWidget>
#include <vector>

#include "loss_chart.h"

namespace normlab::ui {

class ChartLegend : public QListWidget {
  Q_OBJECT
 public:
  explicit ChartLegend(const LossChart& chart, QWidget* parent = nullptr);

  QSize sizeHint() const override;  // room for the widest name on one line, up to a limit
  QSize minimumSizeHint() const override;

 private:
  void update_entries();
  int chrome_width() const;

  const LossChart& chart_;
  std::vector<LegendEntry> shown_;
};

}  // namespace normlab::ui
