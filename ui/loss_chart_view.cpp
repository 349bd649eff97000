#include "loss_chart_view.h"

#include <QApplication>
#include <QGraphicsLineItem>
#include <QLabel>
#include <QLocale>
#include <QMouseEvent>
#include <QRubberBand>
#include <algorithm>
#include <cmath>
#include <limits>

#include "lab/run_store.h"

#include "format.h"
#include "loss_chart.h"

namespace normlab::ui {

namespace {
constexpr int kMaxReadoutRuns = 10;
constexpr double kWheelZoomPerNotch = 0.85;
}  // namespace

LossChartView::LossChartView(LossChart* chart, QWidget* parent)
    : QChartView(chart, parent),
      chart_(chart),
      rubber_band_(new QRubberBand(QRubberBand::Rectangle, viewport())),
      readout_(new QLabel(viewport())),
      empty_hint_(new QLabel(viewport())),
      crosshair_(new QGraphicsLineItem(chart)) {
  setRenderHint(QPainter::Antialiasing);
  setRubberBand(QChartView::NoRubberBand);  // zoom and pan are handled here, see above
  setMouseTracking(true);
  setFocusPolicy(Qt::StrongFocus);
  setMinimumSize(420, 300);

  crosshair_->setPen(QPen(QColor(0x80, 0x80, 0x80, 160), 1, Qt::DashLine));
  crosshair_->setZValue(50);
  crosshair_->hide();

  readout_->setObjectName(QStringLiteral("chartReadout"));
  readout_->setTextFormat(Qt::RichText);
  readout_->setAttribute(Qt::WA_TransparentForMouseEvents);
  readout_->setStyleSheet(
      QStringLiteral("#chartReadout { background: rgba(255,255,255,235); border: 1px solid #b8b8b8;"
                     " border-radius: 4px; padding: 5px 7px; color: #222; }"));
  readout_->hide();

  empty_hint_->setAlignment(Qt::AlignCenter);
  empty_hint_->setWordWrap(true);
  empty_hint_->setAttribute(Qt::WA_TransparentForMouseEvents);
  empty_hint_->setStyleSheet(QStringLiteral("color: #777; font-size: 11pt;"));
  no_runs_text_ =
      tr("No runs yet.\nPress Start to train one with the settings on the left,\n"
         "queue the course experiment, or import recorded runs (File \u25b8 Import runs).");
  none_drawn_text_ = tr("Every run is hidden: tick runs in the run table to draw them.");
  for (auto signal : {&lab::RunStore::run_added, &lab::RunStore::run_removed, &lab::RunStore::appearance_changed}) {
    connect(&chart->store(), signal, this, &LossChartView::update_empty_hint);
  }
  connect(chart, &LossChart::view_changed, this, &LossChartView::update_empty_hint);
  // Under a still pointer the view moved (a fit, a zoom by wheel or keys): another step is there.
  connect(chart, &LossChart::view_changed, this, [this] {
    if (readout_->isVisible()) show_readout(last_pos_);
  });
  update_empty_hint();
}

QPointF LossChartView::chart_pos(QPoint viewport_pos) const { return chart_->mapFromScene(mapToScene(viewport_pos)); }

void LossChartView::set_empty_texts(const QString& no_runs, const QString& none_drawn) {
  no_runs_text_ = no_runs;
  none_drawn_text_ = none_drawn;
  update_empty_hint();
}

void LossChartView::update_empty_hint() {
  const bool no_runs = chart_->store().runs().empty();
  empty_hint_->setText(no_runs ? no_runs_text_ : none_drawn_text_);
  empty_hint_->setVisible(no_runs || !chart_->draws_any_run());
  empty_hint_->setGeometry(viewport()->rect().adjusted(40, 40, -40, -40));
}

void LossChartView::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);
  update_empty_hint();
}

void LossChartView::mousePressEvent(QMouseEvent* event) {
  drag_origin_ = last_pos_ = event->pos();
  if (event->button() == Qt::LeftButton && chart_->plotArea().contains(chart_pos(event->pos()))) {
    drag_ = Drag::Zoom;
    rubber_band_->setGeometry(QRect(drag_origin_, QSize()));
    rubber_band_->show();
  } else if (event->button() == Qt::RightButton || event->button() == Qt::MiddleButton) {
    drag_ = Drag::Pan;
    viewport()->setCursor(Qt::ClosedHandCursor);
  } else {
    QChartView::mousePressEvent(event);
    return;
  }
  hide_readout();
  event->accept();
}

