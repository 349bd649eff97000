#pragma once
// The settings of the next run, built from the config field table: one control per
// field, of the field's widget kind, in its section. Each control refuses what the
// engine would refuse and says why, and the assembled config is checked with
// normlab::validate as well.
#include <QString>
#include <QWidget>
#include <vector>

#include "core/runs/config_fields.h"
#include "core/runs/run_record.h"

class QAction;
class QButtonGroup;
class QComboBox;
class QLayout;
class QFormLayout;
class QLabel;
class QSettings;
class QTimer;
class QSpinBox;
class QToolButton;

namespace normlab::ui {

class SettingsPanel : public QWidget {
  Q_OBJECT
 public:
  explicit SettingsPanel(QWidget* parent = nullptr);

  // What the controls say; fields without a control keep the values last set.
  TrainConfig config() const;
  void set_config(const TrainConfig& config);
  // Copies the device and data settings (device, threads, corpus) into `config`: what
  // the course settings and the course experiment keep from the user's choice.
  void copy_device_and_data(TrainConfig& config) const;
  // Why config() cannot train, for the user; empty when it can.
  QString problem() const;

  // Shows what "auto" found and disables CUDA when there is no GPU.
  void set_device(const Environment& found);
  // Start, Stop and the course experiment, as buttons under the settings.
  void add_actions(QAction* start, QAction* stop, QAction* course);
  void set_course_note(const QString& text);
  // How long the run Start queues would take here, and what that rests on (its tooltip).
  void set_start_estimate(const QString& text, const QString& basis);
  QString start_estimate() const;
  QString course_note() const;
  // How many times the course experiment runs, seeds --seed, --seed + 1, ...
  int course_seeds() const;
  void set_course_seeds(int seeds);

  void save(QSettings& settings) const;
  // False when nothing was saved yet (first launch).
  bool restore(QSettings& settings);

 signals:
  void validity_changed(bool valid);
  void changed();  // any setting, as the user edits it
  void course_seeds_changed(int seeds);

 private:
  // Builds the control of `field`'s widget kind as a row of `form`.
  void add_control(const ConfigField& field, QFormLayout* form);
  QWidget* spin_box(const ConfigField& field);
  QWidget* rate_box(const ConfigField& field);
  QLayout* buttons(const ConfigField& field, QButtonGroup* group);
  QLayout* menu_box(const ConfigField& field, QComboBox* menu);
  QLayout* corpus_box();
  // Greys out the settings that do nothing with the rest of `config` (see update_applicable).
  void update_applicable(const TrainConfig& config);
  void read_control(const ConfigField& field, const QObject* control, TrainConfig& config) const;
  void write_control(const ConfigField& field, QObject* control, const TrainConfig& config);
  void set_corpus(const QString& path);
  // The menu's entries: each named corpus with its size, then `path` when it is a file.
  void fill_corpus_menu(const QString& path);
  void choose_corpus();
  void set_more_shown(bool shown);
  void show_refusal(const QString& reason);
  // A refusal's reason no longer holds (the value was fixed): the message says what does.
  void withdraw_refusal();
  void revalidate();

  TrainConfig base_;                // carries the fields that have no control
  std::vector<QObject*> controls_;  // one per config field, in table order; nullptr: none
  std::vector<QWidget*> labels_;    // each control's label in its form, alike
  QComboBox* lr_ = nullptr;
  QComboBox* device_ = nullptr;
  QToolButton* more_button_;
  QWidget* more_;
  QLabel* device_found_;
  QComboBox* corpus_menu_;  // the named corpora with their sizes, and a file once one is opened
  QString corpus_path_;     // empty: the default corpus
  QLabel* message_;
  QTimer* refusal_timer_;
  QWidget* buttons_;
  QLabel* course_note_;
  QLabel* start_estimate_;
  QSpinBox* course_seeds_;
  bool valid_ = true;
  bool gpu_found_ = false;
};

}  // namespace normlab::ui
