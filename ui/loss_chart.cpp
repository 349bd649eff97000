#include "loss_chart.h"

#include <QAreaSeries>
#include <QCategoryAxis>
#include <QElapsedTimer>
#include <QFont>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPainter>
#include <QPen>
#include <QPixmapCache>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "core/runs/run_title.h"
#include "core/runs/seeds.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "chart_math.h"
#include "format.h"
#include "loss_chart_parts.h"
#include "run_colors.h"

namespace normlab::ui {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kPixmapCacheKb = 192 * 1024;
const QColor kGridColour(0xe3, 0xe3, 0xe3);
const QColor kTextColour(0x30, 0x30, 0x30);

QColor with_alpha(QColor colour, int alpha) {
  colour.setAlpha(alpha);
  return colour;
}

// A held-out point drawn as a square of `colour` (Qt Charts scales it to the marker size).
QImage square_marker(const QColor& colour) {
  QImage image(24, 24, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::transparent);
  QPainter painter(&image);
  painter.fillRect(QRect(2, 2, 20, 20), colour);
  return image;
}

}  // namespace

LossChart::LossChart(const lab::RunStore& store, QGraphicsItem* parent)
    : QChart(parent), store_(store), axis_x_(new QValueAxis), axis_y_(new QCategoryAxis) {
  setTitleFont(sized_font(11.5, true));
  setTitleBrush(kTextColour);
  setBackgroundRoundness(0);
  setMargins(QMargins(4, 4, 10, 2));
  // Beside the plot, one run a line: names stay whole and never cover a curve.
  legend()->setAlignment(Qt::AlignRight);
  legend()->setMarkerShape(QLegend::MarkerShapeFromSeries);
  legend()->setFont(sized_font(9));  // as the axes: the course's names fit beside the plot in a 1024-pixel window
  legend()->setLabelColor(kTextColour);

  for (QAbstractAxis* axis : {static_cast<QAbstractAxis*>(axis_x_), static_cast<QAbstractAxis*>(axis_y_)}) {
    axis->setLabelsFont(sized_font(9));
    axis->setLabelsColor(kTextColour);
    axis->setTitleFont(sized_font(10));
    axis->setTitleBrush(kTextColour);
    axis->setGridLineColor(kGridColour);
    axis->setLinePenColor(QColor(0x9e, 0x9e, 0x9e));
  }
  update_x_title();
  axis_x_->setLabelFormat(QStringLiteral("%.0f"));
  axis_x_->setTickInterval(100);
  axis_x_->setTickType(QValueAxis::TicksDynamic);
  axis_x_->setTickAnchor(0);
  axis_x_->setMinorTickCount(0);
  update_loss_title();
  axis_y_->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  addAxis(axis_x_, Qt::AlignBottom);
  addAxis(axis_y_, Qt::AlignLeft);

  // Room for every series' cached picture (a few MB each; Qt's default is 10 MB in all).
  QPixmapCache::setCacheLimit(std::max(QPixmapCache::cacheLimit(), kPixmapCacheKb));
  view_settle_timer_.setSingleShot(true);
  view_settle_timer_.setInterval(kViewSettleMs);
  connect(&view_settle_timer_, &QTimer::timeout, this, [this] {
    view_moving_ = false;
    update_item_caches();
  });
  refresh_timer_.setSingleShot(true);
  refresh_timer_.setInterval(kRefreshIntervalMs);
  connect(&refresh_timer_, &QTimer::timeout, this, &LossChart::refresh);
  connect(&store, &lab::RunStore::run_added, this, &LossChart::add_curves);
  connect(&store, &lab::RunStore::run_removed, this, &LossChart::remove_curves);
  // A status can change which runs a seed group's mean is over (see runs_in_mean).
  for (auto signal : {&lab::RunStore::points_changed, &lab::RunStore::status_changed}) {
    connect(&store, signal, this, [this](int id) {
      dirty_.insert(id);
      schedule_refresh();
    });
  }
  // A seed cut short may leave its group's mean, to be drawn on its own (update_groups).
  connect(&store, &lab::RunStore::status_changed, this, [this] { groups_dirty_ = true; });
  connect(&store, &lab::RunStore::appearance_changed, this, [this] {
    styles_dirty_ = baselines_dirty_ = groups_dirty_ = true;
    schedule_refresh();
  });
  connect(this, &QChart::plotAreaChanged, this, [this] {
    update_loss_ticks();  // as many labels as the height holds whole
    update_thinning();
    place_baseline_labels();
    update_loss_title();
    update_x_title();  // the chart's title too, in as many words as the width holds
  });
  for (const lab::RunEntry& run : store.runs()) add_curves(run.id);
  refresh();
}

