#pragma once
// The loss curves of every visible run, drawn from the run store. Data changes are
// collected and applied together at most ~30 times a second (refresh()), each series
// getting its whole point list in one replace(), so a fast trainer never floods painting.
#include <QChart>
#include <QList>
#include <QSet>
#include <QTimer>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "core/runs/run_record.h"

class QAreaSeries;
class QCategoryAxis;
class QGraphicsItem;
class QLineSeries;
class QValueAxis;

namespace normlab::lab {
struct RunEntry;
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

// What the horizontal axis measures: optimiser steps, tokens trained on (in millions), or
// wall-clock seconds since training started (each step's and evaluation's wall_s).
enum class XAxis { Steps, Tokens, WallTime };

// What part of the plane is shown: x (in XAxis units) across, loss in nats up.
struct ViewRange {
  double x_min = 0, x_max = 1, y_min = 0, y_max = 1;
  bool operator==(const ViewRange& o) const {
    return x_min == o.x_min && x_max == o.x_max && y_min == o.y_min && y_max == o.y_max;
  }
};

// The values under the pointer for one run.
struct Readout {
  QColor colour;
  QString name;
  int step = 0;
  double x = 0;               // where `step` lies on the x-axis
  double train = 0;           // raw training loss at `step`
  double train_smoothed = 0;  // NaN when smoothing is off
  int eval_step = -1;         // nearest evaluation; -1 if none
  double heldout = 0;
};

// One entry of the chart's legend: a drawn run or seed group, or a baseline.
struct LegendEntry {
  QColor colour;
  Qt::PenStyle style = Qt::SolidLine;  // dashed: a baseline
  QString name;
  QString seeds;         // a seed group's "mean of 3 seeds"; empty for a run alone or a baseline
  bool points = false;   // a run's held-out points: round, or
  bool squares = false;  // square (the same hue's fifth curve on)
  bool operator==(const LegendEntry& o) const {
    return colour == o.colour && style == o.style && name == o.name && seeds == o.seeds && points == o.points &&
           squares == o.squares;
  }
};

class LossChart : public QChart {
  Q_OBJECT
 public:
  static constexpr int kRefreshIntervalMs = 33;
  static constexpr int kViewSettleMs = 300;  // after the last zoom or pan step the view counts as still

  explicit LossChart(const lab::RunStore& store, QGraphicsItem* parent = nullptr);
  ~LossChart() override;

  const lab::RunStore& store() const { return store_; }

  void set_log_scale(bool on);
  bool log_scale() const { return log_scale_; }
  // Steps (the default), tokens or wall-clock time across; the view fits the data again.
  void set_x_axis(XAxis axis);
  XAxis x_axis() const { return x_axis_; }
  // Where a run's point of `step`, recorded `wall_s` after its start, lies on the x-axis.
  double x_of(const TrainConfig& config, int step, double wall_s) const;
  // On (the default), fitting the range leaves out held-out losses far above where the
  // runs started, as from a run that blew up; zooming out or turning it off shows them.
  void set_ignore_outliers(bool on);
  bool ignore_outliers() const { return ignore_outliers_; }
  // EMA weight for the training curves, in [0, 0.99]; 0 = raw.
  void set_smoothing(double weight);
  double smoothing() const { return smoothing_; }
  // Runs drawn bold with the others faded; empty = all drawn alike.
  void set_highlighted(const QSet<int>& run_ids);
  // Draws only these runs, whether the run table shows them or not (a sweep point's
  // runs); nullopt, the default: the runs the table shows.
  void set_only_runs(std::optional<QSet<int>> run_ids);
  // On (the default), shown runs that differ only in their seed are drawn as one: the
  // mean of their curves, with the range of their held-out losses as a band.
  void set_group_seeds(bool on);
  bool group_seeds() const { return group_seeds_; }
  // Draws the seeds of the run's experiment one by one (each its own curve and legend
  // entry, in the group's colour) instead of as their mean, or as the mean again.
  void set_seeds_apart(int run_id, bool apart);
  bool seeds_apart(int run_id) const;  // whether its experiment's seeds are drawn one by one
  // The drawn group a run belongs to: its members' ids, first the one whose curves show
  // the mean; empty when the run is drawn alone.
  QList<int> seed_group_of(int run_id) const;
  bool draws_any_run() const;
  // What the legend lists: the drawn runs in the run table's order, then the baselines.
  // A window draws it beside the chart (ChartLegend) and hides the chart's own legend,
  // which has no scroll bar and cuts names to "…" until several read the same.
  std::vector<LegendEntry> legend_entries() const;

  ViewRange view() const;
  void set_view(const ViewRange& view);  // a user's zoom or pan: stops following the data
  void reset_view();                     // fit the data again, and keep fitting it
  bool follows_data() const { return follows_data_; }
  void zoom_to(const QRectF& chart_rect);
  void zoom_around(QPointF chart_pos, double factor_x, double factor_y);  // factor < 1 zooms in
  void pan_by(QPointF pixels);
  QPointF value_at(QPointF chart_pos) const;  // (x, nats)
  QPointF position_of(QPointF value) const;   // chart coordinates of (x, nats)

