#pragma once
// "Sweeps": one setting varied over values for several placements, everything else as
// the next run has it. The sweep is a question put to the run store: every run of it
// that trained before (here, or imported) is reused, Start queues only what is missing,
// and the queue trains, saves and restores those runs like any other. The summary chart
// (the same picture the command line writes) plots the final held-out loss per
// placement; clicking a point shows its runs' curves below it.
#include <QList>
#include <QTimer>
#include <QWidget>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include "lab/sweep_standing.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace normlab::lab {
class Lab;
}  // namespace normlab::lab

namespace normlab::ui {

class LossChart;
class LossChartView;
class SweepPlot;

class SweepView : public QWidget {
  Q_OBJECT
 public:
  struct Hooks {
    std::function<TrainConfig()> next_run;  // the settings panel's config: what a sweep keeps fixed
    std::function<void(const QString& title, const QString& text)> report;
  };
  SweepView(lab::Lab& lab, Hooks hooks, QWidget* parent = nullptr);

  // What the controls describe; UserError saying why when they describe no sweep.
  Sweep sweep() const;
  void choose_preset(std::optional<SweepPreset> preset);  // nullopt: custom
  void set_setting(const std::string& key);               // a config key of kSweepSettings
  void set_values(const QString& comma_separated);
  void set_placements(const std::vector<NormPlacement>& placements);
  void set_seeds(int seeds);

  // Recomputes from the store and the settings now; normally a timer does it.
  void refresh();
  // The Start and Stop buttons: the lab trains what the sweep lacks, or stops what it started.
  void start();
  void stop();
  // Every run of the sweep that ended (done, diverged, or cut short), in sweep order.
  const std::vector<SweepResult>& results() const { return standing_.results; }
  // The runs Start would queue afresh: never trained, or cut short without a checkpoint
  // that can go on.
  const std::vector<TrainConfig>& runs_to_train() const { return standing_.to_train; }
  // The store's runs of the sweep cut short that Start would resume from their checkpoints.
  const std::vector<int>& runs_to_resume() const { return standing_.to_resume; }
  // The store's runs of the sweep still queued or training.
  const std::vector<int>& runs_in_progress() const { return standing_.pending; }
  QString cost_text() const;
  QString problem() const { return problem_; }

  // Shows that point's runs (all seeds) in the curves below the summary.
  void show_point(NormPlacement placement, double x);
  QList<int> shown_runs() const { return shown_runs_; }
  LossChart& curves() { return *curves_; }
  QWidget* summary_plot() const;

  // Each throws UserError naming the file when it cannot be written.
  void export_csv(const QString& path) const;
  void export_json(const QString& path) const;
  void export_picture(const QString& path, QSize pixels) const;  // PNG or SVG by the suffix

 signals:
  void runs_shown(const QList<int>& run_ids);  // a point was chosen

 private:
  void build_controls();
  void schedule_refresh();
  void update_controls();
  void save_controls() const;
  void restore_controls();
  void export_dialog(const QString& suffix);
  QString point_label(double x) const;                       // "16 layers", "lr 3e-4", "warmup 100"
  Scale scale() const;                                       // of the presets' values: the device's
  void fill_values(const std::vector<std::string>& values);  // into the values box, as typed

  lab::Lab& lab_;
  Hooks hooks_;
  QComboBox* preset_;
  QComboBox* setting_;
  QLineEdit* values_;
  std::vector<std::pair<NormPlacement, QCheckBox*>> placements_;
  QSpinBox* seeds_;
  QLabel* fixed_;
  QLabel* cost_;
  QPushButton* start_;
  QPushButton* stop_;
  QPushButton* export_;
  SweepPlot* plot_;
  QLabel* point_title_;
  LossChart* curves_;
  LossChartView* curves_view_;
  QTimer refresh_timer_;

  // From the last refresh.
  std::optional<Sweep> sweep_;
  QString problem_;
  lab::SweepStanding standing_;
  std::optional<std::pair<NormPlacement, double>> shown_point_;
  QList<int> shown_runs_;
};

}  // namespace normlab::ui
