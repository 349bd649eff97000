#include "main_window.h"

#include <QAction>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDir>
#include <QFileInfo>
#include <QHeaderView>
#include <QInputDialog>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScreen>
#include <QSettings>
#include <QSlider>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <utility>

#include "core/device/cuda_backend.h"
#include "core/runs/presets.h"
#include "core/runs/run_cost.h"
#include "core/runs/run_text.h"
#include "core/runs/run_title.h"
#include "core/runs/verdict.h"
#include "core/system/memory.h"
#include "lab/gpu_installer.h"
#include "lab/lab.h"
#include "lab/qstring.h"

#include "about_view.h"
#include "chart_legend.h"
#include "elided_label.h"
#include "format.h"
#include "inside_view.h"
#include "loss_chart.h"
#include "loss_chart_view.h"
#include "run_details.h"
#include "run_table.h"
#include "settings_panel.h"
#include "sweep_view.h"
#include "text_view.h"

namespace normlab::ui {

namespace {

QString default_data_folder() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("runs"));
}

QString course_scale_text(Scale scale) {
  const TrainConfig c = scaled(TrainConfig{}, scale);
  return QObject::tr("%1 steps of %2\u00d7%3 tokens").arg(c.steps).arg(c.batch_size).arg(c.model.context);
}

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent),
      options_(std::move(options)),
      lab_(new lab::Lab(options_.data_folder.isEmpty() ? default_data_folder() : options_.data_folder, this)),
      gpu_installer_(new lab::GpuInstaller(this)),
      store_(&lab_->store()),
      run_model_(new RunTableModel(*store_, this)),
      chart_(new LossChart(*store_)),
      chart_view_(new LossChartView(chart_)),
      legend_(new ChartLegend(*chart_)),
      settings_(new SettingsPanel),
      views_(new QTabWidget),
      run_table_(new QTableView),
      details_(new QTextBrowser),
      details_timer_(new QTimer(this)),
      estimate_timer_(new QTimer(this)),
      log_scale_(new QCheckBox(tr("Log scale"))),
      smoothing_(new QSlider(Qt::Horizontal)),
      smoothing_value_(new QLabel),
      stage_label_(new ElidedLabel),
      rate_label_(new QLabel),
      lr_label_(new QLabel),
      run_progress_(new QProgressBar),
      queue_progress_(new QProgressBar) {
  setWindowTitle(tr("NormLab \u2014 pre-norm and post-norm"));
  setObjectName(QStringLiteral("NormLabMainWindow"));
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

  build_actions();
  views_->setDocumentMode(true);
  chart_tab_ = build_chart_tab();
  add_view(chart_tab_, tr("Loss &curves"));
  inside_ = new InsideView(*store_);
  add_view(inside_, tr("&Inside the model"));
  connect(inside_, &InsideView::evidence_requested, this,
          [this](const QString& link, const QList<int>& ids) { show_evidence(link, ids); });
  text_view_ = new TextView(*store_);
  add_view(text_view_, tr("W&hat it writes"));
  SweepView::Hooks sweep_hooks;
  sweep_hooks.next_run = [this] { return settings_->config(); };
  sweep_hooks.report = [this](const QString& title, const QString& text) { report(title, text); };
  sweeps_ = new SweepView(*lab_, std::move(sweep_hooks));
  add_view(sweeps_, tr("S&weeps"));
  about_ = new AboutView;
  add_view(about_, tr("&About this experiment"));
  setCentralWidget(views_);
  build_menus();  // after the tabs: the View menu lists them

  add_dock(tr("Next run"), QStringLiteral("settingsDock"), settings_, Qt::LeftDockWidgetArea);
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  build_run_dock();
  build_lesson();
  build_status_bar();
  settings_->add_actions(start_action_, stop_action_, course_action_);

  connect(settings_, &SettingsPanel::validity_changed, this, &MainWindow::update_actions);
  // The estimate follows the settings and whatever tells the speed: this session's
  // training, a run that ends, a few steps timed for the Sweeps tab, the device.
  estimate_timer_->setSingleShot(true);
  estimate_timer_->setInterval(250);
  connect(estimate_timer_, &QTimer::timeout, this, &MainWindow::update_start_estimate);
  const auto estimate_soon = [this] {
    if (!estimate_timer_->isActive()) estimate_timer_->start();
  };
  connect(settings_, &SettingsPanel::changed, this, estimate_soon);
  connect(lab_, &lab::Lab::progress_changed, this, estimate_soon);
  connect(lab_, &lab::Lab::sweep_changed, this, estimate_soon);
  connect(store_, &lab::RunStore::status_changed, this, estimate_soon);
  connect(settings_, &SettingsPanel::changed, sweeps_, [this] {
    if (current_view() == sweeps_) sweeps_->refresh();
  });
  connect(views_, &QTabWidget::currentChanged, this, [this] {
    if (current_view() == sweeps_) sweeps_->refresh();  // the next run's settings may have changed
    show_picked_runs();
  });
  connect(settings_, &SettingsPanel::course_seeds_changed, this, &MainWindow::update_course_action);
  connect(sweeps_, &SweepView::runs_shown, this, &MainWindow::select_runs);
  // A click on the loss curves picks the step What it writes shows, as its slider does.
  connect(chart_view_, &LossChartView::step_picked, this, [this](int step) {
    text_view_->show_step(step);
    statusBar()->showMessage(tr("What it writes shows step %1 (Ctrl+Tab to get there)").arg(step), kStatusMessageMs);
  });
  connect(lab_, &lab::Lab::progress_changed, this, &MainWindow::update_progress);
  connect(lab_, &lab::Lab::busy_changed, this, &MainWindow::update_actions);
  connect(lab_, &lab::Lab::device_found, this, &MainWindow::on_device_found);
  connect(&lab_->follower(), &lab::FolderFollower::sweep_found, this, &MainWindow::show_followed_sweep);
  connect(lab_, &lab::Lab::note, this,
          [this](const QString& text) { statusBar()->showMessage(text, kStatusMessageMs); });
  connect(lab_, &lab::Lab::run_failed, this, [this](int id, const QString& message, int dropped) {
    const lab::RunEntry* run = store_->find(id);
    QString text = tr("\u201c%1\u201d could not train:\n%2")
                       .arg(run ? lab::qstr(display_name(run->record.config)) : QString(), message);
    if (dropped > 0) text += tr("\n\nThe %n run(s) queued after it (was|were) removed.", nullptr, dropped);
    report(tr("Run failed"), text);
  });
  connect(lab_, &lab::Lab::save_failed, this, [this](int, const QString& message) {
    report(tr("Run not saved"), tr("The run goes on, but its progress cannot be saved:\n%1").arg(message));
  });
  connect(run_model_, &RunTableModel::rename_requested, this, &MainWindow::rename_run);
  connect(details_, &QTextBrowser::anchorClicked, this, &MainWindow::ask_in_details);
  connect(store_, &lab::RunStore::appearance_changed, this, [this](int id) {
    if (selected_runs().contains(id)) update_details();  // renamed or noted
  });
  // What a run is doing, said once when it changes: "post-norm …: on the unigram baseline since step 100".
  connect(store_, &lab::RunStore::verdict_changed, this, [this](int id) {
    const lab::RunEntry* run = store_->find(id);
    if (!run || run->verdict.verdict == Verdict::NotStarted || run->verdict.verdict == Verdict::TooEarly) return;
    QString said = lab::qstr(run->verdict.sentence).section(QLatin1Char(';'), 0, 0);  // its first clause
    if (said.endsWith(QLatin1Char('.'))) said.chop(1);
    statusBar()->showMessage(tr("\u201c%1\u201d: %2").arg(lab::qstr(display_name(run->record.config)), said),
                             kStatusMessageMs);
    if (selected_runs().contains(id)) update_details();
  });
  connect(store_, &lab::RunStore::status_changed, this, [this](int id) {
    update_actions();
    if (selected_runs().contains(id)) update_details();
    // A run that starts training is scrolled into view: it appeared off-screen (issue 49).
    const lab::RunEntry* run = store_->find(id);
    if (run && run->record.status == RunStatus::Running) {
      run_table_->scrollTo(run_table_->model()->index(store_->row_of(id), 0));
    }
  });
  // A training run changes many times a second; its details are rewritten twice a second.
  details_timer_->setSingleShot(true);
  details_timer_->setInterval(500);
  connect(details_timer_, &QTimer::timeout, this, &MainWindow::update_details);
  connect(store_, &lab::RunStore::points_changed, this, [this](int id) {
    if (!details_timer_->isActive() && selected_runs().contains(id)) details_timer_->start();
  });

  resize(1400, 900);  // room for the course's five curves side by side, where the screen has it
  const bool layout_saved = QSettings().contains(QStringLiteral("window/state"));
  restore_session();
  keep_on_screen();
  if (!layout_saved) size_run_dock();
  update_course_action();
  update_details();
  update_actions();
  update_progress();
  update_start_estimate();
  lab_->probe_device();
  connect(gpu_installer_, &lab::GpuInstaller::notice, this, &MainWindow::show_gpu_notice);
  gpu_installer_->look_for_gpu(install_gpu_action_->text().remove(QLatin1Char('&')).prepend(tr("Help \u25b8 ")));
}

