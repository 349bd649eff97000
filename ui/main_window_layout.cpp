// The window's parts: actions, menus, the chart tab, the docks and the status bar.
#include <QAction>
#include <QActionGroup>
#include <QCheckBox>
#include <QComboBox>
#include <QDesktopServices>
#include <QDockWidget>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QMenu>
#include <QMenuBar>
#include <QMessageBox>
#include <QProgressBar>
#include <QScrollArea>
#include <QScrollBar>
#include <QSlider>
#include <QSplitter>
#include <QStatusBar>
#include <QStyle>
#include <QTabBar>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QToolButton>
#include <QUrl>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

#include "core/gpu_install/gpu_status.h"
#include "core/runs/verdict.h"
#include "lab/lab.h"
#include "lab/qstring.h"

#include "chart_legend.h"
#include "elided_label.h"
#include "format.h"
#include "loss_chart.h"
#include "loss_chart_view.h"
#include "main_window.h"
#include "run_table.h"
#include "settings_panel.h"

namespace normlab::ui {

namespace {

// A line of phrases, as many of them as its width holds, each whole (the tooltip has them all).
class PhrasesThatFit : public QLabel {
 public:
  explicit PhrasesThatFit(QStringList phrases) : phrases_(std::move(phrases)) { setText(phrases_.join(kSeparator)); }

 protected:
  void resizeEvent(QResizeEvent* event) override {
    QLabel::resizeEvent(event);
    QStringList shown = phrases_;
    while (!shown.isEmpty() && fontMetrics().horizontalAdvance(shown.join(kSeparator)) > width()) shown.removeLast();
    setText(shown.join(kSeparator));
  }

 private:
  static constexpr QStringView kSeparator = u" \u00b7 ";
  QStringList phrases_;
};

// Room for the widest status, "interrupted", and for a running run's, which is bold.
// The width a column needs to show the widest of `texts` whole, in bold where `bold`.
int column_width_for(const QTableView& table, const QStringList& texts, bool bold) {
  QFont font = table.font();
  font.setBold(bold);
  const QFontMetrics metrics(font);
  int widest = 0;
  for (const QString& text : texts) widest = std::max(widest, metrics.horizontalAdvance(text));
  // The margins an item view leaves either side of a cell's text.
  return widest + 2 * (table.style()->pixelMetric(QStyle::PM_FocusFrameHMargin, nullptr, &table) + 1);
}

// Every status, bold as a running run's is.
int status_column_width(const QTableView& table) {
  QStringList texts;
  for (int status = int(RunStatus::Queued); status <= int(RunStatus::Interrupted); ++status) {
    texts << lab::qstr(to_string(RunStatus(status)));
  }
  return column_width_for(table, texts, true);
}

// Every verdict's word, and the column's title.
int verdict_column_width(const QTableView& table) {
  QStringList texts{RunTableModel::tr("Verdict")};
  for (const VerdictInfo& verdict : kVerdicts) texts << QString::fromUtf8(verdict.word);
  return column_width_for(table, texts, false);
}

}  // namespace

void MainWindow::build_actions() {
  QStyle* s = style();
  start_action_ = new QAction(s->standardIcon(QStyle::SP_MediaPlay), tr("&Start"), this);
  start_action_->setShortcut(Qt::CTRL | Qt::Key_Return);
  start_action_->setToolTip(tr("Queue a run with these settings (Ctrl+Enter)"));
  connect(start_action_, &QAction::triggered, this, &MainWindow::start_run);

  stop_action_ = new QAction(s->standardIcon(QStyle::SP_MediaStop), tr("S&top"), this);
  stop_action_->setShortcut(Qt::CTRL | Qt::Key_Period);
  stop_action_->setToolTip(
      tr("Stop the selected running runs, or every running run, after the current step; "
         "their points are kept and the queue goes on"));
  connect(stop_action_, &QAction::triggered, this, &MainWindow::stop_run);

  stop_all_action_ = new QAction(tr("Stop and c&lear the queue"), this);
  stop_all_action_->setObjectName(QStringLiteral("stopAllAction"));
  stop_all_action_->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_Period);
  connect(stop_all_action_, &QAction::triggered, this, &MainWindow::stop_all);

