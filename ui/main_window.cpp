#include "main_window.h"

#include <QAction>
#include <QApplication>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDesktopServices>
#include <QDialog>
#include <QDialogButtonBox>
#include <QDir>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLocale>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardPaths>
#include <QStatusBar>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTimer>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <cmath>
#include <set>
#include <utility>

#include "about_view.h"
#include "chart_export.h"
#include "format.h"
#include "loss_chart.h"
#include "loss_chart_view.h"
#include "presets.h"
#include "run_archive.h"
#include "run_details.h"
#include "run_store.h"
#include "run_text.h"
#include "settings_panel.h"
#include "training_queue.h"

namespace normlab::ui {

namespace {

constexpr double kDefaultSmoothing = 0.8;
constexpr int kStatusMessageMs = 8000;

QString default_data_folder() {
  return QDir(QStandardPaths::writableLocation(QStandardPaths::AppDataLocation)).filePath(QStringLiteral("runs"));
}

QString course_scale_text(Scale scale) {
  const TrainConfig c = scaled(TrainConfig{}, scale);
  return QObject::tr("%1 steps of %2\u00d7%3 tokens").arg(c.steps).arg(c.batch_size).arg(c.model.context);
}

// Asks for the size and format of a chart picture; empty path when cancelled.
struct ImageRequest {
  QString path;
  QSize pixels;
};

ImageRequest ask_image(QWidget* parent, QSize shown, const QString& folder) {
  QDialog dialog(parent);
  dialog.setWindowTitle(QObject::tr("Export chart image"));
  auto* form = new QFormLayout(&dialog);
  auto* format = new QComboBox;
  format->addItem(QObject::tr("PNG image"), QStringLiteral("png"));
  format->addItem(QObject::tr("SVG drawing"), QStringLiteral("svg"));
  auto* width = new QSpinBox;
  auto* height = new QSpinBox;
  for (QSpinBox* box : {width, height}) {
    box->setRange(100, 16000);
    box->setSuffix(QObject::tr(" px"));
  }
  auto* keep = new QCheckBox(QObject::tr("Keep the chart's proportions"));
  keep->setChecked(true);
  auto* note = new QLabel;
  note->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  auto set_defaults = [=] {
    const bool png = format->currentData() == QStringLiteral("png");
    // PNG at twice the screen size is sharp on high-resolution screens and in print.
    const QSize size = png ? shown * 2 : shown;
    const QSignalBlocker block_w(width), block_h(height);
    width->setValue(size.width());
    height->setValue(size.height());
    note->setText(png ? QObject::tr("Default: twice the chart's size on screen") : QObject::tr("Vector drawing; size sets its proportions"));
  };
  QObject::connect(format, &QComboBox::currentIndexChanged, &dialog, set_defaults);
  QObject::connect(width, &QSpinBox::valueChanged, &dialog, [=](int w) {
    if (!keep->isChecked()) return;
    const QSignalBlocker block(height);
    height->setValue(int(std::lround(double(w) * shown.height() / shown.width())));
  });
  QObject::connect(height, &QSpinBox::valueChanged, &dialog, [=](int h) {
    if (!keep->isChecked()) return;
    const QSignalBlocker block(width);
    width->setValue(int(std::lround(double(h) * shown.width() / shown.height())));
  });
  set_defaults();
  auto* size_row = new QHBoxLayout;
  size_row->addWidget(width);
  size_row->addWidget(new QLabel(QStringLiteral("\u00d7")));
  size_row->addWidget(height);
  form->addRow(QObject::tr("Format"), format);
  form->addRow(QObject::tr("Size"), size_row);
  form->addRow(QString(), keep);
  form->addRow(QString(), note);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(QObject::tr("Choose file\u2026"));
  QObject::connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
  QObject::connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
  form->addRow(buttons);
  if (dialog.exec() != QDialog::Accepted) return {};
  const QString suffix = format->currentData().toString();
  const QString filter = suffix == QStringLiteral("png") ? QObject::tr("PNG image (*.png)") : QObject::tr("SVG drawing (*.svg)");
  QString path = QFileDialog::getSaveFileName(parent, QObject::tr("Export chart image"),
                                              QDir(folder).filePath(QStringLiteral("normlab-loss.") + suffix), filter);
  if (path.isEmpty()) return {};
  if (QFileInfo(path).suffix().toLower() != suffix) path += '.' + suffix;
  return {path, QSize(width->value(), height->value())};
}

}  // namespace

MainWindow::MainWindow(MainWindowOptions options, QWidget* parent)
    : QMainWindow(parent),
      options_(std::move(options)),
      store_(new RunStore(this)),
      queue_(new TrainingQueue(*store_, this)),
      chart_(new LossChart(*store_)),
      chart_view_(new LossChartView(chart_)),
      settings_(new SettingsPanel),
      views_(new QTabWidget),
      run_table_(new QTableView),
      details_(new QTextBrowser),
      details_timer_(new QTimer(this)),
      log_scale_(new QCheckBox(tr("Log scale"))),
      smoothing_(new QSlider(Qt::Horizontal)),
      smoothing_value_(new QLabel),
      stage_label_(new QLabel),
      rate_label_(new QLabel),
      lr_label_(new QLabel),
      run_progress_(new QProgressBar),
      queue_progress_(new QProgressBar) {
  if (options_.data_folder.isEmpty()) options_.data_folder = default_data_folder();
  archive_ = std::make_unique<RunArchive>(options_.data_folder);
  setWindowTitle(tr("NormLab \u2014 pre-norm and post-norm"));
  setObjectName(QStringLiteral("NormLabMainWindow"));
  setDockOptions(QMainWindow::AnimatedDocks | QMainWindow::AllowTabbedDocks);

  build_actions();
  build_menus();
  views_->setDocumentMode(true);
  views_->addTab(build_chart_tab(), tr("Loss curves"));
  views_->addTab(new AboutView, tr("About this experiment"));
  setCentralWidget(views_);

  auto* scroll = new QScrollArea;
  scroll->setWidget(settings_);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(settings_->sizeHint().width() + 24);
  add_dock(tr("Next run"), QStringLiteral("settingsDock"), scroll, Qt::LeftDockWidgetArea);
  setCorner(Qt::BottomLeftCorner, Qt::LeftDockWidgetArea);
  build_run_dock();
  build_status_bar();
  settings_->add_actions(start_action_, stop_action_, course_action_);

  connect(settings_, &SettingsPanel::validity_changed, this, &MainWindow::update_actions);
  connect(queue_, &TrainingQueue::progress_changed, this, &MainWindow::update_progress);
  connect(queue_, &TrainingQueue::busy_changed, this, &MainWindow::update_actions);
  connect(queue_, &TrainingQueue::device_found, this, &MainWindow::on_device_found);
  connect(queue_, &TrainingQueue::run_failed, this, [this](int id, const QString& message, int dropped) {
    const RunEntry* run = store_->find(id);
    QString text = tr("\u201c%1\u201d could not train:\n%2").arg(run ? qstr(run->record.config.name) : QString(), message);
    if (dropped > 0) text += tr("\n\nThe %n run(s) queued after it were removed.", nullptr, dropped);
    report(tr("Run failed"), text);
  });
  connect(queue_, &TrainingQueue::save_failed, this, [this](int, const QString& message) {
    report(tr("Run not saved"), tr("The run goes on, but its progress cannot be saved:\n%1").arg(message));
  });
  connect(store_, &RunStore::status_changed, this, [this](int id) {
    update_actions();
    if (selected_runs().contains(id)) update_details();
  });
  // A training run changes many times a second; its details are rewritten twice a second.
  details_timer_->setSingleShot(true);
  details_timer_->setInterval(500);
  connect(details_timer_, &QTimer::timeout, this, &MainWindow::update_details);
  connect(store_, &RunStore::points_changed, this, [this](int id) {
    if (!details_timer_->isActive() && selected_runs().contains(id)) details_timer_->start();
  });

  resize(1400, 900);
  restore_session();
  update_details();
  update_actions();
  update_progress();
  queue_->probe_device();
}

MainWindow::~MainWindow() { queue_->shutdown(); }

void MainWindow::report(const QString& title, const QString& text) {
  if (options_.report_error) options_.report_error(title, text);
  else QMessageBox::warning(this, title, text);
}

void MainWindow::build_actions() {
  QStyle* s = style();
  start_action_ = new QAction(s->standardIcon(QStyle::SP_MediaPlay), tr("Start"), this);
  start_action_->setShortcut(Qt::CTRL | Qt::Key_Return);
  start_action_->setToolTip(tr("Queue a run with these settings (Ctrl+Enter)"));
  connect(start_action_, &QAction::triggered, this, &MainWindow::start_run);

  stop_action_ = new QAction(s->standardIcon(QStyle::SP_MediaStop), tr("Stop"), this);
  stop_action_->setShortcut(Qt::CTRL | Qt::Key_Period);
  stop_action_->setToolTip(tr("Stop the running run after its current step; its points are kept and the queue goes on"));
  connect(stop_action_, &QAction::triggered, this, &MainWindow::stop_run);

  stop_all_action_ = new QAction(tr("Stop and clear the queue"), this);
  stop_all_action_->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_Period);
  connect(stop_all_action_, &QAction::triggered, this, &MainWindow::stop_all);