MainWindow::~MainWindow() { lab_->shutdown(); }

// No larger than the screen has room for, title bar included, and on it: a window larger
// than a 1280 x 800 screen hid its right edge and status bar, and a size saved on a larger
// screen came back on a smaller one.
void MainWindow::keep_on_screen() {
  const QRect room = screen()->availableGeometry();
  const QMargins frame(8, 40, 8, 8);  // a desktop's title bar and borders: unknown until the window is shown
  const QSize size = this->size().boundedTo(room.size().shrunkBy(frame)).expandedTo(minimumSizeHint());
  resize(size);
  if (!testAttribute(Qt::WA_Moved)) return;  // a new window: where it goes is the desktop's choice
  const QRect outer = QRect(pos(), size).marginsAdded(frame);
  move(std::clamp(pos().x(), room.left() + frame.left(),
                  std::max(room.left(), room.right() - outer.width()) + frame.left()),
       std::clamp(pos().y(), room.top() + frame.top(),
                  std::max(room.top(), room.bottom() - outer.height()) + frame.top()));
}

lab::RunStore& MainWindow::store() { return *store_; }

bool MainWindow::ask(const QString& title, const QString& question) {
  return options_.confirm ? options_.confirm(title, question)
                          : QMessageBox::question(this, title, question) == QMessageBox::Yes;
}