LossChart::~LossChart() = default;

// Series are never taken off the chart: Qt 6.4 goes on painting a removed series' item
// until its deferred deletion, so a series deleted or detached meanwhile crashes it.
// Unused series wait hidden and empty for the next run.
QLineSeries* LossChart::take_series() {
  if (!spare_.empty()) {
    QLineSeries* series = spare_.back();
    spare_.pop_back();
    return series;
  }
  auto* series = new QLineSeries;
  attach(series);
  return series;
}

void LossChart::attach(QAbstractSeries* series) {
  const QList<QGraphicsItem*> before = childItems();
  addSeries(series);
  series->attachAxis(axis_x_);
  series->attachAxis(axis_y_);
  for (QGraphicsItem* item : childItems()) {
    if (!before.contains(item)) items_[series] = item;
  }
}

QList<QGraphicsItem*> LossChart::series_items() const {
  QList<QGraphicsItem*> items;
  for (const auto& [series, item] : items_) items << item;
  return items;
}

// A training curve has thousands of points. While the view stands still its item keeps
// its picture in a cache, so a pointer moving over the chart, or another run's new steps,
// do not redraw it; while the view moves every picture is stale at once, and drawing
// straight to the screen costs half as much as refilling the caches.
void LossChart::update_item_caches() {
  auto cache = [this](QLineSeries* series, bool on) {
    if (auto it = items_.find(series); it != items_.end()) {
      it->second->setCacheMode(on ? QGraphicsItem::DeviceCoordinateCache : QGraphicsItem::NoCache);
    }
  };
  const bool on = !picture_mode_ && !view_moving_;
  for (const auto& [id, c] : curves_) {
    cache(c->raw, on && !c->live);
    cache(c->train, on && !c->live);
    cache(c->heldout, false);  // a few dozen points: cheaper to draw than to cache
  }
  for (const auto& b : baselines_) cache(b->series, false);
}

void LossChart::give_back(QLineSeries* series) {
  series->clear();
  series->setVisible(false);
  series->setName({});
  series->setPointsVisible(false);
  series->setLightMarker(QImage());
  spare_.push_back(series);
}

void LossChart::schedule_refresh() {
  if (!refresh_timer_.isActive()) refresh_timer_.start();
}

double LossChart::to_display(double nats) const { return log_scale_ ? std::log10(nats) : nats; }
double LossChart::from_display(double y) const { return log_scale_ ? std::pow(10.0, y) : y; }

void LossChart::add_curves(int run_id) {
  const lab::RunEntry* run = store_.find(run_id);
  if (!run) return;
  auto curves = std::make_unique<Curves>();
  curves->raw = take_series();
  curves->train = take_series();
  curves->heldout = take_series();
  curves->restart(smoothing_);
  curves->heldout->setName(lab::qstr(display_name(run->record.config)));
  curves->heldout->setPointsVisible(true);
  curves_[run_id] = std::move(curves);
  dirty_.insert(run_id);
  styles_dirty_ = baselines_dirty_ = groups_dirty_ = true;
  schedule_refresh();
}

void LossChart::remove_curves(int run_id) {
  auto it = curves_.find(run_id);
  if (it == curves_.end()) return;
  for (QLineSeries* series : {it->second->raw, it->second->train, it->second->heldout}) give_back(series);
  curves_.erase(it);
  dirty_.remove(run_id);
  highlighted_.remove(run_id);
  styles_dirty_ = baselines_dirty_ = groups_dirty_ = true;
  schedule_refresh();
}

