#pragma once
// Pictures of what a LossChart shows (the same runs, range, log scale, smoothing and
// highlight), drawn afresh at the size asked for rather than scaled from the screen.
#include <QImage>
#include <QSize>
#include <QString>

namespace normlab::ui {

class LossChart;

// How much larger than on screen text and lines are drawn for an image of `pixels` from a
// chart shown at `shown`: at twice the size everything is twice as large, so the picture
// looks like the screen, only sharper. Never below 1, so small pictures stay readable.
double export_scale(QSize shown, QSize pixels);

QImage render_chart(const LossChart& shown, QSize pixels, double scale);
// Both throw normlab::UserError naming the file when it cannot be written.
void export_png(const LossChart& shown, const QString& path, QSize pixels, double scale);
void export_svg(const LossChart& shown, const QString& path, QSize size);

}  // namespace normlab::ui