  continue_action_ = new QAction(tr("Continue interrupted and &queued runs"), this);
  continue_action_->setObjectName(QStringLiteral("continueAction"));
  continue_action_->setToolTip(
      tr("Go on with what NormLab left when it last ended, in the order the runs were queued: interrupted "
         "runs resume from their checkpoints, queued runs start. Stopped runs stay stopped."));
  connect(continue_action_, &QAction::triggered, this, &MainWindow::continue_runs);

  course_action_ = new QAction(tr("&Course experiment (5 runs)"), this);
  course_action_->setShortcut(Qt::CTRL | Qt::SHIFT | Qt::Key_Return);
  course_action_->setToolTip(
      tr("Queue the plate's five runs: pre- and post-norm at 1e-3 and 6e-3 with a 30-step warmup, "
         "and post-norm at 1e-3 with a long warmup; the course's model on the chosen corpus"));
  connect(course_action_, &QAction::triggered, this, &MainWindow::start_course_experiment);

  import_action_ = new QAction(s->standardIcon(QStyle::SP_DialogOpenButton), tr("&Import runs\u2026"), this);
  import_action_->setShortcut(QKeySequence::Open);
  connect(import_action_, &QAction::triggered, this, &MainWindow::import_dialog);
  follow_action_ = new QAction(tr("&Follow folder\u2026"), this);
  follow_action_->setToolTip(
      tr("Show every run in a folder that normlab-cli or a cluster writes, updated as its "
         "files change; nothing is written there"));
  connect(follow_action_, &QAction::triggered, this, &MainWindow::follow_dialog);
  export_json_action_ =
      new QAction(s->standardIcon(QStyle::SP_DialogSaveButton), tr("Export runs as &JSON\u2026"), this);
  export_json_action_->setShortcut(QKeySequence::Save);
  connect(export_json_action_, &QAction::triggered, this, &MainWindow::export_json_dialog);
  export_csv_action_ = new QAction(tr("Export runs as C&SV\u2026"), this);
  connect(export_csv_action_, &QAction::triggered, this, &MainWindow::export_csv_dialog);
  export_markdown_action_ = new QAction(tr("Export runs as Mar&kdown\u2026"), this);
  export_markdown_action_->setToolTip(tr("What each run wrote at each evaluation, with its context use"));
  connect(export_markdown_action_, &QAction::triggered, this, &MainWindow::export_markdown_dialog);
  export_image_action_ = new QAction(tr("Export chart i&mage\u2026"), this);
  export_image_action_->setShortcut(Qt::CTRL | Qt::Key_E);
  connect(export_image_action_, &QAction::triggered, this, &MainWindow::export_image_dialog);

  remove_action_ = new QAction(s->standardIcon(QStyle::SP_TrashIcon), tr("Re&move runs"), this);
  remove_action_->setShortcut(QKeySequence::Delete);
  remove_action_->setShortcutContext(Qt::WidgetWithChildrenShortcut);
  connect(remove_action_, &QAction::triggered, this, [this] { remove_runs(selected_runs()); });
  resume_action_ = new QAction(tr("&Resume from checkpoint"), this);
  resume_action_->setToolTip(
      tr("Go on with the selected stopped or interrupted runs from their checkpoints, with the "
         "numbers they would have had uninterrupted"));
  connect(resume_action_, &QAction::triggered, this, [this] { resume_runs(selected_runs()); });
  drop_checkpoints_action_ = new QAction(tr("Remove c&heckpoints"), this);
  drop_checkpoints_action_->setToolTip(
      tr("Delete the selected runs' checkpoints to free the disk; their points stay, "
         "and they can no longer be resumed"));
  connect(drop_checkpoints_action_, &QAction::triggered, this, [this] {
    lab_->drop_checkpoints(selected_runs());
    update_details();
    update_actions();
  });
  use_settings_action_ = new QAction(tr("&Use these settings"), this);
  use_settings_action_->setToolTip(tr("Copy the selected run's settings to the next run"));
  connect(use_settings_action_, &QAction::triggered, this, [this] {
    if (const lab::RunEntry* run = store_->find(selected_runs().value(0))) settings_->set_config(run->record.config);
  });