void LossChart::update_points(Curves& c, const RunRecord& r) {
  const bool restart = r.steps.size() < c.steps_done || r.evals.size() < c.evals_done;
  if (restart) c.restart(smoothing_);
  const bool smooth = smoothing_ > 0;
  for (std::size_t i = c.steps_done; i < r.steps.size(); ++i) {
    const StepMetrics& s = r.steps[i];
    double smoothed = kNaN;
    if (std::isfinite(s.train_loss) && s.train_loss > 0) {
      c.raw_points.append({x_of(r.config, s.step, s.wall_s), to_display(s.train_loss)});
      c.extents.add_training(c.raw_points.back().y());
      if (smooth) {
        smoothed = c.ema.add(s.train_loss);
        c.smooth_points.append({x_of(r.config, s.step, s.wall_s), to_display(smoothed)});
      }
    }
    if (smooth) c.smoothed.push_back(smoothed);
  }
  for (std::size_t i = c.evals_done; i < r.evals.size(); ++i) {
    const EvalMetrics& e = r.evals[i];
    if (std::isfinite(e.val_loss) && e.val_loss > 0) {
      c.heldout_points.append({x_of(r.config, e.step, e.wall_s), to_display(e.val_loss)});
      c.extents.add_heldout(c.heldout_points.back().y());
    }
  }
  const bool new_steps = restart || r.steps.size() != c.steps_done;
  c.steps_done = r.steps.size();
  if (new_steps) show_training_points(c);
  if (restart || r.evals.size() != c.evals_done) c.heldout->replace(c.heldout_points);
  c.evals_done = r.evals.size();
}

// Qt Charts places and strokes every point of a series whenever it or the range changes,
// so training curves get no more points than the plot has pixels to show them.
void LossChart::show_training_points(Curves& c) {
  const bool smooth = smoothing_ > 0;
  c.train->replace(smooth ? thinned(c.smooth_points, x_per_bucket_, false)
                          : thinned(c.raw_points, x_per_bucket_, true));
  if (smooth) c.raw->replace(thinned(c.raw_points, x_per_bucket_, true));
  else if (c.raw->count() > 0) c.raw->clear();
}

void LossChart::update_thinning() {
  const double pixels = std::max(plotArea().width(), 1.0);
  double bucket = (axis_x_->max() - axis_x_->min()) / pixels;                 // a pixel's width
  if (x_axis_ == XAxis::Steps) bucket = bucket <= 1 ? 0 : std::ceil(bucket);  // whole steps
  if (picture_mode_) bucket = 0;
  if (bucket == x_per_bucket_) return;
  x_per_bucket_ = bucket;
  for (auto& [id, c] : curves_) show_training_points(*c);
}

void LossChart::rebuild_all() {
  for (auto& [id, c] : curves_) {
    c->restart(smoothing_);
    c->train->clear();
    c->heldout->clear();
    dirty_.insert(id);
  }
  styles_dirty_ = baselines_dirty_ = true;
}

void LossChart::refresh() {
  QElapsedTimer timer;
  timer.start();
  refresh_timer_.stop();
  if (groups_dirty_) update_groups();
  if (!dirty_.isEmpty()) baselines_dirty_ = true;  // a run that started knows its baseline now
  bool live_changed = false;
  std::set<int> dirty_groups;
  for (int id : std::as_const(dirty_)) {
    const lab::RunEntry* run = store_.find(id);
    auto it = curves_.find(id);
    if (!run || it == curves_.end()) continue;
    const bool live = run->record.status == RunStatus::Running;
    if (const auto leader = group_leader_.find(id); leader != group_leader_.end()) {
      dirty_groups.insert(leader->second);
      live_changed = live_changed || (live && !curves_.at(leader->second)->live);
      continue;
    }
    update_points(*it->second, run->record);
    live_changed = live_changed || live != it->second->live;
    it->second->live = live;
  }
  dirty_.clear();
  for (const int leader : dirty_groups) update_group_points(*groups_.at(leader));
  if (live_changed) update_item_caches();
  if (baselines_dirty_) update_baselines();
  if (styles_dirty_) apply_styles();
  if (follows_data_) fit_to_data();
  last_refresh_ms_ = timer.nsecsElapsed() / 1e6;
}

