#pragma once
// "Inside the model": a statistic the trainer recorded per layer, drawn as a layer ×
// step heatmap for two runs side by side on one logarithmic colour scale, with a colour
// bar, and below them the statistic across layers at the step under the pointer. Above
// them, what each run is doing in a sentence (its verdict), linked to its evidence.
// Follows the store live, redrawing at most every 33 ms.
#include <QString>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QPainter;

namespace normlab::lab {
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

class ElidedLabel;
class InsidePlot;

class InsideView : public QWidget {
  Q_OBJECT
 public:
  explicit InsideView(lab::RunStore& store, QWidget* parent = nullptr);

  // Chooses what is shown: a statistic by name, and the runs of the two panels by id.
  void show_statistic(const QString& name);
  void show_runs(int left_id, int right_id);
  // The runs the user picked (the run table's selection) in the panels, the first on the
  // left; with none picked, the panels not chosen by hand show the two most recent runs.
  // Called as the user comes to the view or picks runs: the panels never change by
  // themselves while the view is shown, but for a run removed.
  void show_picked(const QList<int>& run_ids);
  // The step and layer under a point of the plot, as the readout shows them.
  QString readout_at(QPoint plot_point);
  // PNG (twice the shown size) or SVG by the path's suffix; false if it cannot be written.
  bool export_image(const QString& path) const;

  QWidget* plot() const;              // the drawing, without the controls
  QRect panel_rect(int panel) const;  // a heatmap's place in plot(), without its labels
  QString verdicts_text() const;      // the two runs' verdicts as shown above the plot (HTML)

 signals:
  // A link in a verdict asks for a view outside this one ("curves", "text"), about these runs.
  void evidence_requested(const QString& link, const QList<int>& run_ids);

 private:
  void refresh_runs();
  void schedule_redraw();
  void show_verdicts();  // of the runs in the two panels, each with the links to its evidence

  lab::RunStore& store_;
  QComboBox* statistic_;
  QComboBox* runs_[2];
  QLabel* readout_;
  ElidedLabel* about_statistic_;
  QLabel* verdicts_;
  InsidePlot* plot_;
  QTimer redraw_;
  bool chosen_[2] = {false, false};  // a panel's run was picked, by hand or show_runs
};

}  // namespace normlab::ui