  // On screen, training curves are one-pixel lines and every series is cached as pixels,
  // for speed. A picture wants true line widths, which scale with it, and vectors.
  void set_picture_mode(bool on);
  // For a picture, once laid out: the legend inside the plot, in the corner its curves leave
  // emptiest, on a white ground. Beside the plot it took 30-40 % of a picture's width (issue 49).
  void place_legend_in_plot();
  // The items that draw the series (curves, seed bands, baselines): what the plot area
  // clips, for pictures whose painter cannot clip (SVG).
  QList<QGraphicsItem*> series_items() const;

  // Takes over another chart's log scale, smoothing, highlight and shown range (for export).
  void copy_view_from(const LossChart& other);

  // Applies pending data changes now. Normally the refresh timer does it.
  void refresh();
  // Each drawn run's values at its recorded step nearest to `x` on the x-axis.
  std::vector<Readout> readout(double x) const;
  // Training points plotted for a run (raw, before smoothing); for tests and benchmarks.
  int plotted_points(int run_id) const;
  int plotted_evals(int run_id) const;
  double last_refresh_ms() const { return last_refresh_ms_; }

 signals:
  void view_changed();
  void legend_changed();  // legend_entries() may differ

 private:
  struct Curves;
  struct Baseline;
  struct SeedGroup;

  void schedule_refresh();
  bool shows(const lab::RunEntry& run) const;  // chosen to be seen, alone or in its seed group
  bool drawn(const lab::RunEntry& run) const;  // has curves of its own on the chart: shown, and no group's follower
  const RunRecord& drawn_record(const lab::RunEntry& run) const;               // a group's mean for its first member
  std::pair<QString, QString> name_and_seeds(const lab::RunEntry& run) const;  // a group's second: "mean of 3 seeds"
  QString drawn_name(const lab::RunEntry& run) const;                          // "… · mean of 3 seeds" for a group
  QString legend_label(const lab::RunEntry& run) const;                        // HTML; a group's seeds on a second line
  void update_groups();
  void update_group_points(SeedGroup& group);
  void add_curves(int run_id);
  void remove_curves(int run_id);
  QLineSeries* take_series();
  void attach(QAbstractSeries* series);  // to the chart and both axes, its item remembered
  void update_item_caches();
  void give_back(QLineSeries* series);
  void update_points(Curves& curves, const RunRecord& record);
  void rebuild_all();
  void show_training_points(Curves& curves);
  void update_thinning();
  void apply_styles();
  void update_baselines();
  void place_baseline_labels();
  void set_baseline_words(Baseline& baseline, const QString& text);
  QString baseline_words(const Baseline& baseline) const;  // its value, and whose where several are drawn
  int curves_under(const QRectF& box) const;               // how much of the visible curves a box would hide
  void fit_to_data();
  void apply_view(const ViewRange& display);  // display space: log10 when log scale
  void update_loss_ticks();
  void update_loss_title();
  void update_x_title();
  double x_reached(const RunRecord& run) const;  // how far along the x-axis a run reaches
  double to_display(double nats) const;
  QPointF display_at(QPointF chart_pos) const;  // (step, y as plotted: log10 on a log scale)
  double from_display(double y) const;

  const lab::RunStore& store_;
  QValueAxis* axis_x_;
  QCategoryAxis* axis_y_;  // labels placed by hand: a log axis with readable labels in nats
  std::map<int, std::unique_ptr<Curves>> curves_;
  std::vector<std::unique_ptr<Baseline>> baselines_;
  std::vector<QLineSeries*> spare_;                   // on the chart, hidden, waiting for reuse
  std::map<QAbstractSeries*, QGraphicsItem*> items_;  // the item Qt Charts draws each series with
  QSet<int> dirty_;
  QSet<int> highlighted_;
  std::optional<QSet<int>> only_runs_;
  bool group_seeds_ = true;
  QSet<int> apart_;  // runs whose experiment's seeds are drawn one by one
  bool groups_dirty_ = true;
  std::map<int, std::unique_ptr<SeedGroup>> groups_;  // by the id of its first member
  std::map<int, int> group_leader_;                   // every member's id to that first member's
  std::vector<QAreaSeries*> spare_bands_;
  QTimer refresh_timer_;
  QTimer view_settle_timer_;
  bool styles_dirty_ = true;
  bool baselines_dirty_ = true;
  bool log_scale_ = false;
  XAxis x_axis_ = XAxis::Steps;
  bool ignore_outliers_ = true;
  double smoothing_ = 0;
  bool follows_data_ = true;
  bool picture_mode_ = false;
  bool view_moving_ = false;
  double x_per_bucket_ = 1;  // training points are thinned to two per bucket of the x-axis
  double last_refresh_ms_ = 0;
};

}  // namespace normlab::ui
