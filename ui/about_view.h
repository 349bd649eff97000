#pragma once
// "About this experiment": what the two placements are, why post-norm wants warmup, and
// how to read the chart, in a few paragraphs.
#include <QTextBrowser>

namespace normlab::ui {

class AboutView : public QTextBrowser {
  Q_OBJECT
 public:
  explicit AboutView(QWidget* parent = nullptr);
};

}  // namespace normlab::ui
