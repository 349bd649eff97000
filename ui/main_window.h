#pragma once
// The NormLab window: settings on the left, views in tabs (loss curves first; more views
// can join them), the run table below, progress in the status bar.
#include <QMainWindow>
#include <QUrl>
#include <functional>
#include <memory>

#include "core/gpu_install/cuda_install.h"
#include "core/runs/run_cost.h"
#include "core/runs/run_record.h"
#include "core/sweeps/sweep.h"
#include "lab/run_export.h"

class QDockWidget;
class QCheckBox;
class QComboBox;
class QLabel;
class QProgressBar;
class QSlider;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTimer;

namespace normlab::lab {
class GpuInstaller;
class Lab;
class Lesson;
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

class ChartLegend;
class ElidedLabel;
class LossChart;
class LossChartView;
class RunTableModel;
class SettingsPanel;
class SweepView;
class TextView;
class InsideView;
class LessonView;

struct MainWindowOptions {
  QString data_folder;  // where runs are kept between sessions; empty: the app's data folder
  // Shows an error to the user; the default is a modal message box. Tests record instead.
  std::function<void(const QString& title, const QString& text)> report_error;
  // Asks before something is deleted; the default is a modal question.
  std::function<bool(const QString& title, const QString& text)> confirm;
  // Where Help > Install GPU support… fetches from and installs to (tests: a local index).
  CudaInstallOptions gpu_install;
  // A first launch (no saved settings, no runs) opens the lesson's panel with its offer. The
  // app sets it; a test that does not look at the offer leaves it off.
  bool offer_lesson = false;
};

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(MainWindowOptions options = {}, QWidget* parent = nullptr);
  ~MainWindow() override;

  // What the buttons and menus do, also callable directly (command line, tests); each
  // takes what it needs from the widgets and calls the lab.
  void start_run();  // the settings panel's run
  void start_course_experiment();
  void stop_run();
  void stop_all();
  void continue_runs();  // what the last session left: interrupted runs resume, queued ones start
  // Adds runs from JSON files. All or nothing: one bad file and none is added, and the
  // errors are reported. Returns how many were added.
  int import_runs(const QStringList& files);
  // Shows every run in `folder` and follows it live (Lab::follow_folder); a sweep described
  // there fills the Sweeps tab, its fixed settings the next run's. Reports why not.
  bool follow_folder(const QString& folder);
  // PNG or SVG by the file's suffix; `pixels` is the image size (SVG: its canvas size).
  bool export_chart(const QString& path, QSize pixels);
  // The lab writes them (lab/run_export.h: JSON, CSV, or Markdown); a
  // failure is reported in a dialog, success in the status bar.
  bool export_runs(lab::RunExport format, const QList<int>& run_ids, const QString& target);
  void remove_runs(const QList<int>& run_ids);  // asks first
  // What the user calls the run (empty: its title) and their note on it, kept in its file;
  // a dialog says why not when the lab refuses (the run is training).
  bool rename_run(int run_id, const QString& label);
  bool note_run(int run_id, const QString& note);
  // Each goes on from its checkpoint; those that cannot are reported with the reason.
  void resume_runs(const QList<int>& run_ids);
  // Help > Install GPU support…: asks, then fetches the CUDA libraries with a progress
  // dialog that can stop it; the GPU is used from the next start.
  void install_gpu_support();
  // Run > Lesson: the lesson's panel in front, a lesson left taken up where it was.
  void show_lesson();

  lab::Lab& lab() { return *lab_; }
  lab::RunStore& store();
  LossChart& chart() { return *chart_; }
  LossChartView& chart_view() { return *chart_view_; }
  ChartLegend& legend() { return *legend_; }
  SettingsPanel& settings_panel() { return *settings_; }
  SweepView& sweep_view() { return *sweeps_; }
  TextView& text_view() { return *text_view_; }
  QTabWidget& views() { return *views_; }
  // The view a tab shows (each tab holds it in a scroll area), the one shown, and showing one.
  QWidget* view_at(int tab) const;
  QWidget* current_view() const;
  void show_view(QWidget* view);
  QAction* start_action() const { return start_action_; }
  QAction* stop_action() const { return stop_action_; }
  QAction* course_action() const { return course_action_; }
  QAction* resume_action() const { return resume_action_; }
  QAction* seeds_apart_action() const { return seeds_apart_action_; }
  QAction* continue_action() const { return continue_action_; }
  QAction* lesson_action() const { return lesson_action_; }
  lab::Lesson& lesson() { return *lesson_; }
  LessonView& lesson_view() { return *lesson_view_; }
  QDockWidget* lesson_dock() const { return lesson_dock_; }

 protected:
  void closeEvent(QCloseEvent* event) override;

 private:
  static constexpr double kDefaultSmoothing = 0.8;
  static constexpr int kStatusMessageMs = 8000;
  static constexpr double kAskAboveSeconds = 3600;  // a run longer than this is started only when confirmed
  // With no speed known on this device yet, a run of more than this many times the
  // course's run's work (about an hour on a CPU) is started only when confirmed.
  static constexpr double kAskAboveCourseRuns = 30;

