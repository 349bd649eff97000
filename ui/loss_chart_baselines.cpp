// The unigram baselines: one dashed line per distinct value, each labelled where it
// hides the fewest curves.
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QPen>
#include <algorithm>
#include <cmath>
#include <limits>

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
    // Runs on the same corpus and vocabulary share one line (labels show two decimals).
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
      auto* words = new QGraphicsSimpleTextItem(text, b->label);
      words->setFont(sized_font(9));
      words->setBrush(QColor(0x44, 0x44, 0x44));
      words->setPos(4, 1);
      b->label->setRect(words->boundingRect().adjusted(0, 0, 8, 2));
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

// Each label sits just above or below its line, at the first of a few places along it
// that covers the fewest curves: post-norm runs often lie right on the baseline.
void LossChart::place_baseline_labels() {
  const QRectF plot = plotArea();
  for (auto& b : baselines_) {
    const double line_y = position_of({0, b->nats}).y();
    const QSizeF size = b->label->rect().size();
    QPointF best;
    int best_cover = std::numeric_limits<int>::max();
    for (double along : {1.0, 0.75, 0.5, 0.25, 0.0}) {
      for (bool above : {true, false}) {
        const QRectF box(plot.left() + 4 + along * (plot.width() - size.width() - 8),
                         above ? line_y - size.height() - 2 : line_y + 2, size.width(), size.height());
        if (!plot.contains(box)) continue;
        const int cover = curves_under(box);
        if (cover < best_cover) {
          best_cover = cover;
          best = box.topLeft();
        }
      }
    }
    b->label->setPos(best);
    b->label->setVisible(b->series->isVisible() && best_cover < std::numeric_limits<int>::max());
  }
}

int LossChart::curves_under(const QRectF& box) const {
  const QRectF area = QRectF(display_at(box.bottomLeft()), display_at(box.topRight())).normalized();
  auto inside = [&](QPointF p) {
    return p.x() >= area.left() && p.x() <= area.right() && p.y() >= area.top() && p.y() <= area.bottom();
  };
  const double x0 = area.left(), x1 = area.right();
  int cover = 0;
  for (const lab::RunEntry& run : store_.runs()) {
    auto it = curves_.find(run.id);
    if (!drawn(run) || it == curves_.end()) continue;
    const Curves& c = *it->second;
    // Held-out lines weigh most: dark, and straight between evaluations far apart.
    const QList<QPointF>& heldout = c.heldout_points;
    for (qsizetype i = 0; i + 1 < heldout.size(); ++i) {
      const QPointF a = heldout[i], z = heldout[i + 1];
      if (z.x() < x0 || a.x() > x1) continue;
      for (double t : {0.0, 0.25, 0.5, 0.75, 1.0}) cover += 10 * inside(a + t * (z - a));
    }
    // Points are in step order: only those within the box's steps are looked at, which
    // for a 100,000-step run is a small share of them, at every refresh while one trains.
    const QList<QPointF>& points = smoothing_ > 0 ? c.smooth_points : c.raw_points;
    auto p = std::lower_bound(points.begin(), points.end(), x0, [](const QPointF& q, double x) { return q.x() < x; });
    for (; p != points.end() && p->x() <= x1; ++p) cover += inside(*p);
  }
  return cover;
}

}  // namespace normlab::ui