void MainWindow::report(const QString& title, const QString& text) {
  if (options_.report_error) {
    options_.report_error(title, text);
  } else if (closing_) {
    // A run that failed while the window was closing (its signal still queued): nobody is
    // there to answer a dialog, which would keep the app running in its own event loop.
    std::fprintf(stderr, "normlab: %s: %s\n", qPrintable(title), qPrintable(text));
  } else {
    // One sentence, the rest (a list of files, LibTorch's backtrace) behind Show Details, so
    // the dialog fits any screen and its button stays on it: a 5.6 kB trace once made it
    // 1416 px tall on an 800 px screen.
    QMessageBox box(QMessageBox::Warning, title, text, QMessageBox::Ok, this);
    const qsizetype line = text.indexOf(QLatin1Char('\n'));
    if (line >= 0 || text.size() > 300) {
      box.setText(text.left(std::min<qsizetype>(line >= 0 ? line : text.size(), 300)));
      box.setDetailedText(text);
    }
    box.exec();
  }
}

bool MainWindow::trains_on_gpu(const TrainConfig& config) const {
  return config.device == "cuda" || (config.device == "auto" && lab_->on_gpu());
}

MemoryCheck MainWindow::memory_check_of(const TrainConfig& config) const {
  const bool gpu = trains_on_gpu(config);
  return memory_check({config}, 1, gpu, gpu ? cuda_free_memory_bytes() : available_memory_bytes());
}

bool MainWindow::ask_start_anyway(const QString& title, const QString& question) {
  if (options_.confirm) return options_.confirm(title, question);
  QMessageBox box(QMessageBox::Warning, title, question, QMessageBox::Cancel, this);
  QPushButton* start = box.addButton(tr("Start anyway"), QMessageBox::AcceptRole);
  box.setDefaultButton(QMessageBox::Cancel);
  box.exec();
  return box.clickedButton() == start;
}

