#pragma once
// "What it writes": two runs side by side, on two pages. The held-out text at one
// evaluation: for a held-out prompt, each run's greedy and sampled continuations, and the
// true text after the prompt shaded by the probability the run gave each of its tokens, so
// where a run is blind to context it shows; above them both runs' context use against the
// step, and at that step in numbers. Your prompt: any text, continued by each run with its
// weights (off the window's thread, lab/prompt_service.h), with its ten likeliest next tokens
// in bars beside the unigram's.
#include <QString>
#include <QTimer>
#include <QWidget>

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSlider;
class QTabWidget;
class QTextBrowser;

class QChartView;

namespace normlab {
struct Sample;
}  // namespace normlab

namespace normlab::lab {
class PromptService;
class RunStore;
}  // namespace normlab::lab

namespace normlab::ui {

class ContextUseChart;

class TextView : public QWidget {
  Q_OBJECT
 public:
  explicit TextView(lab::RunStore& store, QWidget* parent = nullptr);

  void show_runs(int left_id, int right_id);
  // As InsideView::show_picked: the picked runs, else the two most recent where the user
  // chose none by hand; never changed by itself while the view is shown.
  void show_picked(const QList<int>& run_ids);
  void show_step(int step);  // the latest evaluation at or before it
  // Asks both runs to continue `prompt`, as the Continue button does.
  void ask(const QString& prompt);

  // What the panels show, for tests: the text panel's plain text, the answer's, and the
  // bars' tokens (likeliest first).
  QString text_of(int panel) const;
  QString answer_of(int panel) const;
  QStringList bar_tokens(int panel) const;
  lab::PromptService& prompts() { return *prompts_; }
  bool showing_own_prompt() const;  // the page of the typed prompt and its bars, rather than the held-out text
  ContextUseChart& context_use_chart() { return *context_use_; }

 private:
  struct Panel {
    QComboBox* run = nullptr;
    QLabel* context_use = nullptr;
    QTextBrowser* text = nullptr;
    QLabel* answer = nullptr;
    QChartView* bars = nullptr;
    QStringList tokens;
    bool chosen = false;
    int run_id = 0;
  };

  void refresh_runs();
  void refresh_steps();
  void redraw();
  void show_answer(int panel, const Sample& sample);
  int panel_of(int run_id) const;

  lab::RunStore& store_;
  lab::PromptService* prompts_;
  QComboBox* prompt_choice_;
  QSlider* step_;
  QLabel* step_label_;
  ContextUseChart* context_use_;
  QLineEdit* prompt_;
  QPushButton* ask_;
  QTabWidget* pages_;  // the held-out text, the user's prompt
  static constexpr int kOwnPromptPage = 1;
  QString asked_;  // the prompt the answers shown are to
  Panel panels_[2];
  QTimer redraw_;
  bool following_ = true;  // the slider keeps to the latest evaluation until moved
};

}  // namespace normlab::ui