void LossChartView::mouseMoveEvent(QMouseEvent* event) {
  const QPoint pos = event->pos();
  switch (drag_) {
    case Drag::Zoom: rubber_band_->setGeometry(QRect(drag_origin_, pos).normalized()); break;
    case Drag::Pan: chart_->pan_by(pos - last_pos_); break;
    case Drag::None: show_readout(pos); break;
  }
  last_pos_ = pos;
  event->accept();
}

void LossChartView::mouseReleaseEvent(QMouseEvent* event) {
  if (drag_ == Drag::Zoom) {
    rubber_band_->hide();
    const QRect band = QRect(drag_origin_, event->pos()).normalized();
    // A press and release in one place is a click, not a box to zoom into.
    if ((event->pos() - drag_origin_).manhattanLength() < QApplication::startDragDistance()) {
      if (const int step = step_under(event->pos()); step >= 0) emit step_picked(step);
    } else {
      chart_->zoom_to(QRectF(chart_pos(band.topLeft()), chart_pos(band.bottomRight())));
    }
  }
  if (drag_ == Drag::None) {
    QChartView::mouseReleaseEvent(event);
    return;
  }
  drag_ = Drag::None;
  viewport()->unsetCursor();
  show_readout(event->pos());
  event->accept();
}

void LossChartView::mouseDoubleClickEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) {
    chart_->reset_view();
    event->accept();
  }
}

void LossChartView::wheelEvent(QWheelEvent* event) {
  const double notches = event->angleDelta().y() / 120.0;
  if (notches == 0) return;
  const double factor = std::pow(kWheelZoomPerNotch, notches);
  // Ctrl zooms the loss axis only, Shift the step axis only.
  const Qt::KeyboardModifiers mods = event->modifiers();
  chart_->zoom_around(chart_pos(event->position().toPoint()), mods & Qt::ControlModifier ? 1 : factor,
                      mods & Qt::ShiftModifier ? 1 : factor);
  event->accept();
}

void LossChartView::keyPressEvent(QKeyEvent* event) {
  const QRectF plot = chart_->plotArea();
  const QPointF centre = plot.center();
  switch (event->key()) {
    case Qt::Key_Left: chart_->pan_by({plot.width() / 10, 0}); break;
    case Qt::Key_Right: chart_->pan_by({-plot.width() / 10, 0}); break;
    case Qt::Key_Up: chart_->pan_by({0, plot.height() / 10}); break;
    case Qt::Key_Down: chart_->pan_by({0, -plot.height() / 10}); break;
    case Qt::Key_Plus:
    case Qt::Key_Equal: chart_->zoom_around(centre, 0.8, 0.8); break;
    case Qt::Key_Minus: chart_->zoom_around(centre, 1.25, 1.25); break;
    case Qt::Key_Home:
    case Qt::Key_0: chart_->reset_view(); break;
    default: QChartView::keyPressEvent(event); return;
  }
  event->accept();
}

void LossChartView::leaveEvent(QEvent* event) {
  hide_readout();
  QChartView::leaveEvent(event);
}

void LossChartView::hide_readout() {
  readout_->hide();
  crosshair_->hide();
}

// Every drawn run's values at the pointer's x (steps, tokens or seconds); none off the plot.
std::vector<Readout> LossChartView::values_under(QPoint viewport_pos, double& pointer_x) const {
  const QPointF at = chart_pos(viewport_pos);
  if (!chart_->plotArea().contains(at)) return {};
  pointer_x = chart_->value_at(at).x();
  return chart_->readout(pointer_x);
}

// The point under the pointer as recorded: the nearest any drawn run has. A run that ended
// before it shows its last step, "at 300", rather than giving the header its own.
const Readout& LossChartView::nearest(const std::vector<Readout>& values, double pointer_x) {
  return *std::min_element(values.begin(), values.end(), [pointer_x](const Readout& a, const Readout& b) {
    return std::abs(a.x - pointer_x) < std::abs(b.x - pointer_x);
  });
}

int LossChartView::step_under(QPoint viewport_pos) const {
  double pointer_x = 0;
  const std::vector<Readout> values = values_under(viewport_pos, pointer_x);
  return values.empty() ? -1 : nearest(values, pointer_x).step;
}