  // main_window_layout.cpp
  void build_actions();
  void build_menus();
  QWidget* build_chart_tab();
  void add_view(QWidget* view, const QString& title);
  void build_run_dock();
  // A movable, floatable, closable dock whose layout QSettings can restore by `name`.
  QDockWidget* add_dock(const QString& title, const QString& name, QWidget* content, Qt::DockWidgetArea area);
  void build_status_bar();
  // main_window.cpp: session, queue, progress, selection
  void restore_session();
  void keep_on_screen();
  void size_run_dock();
  void save_session() const;
  void on_device_found(const Environment& found);
  void report_damaged(const QStringList& damaged, const QStringList& unmovable);
  void update_progress();
  void update_actions();
  // Trains up to `runs` at once (0: the device's default) and remembers it.
  void set_side_by_side(int runs);
  void update_side_by_side_menu();
  void update_course_action();
  void update_start_estimate();  // beside Start: how long the next run would take here
  void update_details();
  // The view in front shows the runs picked in the table (InsideView::show_picked).
  void show_picked_runs();
  void ask_in_details(const QUrl& link);  // the details' "rename" and "note" links, and its evidence's
  // Shows the view a verdict's evidence comes from ("curves", "text", "statistic:NAME" with
  // `run_ids` in Inside the model's panels); false for any other link.
  bool show_evidence(const QString& link, const QList<int>& run_ids);
  QList<int> selected_runs() const;
  QList<int> selected_or_all_runs() const;
  void show_run_menu(const QPoint& pos);
  void select_runs(const QList<int>& run_ids);
  void report(const QString& title, const QString& text);
  bool ask(const QString& title, const QString& question);  // options_.confirm, else a modal question
  // options_.confirm, else a warning with Cancel (the default) and Start anyway.
  bool ask_start_anyway(const QString& title, const QString& question);
  bool trains_on_gpu(const TrainConfig& config) const;  // "cuda", or "auto" where the lab found a GPU
  // The run's memory estimate against the host's available memory, or on a GPU its free memory.
  MemoryCheck memory_check_of(const TrainConfig& config) const;
  // main_window_files.cpp
  void import_dialog();
  void follow_dialog();
  void show_followed_sweep(const Sweep& sweep);
  void export_json_dialog();
  void export_csv_dialog();
  void export_markdown_dialog();
  void export_image_dialog();
  // main_window_gpu.cpp
  void show_gpu_notice(const QString& text);
  // main_window_lesson.cpp
  void build_lesson();
  // After the runs are restored: the lesson kept beside them comes back where it was, or a
  // first launch offers it.
  void restore_lesson();

  MainWindowOptions options_;
  lab::Lab* lab_;
  lab::GpuInstaller* gpu_installer_;
  lab::RunStore* store_;
  RunTableModel* run_model_;
  LossChart* chart_;
  LossChartView* chart_view_;
  ChartLegend* legend_;
  SettingsPanel* settings_;
  QTabWidget* views_;
  SweepView* sweeps_;
  TextView* text_view_;
  QWidget* chart_tab_;
  InsideView* inside_;
  QWidget* about_;
  QTableView* run_table_;
  QTextBrowser* details_;
  QTimer* details_timer_;
  QTimer* estimate_timer_;  // the estimate beside Start, redone at most a few times a second
  QCheckBox* log_scale_;
  QComboBox* x_axis_choice_ = nullptr;  // steps, tokens or wall-clock time across the chart
  QSlider* smoothing_;
  QLabel* smoothing_value_;
  ElidedLabel* stage_label_;  // what trains; cut to its room, whole in its tooltip
  QLabel* rate_label_;
  QLabel* lr_label_;
  QProgressBar* run_progress_;
  QProgressBar* queue_progress_;
  bool settings_restored_ = false;
  bool closing_ = false;  // closeEvent has begun: no more dialogs

  QAction* start_action_ = nullptr;
  QAction* stop_action_ = nullptr;
  QAction* stop_all_action_ = nullptr;
  QAction* continue_action_ = nullptr;
  QAction* course_action_ = nullptr;
  QAction* import_action_ = nullptr;
  QAction* follow_action_ = nullptr;
  QAction* export_json_action_ = nullptr;
  QAction* export_csv_action_ = nullptr;
  QAction* export_markdown_action_ = nullptr;
  QAction* export_image_action_ = nullptr;
  QAction* remove_action_ = nullptr;
  QAction* resume_action_ = nullptr;
  QAction* drop_checkpoints_action_ = nullptr;
  QAction* use_settings_action_ = nullptr;
  QAction* fit_action_ = nullptr;
  QAction* log_action_ = nullptr;
  QAction* outliers_action_ = nullptr;
  QAction* group_seeds_action_ = nullptr;
  QAction* seeds_apart_action_ = nullptr;
  QAction* install_gpu_action_ = nullptr;
  QMenu* side_by_side_menu_ = nullptr;
  QAction* lesson_action_ = nullptr;
  lab::Lesson* lesson_ = nullptr;
  LessonView* lesson_view_ = nullptr;
  QDockWidget* lesson_dock_ = nullptr;  // Run > Runs side by side: one checkable choice per count
};

}  // namespace normlab::ui