  course_action_ = new QAction(tr("Course experiment (5 runs)"), this);
  course_action_->setToolTip(tr("Queue the plate's five runs: pre- and post-norm at 1e-3 and 6e-3 with a 30-step warmup, "
                                "and post-norm at 1e-3 with a long warmup; the course's model on the chosen corpus"));
  connect(course_action_, &QAction::triggered, this, &MainWindow::start_course_experiment);

  import_action_ = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("Import runs\u2026"), this);
  import_action_->setShortcut(QKeySequence::Open);
  connect(import_action_, &QAction::triggered, this, &MainWindow::import_dialog);
  export_json_action_ = new QAction(s->standardIcon(QStyle::SP_DialogSaveButton), tr("Export runs as JSON\u2026"), this);
  export_json_action_->setShortcut(QKeySequence::Save);
  connect(export_json_action_, &QAction::triggered, this, &MainWindow::export_json_dialog);
  export_csv_action_ = new QAction(tr("Export runs as CSV\u2026"), this);
  connect(export_csv_action_, &QAction::triggered, this, &MainWindow::export_csv_dialog);
  export_image_action_ = new QAction(tr("Export chart image\u2026"), this);
  export_image_action_->setShortcut(Qt::CTRL | Qt::Key_E);
  connect(export_image_action_, &QAction::triggered, this, &MainWindow::export_image_dialog);

  remove_action_ = new QAction(s->standardIcon(QStyle::SP_TrashIcon), tr("Remove runs"), this);
  remove_action_->setShortcut(QKeySequence::Delete);
  remove_action_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(remove_action_, &QAction::triggered, this, [this] { remove_runs(selected_runs()); });
  use_settings_action_ = new QAction(tr("Use these settings"), this);
  use_settings_action_->setToolTip(tr("Copy the selected run's settings to the next run"));
  connect(use_settings_action_, &QAction::triggered, this, [this] {
    if (const RunEntry* run = store_->find(selected_runs().value(0))) settings_->set_config(run->record.config);
  });

  fit_action_ = new QAction(s->standardIcon(QStyle::SP_BrowserReload), tr("Fit to data"), this);
  fit_action_->setShortcut(Qt::CTRL | Qt::Key_0);
  fit_action_->setToolTip(tr("Undo zoom and pan, and follow the data again (Ctrl+0, or double-click the chart)"));
  connect(fit_action_, &QAction::triggered, this, [this] { chart_->reset_view(); });
  outliers_action_ = new QAction(tr("Ignore outliers in scaling"), this);
  outliers_action_->setCheckable(true);
  outliers_action_->setChecked(true);
  outliers_action_->setToolTip(tr("Fit the loss axis to where the runs started and went, not to a run that blew up"));
  connect(outliers_action_, &QAction::toggled, this, [this](bool on) { chart_->set_ignore_outliers(on); });
  log_action_ = new QAction(tr("Log scale"), this);
  log_action_->setCheckable(true);
  log_action_->setShortcut(Qt::CTRL | Qt::Key_L);
  connect(log_action_, &QAction::toggled, this, [this](bool on) {
    chart_->set_log_scale(on);
    const QSignalBlocker block(log_scale_);
    log_scale_->setChecked(on);
  });
}

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  file->addAction(import_action_);
  file->addSeparator();
  file->addAction(export_json_action_);
  file->addAction(export_csv_action_);
  file->addAction(export_image_action_);
  file->addSeparator();
  file->addAction(tr("Open the runs folder"), this, [this] {
    QDesktopServices::openUrl(QUrl::fromLocalFile(archive_->folder()));
  });
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(start_action_);
  run->addAction(stop_action_);
  run->addAction(stop_all_action_);
  run->addSeparator();
  run->addAction(course_action_);
  run->addSeparator();
  run->addAction(use_settings_action_);
  run->addAction(remove_action_);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(log_action_);
  view->addAction(fit_action_);
  view->addAction(outliers_action_);
  view->addSeparator();
  view->addAction(tr("Loss curves"), this, [this] { views_->setCurrentIndex(0); });
  view->addAction(tr("About this experiment"), this, [this] { views_->setCurrentIndex(1); });
  view->setObjectName(QStringLiteral("viewMenu"));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  help->addAction(tr("About this experiment"), this, [this] { views_->setCurrentIndex(1); });
  help->addAction(tr("About NormLab"), this, [this] {
    QMessageBox::about(this, tr("About NormLab"),
                       tr("<b>NormLab %1</b><p>Trains a small GPT with its LayerNorm before or after each "
                          "sub-layer and shows what the placement does to training.</p>")
                           .arg(QStringLiteral(NORMLAB_VERSION)));
  });
}