  fit_action_ = new QAction(s->standardIcon(QStyle::SP_BrowserReload), tr("&Fit to data"), this);
  fit_action_->setShortcut(Qt::CTRL | Qt::Key_0);
  fit_action_->setToolTip(tr("Undo zoom and pan, and follow the data again (Ctrl+0, or double-click the chart)"));
  connect(fit_action_, &QAction::triggered, this, [this] { chart_->reset_view(); });
  outliers_action_ = new QAction(tr("Ignore &outliers in scaling"), this);
  outliers_action_->setCheckable(true);
  outliers_action_->setChecked(true);
  outliers_action_->setToolTip(tr("Fit the loss axis to where the runs started and went, not to a run that blew up"));
  connect(outliers_action_, &QAction::toggled, this, [this](bool on) { chart_->set_ignore_outliers(on); });
  group_seeds_action_ = new QAction(tr("S&eeds as mean and range"), this);
  group_seeds_action_->setCheckable(true);
  group_seeds_action_->setChecked(true);
  group_seeds_action_->setToolTip(
      tr("Draw runs that differ only in their seed as one: the mean of their curves and "
         "the range of their held-out losses"));
  connect(group_seeds_action_, &QAction::toggled, this, [this](bool on) {
    chart_->set_group_seeds(on);
    update_actions();
  });
  seeds_apart_action_ = new QAction(tr("Selected group's seeds one &by one"), this);
  seeds_apart_action_->setObjectName(QStringLiteral("seedsApartAction"));
  seeds_apart_action_->setCheckable(true);
  seeds_apart_action_->setToolTip(
      tr("Draw each seed of the selected runs' seed groups as a curve of its own instead of their mean and range"));
  connect(seeds_apart_action_, &QAction::triggered, this, [this](bool on) {
    for (const int id : selected_runs()) chart_->set_seeds_apart(id, on);
    chart_->refresh();
    update_actions();
  });
  log_action_ = new QAction(tr("Lo&g scale"), this);
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
  file->addAction(follow_action_);
  file->addSeparator();
  file->addAction(export_json_action_);
  file->addAction(export_csv_action_);
  file->addAction(export_markdown_action_);
  file->addAction(export_image_action_);
  file->addSeparator();
  file->addAction(tr("&Open the runs folder"), this,
                  [this] { QDesktopServices::openUrl(QUrl::fromLocalFile(lab_->archive().folder())); });
  file->addSeparator();
  QAction* quit = file->addAction(tr("&Quit"), this, &QWidget::close);
  quit->setShortcut(QKeySequence::Quit);

  QMenu* run = menuBar()->addMenu(tr("&Run"));
  run->addAction(start_action_);
  run->addAction(stop_action_);
  run->addAction(stop_all_action_);
  run->addAction(continue_action_);
  side_by_side_menu_ = run->addMenu(tr("Runs side &by side"));
  side_by_side_menu_->setObjectName(QStringLiteral("sideBySideMenu"));
  side_by_side_menu_->setToolTipsVisible(true);
  auto* side_by_side = new QActionGroup(side_by_side_menu_);
  for (const int runs : {0, 1, 2, 3, 4, 6, 8}) {
    QAction* choice = side_by_side_menu_->addAction(runs == 1 ? tr("1: one after another") : QString::number(runs));
    choice->setCheckable(true);
    choice->setData(runs);
    choice->setToolTip(
        tr("How many runs train at once; more wait in the queue. On the CPU each takes its share of "
           "the cores (cores / runs threads) for its whole run"));
    side_by_side->addAction(choice);
    connect(choice, &QAction::triggered, this, [this, runs] { set_side_by_side(runs); });
  }
  run->addSeparator();
  run->addAction(course_action_);
  run->addSeparator();
  run->addAction(resume_action_);
  run->addAction(drop_checkpoints_action_);
  run->addSeparator();
  run->addAction(use_settings_action_);
  run->addAction(remove_action_);

