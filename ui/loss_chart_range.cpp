// What part of the plane the chart shows: fitted to the data, or zoomed and panned by
// the user; and the loss axis labels for it.
#include <QCategoryAxis>
#include <QFontMetricsF>
#include <QLineSeries>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "lab/run_store.h"

#include "chart_math.h"
#include "loss_chart_parts.h"

namespace normlab::ui {

// How far along the x-axis a run reaches: a training run to its planned end, which its
// curve grows towards (in time, where its speed so far puts the end, rounded up so the axis
// does not move at every step); a queued run nowhere yet; any other to its last step. A run
// stopped early kept a 10-million-step axis that squashed every curve into its first pixels.
double LossChart::x_reached(const RunRecord& run) const {
  if (run.status == RunStatus::Queued) return 0;
  const double last_wall = run.steps.empty() ? 0 : run.steps.back().wall_s;
  const int last_step = run.steps.empty() ? 0 : run.steps.back().step;
  if (run.status != RunStatus::Running) return x_of(run.config, last_step, last_wall);
  if (x_axis_ != XAxis::WallTime) return x_of(run.config, run.config.steps, 0);
  if (last_step <= 0 || last_wall <= 0) return 0;
  const double end = last_wall * run.config.steps / last_step;
  const double round = nice_step(end, 8);
  return std::ceil(end / round) * round;
}

void LossChart::fit_to_data() {
  double x_max = 0;
  std::vector<CurveExtents> extents;
  for (const lab::RunEntry& run : store_.runs()) {
    auto it = curves_.find(run.id);
    if (!shows(run) || it == curves_.end()) continue;
    x_max = std::max(x_max, x_reached(run.record));  // a seed group's every member
    if (drawn(run)) extents.push_back(it->second->extents);
  }
  std::vector<double> baselines;
  for (const auto& b : baselines_) baselines.push_back(to_display(b->nats));
  auto [lo, hi] = fit_loss_range(extents, baselines, ignore_outliers_);
  if (!(hi >= lo)) {  // nothing to show
    lo = to_display(1);
    hi = to_display(10);
  }
  // A band narrower than this shows each step's noise as if it were the story: widened
  // about its middle.
  if (const double least = log_scale_ ? 0.04 : 0.5; hi - lo < least) {
    const double middle = (hi + lo) / 2;
    lo = middle - least / 2;
    hi = middle + least / 2;
  }
  const double pad = (hi - lo) * 0.04;
  // Above the top, room for a baseline's label over its line.
  const double top_pad = std::max(pad, (hi - lo) * 0.08);
  const double reach = x_max > 0 ? x_max : x_axis_ == XAxis::Steps ? 1000 : 1;
  const double margin = reach * 0.012;  // the first and last evaluation's dots stay whole
  const ViewRange fitted{-margin, reach + margin, lo - pad, hi + top_pad};
  // Every range change makes Qt Charts place each point again (~15 ms for 5 x 3000 steps),
  // so a range that still holds the data snugly is kept while a run trains.
  const ViewRange now{axis_x_->min(), axis_x_->max(), axis_y_->min(), axis_y_->max()};
  const bool holds =
      fitted.x_min == now.x_min && fitted.x_max == now.x_max && now.y_min <= fitted.y_min && fitted.y_max <= now.y_max;
  const bool snug = now.y_max - now.y_min <= 1.2 * (fitted.y_max - fitted.y_min);
  if (!(holds && snug)) apply_view(fitted);
}

ViewRange LossChart::view() const {
  return {axis_x_->min(), axis_x_->max(), from_display(axis_y_->min()), from_display(axis_y_->max())};
}

void LossChart::apply_view(const ViewRange& d) {
  const double x_min = d.x_min, x_max = std::max(d.x_max, d.x_min + 1e-9);
  const double y_min = d.y_min, y_max = std::max(d.y_max, d.y_min + 1e-9);
  // Set the tick interval on the side that never makes many ticks: thousands of labels
  // would be laid out for a moment if a wide range met a narrow interval.
  const double interval = std::max(x_axis_ == XAxis::Steps ? 1.0 : 1e-9, nice_step(x_max - x_min, 8));
  if (interval > axis_x_->tickInterval()) axis_x_->setTickInterval(interval);
  axis_x_->setRange(x_min, x_max);
  axis_x_->setTickInterval(interval);
  // Millions of tokens and seconds come in fractions: as many decimals as the ticks need.
  const QString format = QStringLiteral("%.%1f").arg(decimals_for(interval));
  if (format != axis_x_->labelFormat()) axis_x_->setLabelFormat(format);
  axis_y_->setRange(y_min, y_max);
  for (auto& b : baselines_) b->series->replace({{x_min, to_display(b->nats)}, {x_max, to_display(b->nats)}});
  update_thinning();
  update_loss_ticks();
  place_baseline_labels();
  if (!view_moving_) {
    view_moving_ = true;
    update_item_caches();
  }
  view_settle_timer_.start();
  emit view_changed();
}

void LossChart::set_view(const ViewRange& v) {
  follows_data_ = false;
  const double floor = 1e-6;  // a log axis has no place for zero
  apply_view({v.x_min, v.x_max, to_display(log_scale_ ? std::max(v.y_min, floor) : v.y_min),
              to_display(log_scale_ ? std::max(v.y_max, 2 * floor) : v.y_max)});
}

void LossChart::reset_view() {
  follows_data_ = true;
  fit_to_data();
  emit view_changed();
}

void LossChart::update_loss_ticks() {
  // Qt Charts gives each label of a category axis the axis' height over their count (one
  // more than the ticks) less 2 × 2 px of padding, and cuts a taller one to "…".
  const double room = plotArea().height();  // 0 until laid out
  const double per_label = QFontMetricsF(axis_y_->labelsFont()).height() + 6;
  const int most = room > 0 ? int(room / per_label) - 1 : 8;
  const auto ticks = loss_ticks(from_display(axis_y_->min()), from_display(axis_y_->max()), log_scale_, most);
  QStringList labels;
  for (const Tick& tick : ticks) labels << QString::number(tick.value, 'f', tick.decimals);
  const bool same = labels == axis_y_->categoriesLabels() && axis_y_->startValue() == axis_y_->min() &&
                    std::equal(ticks.begin(), ticks.end(), labels.begin(), [&](const Tick& t, const QString& label) {
                      return axis_y_->endValue(label) == to_display(t.value);
                    });
  if (same) return;  // as on a plot area change that kept the height: no new layout
  for (const QString& label : axis_y_->categoriesLabels()) axis_y_->remove(label);
  axis_y_->setStartValue(axis_y_->min());
  for (const Tick& tick : ticks)
    axis_y_->append(QString::number(tick.value, 'f', tick.decimals), to_display(tick.value));
}

QPointF LossChart::display_at(QPointF pos) const {
  const QRectF plot = plotArea();
  return {axis_x_->min() + (pos.x() - plot.left()) / plot.width() * (axis_x_->max() - axis_x_->min()),
          axis_y_->min() + (plot.bottom() - pos.y()) / plot.height() * (axis_y_->max() - axis_y_->min())};
}

QPointF LossChart::value_at(QPointF pos) const {
  const QPointF d = display_at(pos);
  return {d.x(), from_display(d.y())};
}

QPointF LossChart::position_of(QPointF value) const {
  const QRectF plot = plotArea();
  const double x = plot.left() + (value.x() - axis_x_->min()) / (axis_x_->max() - axis_x_->min()) * plot.width();
  const double y =
      plot.bottom() - (to_display(value.y()) - axis_y_->min()) / (axis_y_->max() - axis_y_->min()) * plot.height();
  return {x, y};
}

void LossChart::zoom_to(const QRectF& rect) {
  const QRectF r = rect.normalized().intersected(plotArea());
  if (r.width() < 4 || r.height() < 4) return;
  const QPointF a = value_at(r.bottomLeft()), b = value_at(r.topRight());
  set_view({a.x(), b.x(), a.y(), b.y()});
}

void LossChart::zoom_around(QPointF pos, double fx, double fy) {
  const double x0 = axis_x_->min(), x1 = axis_x_->max(), y0 = axis_y_->min(), y1 = axis_y_->max();
  const QPointF centre = display_at(pos);
  const double cx = centre.x(), cy = centre.y();
  follows_data_ = false;
  apply_view({cx - (cx - x0) * fx, cx + (x1 - cx) * fx, cy - (cy - y0) * fy, cy + (y1 - cy) * fy});
}

void LossChart::pan_by(QPointF pixels) {
  const QRectF plot = plotArea();
  const double dx = -pixels.x() / plot.width() * (axis_x_->max() - axis_x_->min());
  const double dy = pixels.y() / plot.height() * (axis_y_->max() - axis_y_->min());
  follows_data_ = false;
  apply_view({axis_x_->min() + dx, axis_x_->max() + dx, axis_y_->min() + dy, axis_y_->max() + dy});
}

}  // namespace normlab::ui