void MainWindow::restore_session() {
  QSettings settings;
  restoreGeometry(settings.value(QStringLiteral("window/geometry")).toByteArray());
  restoreState(settings.value(QStringLiteral("window/state")).toByteArray());
  if (auto* splitter = findChild<QSplitter*>(QStringLiteral("runSplitter"))) {
    splitter->restoreState(settings.value(QStringLiteral("window/run_splitter")).toByteArray());
  }
  run_table_->horizontalHeader()->restoreState(settings.value(QStringLiteral("window/run_columns")).toByteArray());
  settings_restored_ = settings_->restore(settings);
  log_action_->setChecked(settings.value(QStringLiteral("chart/log_scale"), false).toBool());
  const int x_axis =
      x_axis_choice_->findData(settings.value(QStringLiteral("chart/x_axis"), int(XAxis::Steps)).toInt());
  if (x_axis >= 0) x_axis_choice_->setCurrentIndex(x_axis);
  group_seeds_action_->setChecked(settings.value(QStringLiteral("chart/group_seeds"), true).toBool());
  const int smoothing =
      int(std::lround(100 * settings.value(QStringLiteral("chart/smoothing"), kDefaultSmoothing).toDouble()));
  smoothing_->setValue(smoothing);
  emit smoothing_->valueChanged(smoothing);  // shows the value even when it did not change

  set_side_by_side(settings.value(QStringLiteral("lab/side_by_side"), 0).toInt());
  const QStringList hidden = settings.value(QStringLiteral("runs/hidden")).toStringList();
  const lab::RunArchive::Restored restored = lab_->restore();
  for (const lab::RunEntry& run : store_->runs()) {
    if (hidden.contains(QFileInfo(run.file).fileName())) store_->set_visible(run.id, false);
  }
  if (lab_->read_only()) {
    setWindowTitle(windowTitle() + tr(" (read-only)"));
    // A label that stays while the window is open: a status message said it, and went at
    // the first menu item's status tip, leaving only "(read-only)" in the title.
    auto* owned = new ElidedLabel;
    owned->setObjectName(QStringLiteral("readOnlyLabel"));
    owned->setStyleSheet(QStringLiteral("QLabel { color: #7a4b00; font-weight: 600; }"));
    // Its folder last: a narrow window cuts the path, not what it means.
    owned->set_full_text(tr("Read-only: another NormLab (%1) owns this runs folder: its runs are shown as last "
                            "saved, and nothing can be trained or changed here (%2)")
                             .arg(lab_->archive().owner(), lab_->archive().folder()));
    statusBar()->addPermanentWidget(owned, 1);
  } else if (!restored.runs.empty()) {
    const auto count = [&](RunStatus status) {
      return int(std::count_if(restored.runs.begin(), restored.runs.end(),
                               [status](const auto& run) { return run.first.status == status; }));
    };
    const int waiting = count(RunStatus::Queued), interrupted = count(RunStatus::Interrupted);
    QString text = tr("%n run(s) restored from %1", nullptr, int(restored.runs.size())).arg(lab_->archive().folder());
    if (lab_->has_runs_to_continue()) {
      QStringList left;
      if (interrupted > 0) left << tr("%n interrupted", nullptr, interrupted);
      if (waiting > 0) left << tr("%n still queued", nullptr, waiting);
      text += tr("; %1: Run \u25b8 Continue interrupted and queued runs trains them in their order")
                  .arg(left.join(tr(" and ")));
    }
    statusBar()->showMessage(text, kStatusMessageMs * (waiting + interrupted > 0 ? 4 : 1));
  }
  restore_lesson();
  if (!restored.damaged.isEmpty() || !restored.unmovable.isEmpty()) {
    // Once the window is up, so the message has it as its parent.
    QTimer::singleShot(0, this, [this, restored] { report_damaged(restored.damaged, restored.unmovable); });
  }
}

void MainWindow::report_damaged(const QStringList& damaged, const QStringList& unmovable) {
  const QString folder = lab_->archive().damaged_folder();
  QString text;
  if (!damaged.isEmpty()) {
    text += tr("%n saved run(s) could not be read. (It was|They were) moved to %1, so (it is|they are) not read again; "
               "nothing was deleted.\n\n%2",
               nullptr, int(damaged.size()))
                .arg(folder, damaged.join(QStringLiteral("\n")));
  }
  if (!unmovable.isEmpty()) {
    if (!text.isEmpty()) text += QStringLiteral("\n\n");
    text += tr("%n saved run(s) could not be read, nor moved to %1:\n\n%2", nullptr, int(unmovable.size()))
                .arg(folder, unmovable.join(QStringLiteral("\n")));
  }
  report(tr("Damaged saved runs"), text);
}

void MainWindow::save_session() const {
  QSettings settings;
  settings.setValue(QStringLiteral("window/geometry"), saveGeometry());
  settings.setValue(QStringLiteral("window/state"), saveState());
  if (auto* splitter = findChild<QSplitter*>(QStringLiteral("runSplitter"))) {
    settings.setValue(QStringLiteral("window/run_splitter"), splitter->saveState());
  }
  settings.setValue(QStringLiteral("window/run_columns"), run_table_->horizontalHeader()->saveState());
  settings_->save(settings);
  settings.setValue(QStringLiteral("lab/side_by_side"), lab_->side_by_side_choice());
  settings.setValue(QStringLiteral("chart/log_scale"), chart_->log_scale());
  settings.setValue(QStringLiteral("chart/x_axis"), int(chart_->x_axis()));
  settings.setValue(QStringLiteral("chart/group_seeds"), chart_->group_seeds());
  settings.setValue(QStringLiteral("chart/smoothing"), chart_->smoothing());
  QStringList hidden;
  for (const lab::RunEntry& run : store_->runs()) {
    if (!run.visible && !run.file.isEmpty()) hidden << QFileInfo(run.file).fileName();
  }
  settings.setValue(QStringLiteral("runs/hidden"), hidden);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  closing_ = true;
  save_session();
  // The window goes at once; a run still preparing its data may take a moment to stop.
  hide();
  lab_->shutdown();  // the worker saves the stopped run before its thread ends
  event->accept();
}