QWidget* MainWindow::build_chart_tab() {
  auto* tab = new QWidget;
  auto* layout = new QVBoxLayout(tab);
  layout->setContentsMargins(8, 6, 8, 4);
  layout->setSpacing(4);

  auto* bar = new QHBoxLayout;
  bar->setSpacing(10);
  log_scale_->setToolTip(tr("Logarithmic loss axis (Ctrl+L)"));
  connect(log_scale_, &QCheckBox::toggled, log_action_, &QAction::setChecked);
  bar->addWidget(log_scale_);
  bar->addSpacing(8);
  auto* smoothing_label = new QLabel(tr("Smoothing"));
  smoothing_->setRange(0, 99);
  smoothing_->setFixedWidth(160);
  smoothing_->setToolTip(tr("Exponential moving average of the training loss; the raw curve stays faintly behind"));
  smoothing_value_->setMinimumWidth(34);
  connect(smoothing_, &QSlider::valueChanged, this, [this](int value) {
    chart_->set_smoothing(value / 100.0);
    smoothing_value_->setText(value == 0 ? tr("off") : QString::number(value / 100.0, 'f', 2));
  });
  bar->addWidget(smoothing_label);
  bar->addWidget(smoothing_);
  bar->addWidget(smoothing_value_);
  bar->addSpacing(8);
  for (QAction* action : {fit_action_, export_image_action_}) {
    auto* button = new QToolButton;
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addWidget(button);
  }
  bar->addStretch(1);
  auto* hint = new QLabel(tr("drag: zoom \u00b7 right-drag: pan \u00b7 wheel: zoom \u00b7 double-click: fit"));
  hint->setStyleSheet(QStringLiteral("color: #8a94a1;"));
  bar->addWidget(hint);
  layout->addLayout(bar);
  layout->addWidget(chart_view_, 1);
  return tab;
}

