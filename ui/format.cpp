#include "format.h"

#include <cmath>

#include "core/runs/run_text.h"
#include "lab/lab.h"
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

namespace {

QString estimate_source_text(const lab::Estimate& e) {
  using Basis = lab::Estimate::Basis;
  switch (e.basis) {
    case Basis::ThisSession: return QObject::tr("from this session's training speed");
    case Basis::FinishedRun:
      return QObject::tr("from \u201c%1\u201d, %2 for %3 steps")
          .arg(lab::qstr(e.reference), lab::qstr(duration_text(e.reference_seconds)))
          .arg(e.reference_steps);
    case Basis::TimedSteps:
      return QObject::tr("from %1 ms per step, timed here on a %2-layer model")
          .arg(QString::number(e.ms_per_step, 'f', 0))
          .arg(e.timed_layers);
    case Basis::None: break;
  }
  return {};
}

}  // namespace

QString estimate_basis_text(const lab::Estimate& e) {
  QString text = estimate_source_text(e);
  if (!text.isEmpty() && e.measured_threads > 0 && e.threads_now > 0) {
    text += QObject::tr(" on %n thread(s), where a run side by side gets %1", nullptr, e.measured_threads)
                .arg(QObject::tr("%n thread(s)", nullptr, e.threads_now));
  }
  return text;
}

}  // namespace normlab::ui