void MainWindow::set_side_by_side(int runs) {
  lab_->set_side_by_side(runs);
  update_side_by_side_menu();
}

void MainWindow::update_side_by_side_menu() {
  for (QAction* choice : side_by_side_menu_->actions()) {
    const int runs = choice->data().toInt();
    choice->setChecked(runs == lab_->side_by_side_choice());
    if (runs == 0) choice->setText(tr("Auto: %1 here").arg(lab_->auto_side_by_side()));
  }
}

void MainWindow::on_device_found(const Environment& found) {
  settings_->set_device(found);
  update_side_by_side_menu();
  const bool gpu = lab_->on_gpu();
  // First launch: the course's settings, made small enough for a CPU when needed, unless
  // the schedule was changed meanwhile.
  if (!settings_restored_) settings_->set_config(lab_->fit_to_device(settings_->config()));
  update_start_estimate();
  settings_->set_course_note(
      gpu ? tr("GPU found: the course experiment runs at full size (%1).").arg(course_scale_text(Scale::Full))
          : tr("No GPU found: the course experiment is scaled for the CPU (%1).").arg(course_scale_text(Scale::Cpu)));
  update_actions();
}

void MainWindow::start_run() {
  const QString problem = settings_->problem();
  if (!problem.isEmpty()) {
    statusBar()->showMessage(problem, kStatusMessageMs);
    return;
  }
  const TrainConfig config = settings_->config();
  // A run that cannot fit grew memory at 0.8 GB/s until the allocator failed: asked first,
  // against the host's available memory, or on a GPU the GPU's free memory.
  const MemoryCheck memory = memory_check_of(config);
  if (memory.over() &&
      !ask_start_anyway(memory.gpu ? tr("Not enough GPU memory") : tr("Not enough memory"),
                        (memory.gpu ? tr("This run needs about %1 GB of GPU memory (estimate) and %2 GB is free on "
                                         "the GPU, so it would most likely fail. Make the model, batch or context "
                                         "smaller, or start it anyway.")
                                    : tr("This run needs about %1 GB of memory (estimate) and %2 GB is available "
                                         "here, so it would most likely fail. Make the model, batch or context "
                                         "smaller, or start it anyway."))
                            .arg(memory.needed / 1e9, 0, 'f', 1)
                            .arg(memory.limit / 1e9, 0, 'f', 1))) {
    return;
  }
  // A typo in Steps (9,999,999) started a run of 467 hours without a word, and on a new
  // profile, with no speed known yet, still did.
  const lab::Estimate time = lab_->estimate({config});
  if (time.seconds > kAskAboveSeconds &&
      !ask(tr("A long run"), tr("This run would take about %1 here (%2). Start it?")
                                 .arg(lab::qstr(duration_text(time.seconds)), estimate_basis_text(time)))) {
    return;
  }
  const TrainConfig course = scaled(TrainConfig{}, lab_->course_scale());
  const double courses = run_flops(config) / run_flops(course);
  if (time.seconds < 0 && courses > kAskAboveCourseRuns &&
      !ask(tr("A long run"), tr("How long this run takes here is not known yet: no run has trained on this device. "
                                "It is about %1 times the work of a course run (%2 steps of %3 layers), which "
                                "suggests hours. Start it?")
                                 .arg(QLocale::system().toString(courses, 'f', 0))
                                 .arg(course.steps)
                                 .arg(course.model.layers))) {
    return;
  }
  lab_->start_run(config);
  QSettings settings;
  settings_->save(settings);
}

void MainWindow::start_course_experiment() {
  lab_->start_course_experiment(settings_->config(), settings_->course_seeds());
  // Kept now, as Start keeps its run's settings: a crash lost the "\u00d7 2 seeds" chosen.
  QSettings settings;
  settings_->save(settings);
}

