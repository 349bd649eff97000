#pragma once
// Shows a LossChart and lets the user explore it: drag to zoom, right- or middle-drag to
// pan, wheel to zoom around the pointer, double-click to fit again; arrow keys, +, - and
// Home do the same. Hovering shows every visible run's values at the nearest step; a click
// picks that step, for the views that show a run at one step (What it writes).
#include <QChartView>
#include <vector>

#include "loss_chart.h"

class QGraphicsLineItem;
class QLabel;
class QRubberBand;

namespace normlab::ui {

class LossChartView : public QChartView {
  Q_OBJECT
 public:
  explicit LossChartView(LossChart* chart, QWidget* parent = nullptr);
  LossChart* loss_chart() const { return chart_; }
  // What the empty chart says: with no run at all, and with runs none of which is drawn.
  void set_empty_texts(const QString& no_runs, const QString& none_drawn);

 signals:
  void step_picked(int step);

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void leaveEvent(QEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

 private:
  enum class Drag { None, Zoom, Pan };
  QPointF chart_pos(QPoint viewport_pos) const;
  // Each drawn run's values at the pointer's x, and that x; the recorded point nearest it
  // that any run has; its step, or -1 off the plot. One readout a mouse move.
  std::vector<Readout> values_under(QPoint viewport_pos, double& pointer_x) const;
  static const Readout& nearest(const std::vector<Readout>& values, double pointer_x);
  int step_under(QPoint viewport_pos) const;
  void show_readout(QPoint viewport_pos);
  void hide_readout();
  void update_empty_hint();

  LossChart* chart_;
  QRubberBand* rubber_band_;
  QLabel* readout_;
  QLabel* empty_hint_;
  QString no_runs_text_, none_drawn_text_;
  QGraphicsLineItem* crosshair_;
  Drag drag_ = Drag::None;
  QPoint drag_origin_;
  QPoint last_pos_;
};

}  // namespace normlab::ui
