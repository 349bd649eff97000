#include "context_use_chart.h"

#include <QGraphicsLineItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QMouseEvent>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "core/training/predictions.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "run_colors.h"

namespace normlab::ui {

namespace {
constexpr int kHeight = 88;  // above the text, under a 12-row run table at 1280 x 800
}  // namespace

ContextUseChart::ContextUseChart(lab::RunStore& store, QWidget* parent)
    : QChartView(new QChart, parent),
      store_(store),
      steps_(new QValueAxis),
      nats_(new QValueAxis),
      marker_(new QGraphicsLineItem(chart())),
      title_(new QGraphicsSimpleTextItem(chart())) {
  const StatisticInfo& context_use = prediction_statistics().front();
  setRenderHint(QPainter::Antialiasing);
  setFixedHeight(kHeight);
  setCursor(Qt::PointingHandCursor);
  setToolTip(tr("%1 at each evaluation, in nats: %2. Click to show the text at that step.")
                 .arg(lab::qstr(context_use.label), lab::qstr(context_use.help)));
  chart()->legend()->hide();
  chart()->setMargins(QMargins(4, 2, 8, 2));
  chart()->setBackgroundRoundness(0);
  QFont small = steps_->labelsFont();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  for (QValueAxis* axis : {steps_, nats_}) {
    axis->setLabelsFont(small);
    axis->setTitleFont(small);
  }
  steps_->setLabelFormat(QStringLiteral("%d"));
  steps_->setTickCount(5);
  // Its name inside the plot, at the top left, where a model that learns little leaves room:
  // an axis title this short a chart has room for would be cut.
  nats_->setTitleText(tr("nats"));
  title_->setText(tr("%1 (how much a prediction depends on what came before)").arg(lab::qstr(context_use.label)));
  title_->setFont(small);
  title_->setBrush(QColor(0x55, 0x55, 0x55));
  title_->setZValue(40);
  nats_->setLabelFormat(QStringLiteral("%.1f"));
  nats_->setTickCount(3);
  chart()->addAxis(steps_, Qt::AlignBottom);
  chart()->addAxis(nats_, Qt::AlignLeft);
  marker_->setPen(QPen(QColor(0x60, 0x60, 0x60), 1, Qt::DashLine));
  marker_->setZValue(50);
  marker_->hide();
  connect(chart(), &QChart::plotAreaChanged, this, &ContextUseChart::place_overlays);
  // A training run adds points many times a second; the chart is redrawn at most every 250 ms.
  redraw_.setSingleShot(true);
  redraw_.setInterval(250);
  connect(&redraw_, &QTimer::timeout, this, &ContextUseChart::redraw);
  for (auto signal : {&lab::RunStore::points_changed, &lab::RunStore::appearance_changed}) {
    connect(&store_, signal, this, [this](int id) {
      if (!redraw_.isActive() && std::find(run_ids_.begin(), run_ids_.end(), id) != run_ids_.end()) redraw_.start();
    });
  }
}

void ContextUseChart::show_runs(const std::vector<int>& run_ids) {
  run_ids_ = run_ids;
  redraw();
}

void ContextUseChart::mark_step(int step) {
  marked_step_ = step;
  place_overlays();
}

std::vector<QList<QPointF>> ContextUseChart::curves() const {
  std::vector<QList<QPointF>> points;
  for (const QLineSeries* line : lines_) points.push_back(line->points());
  return points;
}

void ContextUseChart::redraw() {
  for (QLineSeries* line : lines_) {
    chart()->removeSeries(line);
    delete line;
  }
  lines_.clear();
  const std::string& name = prediction_statistics().front().name;
  int last_step = 1;
  double top = 0.5;  // nats: room for a model that learnt a little
  for (const int id : run_ids_) {
    const lab::RunEntry* run = store_.find(id);
    const Series* series = run ? run->record.find_series(name) : nullptr;
    if (!series) continue;
    auto* line = new QLineSeries;
    line->setPen(QPen(run_colour(*run), 2));
    for (std::size_t i = 0; i < series->steps.size(); ++i) {
      if (!std::isfinite(series->at(i))) continue;
      line->append(series->steps[i], series->at(i));
      top = std::max(top, series->at(i));
    }
    last_step = std::max({last_step, run->record.config.steps, series->steps.empty() ? 0 : series->steps.back()});
    chart()->addSeries(line);
    line->attachAxis(steps_);
    line->attachAxis(nats_);
    lines_.push_back(line);
  }
  steps_->setRange(0, last_step);
  nats_->setRange(0, std::ceil(top * 1.1 * 2) / 2);
  place_overlays();
}

void ContextUseChart::place_overlays() {
  const QRectF plot = chart()->plotArea();
  title_->setPos(plot.topLeft() + QPointF(6, 2));
  if (marked_step_ < 0 || plot.isEmpty()) return marker_->hide();
  const double at = plot.left() + plot.width() * (marked_step_ - steps_->min()) / (steps_->max() - steps_->min());
  marker_->setLine(at, plot.top(), at, plot.bottom());
  marker_->setVisible(plot.left() <= at && at <= plot.right());
}

void ContextUseChart::mousePressEvent(QMouseEvent* event) {
  const QRectF plot = chart()->plotArea();
  const QPointF at = chart()->mapFromScene(mapToScene(event->pos()));
  if (event->button() != Qt::LeftButton || !plot.contains(at)) return QChartView::mousePressEvent(event);
  const double fraction = (at.x() - plot.left()) / plot.width();
  emit step_picked(int(std::lround(steps_->min() + fraction * (steps_->max() - steps_->min()))));
  event->accept();
}

}  // namespace normlab::ui