void MainWindow::update_start_estimate() {
  if (!settings_->problem().isEmpty()) {
    settings_->set_start_estimate({}, {});
    return;
  }
  const lab::Estimate time = lab_->estimate({settings_->config()});
  const MemoryCheck check = memory_check({settings_->config()}, 1, trains_on_gpu(settings_->config()), 0);
  const QString memory =
      (check.gpu ? tr(", %1 GB of GPU memory") : tr(", %1 GB of memory")).arg(check.needed / 1e9, 0, 'f', 1);
  if (time.seconds < 0) {
    settings_->set_start_estimate(tr("Time: known once a run has trained here") + memory,
                                  tr("Estimated from this session's training speed or the last finished run on this "
                                     "device; the Sweeps tab can time a few steps"));
  } else {
    settings_->set_start_estimate(tr("Start: about %1 here").arg(lab::qstr(duration_text(time.seconds))) + memory,
                                  estimate_basis_text(time));
  }
}

void MainWindow::update_course_action() {
  const int seeds = settings_->course_seeds();
  course_action_->setText(seeds > 1 ? tr("&Course experiment (5 runs \u00d7 %1)").arg(seeds)
                                    : tr("&Course experiment (5 runs)"));
}

void MainWindow::continue_runs() {
  const QStringList refused = lab_->continue_runs();
  update_actions();
  if (!refused.isEmpty()) {
    report(tr("Not resumed"), tr("%n interrupted run(s) cannot go on from (its|their) checkpoint; (its|their) points "
                                 "are kept, and Use these settings, then Start, trains (it|them) afresh:\n\n%1",
                                 nullptr, int(refused.size()))
                                  .arg(refused.join(QStringLiteral("\n"))));
  }
}

void MainWindow::select_runs(const QList<int>& run_ids) {
  QItemSelection selection;
  for (const int id : run_ids) {
    const int row = store_->row_of(id);
    if (row >= 0) selection.select(run_model_->index(row, 0), run_model_->index(row, RunTableModel::ColumnCount - 1));
  }
  run_table_->selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
  if (!run_ids.isEmpty()) run_table_->scrollTo(run_model_->index(store_->row_of(run_ids.front()), 0));
}

void MainWindow::stop_run() {
  if (!lab_->queue().busy()) return;
  // The selected runs that train, else every run that trains.
  QList<int> chosen;
  for (const int id : selected_runs()) {
    if (lab_->queue().is_running(id)) chosen << id;
  }
  if (chosen.isEmpty()) chosen = lab_->queue().running();
  lab_->stop_runs(chosen);
  statusBar()->showMessage(
      tr("Stopping %n run(s) after the current step; (its|their) points are kept", nullptr, int(chosen.size())),
      kStatusMessageMs);
}

void MainWindow::stop_all() {
  lab_->stop_all();
  statusBar()->showMessage(tr("Stopping; the queue is cleared"), kStatusMessageMs);
}

void MainWindow::update_actions() {
  const bool busy = lab_->queue().busy();
  const bool writable = !lab_->read_only();
  start_action_->setEnabled(writable && settings_->problem().isEmpty());
  stop_action_->setEnabled(busy);
  stop_all_action_->setEnabled(busy);
  continue_action_->setEnabled(lab_->has_runs_to_continue());
  // Before the device is known the course waits for it; the look-up takes a moment at most.
  course_action_->setEnabled(writable);
  import_action_->setEnabled(true);
  const QList<int> selected = selected_runs();
  remove_action_->setEnabled(!selected.isEmpty() && std::all_of(selected.begin(), selected.end(),
                                                                [this](int id) { return lab_->removable(id); }));
  use_settings_action_->setEnabled(selected.size() == 1);
  const bool checkpoints =
      !selected.isEmpty() && writable && std::all_of(selected.begin(), selected.end(), [this](int id) {
        return lab_->has_checkpoint(id) && !lab_->queue().is_queued(id);
      });
  resume_action_->setEnabled(checkpoints);
  // A seed group is drawn once the chart has refreshed; a run drawn apart is in none.
  const auto apart = [this](int id) { return chart_->seeds_apart(id); };
  const bool grouped = std::any_of(selected.begin(), selected.end(), [this, &apart](int id) {
    return apart(id) || !chart_->seed_group_of(id).isEmpty();
  });
  seeds_apart_action_->setEnabled(chart_->group_seeds() && grouped);
  seeds_apart_action_->setChecked(std::any_of(selected.begin(), selected.end(), apart));
  drop_checkpoints_action_->setEnabled(checkpoints);
  const bool any = !store_->runs().empty();
  export_json_action_->setEnabled(any);
  export_csv_action_->setEnabled(any);
  export_markdown_action_->setEnabled(any);
}

