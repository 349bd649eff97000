#pragma once
// The chart export dialog: format and size of the picture, then where to save it.
#include <QSize>
#include <QString>

class QWidget;

namespace normlab::ui {

struct ImageRequest {
  QString path;  // empty when cancelled
  QSize pixels;
};

// `shown`: the chart's size on screen; `folder`: where the file dialog starts.
ImageRequest ask_image(QWidget* parent, QSize shown, const QString& folder);

}  // namespace normlab::ui
