#pragma once
// The course as a lesson, driven with the lab's runs (core/runs/lesson.h holds its rules
// and lesson_text.h its words). A prediction starts its question's run by the one rule for
// a point (Lab::answer_point): a run already trained with the same settings answers at
// once, one queued or cut short goes on, else it trains, beside the runs before it. The
// answer comes when the run's verdict settles, while the learner may be on another
// question. The state is kept beside the runs (lesson.state in the runs folder, written
// whole or not at all), so quitting, a crash or a restart picks the lesson up where it was.
// Its runs are ordinary runs: removing one only unanswers its question.
#include <QObject>
#include <QSet>
#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "core/runs/lesson.h"

namespace normlab::lab {

class Lab;

class Lesson : public QObject {
  Q_OBJECT
 public:
  explicit Lesson(Lab& lab, QObject* parent = nullptr);

  // The lesson's file in a runs folder: not *.json, which the folder's runs are read from.
  static QString file_in(const QString& runs_folder);

  // Reads the lesson kept in the runs folder, if any (after Lab::restore, so its runs are
  // known); one the learner had not left goes on at once (open). Empty, or why it could
  // not be read (the file is then left as it is, and a new lesson replaces it).
  QString load();

  const LessonState& state() const { return state_; }
  bool begun() const { return !state_.questions.empty(); }
  bool waiting_for_device() const { return waiting_base_.has_value(); }
  // Whether the learner can change it: not when another NormLab owns the runs folder.
  bool writable() const;

  // A new lesson over the course's runs on `base`'s device, data and seed, at the device's
  // scale (once the device is known; Lab::probe_device). Replaces any lesson before.
  void begin(const TrainConfig& base);
  // The same over any runs (the tests' tiny course), at `scale`.
  void begin_with(const std::vector<TrainConfig>& course, const std::string& scale);
  // Back into a lesson left or read from the file: the runs of its predicted, unanswered
  // questions go on (answer_point), and answers that settled meanwhile come in.
  void open();
  // The learner left: the lesson waits as it is; its runs train on as ordinary runs.
  void leave();

  // The current question's prediction, once: its run starts (or answers at once).
  void predict(LessonOutcome prediction);
  // On to the next question, or the summary after the last; once the current one is predicted.
  void go_on();
  bool can_go_on() const;
  // At the summary: one more question, on the learner's settings, asked the same way.
  void ask_further(TrainConfig config);
  // A question whose run ended before its verdict settled (stopped, failed, removed): its run again.
  void train_on(int question);
  // The course's questions again, no prediction made (runs stay: they answer at once).
  void start_over();

  // The run that answers the question now (core's find_run), 0 if none.
  int run_of(int question) const;
  // The question's answer came from a run trained before the prediction.
  bool reused(int question) const { return reused_.contains(question); }
  // The last problem saving or reading the file; empty if none.
  const QString& problem() const { return problem_; }

 signals:
  void changed();
  void answered(int question);  // its verdict settled: right or wrong is known

 private:
  // Each predicted, unanswered question whose run's verdict has settled takes its outcome.
  void settle();
  void start_run(int question);
  void save();

  Lab& lab_;
  LessonState state_;
  std::optional<TrainConfig> waiting_base_;
  QSet<int> reused_;
  QString problem_;
};

}  // namespace normlab::lab
