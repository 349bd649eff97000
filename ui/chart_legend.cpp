#include "chart_legend.h"

#include <QPainter>
#include <QPixmap>
#include <QScrollBar>
#include <algorithm>

namespace normlab::ui {

namespace {

constexpr QSize kSwatch(22, 10);  // a stretch of the curve, in its colour, with its point (a baseline: dashed)
constexpr int kMinimumChars = 14, kPreferredMaxChars = 30;

QIcon swatch(const LegendEntry& entry, qreal pixel_ratio) {
  QPixmap pixmap(kSwatch * pixel_ratio);
  pixmap.setDevicePixelRatio(pixel_ratio);
  pixmap.fill(Qt::transparent);
  QPainter p(&pixmap);
  p.setRenderHint(QPainter::Antialiasing);
  QPen pen(entry.colour, 2.1, entry.style);
  pen.setCapStyle(Qt::FlatCap);
  p.setPen(pen);
  const QPointF middle(kSwatch.width() / 2.0, kSwatch.height() / 2.0);
  p.drawLine(QPointF(0, middle.y()), QPointF(kSwatch.width(), middle.y()));
  if (entry.points) {  // a run's held-out points, as the chart draws them
    p.setPen(Qt::NoPen);
    p.setBrush(entry.colour);
    if (entry.squares) p.drawRect(QRectF(middle - QPointF(3.5, 3.5), QSizeF(7, 7)));
    else p.drawEllipse(middle, 3.2, 3.2);
  }
  return QIcon(pixmap);
}

}  // namespace

ChartLegend::ChartLegend(const LossChart& chart, QWidget* parent) : QListWidget(parent), chart_(chart) {
  setObjectName(QStringLiteral("chartLegend"));
  setFrameShape(QFrame::NoFrame);
  setSelectionMode(QAbstractItemView::NoSelection);
  setFocusPolicy(Qt::NoFocus);
  setWordWrap(true);
  setTextElideMode(Qt::ElideNone);
  setResizeMode(QListView::Adjust);
  setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  setVerticalScrollMode(QAbstractItemView::ScrollPerPixel);
  setIconSize(kSwatch);
  setSpacing(1);
  QFont small = font();
  small.setPointSizeF(9);  // as the chart's axes
  setFont(small);
  setStyleSheet(QStringLiteral("QListWidget { background: white; color: #303030; }"));
  connect(&chart, &LossChart::legend_changed, this, &ChartLegend::update_entries);
  update_entries();
}

void ChartLegend::update_entries() {
  std::vector<LegendEntry> entries = chart_.legend_entries();
  if (entries == shown_) return;
  shown_ = std::move(entries);
  clear();
  for (const LegendEntry& entry : shown_) {
    const QString text = entry.seeds.isEmpty() ? entry.name : entry.name + QLatin1Char('\n') + entry.seeds;
    auto* item = new QListWidgetItem(swatch(entry, devicePixelRatioF()), text, this);
    item->setToolTip(text);
  }
  setVisible(!shown_.empty());
  updateGeometry();
}

QSize ChartLegend::sizeHint() const {
  const QFontMetrics metrics = fontMetrics();
  int widest = 0;
  for (const LegendEntry& entry : shown_) {
    widest = std::max({widest, metrics.horizontalAdvance(entry.name), metrics.horizontalAdvance(entry.seeds)});
  }
  const int width =
      std::clamp(widest, kMinimumChars * metrics.averageCharWidth(), kPreferredMaxChars * metrics.averageCharWidth());
  return {width + chrome_width(), QListWidget::sizeHint().height()};
}

QSize ChartLegend::minimumSizeHint() const {
  const QFontMetrics metrics = fontMetrics();
  return {kMinimumChars * metrics.averageCharWidth() + chrome_width(), 3 * metrics.lineSpacing()};
}

// Beside an entry's text: its swatch, the gaps around it and the item's margins, and a scroll bar.
int ChartLegend::chrome_width() const {
  return kSwatch.width() + 6 * spacing() + 12 + verticalScrollBar()->sizeHint().width();
}

}  // namespace normlab::ui