void LossChartView::show_readout(QPoint viewport_pos) {
  const QRectF plot = chart_->plotArea();
  if (!plot.contains(chart_pos(viewport_pos))) {
    hide_readout();
    viewport()->unsetCursor();
    return;
  }
  viewport()->setCursor(Qt::CrossCursor);
  double pointer_x = 0;
  const std::vector<Readout> values = values_under(viewport_pos, pointer_x);
  if (values.empty()) {
    hide_readout();
    return;
  }
  const Readout& nearest_point = nearest(values, pointer_x);
  const int shown_step = nearest_point.step;
  const double x = chart_->position_of({nearest_point.x, 1}).x();
  crosshair_->setLine(x, plot.top(), x, plot.bottom());
  crosshair_->setVisible(plot.left() <= x && x <= plot.right());

  // Runs differ in tokens per step and in speed: off the step axis each row says its step.
  const bool by_step = chart_->x_axis() == XAxis::Steps;
  QString where;
  switch (chart_->x_axis()) {
    case XAxis::Steps: where = tr("step %1").arg(shown_step); break;
    case XAxis::Tokens:
      where = tr("%1 tokens").arg(QLocale::system().toString(std::llround(nearest_point.x * 1e6)));
      break;
    case XAxis::WallTime:
      where = tr("%1 s").arg(QLocale::system().toString(nearest_point.x, 'f', nearest_point.x < 100 ? 1 : 0));
      break;
  }
  // Nearest the pointer's loss first: with many runs, the ones the user points at.
  const double pointer_loss = chart_->value_at(chart_pos(viewport_pos)).y();
  std::vector<const Readout*> order;
  for (const Readout& r : values) order.push_back(&r);
  const auto distance = [pointer_loss](const Readout* r) {
    double d = std::numeric_limits<double>::infinity();
    for (const double loss : {r->heldout, r->train, r->train_smoothed}) {
      if (std::isfinite(loss)) d = std::min(d, std::abs(loss - pointer_loss));
    }
    return d;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](const Readout* a, const Readout* b) { return distance(a) < distance(b); });

  // The held-out column first, as it says what matters; what does not fit inside the chart
  // goes, least needed first: the smoothed training loss, long names' ends, the training
  // column, then the farthest runs.
  const QRect area = viewport()->rect().adjusted(2, 2, -2, -2);
  const auto compose = [&](int most_rows, bool smoothed, int name_chars, bool training) {
    QString html = tr("<b>%1</b><table cellspacing='0' cellpadding='1'>").arg(where);
    const int shown = std::min<int>(most_rows, int(order.size()));
    for (int i = 0; i < shown; ++i) {
      const Readout& r = *order[std::size_t(i)];
      QString name = r.name;
      if (name.size() > name_chars) name = name.left(name_chars - 1) + QChar(0x2026);
      const QString heldout =
          r.eval_step < 0 ? QString() : tr("held-out <b>%1</b> at %2").arg(loss_text(r.heldout)).arg(r.eval_step);
      QString train;
      if (training) {
        train = tr("train %1").arg(loss_text(r.train));
        if (smoothed && std::isfinite(r.train_smoothed)) train += tr(" (smoothed %1)").arg(loss_text(r.train_smoothed));
        if (!by_step) train += tr(" at step %1").arg(r.step);
        else if (r.step != shown_step) train += tr(" at %1").arg(r.step);
      }
      html += QStringLiteral(
                  "<tr><td><span style='color:%1'>\u25a0</span> %2&nbsp;&nbsp;</td>"
                  "<td>%3&nbsp;&nbsp;</td><td>%4</td></tr>")
                  .arg(r.colour.name(), name.toHtmlEscaped(), heldout, train);
    }
    if (shown < int(order.size())) {
      html += tr("<tr><td colspan='3'>\u2026 and %1 more, farther from the pointer</td></tr>")
                  .arg(int(order.size()) - shown);
    }
    html += QStringLiteral("</table>");
    html += tr("<span style='color:#777'>Click to read the runs' text at this step (What it writes)</span>");
    readout_->setText(html);
    readout_->adjustSize();
    return readout_->width() <= area.width() && readout_->height() <= area.height();
  };
  int rows = kMaxReadoutRuns;
  bool fits = compose(rows, true, 60, true) || compose(rows, false, 60, true) || compose(rows, false, 28, true) ||
              compose(rows, false, 18, false);
  while (!fits && rows > 1) fits = compose(--rows, false, 18, false);

  // Beside the pointer, flipped to stay inside the chart.
  QPoint pos = viewport_pos + QPoint(18, 14);
  if (pos.x() + readout_->width() > area.right()) pos.rx() = viewport_pos.x() - readout_->width() - 18;
  if (pos.y() + readout_->height() > area.bottom()) pos.ry() = viewport_pos.y() - readout_->height() - 14;
  pos.rx() = std::clamp(pos.x(), area.left(), std::max(area.left(), area.right() - readout_->width()));
  pos.ry() = std::clamp(pos.y(), area.top(), std::max(area.top(), area.bottom() - readout_->height()));
  readout_->move(pos);
  readout_->show();
  readout_->raise();
}

}  // namespace normlab::ui