void LossChart::apply_styles() {
  styles_dirty_ = false;
  const bool any_highlighted = !highlighted_.isEmpty();
  for (const lab::RunEntry& run : store_.runs()) {
    auto it = curves_.find(run.id);
    if (it == curves_.end()) continue;
    Curves& c = *it->second;
    // A group is as strong as its most highlighted member.
    bool strong = highlighted_.contains(run.id);
    if (const auto group = groups_.find(run.id); group != groups_.end()) {
      for (const int member : group->second->members) strong = strong || highlighted_.contains(member);
    }
    const bool faded = any_highlighted && !strong;
    const QColor colour = run_colour(run);
    const QColor dark = with_alpha(colour, faded ? 90 : 255);
    const QColor light = with_alpha(training_colour(colour), faded ? 80 : 255);
    const QColor faint = with_alpha(lightened(colour, 0.72), faded ? 40 : 150);

    QPen heldout_pen(dark, strong ? 3.2 : 2.1);
    heldout_pen.setCapStyle(Qt::RoundCap);
    heldout_pen.setJoinStyle(Qt::RoundJoin);
    c.heldout->setPen(heldout_pen);
    c.heldout->setBrush(dark);
    // The same hue's fifth curve on has square points; a dashed line was the baseline's look.
    c.heldout->setMarkerSize(run_squared(run) ? (strong ? 7 : 5.5) : (strong ? 6.5 : 5));
    c.heldout->setLightMarker(run_squared(run) ? square_marker(dark) : QImage());
    // Thousands of points each: on screen they are one-pixel cosmetic lines, which Qt
    // draws several times faster than wider ones; pictures get the true widths.
    QPen train_pen(strong ? training_colour(dark).darker(115) : light, picture_mode_ ? 1.1 : 1.0);
    QPen raw_pen(faint, picture_mode_ ? 0.9 : 1.0);
    train_pen.setCosmetic(!picture_mode_);
    raw_pen.setCosmetic(!picture_mode_);
    c.train->setPen(train_pen);
    c.raw->setPen(raw_pen);

    c.raw->setVisible(drawn(run) && smoothing_ > 0);
    c.train->setVisible(drawn(run));
    c.heldout->setVisible(drawn(run));
    const auto group = groups_.find(run.id);
    if (group != groups_.end() && drawn(run)) {
      QAreaSeries* band = group->second->band;
      band->setPen(Qt::NoPen);
      band->setBrush(with_alpha(colour, faded ? 22 : 48));
      band->setVisible(true);
      for (QLegendMarker* marker : legend()->markers(band)) marker->setVisible(false);
    }
    c.heldout->setName(drawn_name(run));
    // One legend entry per run: its held-out curve stands for it.
    for (QLegendMarker* marker : legend()->markers(c.raw)) marker->setVisible(false);
    for (QLegendMarker* marker : legend()->markers(c.train)) marker->setVisible(false);
    for (QLegendMarker* marker : legend()->markers(c.heldout)) {
      marker->setVisible(drawn(run));
      marker->setLabel(legend_label(run));
    }
  }
  for (const auto& b : baselines_) {
    for (QLegendMarker* marker : legend()->markers(b->series)) marker->setVisible(true);
  }
  for (QLineSeries* series : spare_) {
    for (QLegendMarker* marker : legend()->markers(series)) marker->setVisible(false);
  }
  update_item_caches();  // a series taken from the spares may have a new role
  emit legend_changed();
}

std::vector<LegendEntry> LossChart::legend_entries() const {
  std::vector<LegendEntry> entries;
  for (const lab::RunEntry& run : store_.runs()) {
    if (!drawn(run) || !curves_.count(run.id)) continue;
    auto [name, seeds] = name_and_seeds(run);
    entries.push_back({run_colour(run), Qt::SolidLine, std::move(name), std::move(seeds), true, run_squared(run)});
  }
  for (const auto& b : baselines_) {
    entries.push_back({b->series->pen().color(), b->series->pen().style(), b->series->name(), {}});
  }
  return entries;
}