QDockWidget* MainWindow::add_dock(const QString& title, const QString& name, QWidget* content,
                                  Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title);
  dock->setObjectName(name);
  dock->setWidget(content);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable |
                    QDockWidget::DockWidgetClosable);
  addDockWidget(area, dock);
  return dock;
}

void MainWindow::build_run_dock() {
  run_table_->setModel(store_);
  run_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  run_table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  run_table_->setAlternatingRowColors(true);
  run_table_->setShowGrid(false);
  run_table_->setWordWrap(false);
  run_table_->setContextMenuPolicy(Qt::CustomContextMenu);
  run_table_->verticalHeader()->hide();
  run_table_->verticalHeader()->setDefaultSectionSize(24);
  run_table_->horizontalHeader()->setHighlightSections(false);
  QHeaderView* header = run_table_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setSectionResizeMode(RunStore::SetupColumn, QHeaderView::Stretch);
  header->setStretchLastSection(false);
  header->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  run_table_->setColumnWidth(RunStore::NameColumn, 250);
  run_table_->setColumnWidth(RunStore::StatusColumn, 72);
  run_table_->setColumnWidth(RunStore::ProgressColumn, 84);
  run_table_->setColumnWidth(RunStore::HeldOutColumn, 70);
  run_table_->addAction(remove_action_);
  connect(run_table_, &QWidget::customContextMenuRequested, this, &MainWindow::show_run_menu);
  connect(run_table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    const QList<int> ids = selected_runs();
    chart_->set_highlighted(QSet<int>(ids.begin(), ids.end()));
    update_details();
    update_actions();
  });

  details_->setFrameShape(QFrame::NoFrame);
  details_->setOpenLinks(false);
  details_->setMinimumWidth(260);
  details_->setStyleSheet(QStringLiteral("QTextBrowser { background: #f7f8fa; padding: 6px; }"));

  auto* splitter = new QSplitter(Qt::Horizontal);
  splitter->setObjectName(QStringLiteral("runSplitter"));
  splitter->addWidget(run_table_);
  splitter->addWidget(details_);
  splitter->setStretchFactor(0, 3);
  splitter->setStretchFactor(1, 2);
  splitter->setSizes({800, 300});
  QDockWidget* dock = add_dock(tr("Runs"), QStringLiteral("runsDock"), splitter, Qt::BottomDockWidgetArea);
  resizeDocks({dock}, {210}, Qt::Vertical);
  if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("viewMenu"))) {
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>()) view->addAction(d->toggleViewAction());
  }
}

