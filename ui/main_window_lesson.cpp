// Run ▸ Lesson: the course as a lesson, in a panel beside the next run's settings.
#include <QAction>
#include <QDockWidget>
#include <QMenu>
#include <QMenuBar>
#include <QScrollArea>
#include <QStatusBar>

#include "core/runs/lesson_text.h"
#include "lab/lab.h"
#include "lab/lesson.h"

#include "lesson_view.h"
#include "main_window.h"
#include "settings_panel.h"

namespace normlab::ui {

void MainWindow::build_lesson() {
  lesson_ = new lab::Lesson(*lab_, this);
  LessonView::Hooks hooks;
  hooks.base = [this] { return settings_->config(); };
  hooks.show_evidence = [this](const QString& link, const QList<int>& ids) {
    if (!ids.isEmpty()) select_runs(ids);  // the run picked in the table, drawn bold
    show_evidence(link, ids);
  };
  lesson_view_ = new LessonView(*lab_, *lesson_, std::move(hooks));
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("lessonScroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);  // the text wraps to the panel's width
  scroll->setWidget(lesson_view_);
  lesson_dock_ = add_dock(tr("Lesson"), QStringLiteral("lessonDock"), scroll, Qt::LeftDockWidgetArea);
  // Left with its own button: closing the panel would leave it without saying how to come back.
  lesson_dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  if (auto* settings_dock = findChild<QDockWidget*>(QStringLiteral("settingsDock"))) {
    tabifyDockWidget(settings_dock, lesson_dock_);
    settings_dock->raise();
  }
  lesson_dock_->hide();

  lesson_action_ = new QAction(tr("Lesson: &predict, then watch"), this);
  lesson_action_->setObjectName(QStringLiteral("lessonAction"));
  lesson_action_->setToolTip(
      tr("The course's five runs as a lesson: predict each run's fate, then watch it train and see why"));
  connect(lesson_action_, &QAction::triggered, this, &MainWindow::show_lesson);
  // In the Run menu, after the course experiment it turns into a lesson.
  for (QMenu* menu : menuBar()->findChildren<QMenu*>()) {
    const QList<QAction*> actions = menu->actions();
    const int at = int(actions.indexOf(course_action_));
    if (at < 0) continue;
    menu->insertAction(at + 1 < actions.size() ? actions[at + 1] : nullptr, lesson_action_);
    break;
  }

  connect(lesson_view_, &LessonView::left, this, [this] {
    lesson_dock_->hide();
    if (lesson_->begun()) statusBar()->showMessage(QString::fromUtf8(lesson_text::kLeftNote), kStatusMessageMs);
  });
}

void MainWindow::show_lesson() {
  if (lesson_->begun() && lesson_->state().left) lesson_->open();
  lesson_dock_->show();
  lesson_dock_->raise();
  lesson_view_->refresh();
}

void MainWindow::restore_lesson() {
  const QString problem = lesson_->load();
  if (!problem.isEmpty()) statusBar()->showMessage(problem, kStatusMessageMs * 4);
  const bool going_on = lesson_->begun() && !lesson_->state().left;
  const bool first_launch = options_.offer_lesson && !settings_restored_ && store_->runs().empty();
  if (going_on || (first_launch && !lesson_->begun())) show_lesson();
  else lesson_dock_->hide();  // as the lesson says, whatever the saved layout had
}

}  // namespace normlab::ui
