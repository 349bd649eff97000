#include "run_colors.h"

#include <QDateTime>
#include <QFileInfo>
#include <vector>

#include "core/runs/run_title.h"
#include "lab/qstring.h"

namespace normlab::ui {

QColor family_colour(Hue hue, int shade) { return QColor(QRgb(hue_colour(hue, shade))); }

QColor run_colour(const lab::RunEntry& run) {
  return family_colour(family_of(run.record.config), run.record.config.shade);
}

bool run_squared(const lab::RunEntry& run) { return shade_squared(run.record.config.shade); }

QColor lightened(const QColor& colour, double amount) {
  auto mix = [amount](int channel) { return int(channel + (255 - channel) * amount + 0.5); };
  return QColor(mix(colour.red()), mix(colour.green()), mix(colour.blue()), colour.alpha());
}

QColor training_colour(const QColor& heldout) { return lightened(heldout, 0.55); }

QString run_name(const lab::RunStore& store, const lab::RunEntry& run) {
  std::vector<const TrainConfig*> configs;
  for (const lab::RunEntry& each : store.runs()) configs.push_back(&each.record.config);
  // The runs folder names a file by when the run started: "20261205-171502-…".
  const QString file = QFileInfo(run.file).fileName();
  const QDateTime at = QDateTime::fromString(file.left(15), QStringLiteral("yyyyMMdd-HHmmss"));
  const QString started = at.isValid()
                              ? QObject::tr("started %1").arg(at.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")))
                              : QObject::tr("run %1").arg(run.id);
  return lab::qstr(distinct_name(run.record.config, configs, started.toStdString()));
}

}  // namespace normlab::ui