void MainWindow::update_progress() {
  const lab::QueueProgress p = lab_->queue().progress();
  const bool active = !p.running.empty();
  const bool one = p.running.size() == 1;
  run_progress_->setVisible(active);
  queue_progress_->setVisible(active && p.total > int(p.running.size()));
  rate_label_->setVisible(active && p.tokens_per_s > 0);
  lr_label_->setVisible(one && p.running.front().step > 0);
  if (!active) {
    stage_label_->set_full_text(tr("Ready"));
    return;
  }
  QStringList names;
  int step = 0, steps = 0;
  double seconds_left = 0;
  double done = p.ended;  // runs, each split by its own progress
  for (const lab::ActiveRun& run : p.running) {
    const lab::RunEntry* entry = store_->find(run.run_id);
    names << tr("\u201c%1\u201d").arg(entry ? lab::qstr(display_name(entry->record.config)) : QString());
    step += run.step;
    steps += run.steps;
    seconds_left = run.seconds_left < 0 || seconds_left < 0 ? -1 : std::max(seconds_left, run.seconds_left);
    done += run.steps > 0 ? double(run.step) / run.steps : 0;
  }
  const lab::ActiveRun& first = p.running.front();
  if (one) {
    stage_label_->set_full_text(first.stage.isEmpty() || first.step > 0
                                    ? tr("Training %1").arg(names.front())
                                    : tr("%1: %2\u2026").arg(names.front(), first.stage));
  } else {
    stage_label_->set_full_text(tr("Training %1 side by side").arg(names.join(tr(", "))));
  }
  rate_label_->setText(tr("%1 tokens/s").arg(QLocale::system().toString(p.tokens_per_s, 'f', 0)));
  lr_label_->setText(tr("lr %1").arg(lr_text(first.lr)));
  run_progress_->setRange(0, std::max(1, steps));
  run_progress_->setValue(step);
  // Several runs: their steps together (each run's are in the table's Step column).
  const QString steps_text =
      one ? tr("step %1 / %2").arg(first.step).arg(first.steps) : tr("%n runs", nullptr, int(p.running.size()));
  run_progress_->setFormat(seconds_left >= 0 && step > 0
                               ? tr("%1 \u00b7 %2 left").arg(steps_text, lab::qstr(duration_text(seconds_left)))
                               : steps_text);
  constexpr int kPerRun = 1000;
  queue_progress_->setRange(0, p.total * kPerRun);
  queue_progress_->setValue(int(done * kPerRun));
  queue_progress_->setFormat(p.seconds_left >= 0 ? tr("%1 of %2 runs done \u00b7 %3 left")
                                                       .arg(p.ended)
                                                       .arg(p.total)
                                                       .arg(lab::qstr(duration_text(p.seconds_left)))
                                                 : tr("%1 of %2 runs done").arg(p.ended).arg(p.total));
}

QList<int> MainWindow::selected_runs() const {
  QList<int> ids;
  for (const QModelIndex& index : run_table_->selectionModel()->selectedRows()) ids << store_->id_at(index.row());
  return ids;
}

QList<int> MainWindow::selected_or_all_runs() const {
  QList<int> ids = selected_runs();
  if (ids.isEmpty()) {
    for (const lab::RunEntry& run : store_->runs()) ids << run.id;
  }
  return ids;
}

void MainWindow::update_details() {
  const QList<int> ids = selected_runs();
  const lab::RunEntry* run = ids.size() == 1 ? store_->find(ids.front()) : nullptr;
  if (run) {
    details_->setHtml(run_details_html(*run));
  } else if (ids.size() > 1) {
    std::vector<const lab::RunEntry*> runs;
    for (const int id : ids) runs.push_back(store_->find(id));
    details_->setHtml(runs_difference_html(runs));
  } else {
    details_->setHtml(ids.isEmpty() ? tr("<p style='color:#5f6b7a'>Select a run to see its settings and results; "
                                         "the chart draws it bold.</p>")
                                    : tr("<p style='color:#5f6b7a'>%n runs selected.</p>", nullptr, int(ids.size())));
  }
}

bool MainWindow::rename_run(int run_id, const QString& label) {
  const QString why = lab_->rename_run(run_id, label);
  if (!why.isEmpty()) report(tr("Not renamed"), why);
  return why.isEmpty();
}

bool MainWindow::note_run(int run_id, const QString& note) {
  const QString why = lab_->set_note(run_id, note);
  if (!why.isEmpty()) report(tr("Note not kept"), why);
  return why.isEmpty();
}