void MainWindow::build_status_bar() {
  stage_label_->setMinimumWidth(200);
  statusBar()->addWidget(stage_label_, 1);
  rate_label_->setToolTip(tr("Training tokens per second, smoothed"));
  lr_label_->setToolTip(tr("Learning rate of the latest step"));
  run_progress_->setToolTip(tr("The running run: steps done and time left"));
  queue_progress_->setToolTip(tr("Every queued run: time left, estimated from the current speed"));
  for (QProgressBar* bar : {run_progress_, queue_progress_}) {
    bar->setFixedWidth(280);
    bar->setTextVisible(true);
    bar->setMaximumHeight(18);
  }
  statusBar()->addPermanentWidget(rate_label_);
  statusBar()->addPermanentWidget(lr_label_);
  statusBar()->addPermanentWidget(run_progress_);
  statusBar()->addPermanentWidget(queue_progress_);
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
  const int smoothing = int(std::lround(100 * settings.value(QStringLiteral("chart/smoothing"), kDefaultSmoothing).toDouble()));
  smoothing_->setValue(smoothing);
  emit smoothing_->valueChanged(smoothing);  // shows the value even when it did not change

  const QStringList hidden = settings.value(QStringLiteral("runs/hidden")).toStringList();
  const RunArchive::Restored restored = archive_->restore();
  for (const auto& [record, file] : restored.runs) {
    const int id = store_->add(record, file);
    if (hidden.contains(QFileInfo(file).fileName())) store_->set_visible(id, false);
  }
  if (!restored.problems.isEmpty()) {
    statusBar()->showMessage(tr("%n saved run(s) could not be read: %1", nullptr, int(restored.problems.size()))
                                 .arg(restored.problems.join(QStringLiteral("; "))),
                             kStatusMessageMs * 2);
  } else if (!restored.runs.empty()) {
    statusBar()->showMessage(tr("%n run(s) restored from %1", nullptr, int(restored.runs.size())).arg(archive_->folder()),
                             kStatusMessageMs);
  }
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
  settings.setValue(QStringLiteral("chart/log_scale"), chart_->log_scale());
  settings.setValue(QStringLiteral("chart/smoothing"), chart_->smoothing());
  QStringList hidden;
  for (const RunEntry& run : store_->runs()) {
    if (!run.visible && !run.file.isEmpty()) hidden << QFileInfo(run.file).fileName();
  }
  settings.setValue(QStringLiteral("runs/hidden"), hidden);
}

void MainWindow::closeEvent(QCloseEvent* event) {
  save_session();
  // The window goes at once; a run still preparing its data may take a moment to stop.
  hide();
  queue_->shutdown();  // the worker saves the stopped run before its thread ends
  event->accept();
}

void MainWindow::on_device_found(const Environment& found) {
  device_ = found;
  device_known_ = true;
  settings_->set_device(found);
  const bool gpu = found.device == "cuda";
  // First launch: the course's settings, made small enough for a CPU when needed, unless
  // the schedule was changed meanwhile.
  const TrainConfig now = settings_->config(), initial;
  const bool untouched = now.steps == initial.steps && now.batch_size == initial.batch_size &&
                         now.model.context == initial.model.context && now.eval_interval == initial.eval_interval;
  if (!settings_restored_ && untouched) settings_->set_config(scaled(now, gpu ? Scale::Full : Scale::Cpu));
  settings_->set_course_note(gpu ? tr("GPU found: the course experiment runs at full size (%1).").arg(course_scale_text(Scale::Full))
                                 : tr("No GPU found: the course experiment is scaled for the CPU (%1).")
                                       .arg(course_scale_text(Scale::Cpu)));
  update_actions();
  if (std::exchange(course_requested_, false)) start_course_experiment();
}

