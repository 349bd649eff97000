#include "chart_export.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QGraphicsLayout>
#include <QGraphicsScene>
#include <QPainter>
#include <QSvgGenerator>
#include <QXmlStreamReader>
#include <QXmlStreamWriter>
#include <algorithm>
#include <cmath>
#include <map>

#include "core/system/atomic_file.h"

#include "loss_chart.h"

namespace normlab::ui {

namespace {

// A fresh chart over the same runs, laid out at `size`, showing what `shown` shows.
// `paint` gets the scene holding it, the chart and the scene's area to draw.
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
  chart->place_legend_in_plot();
  paint(scene, *chart, QRectF(QPointF(), size));
}

// Parts of the picture, bottom up: the series lie over the background, grid and axes
// and under the legend and the baseline labels.
enum class Layer { Under, Series, Over };

// The layer of each item that paints.
std::map<QGraphicsItem*, Layer> layers_of(const QGraphicsScene& scene, const LossChart& chart) {
  const QList<QGraphicsItem*> series = chart.series_items();
  std::map<QGraphicsItem*, Layer> layers;
  bool past_series = false;
  for (QGraphicsItem* item : scene.items(Qt::AscendingOrder)) {
    bool in_series = false;
    for (QGraphicsItem* i = item; i && !in_series; i = i->parentItem()) in_series = series.contains(i);
    past_series = past_series || in_series;
    if (item->flags() & QGraphicsItem::ItemHasNoContents) continue;
    layers[item] = in_series ? Layer::Series : past_series ? Layer::Over : Layer::Under;
  }
  return layers;
}

// The scene as an SVG document of `size`, only the items of `layer` painting.
QByteArray svg_of(QGraphicsScene& scene, const QRectF& area, QSize size, const std::map<QGraphicsItem*, Layer>& layers,
                  Layer layer) {
  for (const auto& [item, its_layer] : layers) item->setFlag(QGraphicsItem::ItemHasNoContents, its_layer != layer);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  QSvgGenerator svg;
  svg.setOutputDevice(&buffer);
  svg.setSize(size);
  svg.setViewBox(QRect(QPoint(), size));
  QPainter painter(&svg);
  painter.setRenderHint(QPainter::Antialiasing);
  scene.render(&painter, area, area);
  painter.end();
  return bytes;
}

// Qt Charts strokes a solid curve one segment at a time, so QSvgGenerator writes each
// segment as a polyline of two points: 7,296 of them for the course's curves (889 KB),
// which ImageMagick's renderer drew none of. Segments that go on where the last ended
// are written as one polyline: a curve is one element.
class JoinedPolylines {
 public:
  // Takes a polyline's points, "x0,y0 x1,y1 ", with its other attributes; writes the line
  // before when this one does not go on from it.
  void add(QXmlStreamAttributes attributes, const QString& points, QXmlStreamWriter& out) {
    QStringList corners = points.split(QLatin1Char(' '), Qt::SkipEmptyParts);
    if (!corners_.isEmpty() && !corners.isEmpty() && corners.front() == corners_.back() &&
        same_look(attributes, attributes_)) {
      corners_.append(corners.mid(1));
      return;
    }
    flush(out);
    attributes_ = std::move(attributes);
    corners_ = std::move(corners);
  }
  void flush(QXmlStreamWriter& out) {
    if (corners_.isEmpty()) return;
    out.writeEmptyElement(QStringLiteral("polyline"));
    for (const QXmlStreamAttribute& attribute : attributes_) out.writeAttribute(attribute);
    out.writeAttribute(QStringLiteral("points"), corners_.join(QLatin1Char(' ')));
    corners_.clear();
  }

 private:
  static bool same_look(const QXmlStreamAttributes& a, const QXmlStreamAttributes& b) {
    if (a.size() != b.size()) return false;
    for (qsizetype i = 0; i < a.size(); ++i) {
      if (a[i].qualifiedName() != b[i].qualifiedName() || a[i].value() != b[i].value()) return false;
    }
    return true;
  }