// In as many words as the plot's height holds: Qt Charts cuts a longer title to
// "loss (nat...", as under the Sweeps tab's summary.
void LossChart::update_loss_title() {
  const QStringList titles =
      log_scale_ ? QStringList{tr("loss (nats per token, log scale)"), tr("loss (nats, log scale)"), tr("nats, log")}
                 : QStringList{tr("loss (nats per token)"), tr("loss (nats)"), tr("nats")};
  const QFontMetricsF metrics(axis_y_->titleFont());
  const double room = plotArea().height();  // 0 until the chart is laid out: the full title till then
  const auto fits = std::find_if(titles.begin(), titles.end(), [&](const QString& title) {
    return room <= 0 || metrics.horizontalAdvance(title) <= room;
  });
  const QString title = fits == titles.end() ? titles.back() : *fits;
  if (title != axis_y_->titleText()) axis_y_->setTitleText(title);
}

double LossChart::x_of(const TrainConfig& config, int step, double wall_s) const {
  switch (x_axis_) {
    case XAxis::Tokens: return double(step) * config.batch_size * config.model.context / 1e6;
    case XAxis::WallTime: return wall_s;
    case XAxis::Steps: break;
  }
  return step;
}

// The axis's title and the chart's: "Loss per step" read wrong over tokens or seconds. The
// chart's in as many words as its width holds: at 1024 x 700 Qt Charts cut it to "…
// held-out...".
void LossChart::update_x_title() {
  QString loss;
  switch (x_axis_) {
    case XAxis::Steps:
      axis_x_->setTitleText(tr("step"));
      loss = tr("Loss per step");
      break;
    case XAxis::Tokens:
      axis_x_->setTitleText(tr("tokens trained on (millions)"));
      loss = tr("Loss by tokens trained on");
      break;
    case XAxis::WallTime:
      axis_x_->setTitleText(tr("wall-clock time (seconds)"));
      loss = tr("Loss over time");
      break;
  }
  const QStringList titles{tr("%1 \u00b7 training (light) and held-out (dark)").arg(loss),
                           tr("%1 \u00b7 training light, held-out dark").arg(loss), loss};
  const QFontMetricsF metrics(titleFont());
  const double room = size().width() - 40;  // the title's margins; 0 before the first layout
  const auto fits = std::find_if(titles.begin(), titles.end(), [&](const QString& title) {
    return room <= 0 || metrics.horizontalAdvance(title) <= room;
  });
  const QString title = fits == titles.end() ? titles.back() : *fits;
  if (title != this->title()) setTitle(title);
}

void LossChart::set_x_axis(XAxis axis) {
  if (axis == x_axis_) return;
  x_axis_ = axis;
  update_x_title();
  rebuild_all();
  follows_data_ = true;  // a zoom in steps means nothing in seconds
  refresh();
  emit view_changed();
}

void LossChart::set_log_scale(bool on) {
  if (on == log_scale_) return;
  const ViewRange shown = view();
  log_scale_ = on;
  update_loss_title();
  rebuild_all();
  refresh();
  if (!follows_data_) set_view(shown);
}

void LossChart::set_ignore_outliers(bool on) {
  if (on == ignore_outliers_) return;
  ignore_outliers_ = on;
  if (follows_data_) fit_to_data();
}

void LossChart::set_smoothing(double weight) {
  weight = std::clamp(weight, 0.0, 0.99);
  if (weight == smoothing_) return;
  smoothing_ = weight;
  rebuild_all();
  schedule_refresh();
}

void LossChart::set_highlighted(const QSet<int>& run_ids) {
  if (run_ids == highlighted_) return;
  highlighted_ = run_ids;
  styles_dirty_ = true;
  schedule_refresh();
}

void LossChart::set_only_runs(std::optional<QSet<int>> run_ids) {
  if (run_ids == only_runs_) return;
  only_runs_ = std::move(run_ids);
  styles_dirty_ = baselines_dirty_ = groups_dirty_ = true;
  reset_view();  // other runs: fit them
  schedule_refresh();
}

bool LossChart::shows(const lab::RunEntry& run) const {
  return only_runs_ ? only_runs_->contains(run.id) : run.visible;
}

bool LossChart::drawn(const lab::RunEntry& run) const {
  const auto leader = group_leader_.find(run.id);
  return shows(run) && (leader == group_leader_.end() || leader->second == run.id);
}