int MainWindow::queue_run(TrainConfig config) {
  if (config.name.empty()) config.name = default_run_name(config);
  RunRecord record;
  config.name = store_->unique_name(qstr(config.name)).toStdString();
  record.config = config;
  record.status = RunStatus::Queued;
  const int id = store_->add(record, archive_->new_path(qstr(config.name)));
  queue_->enqueue(id);
  return id;
}

void MainWindow::start_run() {
  const QString problem = settings_->problem();
  if (!problem.isEmpty()) {
    statusBar()->showMessage(problem, kStatusMessageMs);
    return;
  }
  const TrainConfig config = settings_->config();
  queue_run(config);
  if (queue_->busy() && store_->runs().size() > 1) {
    statusBar()->showMessage(tr("Queued \u201c%1\u201d").arg(qstr(store_->runs().back().record.config.name)), kStatusMessageMs);
  }
  QSettings settings;
  settings_->save(settings);
}

void MainWindow::start_course_experiment() {
  if (!device_known_) {  // its size depends on the device; the probe answers in a moment
    course_requested_ = true;
    return;
  }
  const TrainConfig chosen = settings_->config();
  TrainConfig base;
  base.device = chosen.device;
  base.threads = chosen.threads;
  base.corpus_path = chosen.corpus_path;
  base.seed = chosen.seed;
  const bool gpu = device_known_ && device_.device == "cuda" && chosen.device != "cpu";
  const Scale scale = gpu ? Scale::Full : Scale::Cpu;
  for (const TrainConfig& config : workshop_runs(scaled(base, scale))) queue_run(config);
  statusBar()->showMessage(gpu ? tr("Course experiment queued: five runs of %1").arg(course_scale_text(scale))
                               : tr("No GPU found: course experiment scaled for the CPU (%1)").arg(course_scale_text(scale)),
                           kStatusMessageMs * 2);
}

void MainWindow::stop_run() {
  if (!queue_->busy()) return;
  queue_->stop_current();
  statusBar()->showMessage(tr("Stopping after the current step; its points are kept"), kStatusMessageMs);
}

void MainWindow::stop_all() {
  queue_->stop_all();
  statusBar()->showMessage(tr("Stopping; the queue is cleared"), kStatusMessageMs);
}

void MainWindow::update_actions() {
  const bool busy = queue_->busy();
  start_action_->setEnabled(settings_->problem().isEmpty());
  stop_action_->setEnabled(busy);
  stop_all_action_->setEnabled(busy);
  course_action_->setEnabled(device_known_);
  const QList<int> selected = selected_runs();
  const bool removable = !selected.isEmpty() && !selected.contains(queue_->running_id());
  remove_action_->setEnabled(removable);
  use_settings_action_->setEnabled(selected.size() == 1);
  const bool any = !store_->runs().empty();
  export_json_action_->setEnabled(any);
  export_csv_action_->setEnabled(any);
}

void MainWindow::update_progress() {
  const QueueProgress p = queue_->progress();
  const bool active = p.run_id != 0;
  run_progress_->setVisible(active);
  queue_progress_->setVisible(active && p.run_total > 1);
  rate_label_->setVisible(active && p.tokens_per_s > 0);
  lr_label_->setVisible(active && p.step > 0);
  if (!active) {
    stage_label_->setText(tr("Ready"));
    return;
  }
  const RunEntry* run = store_->find(p.run_id);
  const QString name = run ? qstr(run->record.config.name) : QString();
  stage_label_->setText(p.stage.isEmpty() || p.step > 0 ? tr("Training \u201c%1\u201d").arg(name)
                                                        : tr("\u201c%1\u201d: %2\u2026").arg(name, p.stage));
  rate_label_->setText(tr("%1 tokens/s").arg(QLocale::system().toString(p.tokens_per_s, 'f', 0)));
  lr_label_->setText(tr("lr %1").arg(lr_text(p.lr)));
  run_progress_->setRange(0, std::max(1, p.steps));
  run_progress_->setValue(p.step);
  run_progress_->setFormat(p.run_seconds_left >= 0 && p.step > 0
                               ? tr("step %1 / %2 \u00b7 %3 left").arg(p.step).arg(p.steps).arg(qstr(duration_text(p.run_seconds_left)))
                               : tr("step %1 / %2").arg(p.step).arg(p.steps));
  // The queue bar counts runs, each split by its own progress.
  constexpr int kPerRun = 1000;
  queue_progress_->setRange(0, p.run_total * kPerRun);
  queue_progress_->setValue((p.run_number - 1) * kPerRun + (p.steps > 0 ? p.step * kPerRun / p.steps : 0));
  queue_progress_->setFormat(p.queue_seconds_left >= 0
                                 ? tr("run %1 of %2 \u00b7 %3 left").arg(p.run_number).arg(p.run_total).arg(qstr(duration_text(p.queue_seconds_left)))
                                 : tr("run %1 of %2").arg(p.run_number).arg(p.run_total));
}