  QXmlStreamAttributes attributes_;  // but its points
  QStringList corners_;
};

// Writes what the root element of `svg` holds, but its title and description, with each id
// (and each reference to one) given `prefix`: every document numbers its gradients from 1.
void copy_content(const QByteArray& svg, const QString& prefix, QXmlStreamWriter& out) {
  QXmlStreamReader in(svg);
  JoinedPolylines polylines;
  int depth = 0;
  while (!in.atEnd()) {
    switch (in.readNext()) {
      case QXmlStreamReader::StartElement: {
        if (++depth == 1) break;  // the root
        if (depth == 2 && (in.name() == u"title" || in.name() == u"desc")) {
          in.skipCurrentElement();
          --depth;
          break;
        }
        QXmlStreamAttributes attributes;
        QString points;
        for (const QXmlStreamAttribute& attribute : in.attributes()) {
          QString value = attribute.value().toString();
          if (attribute.qualifiedName() == u"id") value.prepend(prefix);
          value.replace(QStringLiteral("url(#"), QStringLiteral("url(#") + prefix);
          if (attribute.qualifiedName() == u"points") points = value;
          else attributes.append(attribute.qualifiedName().toString(), value);
        }
        if (in.name() == u"polyline") {
          polylines.add(std::move(attributes), points, out);
          in.skipCurrentElement();
          --depth;
          break;
        }
        polylines.flush(out);
        out.writeStartElement(in.name().toString());
        out.writeAttributes(attributes);
        if (!points.isEmpty()) out.writeAttribute(QStringLiteral("points"), points);
        break;
      }
      case QXmlStreamReader::EndElement:
        polylines.flush(out);
        if (depth-- > 1) out.writeEndElement();
        break;
      case QXmlStreamReader::Characters:
        if (depth > 1 && !in.isWhitespace()) {
          polylines.flush(out);
          out.writeCharacters(in.text().toString());
        }
        break;
      default: break;
    }
  }
}

void write_bytes(const QString& path, const QByteArray& bytes) {
  write_file_atomically(path.toStdString(), bytes.toStdString());
}

}  // namespace

double export_scale(QSize shown, QSize pixels) {
  if (shown.isEmpty()) return 1;
  return std::max(1.0, std::sqrt(double(pixels.width()) * pixels.height() / (double(shown.width()) * shown.height())));
}

QImage render_chart(const LossChart& shown, QSize pixels, double scale) {
  QImage image(pixels, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  image.setDevicePixelRatio(scale);
  paint_copy(shown, QSizeF(pixels) / scale, [&](QGraphicsScene& scene, const LossChart&, const QRectF& area) {
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

// QSvgGenerator (Qt 6.4) ignores clipping, so a curve leaving the shown range (a spike, a
// zoomed view) would run over the axes and the title. The chart is drawn as three
// documents instead, under the series, the series, and over them, joined into one with
// the series in a clip path of the plot area.
void export_svg(const LossChart& shown, const QString& path, QSize size) {
  QByteArray bytes;
  paint_copy(shown, QSizeF(size), [&](QGraphicsScene& scene, const LossChart& chart, const QRectF& area) {
    const std::map<QGraphicsItem*, Layer> layers = layers_of(scene, chart);
    const QByteArray under = svg_of(scene, area, size, layers, Layer::Under);
    const QRectF plot = chart.mapRectToScene(chart.plotArea());
    QXmlStreamWriter out(&bytes);
    out.setAutoFormatting(true);
    out.writeStartDocument();
    out.writeStartElement(QStringLiteral("svg"));
    out.writeDefaultNamespace(QStringLiteral("http://www.w3.org/2000/svg"));
    out.writeNamespace(QStringLiteral("http://www.w3.org/1999/xlink"), QStringLiteral("xlink"));
    QXmlStreamReader root(under);
    root.readNextStartElement();
    for (const QString& name : {QStringLiteral("width"), QStringLiteral("height"), QStringLiteral("viewBox")}) {
      out.writeAttribute(name, root.attributes().value(name).toString());
    }
    out.writeAttribute(QStringLiteral("version"), QStringLiteral("1.1"));  // SVG Tiny has no clip paths
    out.writeTextElement(QStringLiteral("title"), QStringLiteral("NormLab loss curves"));
    out.writeTextElement(QStringLiteral("desc"),
                         QStringLiteral("Training and held-out loss per step, exported from NormLab"));
    out.writeStartElement(QStringLiteral("defs"));
    out.writeStartElement(QStringLiteral("clipPath"));
    out.writeAttribute(QStringLiteral("id"), QStringLiteral("plot-area"));
    out.writeEmptyElement(QStringLiteral("rect"));
    out.writeAttribute(QStringLiteral("x"), QString::number(plot.x()));
    out.writeAttribute(QStringLiteral("y"), QString::number(plot.y()));
    out.writeAttribute(QStringLiteral("width"), QString::number(plot.width()));
    out.writeAttribute(QStringLiteral("height"), QString::number(plot.height()));
    out.writeEndElement();
    out.writeEndElement();
    copy_content(under, QStringLiteral("under-"), out);
    out.writeStartElement(QStringLiteral("g"));
    out.writeAttribute(QStringLiteral("clip-path"), QStringLiteral("url(#plot-area)"));
    copy_content(svg_of(scene, area, size, layers, Layer::Series), QStringLiteral("series-"), out);
    out.writeEndElement();
    copy_content(svg_of(scene, area, size, layers, Layer::Over), QStringLiteral("over-"), out);
    out.writeEndElement();
    out.writeEndDocument();
  });
  write_bytes(path, bytes);
}

}  // namespace normlab::ui