const RunRecord& LossChart::drawn_record(const lab::RunEntry& run) const {
  const auto group = groups_.find(run.id);
  return group == groups_.end() ? run.record : group->second->spread.mean;
}

std::pair<QString, QString> LossChart::name_and_seeds(const lab::RunEntry& run) const {
  const auto group = groups_.find(run.id);
  if (group == groups_.end()) return {run_name(store_, run), {}};
  const int seeds = group->second->spread.runs;
  std::set<std::uint64_t> all;  // every seed of the group, those still to train too
  for (const int id : group->second->members) {
    if (const lab::RunEntry* member = store_.find(id)) all.insert(member->record.config.seed);
  }
  const int of = int(all.size());
  QString text;
  if (seeds == 0) text = tr("no seed trained yet");
  else if (seeds >= of) text = tr("mean of %n seed(s)", nullptr, seeds);
  else if (seeds == 1) text = tr("1 of %n seeds so far", nullptr, of);
  else text = tr("mean of %1 of %n seeds so far", nullptr, of).arg(seeds);
  return {lab::qstr(seed_group_title(run.record.config)), text};
}

QString LossChart::drawn_name(const lab::RunEntry& run) const {
  const auto [name, seeds] = name_and_seeds(run);
  return seeds.isEmpty() ? name : name + QStringLiteral(" \u00b7 ") + seeds;
}

// A group's seeds on a line of their own keep the legend as narrow as the names: it gets
// at most 0.4 of the chart's width, and Qt Charts cuts a wider label at its end, where
// names differ ("warmup 30", "warmup 200").
QString LossChart::legend_label(const lab::RunEntry& run) const {
  const auto [name, seeds] = name_and_seeds(run);
  return seeds.isEmpty() ? name.toHtmlEscaped() : name.toHtmlEscaped() + QStringLiteral("<br>") + seeds;
}

void LossChart::set_seeds_apart(int run_id, bool apart) {
  if (apart) {
    apart_.insert(run_id);
  } else {  // every seed of its experiment goes back into the group
    const lab::RunEntry* run = store_.find(run_id);
    for (auto it = apart_.begin(); it != apart_.end();) {
      const lab::RunEntry* other = store_.find(*it);
      const bool same =
          *it == run_id || !other || (run && differ_only_in_seed(other->record.config, run->record.config));
      it = same ? apart_.erase(it) : std::next(it);
    }
  }
  groups_dirty_ = styles_dirty_ = true;
  schedule_refresh();
}

bool LossChart::seeds_apart(int run_id) const {
  const lab::RunEntry* run = store_.find(run_id);
  return run && std::any_of(apart_.begin(), apart_.end(), [&](int id) {
           const lab::RunEntry* other = store_.find(id);
           return id == run_id || (other && differ_only_in_seed(other->record.config, run->record.config));
         });
}

void LossChart::set_group_seeds(bool on) {
  if (on == group_seeds_) return;
  group_seeds_ = on;
  groups_dirty_ = true;
  schedule_refresh();
}

bool LossChart::draws_any_run() const {
  return std::any_of(store_.runs().begin(), store_.runs().end(),
                     [this](const lab::RunEntry& run) { return drawn(run); });
}

QList<int> LossChart::seed_group_of(int run_id) const {
  const auto leader = group_leader_.find(run_id);
  if (leader == group_leader_.end()) return {};
  const std::vector<int>& members = groups_.at(leader->second)->members;
  return QList<int>(members.begin(), members.end());
}

