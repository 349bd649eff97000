#include "format.h"

#include <cmath>

namespace normlab::ui {

QString qstr(const std::string& text) { return QString::fromStdString(text); }

QString duration_text(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return QStringLiteral("?");
  const long s = std::lround(seconds);
  if (s >= 3600) return QStringLiteral("%1 h %2 min").arg(s / 3600).arg(s / 60 % 60, 2, 10, QChar('0'));
  if (s >= 60) return QStringLiteral("%1 min %2 s").arg(s / 60).arg(s % 60, 2, 10, QChar('0'));
  return QStringLiteral("%1 s").arg(s);
}

QString loss_text(double nats) {
  return std::isfinite(nats) ? QString::number(nats, 'f', 3) : QStringLiteral("\u2014");
}

QString lr_text(double lr) { return qstr(format_lr(lr)); }

QString setup_text(const TrainConfig& c) {
  return QStringLiteral("%1 layers, width %2 \u00b7 batch %3\u00d7%4 \u00b7 %5 steps")
      .arg(c.model.layers)
      .arg(c.model.d_model)
      .arg(c.batch_size)
      .arg(c.model.context)
      .arg(c.steps);
}

QString file_stem(const QString& name) {
  QString stem;
  for (const QChar ch : name) {
    const bool keep = (ch.isLetterOrNumber() && ch.unicode() < 128) || ch == '.' || ch == '-';
    stem += keep ? ch : QChar('_');
  }
  return stem.isEmpty() ? QStringLiteral("run") : stem;
}

}  // namespace normlab::ui
