// The unigram baselines: one dashed line per distinct value, each labelled where it
// hides no curve.
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <optional>

#include "lab/run_store.h"

#include "loss_chart_parts.h"

namespace normlab::ui {

namespace {
const QColor kBaselineColour(0x55, 0x55, 0x55, 170);
}  // namespace

void LossChart::update_baselines() {
  baselines_dirty_ = false;
  std::vector<double> wanted;
  for (const lab::RunEntry& run : store_.runs()) {
    const double b = run.record.baseline_loss;
    if (!drawn(run) || !std::isfinite(b) || b <= 0) continue;
    // Runs evaluated on the same held-out positions (corpus, vocabulary, context and
    // evaluation batches) share one line (labels show two decimals).
    const bool known = std::any_of(wanted.begin(), wanted.end(), [b](double w) { return std::abs(w - b) < 0.005; });
    if (!known) wanted.push_back(b);
  }
  std::sort(wanted.begin(), wanted.end());
  const bool same = wanted.size() == baselines_.size() &&
                    std::equal(wanted.begin(), wanted.end(), baselines_.begin(),
                               [](double w, const auto& b) { return std::abs(w - b->nats) < 0.005; });
  if (!same) {
    for (auto& b : baselines_) {
      give_back(b->series);
      delete b->label;
    }
    baselines_.clear();
    for (double nats : wanted) {
      auto b = std::make_unique<Baseline>();
      b->nats = nats;
      const QString text = tr("unigram baseline %1 nats").arg(nats, 0, 'f', 2);
      b->series = take_series();
      b->series->setName(text);
      b->series->setPen(QPen(kBaselineColour, 1.4, Qt::DashLine));
      b->series->setVisible(true);
      b->label = new QGraphicsRectItem(this);
      b->words = new QGraphicsSimpleTextItem(text, b->label);
      b->words->setFont(sized_font(9));
      b->words->setBrush(QColor(0x44, 0x44, 0x44));
      b->words->setPos(4, 1);
      b->label->setRect(b->words->boundingRect().adjusted(0, 0, 8, 2));
      b->label->setBrush(QColor(255, 255, 255, 215));
      b->label->setPen(Qt::NoPen);
      b->label->setZValue(100);  // above every series
      baselines_.push_back(std::move(b));
    }
    styles_dirty_ = true;
  }
  const ViewRange shown = view();
  for (auto& b : baselines_) {
    b->series->replace({{shown.x_min, to_display(b->nats)}, {shown.x_max, to_display(b->nats)}});
  }
  place_baseline_labels();
}

namespace {

// Whether the segment from a to b passes through `box` (Liang-Barsky clipping).
bool crosses(QPointF a, QPointF b, const QRectF& box) {
  const double dx = b.x() - a.x(), dy = b.y() - a.y();
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x() - box.left(), box.right() - a.x(), a.y() - box.top(), box.bottom() - a.y()};
  double t0 = 0, t1 = 1;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

}  // namespace

void LossChart::set_baseline_words(Baseline& b, const QString& text) {
  if (b.words->text() == text) return;
  b.words->setText(text);
  b.label->setRect(b.words->boundingRect().adjusted(0, 0, 8, 2));
}

// Each label sits just above or below its line, at the place nearest the right end where
// it covers no curve: post-norm runs often lie right on the baseline, and a label that
// only covered the fewest curves still sat on them. Where the line has no such place, the
// label goes under the plot, beside the x-axis's title, and says which line it names; with
// no room there either, the legend alone names it.
void LossChart::place_baseline_labels() {
  const QRectF plot = plotArea();
  constexpr int kPlaces = 17;  // along the line, from its right end
  constexpr double kGap = 3;   // between the line and its label
  for (auto& b : baselines_) {
    const QString value = QString::number(b->nats, 'f', 2);
    set_baseline_words(*b, tr("unigram baseline %1 nats").arg(value));
    const double line_y = position_of({0, b->nats}).y();
    const bool line_shown = b->series->isVisible() && line_y >= plot.top() && line_y <= plot.bottom();
    std::optional<QPointF> place;
    for (int i = 0; i < kPlaces && line_shown && !place; ++i) {
      const QSizeF size = b->label->rect().size();
      const double along = 1.0 - double(i) / (kPlaces - 1);
      for (const bool above : {true, false}) {
        const QRectF box(plot.left() + 4 + along * (plot.width() - size.width() - 8),
                         above ? line_y - size.height() - kGap : line_y + kGap, size.width(), size.height());
        if (plot.contains(box) && curves_under(box) == 0) {
          place = box.topLeft();
          break;
        }
      }
    }
    if (line_shown && !place) {
      set_baseline_words(*b, tr("dashed: unigram %1 nats").arg(value));
      const QSizeF size = b->label->rect().size();
      // In the row of the x-axis's title, which is centred under the plot: beside it on the
      // right, else on the left.
      const double below_ticks = plot.bottom() + QFontMetricsF(axis_x_->labelsFont()).height() + 4;
      const double y = geometry().height() - margins().bottom() - size.height();
      const double title = QFontMetricsF(axis_x_->titleFont()).horizontalAdvance(axis_x_->titleText());
      const double title_left = plot.center().x() - title / 2 - 8, title_right = plot.center().x() + title / 2 + 8;
      if (y >= below_ticks && plot.right() - size.width() >= title_right) {
        place = QPointF(plot.right() - size.width(), y);
      } else if (y >= below_ticks && plot.left() + size.width() <= title_left) {
        place = QPointF(plot.left(), y);
      }
    }
    if (place) b->label->setPos(*place);
    b->label->setVisible(place.has_value());
  }
}

// How much of the drawn curves a box in chart coordinates would hide: each stretch of a
// curve through it, a held-out one weighing most (dark, with its dots).
int LossChart::curves_under(const QRectF& box) const {
  const auto display_box = [this](const QRectF& r) {
    return QRectF(display_at(r.bottomLeft()), display_at(r.topRight())).normalized();
  };
  const QRectF lines = display_box(box), dots = display_box(box.adjusted(-2.5, -2.5, 2.5, 2.5));  // a dot's radius
  int cover = 0;
  // Points are in step order: only those near the box's steps are looked at, which for a
  // 100,000-step run is a small share of them, at every refresh while one trains.
  const auto count = [&](const QList<QPointF>& points, const QRectF& area, int weight) {
    const double x0 = area.left(), x1 = area.right();
    auto p = std::lower_bound(points.begin(), points.end(), x0, [](const QPointF& q, double x) { return q.x() < x; });
    if (p != points.begin()) --p;  // the stretch coming into the box
    if (points.size() == 1) cover += weight * area.contains(points.front());
    for (; p != points.end() && std::next(p) != points.end() && p->x() <= x1; ++p) {
      cover += weight * crosses(*p, *std::next(p), area);
    }
  };
  for (const lab::RunEntry& run : store_.runs()) {
    auto it = curves_.find(run.id);
    if (!drawn(run) || it == curves_.end()) continue;
    const Curves& c = *it->second;
    count(c.heldout_points, dots, 10);
    count(c.raw_points, lines, 1);  // the training curve, or the faint raw one behind it
    if (smoothing_ > 0) count(c.smooth_points, lines, 1);
  }
  return cover;
}

}  // namespace normlab::ui