// Which shown runs are drawn together. Membership changes seldom (a run added, removed,
// shown or hidden), so every curve is rebuilt when it does.
void LossChart::update_groups() {
  groups_dirty_ = false;
  std::vector<const RunRecord*> records;
  std::vector<int> ids;
  if (group_seeds_) {
    // A run the user renamed is theirs to tell apart: it keeps its own entry and curve
    // rather than vanishing into a seed group ("1 of 2 seeds so far").
    for (const lab::RunEntry& run : store_.runs()) {
      if (shows(run) && curves_.count(run.id) && run.record.config.label.empty()) {
        records.push_back(&run.record), ids.push_back(run.id);
      }
    }
  }
  std::map<int, std::vector<int>> wanted;
  for (const auto& group : seed_groups(records)) {
    if (group.size() < 2) continue;
    // Drawn one by one when asked (set_seeds_apart).
    if (seeds_apart(ids[group.front()])) continue;
    // A seed cut short while others trained on or ended is left out of the mean (runs_in_mean):
    // it is drawn on its own, not ticked and missing after a crash.
    std::vector<const RunRecord*> group_records;
    for (const std::size_t i : group) group_records.push_back(records[i]);
    const std::vector<const RunRecord*> in_mean = runs_in_mean(group_records);
    std::vector<int> members;
    for (const std::size_t i : group) {
      const RunRecord* r = records[i];
      const bool alone = (!r->steps.empty() || !r->evals.empty()) && progress_of(r->status) == RunProgress::CutShort &&
                         std::find(in_mean.begin(), in_mean.end(), r) == in_mean.end();
      if (!alone) members.push_back(ids[i]);
    }
    if (members.size() >= 2) wanted[members.front()] = std::move(members);
  }
  const bool same = wanted.size() == groups_.size() && std::all_of(wanted.begin(), wanted.end(), [this](const auto& w) {
                      const auto g = groups_.find(w.first);
                      return g != groups_.end() && g->second->members == w.second;
                    });
  if (same) return;
  for (auto& [leader, group] : groups_) {
    group->band->setVisible(false);
    spare_bands_.push_back(group->band);
  }
  groups_.clear();
  group_leader_.clear();
  for (auto& [leader, members] : wanted) {
    auto group = std::make_unique<SeedGroup>();
    group->members = members;
    if (!spare_bands_.empty()) {
      group->band = spare_bands_.back();
      spare_bands_.pop_back();
    } else {  // kept for reuse, never taken off the chart (see take_series)
      group->band = new QAreaSeries(new QLineSeries(this), new QLineSeries(this));
      attach(group->band);
    }
    for (const int id : members) group_leader_[id] = leader;
    groups_[leader] = std::move(group);
  }
  rebuild_all();
}

void LossChart::update_group_points(SeedGroup& group) {
  std::vector<const RunRecord*> records;
  bool live = false;
  for (const int id : group.members) {
    const lab::RunEntry* run = store_.find(id);
    if (!run) continue;  // removed; the groups are redone at the next refresh
    records.push_back(&run->record);
    live = live || run->record.status == RunStatus::Running;
  }
  const int seeds_before = group.spread.runs;
  group.spread = seed_spread(records);
  if (group.spread.runs != seeds_before) styles_dirty_ = true;  // the name counts them
  Curves& c = *curves_.at(group.members.front());
  c.restart(smoothing_);  // the mean moves wherever a member adds a point
  update_points(c, group.spread.mean);
  c.live = live;
  QList<QPointF> low, high;
  for (std::size_t i = 0; i < group.spread.low.size(); ++i) {
    const EvalMetrics &l = group.spread.low[i], &h = group.spread.high[i];
    if (!(l.val_loss > 0) || !std::isfinite(h.val_loss)) continue;
    low.append({x_of(group.spread.mean.config, l.step, l.wall_s), to_display(l.val_loss)});
    high.append({x_of(group.spread.mean.config, h.step, h.wall_s), to_display(h.val_loss)});
  }
  group.band->lowerSeries()->replace(low);
  group.band->upperSeries()->replace(high);
}

void LossChart::set_picture_mode(bool on) {
  picture_mode_ = on;
  update_item_caches();
  update_thinning();
  styles_dirty_ = true;
  schedule_refresh();
}

