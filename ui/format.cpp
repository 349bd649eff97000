#include "format.h"

#include <cmath>

#include "lab/qstring.h"

namespace normlab::ui {

QString loss_text(double nats) {
  return std::isfinite(nats) ? QString::number(nats, 'f', 3) : QStringLiteral("\u2014");
}

QString lr_text(double lr) { return lab::qstr(format_lr(lr)); }

QString setup_text(const TrainConfig& c) {
  return QStringLiteral("%1 layers, width %2 \u00b7 batch %3\u00d7%4 \u00b7 %5 steps")
      .arg(c.model.layers)
      .arg(c.model.d_model)
      .arg(c.batch_size)
      .arg(c.model.context)
      .arg(c.steps);
}

}  // namespace normlab::ui