void MainWindow::ask_in_details(const QUrl& link) {
  const QList<int> ids = selected_runs();
  if (show_evidence(link.toString(), ids)) return;
  const lab::RunEntry* run = ids.size() == 1 ? store_->find(ids.front()) : nullptr;
  if (!run) return;
  const int id = run->id;
  const TrainConfig& c = run->record.config;
  bool ok = false;
  if (link.toString() == QLatin1String("rename")) {
    const QString label = QInputDialog::getText(this, tr("Rename run"), tr("Name (empty: what its settings say):"),
                                                QLineEdit::Normal, lab::qstr(display_name(c)), &ok);
    if (ok) rename_run(id, label);
  } else if (link.toString() == QLatin1String("note")) {
    const QString note = QInputDialog::getMultiLineText(
        this, tr("Note"), tr("Note on \u201c%1\u201d:").arg(lab::qstr(display_name(c))), lab::qstr(c.note), &ok);
    if (ok) note_run(id, note);
  }
}

void MainWindow::show_picked_runs() {
  const QList<int> ids = selected_runs();
  if (current_view() == inside_) inside_->show_picked(ids);
  if (current_view() == text_view_) text_view_->show_picked(ids);
}

bool MainWindow::show_evidence(const QString& link, const QList<int>& run_ids) {
  if (link == QLatin1String("curves")) {
    show_view(chart_tab_);
  } else if (link == QLatin1String("text")) {
    show_view(text_view_);
  } else if (link.startsWith(QLatin1String("statistic:"))) {
    inside_->show_statistic(link.mid(int(std::strlen("statistic:"))));
    // The runs asked about, in their panels: the selected one beside the other selected, or
    // beside what the other panel shows.
    if (!run_ids.isEmpty()) inside_->show_runs(run_ids.front(), run_ids.size() > 1 ? run_ids[1] : 0);
    show_view(inside_);
  } else {
    return false;
  }
  return true;
}

void MainWindow::show_run_menu(const QPoint& pos) {
  QMenu menu(this);
  menu.addAction(use_settings_action_);
  menu.addAction(resume_action_);
  menu.addAction(seeds_apart_action_);
  menu.addAction(tr("Show only these"), this, [this] {
    const QList<int> keep = selected_runs();
    for (const lab::RunEntry& run : store_->runs()) store_->set_visible(run.id, keep.contains(run.id));
  });
  menu.addAction(tr("Show all"), this, [this] {
    for (const lab::RunEntry& run : store_->runs()) store_->set_visible(run.id, true);
  });
  menu.addSeparator();
  menu.addAction(export_json_action_);
  menu.addAction(export_csv_action_);
  menu.addAction(export_markdown_action_);
  menu.addSeparator();
  menu.addAction(remove_action_);
  menu.exec(run_table_->viewport()->mapToGlobal(pos));
}

void MainWindow::resume_runs(const QList<int>& run_ids) {
  QStringList refused;
  for (const int id : run_ids) {
    const QString why = lab_->resume_run(id);
    if (!why.isEmpty())
      refused << tr("\u201c%1\u201d: %2").arg(lab::qstr(display_name(store_->find(id)->record.config)), why);
  }
  update_actions();
  if (refused.size() < run_ids.size() && lab_->has_runs_to_continue()) {
    // Only the runs chosen go on; what the last session left waits for the one action.
    statusBar()->showMessage(tr("Resumed the %n selected run(s); the other runs the last session left wait for "
                                "Run \u25b8 Continue interrupted and queued runs",
                                nullptr, int(run_ids.size() - refused.size())),
                             kStatusMessageMs * 2);
  }
  if (!refused.isEmpty()) {
    report(tr("Not resumed"), tr("%n run(s) cannot go on from (its|their) checkpoint; (its|their) points are kept, and "
                                 "Use these settings, then Start, trains (it|them) afresh:\n\n%1",
                                 nullptr, int(refused.size()))
                                  .arg(refused.join(QStringLiteral("\n"))));
  }
}

void MainWindow::remove_runs(const QList<int>& run_ids) {
  QList<int> removable;
  for (int id : run_ids) {
    if (lab_->removable(id)) removable << id;
  }
  if (removable.isEmpty()) return;
  const QString question =
      tr("Remove %n run(s) from NormLab? (Its|Their) saved data in the runs folder is deleted too; "
         "exported files are not touched.",
         nullptr, int(removable.size()));
  if (!ask(tr("Remove runs"), question)) return;
  lab_->remove_runs(removable);
  update_actions();
}

}  // namespace normlab::ui
