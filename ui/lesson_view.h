#pragma once
// The lesson's panel: the offer, each question with what has been seen so far and the
// three predictions, the run training and then the answer with links to the views that
// prove it, and the summary with the course's conclusion and one further experiment. It
// shows lab::Lesson's state and turns clicks into calls on it; every sentence comes from
// core/runs/lesson_text.h and lesson.h.
#include <QList>
#include <QWidget>
#include <functional>

#include "core/runs/lesson.h"

class QComboBox;
class QLabel;
class QPushButton;
class QSpinBox;
class QTimer;

namespace normlab::lab {
class Lab;
class Lesson;
}  // namespace normlab::lab

namespace normlab::ui {

class LessonView : public QWidget {
  Q_OBJECT
 public:
  struct Hooks {
    std::function<TrainConfig()> base;  // the next run's settings: the course's device, data and seed
    // Shows the view a link names ("curves", "text", "statistic:NAME") with these runs picked.
    std::function<void(const QString& link, const QList<int>& runs)> show_evidence;
  };
  LessonView(lab::Lab& lab, lab::Lesson& lesson, Hooks hooks, QWidget* parent = nullptr);

  // Shows the lesson's state now (also soon after every change on its own).
  void refresh();

  // For tests: the buttons as the learner sees them, and what the panel says.
  QPushButton* choice(LessonOutcome outcome) const { return choices_[int(outcome)]; }
  QPushButton* begin_button() const { return begin_; }
  QPushButton* not_now_button() const { return not_now_; }
  QPushButton* next_button() const { return next_; }
  QPushButton* leave_button() const { return leave_; }
  QPushButton* train_on_button() const { return train_on_; }
  QPushButton* ask_button() const { return ask_; }
  QPushButton* start_over_button() const { return start_over_; }
  QSpinBox* further_layers() const { return layers_; }
  QSpinBox* further_warmup() const { return warmup_; }
  QString title() const;
  QString text() const;  // what it says, as plain text
  // Follows a link of the body as a click does.
  void follow(const QString& link);

 signals:
  void left();  // Leave the lesson, or Not now: the window hides the panel

 private:
  QString question_html(int question) const;
  QString status_html(int question) const;
  QString seen_html(int current) const;
  QString summary_html() const;
  TrainConfig further_config() const;

  lab::Lab& lab_;
  lab::Lesson& lesson_;
  Hooks hooks_;
  QLabel* title_;
  QLabel* body_;
  QLabel* seen_;  // what has been seen so far, below the buttons
  QWidget* choices_box_;
  QPushButton* choices_[3];
  QWidget* further_box_;
  QComboBox* placement_;
  QSpinBox* layers_;
  QSpinBox* warmup_;
  QComboBox* lr_;
  QPushButton* ask_;
  QPushButton* begin_;
  QPushButton* not_now_;
  QPushButton* train_on_;
  QPushButton* next_;
  QPushButton* start_over_;
  QPushButton* leave_;
  QTimer* refresh_timer_;  // a run's steps come many a second: the panel follows a few times a second
};

}  // namespace normlab::ui
