#pragma once
// A strip chart of context use (core/training/predictions.h) against the step for the runs
// What it writes shows, in their colours, with a line at the evaluation shown: where a run
// starts using its context, and where a stalled one never does. A click picks the step
// under the pointer.
#include <QChartView>
#include <QTimer>
#include <vector>

class QGraphicsLineItem;
class QGraphicsSimpleTextItem;
class QLineSeries;
class QValueAxis;

namespace normlab::lab {
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

class ContextUseChart : public QChartView {
  Q_OBJECT
 public:
  explicit ContextUseChart(lab::RunStore& store, QWidget* parent = nullptr);

  // Draws these runs' context use (ids of runs no longer there are left out) and marks `step`.
  void show_runs(const std::vector<int>& run_ids);
  void mark_step(int step);

  // The drawn curves' points, a curve a run, for tests.
  std::vector<QList<QPointF>> curves() const;

 signals:
  void step_picked(int step);

 protected:
  void mousePressEvent(QMouseEvent* event) override;

 private:
  void redraw();
  void place_overlays();

  lab::RunStore& store_;
  std::vector<int> run_ids_;
  std::vector<QLineSeries*> lines_;
  QValueAxis* steps_;
  QValueAxis* nats_;
  QGraphicsLineItem* marker_;
  QGraphicsSimpleTextItem* title_;
  int marked_step_ = -1;
  QTimer redraw_;
};

}  // namespace normlab::ui
