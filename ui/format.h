#pragma once
// How the app writes numbers, durations and settings.
#include <QString>

#include "config.h"

namespace normlab::ui {

QString duration_text(double seconds);       // "45 s", "3 min 05 s", "1 h 02 min"; "?" if unknown
QString loss_text(double nats);              // "5.090", or an em dash when not a number
QString lr_text(double lr);                  // "6e-3", as the course writes rates
QString setup_text(const TrainConfig& c);    // one line: model, batch, steps
QString file_stem(const QString& name);      // a run name made safe as a file name
QString qstr(const std::string& text);

}  // namespace normlab::ui
