#pragma once
// A one-line label that shows as much of its text as its width holds, cut with "…", and
// the whole text in its tooltip: a long text gives way to its neighbours rather than
// running under them.
#include <QLabel>
#include <QResizeEvent>

namespace normlab::ui {

class ElidedLabel : public QLabel {
 public:
  explicit ElidedLabel(QWidget* parent = nullptr) : QLabel(parent) {
    setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  }

  void set_full_text(const QString& text) {
    full_text_ = text;
    show_what_fits();
  }
  const QString& full_text() const { return full_text_; }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QLabel::resizeEvent(event);
    show_what_fits();
  }

 private:
  void show_what_fits() {
    const QString shown = fontMetrics().elidedText(full_text_, Qt::ElideRight, contentsRect().width());
    setText(shown);
    setToolTip(shown == full_text_ ? QString() : full_text_);
  }

  QString full_text_;
};

}  // namespace normlab::ui