QList<int> MainWindow::selected_runs() const {
  QList<int> ids;
  for (const QModelIndex& index : run_table_->selectionModel()->selectedRows()) ids << store_->id_at(index.row());
  return ids;
}

QList<int> MainWindow::selected_or_all_runs() const {
  QList<int> ids = selected_runs();
  if (ids.isEmpty()) {
    for (const RunEntry& run : store_->runs()) ids << run.id;
  }
  return ids;
}

void MainWindow::update_details() {
  const QList<int> ids = selected_runs();
  const RunEntry* run = ids.size() == 1 ? store_->find(ids.front()) : nullptr;
  if (run) {
    details_->setHtml(run_details_html(*run));
  } else {
    details_->setHtml(ids.isEmpty() ? tr("<p style='color:#5f6b7a'>Select a run to see its settings and results; "
                                         "the chart draws it bold.</p>")
                                    : tr("<p style='color:#5f6b7a'>%n runs selected.</p>", nullptr, int(ids.size())));
  }
}

void MainWindow::show_run_menu(const QPoint& pos) {
  QMenu menu(this);
  menu.addAction(use_settings_action_);
  menu.addAction(tr("Show only these"), this, [this] {
    const QList<int> keep = selected_runs();
    for (const RunEntry& run : store_->runs()) store_->set_visible(run.id, keep.contains(run.id));
  });
  menu.addAction(tr("Show all"), this, [this] {
    for (const RunEntry& run : store_->runs()) store_->set_visible(run.id, true);
  });
  menu.addSeparator();
  menu.addAction(export_json_action_);
  menu.addAction(export_csv_action_);
  menu.addSeparator();
  menu.addAction(remove_action_);
  menu.exec(run_table_->viewport()->mapToGlobal(pos));
}

int MainWindow::import_runs(const QStringList& files) {
  std::vector<RunRecord> records;
  QStringList problems;
  for (const QString& file : files) {
    try {
      records.push_back(read_json(file.toStdString()));
    } catch (const std::exception& error) {
      problems << QString::fromStdString(error.what());
    }
  }
  if (!problems.isEmpty()) {
    report(tr("Import failed"), tr("Nothing was imported.\n\n%1").arg(problems.join(QStringLiteral("\n\n"))));
    return 0;
  }
  QStringList unsaved;
  for (RunRecord& record : records) {
    record.config.name = store_->unique_name(qstr(record.config.name)).toStdString();
    stop_if_unfinished(record, "interrupted: exported before the run finished");
    QString file = archive_->new_path(qstr(record.config.name));
    try {
      write_json(record, file.toStdString());  // a copy, so it comes back next time
    } catch (const std::exception& error) {
      unsaved << QString::fromStdString(error.what());
      file.clear();
    }
    store_->add(record, file);
  }
  statusBar()->showMessage(unsaved.isEmpty() ? tr("Imported %n run(s)", nullptr, int(records.size()))
                                             : tr("Imported %n run(s), but could not keep a copy: %1", nullptr, int(records.size()))
                                                   .arg(unsaved.join(QStringLiteral("; "))),
                           kStatusMessageMs);
  update_actions();
  return int(records.size());
}

void MainWindow::remove_runs(const QList<int>& run_ids) {
  QList<int> removable;
  for (int id : run_ids) {
    if (id != queue_->running_id() && store_->find(id)) removable << id;
  }
  if (removable.isEmpty()) return;
  const QString question = tr("Remove %n run(s) from NormLab? Their saved data in the runs folder is deleted too; "
                              "exported files are not touched.", nullptr, int(removable.size()));
  const bool yes = options_.confirm ? options_.confirm(tr("Remove runs"), question)
                                    : QMessageBox::question(this, tr("Remove runs"), question) == QMessageBox::Yes;
  if (!yes) return;
  for (int id : removable) {
    queue_->dequeue(id);
    if (const RunEntry* run = store_->find(id); run && !run->file.isEmpty()) QFile::remove(run->file);
    store_->remove(id);
  }
  update_actions();
}