void LossChart::place_legend_in_plot() {
  QLegend* key = legend();
  if (!key->isVisible()) return;
  key->detachFromChart();
  key->setAlignment(Qt::AlignLeft);  // one column
  key->setBackgroundVisible(true);
  key->setBrush(QColor(255, 255, 255, 235));
  key->setPen(QPen(QColor(0xc8, 0xcd, 0xd3)));
  layout()->activate();  // the plot takes the room the legend had
  const QRectF plot = plotArea();
  // Its size from its entries: a detached legend's own size hint is for one row.
  const QFontMetricsF metrics(key->font());
  double widest = 0;
  int entries = 0;
  for (QLegendMarker* marker : key->markers()) {
    if (!marker->isVisible()) continue;
    widest = std::max(widest, metrics.horizontalAdvance(marker->label()));
    ++entries;
  }
  if (entries == 0) return;
  const double line = metrics.height() * 1.8;  // an entry with the spacing Qt gives it
  const QSizeF size =
      QSizeF(widest + 3.5 * metrics.height(), entries * line + 0.6 * metrics.height()).boundedTo(plot.size());
  constexpr double kInset = 6;
  const QRectF corners[] = {
      QRectF(QPointF(plot.right() - kInset - size.width(), plot.top() + kInset), size),     // top right
      QRectF(QPointF(plot.left() + kInset, plot.bottom() - kInset - size.height()), size),  // bottom left
      QRectF(QPointF(plot.right() - kInset - size.width(), plot.bottom() - kInset - size.height()), size),
      QRectF(plot.topLeft() + QPointF(kInset, kInset), size),
  };
  // The corner with the fewest drawn points under it; the first of equals.
  std::size_t best = 0;
  int fewest = std::numeric_limits<int>::max();
  for (std::size_t c = 0; c < std::size(corners); ++c) {
    int under = 0;
    for (QAbstractSeries* series : this->series()) {
      auto* xy = qobject_cast<QXYSeries*>(series);
      if (!xy || !xy->isVisible()) continue;
      for (const QPointF& point : xy->points()) under += corners[c].contains(mapToPosition(point, xy));
    }
    if (under < fewest) {
      fewest = under;
      best = c;
    }
  }
  key->setGeometry(corners[best]);
  key->update();
}

void LossChart::copy_view_from(const LossChart& other) {
  highlighted_ = other.highlighted_;
  only_runs_ = other.only_runs_;
  group_seeds_ = other.group_seeds_;
  apart_ = other.apart_;
  groups_dirty_ = true;
  baselines_dirty_ = true;
  ignore_outliers_ = other.ignore_outliers_;
  if (x_axis_ != other.x_axis_) {
    x_axis_ = other.x_axis_;
    update_x_title();
    rebuild_all();
  }
  set_log_scale(other.log_scale_);
  set_smoothing(other.smoothing_);
  styles_dirty_ = true;
  refresh();
  if (other.follows_data_) reset_view();
  else set_view(other.view());
}

std::vector<Readout> LossChart::readout(double x) const {
  std::vector<Readout> out;
  for (const lab::RunEntry& run : store_.runs()) {
    const RunRecord& r = drawn_record(run);
    auto curves = curves_.find(run.id);
    if (!drawn(run) || r.steps.empty() || curves == curves_.end()) continue;
    const auto at = [&](const auto& p) { return x_of(r.config, p.step, p.wall_s); };
    auto nearest = [&](const auto& points) {
      auto it = std::lower_bound(points.begin(), points.end(), x, [&](const auto& p, double v) { return at(p) < v; });
      if (it == points.end()) return points.size() - 1;
      if (it != points.begin() && x - at(*std::prev(it)) < at(*it) - x) --it;
      return std::size_t(it - points.begin());
    };
    const std::size_t i = nearest(r.steps);
    Readout o;
    o.colour = run_colour(run);
    o.name = drawn_name(run);
    o.step = r.steps[i].step;
    o.x = at(r.steps[i]);
    o.train = r.steps[i].train_loss;
    const auto& smoothed = curves->second->smoothed;
    o.train_smoothed = smoothing_ > 0 && i < smoothed.size() ? smoothed[i] : kNaN;
    if (!r.evals.empty()) {
      const std::size_t e = nearest(r.evals);
      o.eval_step = r.evals[e].step;
      o.heldout = r.evals[e].val_loss;
    }
    out.push_back(o);
  }
  return out;
}

int LossChart::plotted_points(int run_id) const {
  auto it = curves_.find(run_id);
  return it == curves_.end() ? 0 : int(it->second->raw_points.size());
}

int LossChart::plotted_evals(int run_id) const {
  auto it = curves_.find(run_id);
  return it == curves_.end() ? 0 : int(it->second->heldout_points.size());
}

}  // namespace normlab::ui