  QMenu* view = menuBar()->addMenu(tr("&View"));
  view->addAction(log_action_);
  view->addAction(fit_action_);
  view->addAction(outliers_action_);
  view->addAction(group_seeds_action_);
  view->addAction(seeds_apart_action_);
  view->addSeparator();
  // Every tab, by its own title, and the next and the one before from anywhere in the
  // window (a tab bar's own Ctrl+Tab works only once it has the focus).
  for (int i = 0; i < views_->count(); ++i) {
    view->addAction(views_->tabText(i), this, [this, i] { views_->setCurrentIndex(i); });
  }
  view->addSeparator();
  QAction* next = view->addAction(tr("&Next view"), this,
                                  [this] { views_->setCurrentIndex((views_->currentIndex() + 1) % views_->count()); });
  next->setShortcut(QKeySequence::NextChild);
  QAction* previous = view->addAction(tr("&Previous view"), this, [this] {
    views_->setCurrentIndex((views_->currentIndex() + views_->count() - 1) % views_->count());
  });
  previous->setShortcut(QKeySequence::PreviousChild);
  view->setObjectName(QStringLiteral("viewMenu"));

  QMenu* help = menuBar()->addMenu(tr("&Help"));
  // F10 opens the menu bar, as on most desktops; Qt leaves it to the platform, and X11 has none.
  auto* open_menus = new QAction(this);
  open_menus->setShortcut(Qt::Key_F10);
  connect(open_menus, &QAction::triggered, this, [this, file] { menuBar()->setActiveAction(file->menuAction()); });
  addAction(open_menus);
  help->addAction(tr("About this &experiment"), this, [this] { show_view(about_); });
  install_gpu_action_ = help->addAction(tr("Install &GPU support\u2026"), this, &MainWindow::install_gpu_support);
  install_gpu_action_->setObjectName(QStringLiteral("installGpuAction"));
  install_gpu_action_->setToolTip(tr("Fetch LibTorch's CUDA libraries (%1) so that NormLab trains on an NVIDIA GPU")
                                      .arg(lab::qstr(cuda_download_size_text())));
  help->addAction(tr("&About NormLab"), this, [this] {
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
  smoothing_->setObjectName(QStringLiteral("smoothingSlider"));
  smoothing_value_->setObjectName(QStringLiteral("smoothingValue"));
  smoothing_->setMinimumWidth(70);  // shorter in a small window, where a fixed 160 ran over its value
  smoothing_->setMaximumWidth(160);
  smoothing_->setToolTip(tr("Exponential moving average of the training loss; the raw curve stays faintly behind"));
  smoothing_value_->setMinimumWidth(34);
  connect(smoothing_, &QSlider::valueChanged, this, [this](int value) {
    chart_->set_smoothing(value / 100.0);
    smoothing_value_->setText(value == 0 ? tr("off") : QString::number(value / 100.0, 'f', 2));
  });
  bar->addWidget(smoothing_label);
  bar->addWidget(smoothing_, 1);
  bar->addWidget(smoothing_value_);
  bar->addSpacing(8);
  for (QAction* action : {fit_action_, export_image_action_}) {
    auto* button = new QToolButton;
    button->setDefaultAction(action);
    button->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    bar->addWidget(button);
  }
  auto* hint =
      new PhrasesThatFit({tr("drag: zoom"), tr("double-click: fit"), tr("right-drag: pan")});  // dropped from the end
  hint->setObjectName(QStringLiteral("chartHint"));
  hint->setStyleSheet(QStringLiteral("color: #8a94a1;"));
  hint->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
  hint->setSizePolicy(QSizePolicy::Ignored,
                      QSizePolicy::Preferred);  // a narrow window shortens the hint, not the chart
  hint->setToolTip(
      tr("Drag to zoom into a box, right- or middle-drag to pan, wheel to zoom around the pointer, double-click to fit "
         "the data again"));
  bar->addWidget(hint, 1);  // takes the room left, right-aligned
  layout->addLayout(bar);
  auto* plot = new QHBoxLayout;
  plot->setSpacing(0);
  plot->addWidget(chart_view_, 1);
  chart_->legend()->hide();  // the list beside it scrolls; pictures keep the chart's own
  // Asked for on the walk: runs of other batch sizes compared by the tokens they saw, and
  // runs on other settings by the time they took. Fit, the readout and pictures follow it.
  // Above the legend: the bar above the chart has no room left in a 1024-pixel window.
  x_axis_choice_ = new QComboBox;
  x_axis_choice_->setObjectName(QStringLiteral("xAxisChoice"));
  x_axis_choice_->addItem(tr("x: steps"), int(XAxis::Steps));
  x_axis_choice_->addItem(tr("x: tokens"), int(XAxis::Tokens));
  x_axis_choice_->addItem(tr("x: time"), int(XAxis::WallTime));
  x_axis_choice_->setToolTip(
      tr("What the horizontal axis measures: optimiser steps, tokens trained on, or wall-clock time since the run "
         "started"));
  connect(x_axis_choice_, &QComboBox::currentIndexChanged, this,
          [this] { chart_->set_x_axis(XAxis(x_axis_choice_->currentData().toInt())); });
  auto* side = new QVBoxLayout;
  side->setSpacing(4);
  side->addWidget(x_axis_choice_);
  side->addWidget(legend_, 1);
  plot->addLayout(side);
  layout->addLayout(plot, 1);
  return tab;
}

// Each view in a scroll area: a view taller or wider than a small screen has room for
// scrolls inside the window rather than making the window outgrow the screen.
void MainWindow::add_view(QWidget* view, const QString& title) {
  auto* scroll = new QScrollArea;
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setWidgetResizable(true);
  scroll->setWidget(view);
  views_->addTab(scroll, title);
}

QWidget* MainWindow::view_at(int tab) const {
  auto* scroll = qobject_cast<QScrollArea*>(views_->widget(tab));
  return scroll ? scroll->widget() : nullptr;
}

QWidget* MainWindow::current_view() const { return view_at(views_->currentIndex()); }

void MainWindow::show_view(QWidget* view) {
  for (int tab = 0; tab < views_->count(); ++tab) {
    if (view_at(tab) == view) views_->setCurrentIndex(tab);
  }
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
  run_table_->setObjectName(QStringLiteral("runTable"));
  run_table_->setModel(run_model_);
  run_table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  run_table_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  run_table_->setAlternatingRowColors(true);
  run_table_->setShowGrid(false);
  run_table_->setWordWrap(false);
  run_table_->setContextMenuPolicy(Qt::CustomContextMenu);
  run_table_->verticalHeader()->hide();
  // Rows as tall as their text and a little air: twelve of them under the views at
  // 1280 x 800 (issue 49 counted seven at 24 px).
  run_table_->verticalHeader()->setDefaultSectionSize(std::max(20, run_table_->fontMetrics().height() + 5));
  run_table_->horizontalHeader()->setHighlightSections(false);
  QHeaderView* header = run_table_->horizontalHeader();
  header->setSectionResizeMode(QHeaderView::Interactive);
  header->setSectionResizeMode(RunTableModel::SetupColumn, QHeaderView::Stretch);
  header->setStretchLastSection(false);
  header->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  // Each column as wide as what it shows, so the Verdict column fits beside the rest at 1280
  // pixels: the name of a course run whole, with its tick and colour.
  const int name_width = column_width_for(*run_table_, {QStringLiteral("post-norm lr 1e-3 warmup 1000")}, false);
  run_table_->setColumnWidth(RunTableModel::NameColumn, name_width + 48);
  run_table_->setColumnWidth(RunTableModel::StatusColumn, status_column_width(*run_table_));
  run_table_->setColumnWidth(RunTableModel::VerdictColumn, verdict_column_width(*run_table_));
  run_table_->setColumnWidth(RunTableModel::ProgressColumn,
                             column_width_for(*run_table_, {QStringLiteral("3000 / 3000")}, false));
  run_table_->setColumnWidth(
      RunTableModel::HeldOutColumn,
      column_width_for(*run_table_, {RunTableModel::tr("Held-out"), QStringLiteral("10.000")}, false));
  run_table_->setColumnWidth(
      RunTableModel::GapColumn,
      column_width_for(*run_table_, {RunTableModel::tr("Gap"), QStringLiteral("-0.000")}, false));
  run_table_->addAction(remove_action_);
  connect(run_table_, &QWidget::customContextMenuRequested, this, &MainWindow::show_run_menu);
  connect(run_table_->selectionModel(), &QItemSelectionModel::selectionChanged, this, [this] {
    const QList<int> ids = selected_runs();
    chart_->set_highlighted(QSet<int>(ids.begin(), ids.end()));
    update_details();
    update_actions();
    if (!ids.isEmpty()) show_picked_runs();
  });

  details_->setObjectName(QStringLiteral("runDetails"));
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
  if (QMenu* view = menuBar()->findChild<QMenu*>(QStringLiteral("viewMenu"))) {
    view->addSeparator();
    for (QDockWidget* d : findChildren<QDockWidget*>()) {
      QAction* toggle = d->toggleViewAction();
      toggle->setText(d->objectName() == u"runsDock" ? tr("&Runs") : tr("Ne&xt run"));  // the menu's letters
      view->addAction(toggle);
    }
  }
}

// Room for twelve rows under their header (fewer on a small screen), for a window whose layout no session saved: the
// views above keep what they need at 1280 x 800 (issue 49 counted seven rows). After the
// window has its size: given before, the shrink to the screen took rows away.
void MainWindow::size_run_dock() {
  // Fewer on a smaller screen: the views keep kViewsHeight, which holds each of them whole.
  constexpr int kTableRows = 12, kViewsHeight = 400;
  auto* dock = findChild<QDockWidget*>(QStringLiteral("runsDock"));
  const int row = run_table_->verticalHeader()->defaultSectionSize();
  const int chrome = menuBar()->sizeHint().height() + statusBar()->sizeHint().height() +
                     views_->tabBar()->sizeHint().height() + 2 * (dock->fontMetrics().height() + 8);
  const int rows = std::clamp((height() - chrome - kViewsHeight) / row, 4, kTableRows);
  const int table_height = run_table_->horizontalHeader()->sizeHint().height() + rows * row +
                           run_table_->horizontalScrollBar()->sizeHint().height() +  // shown in a narrow window
                           2 * run_table_->frameWidth();
  resizeDocks({dock}, {table_height + dock->fontMetrics().height() + 8}, Qt::Vertical);
}

void MainWindow::build_status_bar() {
  stage_label_->setObjectName(QStringLiteral("stageLabel"));
  // Takes the room the permanent widgets leave: "Training “…”, “…” side by side" with
  // long names ran under the tokens/s beside it.
  stage_label_->setMinimumWidth(200);
  statusBar()->addWidget(stage_label_, 1);
  // A message replaces the stage text rather than being drawn over it, even when it was
  // shown before the window was.
  connect(statusBar(), &QStatusBar::messageChanged, stage_label_,
          [this](const QString& message) { stage_label_->setVisible(message.isEmpty()); });
  rate_label_->setToolTip(tr("Training tokens per second over the last few seconds"));
  lr_label_->setToolTip(tr("Learning rate of the latest step"));
  run_progress_->setToolTip(tr("The running runs: steps done, all together, and the time until the last ends"));
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

}  // namespace normlab::ui
