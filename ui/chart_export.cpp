#include "chart_export.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QPainter>
#include <QSvgGenerator>
#include <algorithm>
#include <cmath>

#include "atomic_file.h"
#include "loss_chart.h"

namespace normlab::ui {

namespace {

// A fresh chart over the same runs, laid out at `size`, showing what `shown` shows.
template <typename Paint>
void paint_copy(const LossChart& shown, QSizeF size, Paint paint) {
  QGraphicsScene scene;
  auto* chart = new LossChart(shown.store());
  scene.addItem(chart);  // the scene owns it
  chart->resize(size);
  chart->set_picture_mode(true);
  chart->copy_view_from(shown);
  // Qt lays a chart out when its layout request event arrives; the picture is drawn now.
  QCoreApplication::sendPostedEvents(nullptr, QEvent::LayoutRequest);
  chart->layout()->activate();
  chart->refresh();
  paint(scene, QRectF(QPointF(), size));
}

void write_bytes(const QString& path, const QByteArray& bytes) {
  write_file_atomically(path.toStdString(), bytes.toStdString());
}

}  // namespace

double export_scale(QSize shown, QSize pixels) {
  if (shown.isEmpty()) return 1;
  return std::max(1.0, std::sqrt(double(pixels.width()) * pixels.height() /
                                 (double(shown.width()) * shown.height())));
}

QImage render_chart(const LossChart& shown, QSize pixels, double scale) {
  QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  image.setDevicePixelRatio(scale);
  paint_copy(shown, QSizeF(pixels) / scale, [&](QGraphicsScene& scene, const QRectF& area) {
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    painter.setRenderHint(QPainter::TextAntialiasing);
    scene.render(&painter, area, area);
  });
  image.setDevicePixelRatio(1);
  return image;
}

void export_png(const LossChart& shown, const QString& path, QSize pixels, double scale) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  if (!render_chart(shown, pixels, scale).save(&buffer, "PNG")) {
    throw UserError("cannot encode the chart as PNG at " + std::to_string(pixels.width()) + "x" +
                    std::to_string(pixels.height()));
  }
  write_bytes(path, bytes);
}

void export_svg(const LossChart& shown, const QString& path, QSize size) {
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  svg.setSize(size);
  svg.setViewBox(QRect(QPoint(), size));
  svg.setTitle(QStringLiteral("NormLab loss curves"));
  svg.setDescription(QStringLiteral("Training and held-out loss per step, exported from NormLab"));
  paint_copy(shown, QSizeF(size), [&](QGraphicsScene& scene, const QRectF& area) {
    QPainter painter(&svg);
    painter.setRenderHint(QPainter::Antialiasing);
    scene.render(&painter, area, area);
  });
  write_bytes(path, bytes);
}

}  // namespace normlab::ui