bool MainWindow::export_chart(const QString& path, QSize pixels) {
  try {
    if (QFileInfo(path).suffix().compare(QStringLiteral("svg"), Qt::CaseInsensitive) == 0) {
      export_svg(*chart_, path, pixels);
    } else {
      export_png(*chart_, path, pixels, export_scale(chart_view_->size(), pixels));
    }
  } catch (const std::exception& error) {
    report(tr("Export failed"), QString::fromStdString(error.what()));
    return false;
  }
  statusBar()->showMessage(tr("Chart saved to %1").arg(path), kStatusMessageMs);
  return true;
}

bool MainWindow::export_runs_json(const QList<int>& run_ids, const QString& target) {
  try {
    if (run_ids.size() == 1 && !QFileInfo(target).isDir()) {
      write_json(store_->find(run_ids.front())->record, target.toStdString());
    } else {
      std::set<std::string> used;
      for (int id : run_ids) {
        const RunEntry* run = store_->find(id);
        const std::string base = file_stem(run->record.config.name);
        const std::string stem = first_free_name(
            [&](int n) { return n == 1 ? base : base + "-" + std::to_string(n); },
            [&](const std::string& name) { return used.count(name) > 0; });
        used.insert(stem);
        write_json(run->record, QDir(target).filePath(qstr(stem) + QStringLiteral(".json")).toStdString());
      }
    }
  } catch (const std::exception& error) {
    report(tr("Export failed"), QString::fromStdString(error.what()));
    return false;
  }
  statusBar()->showMessage(tr("Exported %n run(s) to %1", nullptr, int(run_ids.size())).arg(target), kStatusMessageMs);
  return true;
}

bool MainWindow::export_runs_csv(const QList<int>& run_ids, const QString& path) {
  std::vector<RunRecord> records;
  for (int id : run_ids) {
    if (const RunEntry* run = store_->find(id)) records.push_back(run->record);
  }
  try {
    write_csv(records, path.toStdString());
  } catch (const std::exception& error) {
    report(tr("Export failed"), QString::fromStdString(error.what()));
    return false;
  }
  statusBar()->showMessage(tr("Exported %n run(s) to %1", nullptr, int(records.size())).arg(path), kStatusMessageMs);
  return true;
}

namespace {
QString last_folder(const char* key) {
  return QSettings().value(QStringLiteral("paths/") + key, QDir::homePath()).toString();
}
void remember_folder(const char* key, const QString& path) {
  QSettings().setValue(QStringLiteral("paths/") + key, QFileInfo(path).isDir() ? path : QFileInfo(path).absolutePath());
}
}  // namespace

void MainWindow::import_dialog() {
  const QStringList files = QFileDialog::getOpenFileNames(this, tr("Import runs"), last_folder("import"),
                                                          tr("NormLab runs (*.json);;All files (*)"));
  if (files.isEmpty()) return;
  remember_folder("import", files.front());
  import_runs(files);
}

void MainWindow::export_json_dialog() {
  const QList<int> ids = selected_or_all_runs();
  if (ids.isEmpty()) return;
  QString target;
  if (ids.size() == 1) {
    const QString name = qstr(file_stem(store_->find(ids.front())->record.config.name)) + QStringLiteral(".json");
    target = QFileDialog::getSaveFileName(this, tr("Export run as JSON"), QDir(last_folder("export")).filePath(name),
                                          tr("NormLab run (*.json)"));
  } else {
    target = QFileDialog::getExistingDirectory(this, tr("Export %n runs as JSON: choose a folder", nullptr, int(ids.size())),
                                               last_folder("export"));
  }
  if (target.isEmpty()) return;
  remember_folder("export", target);
  export_runs_json(ids, target);
}

void MainWindow::export_csv_dialog() {
  const QList<int> ids = selected_or_all_runs();
  if (ids.isEmpty()) return;
  const QString path = QFileDialog::getSaveFileName(this, tr("Export %n run(s) as CSV", nullptr, int(ids.size())),
                                                    QDir(last_folder("export")).filePath(QStringLiteral("normlab-runs.csv")),
                                                    tr("CSV table (*.csv)"));
  if (path.isEmpty()) return;
  remember_folder("export", path);
  export_runs_csv(ids, path);
}

void MainWindow::export_image_dialog() {
  views_->setCurrentIndex(0);
  const ImageRequest request = ask_image(this, chart_view_->size(), last_folder("export"));
  if (request.path.isEmpty()) return;
  remember_folder("export", request.path);
  export_chart(request.path, request.pixels);
}

}  // namespace normlab::ui
