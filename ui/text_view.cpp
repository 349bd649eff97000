#include "text_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSlider>
#include <QTabWidget>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

#include "core/training/predictions.h"
#include "lab/prompt_service.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "context_use_chart.h"
#include "run_choice.h"
#include "run_colors.h"

namespace normlab::ui {

namespace {

constexpr int kRedrawMs = 100;  // text changes once per evaluation: a slow beat is enough
constexpr int kTopTokens = 10;

// The text panel's shading: a probability on a log scale from 1e-4 (none) to 1 (full).
QColor shade_of(double probability) {
  const double strength = std::clamp((std::log10(std::max(probability, 1e-12)) + 4) / 4, 0.0, 1.0);
  QColor colour(QStringLiteral("#2b8a3e"));
  colour.setAlphaF(0.08 + 0.72 * strength);
  return colour;
}

QString escaped(const std::string& text) { return lab::qstr(text).toHtmlEscaped().replace('\n', "<br>"); }

// The record's text sample at or before `step`; nullptr when there is none.
const TextSample* sample_at(const RunRecord& run, int step) {
  const TextSample* found = nullptr;
  for (const TextSample& s : run.text.samples) {
    if (s.step <= step) found = &s;
  }
  return found;
}

QString html_for(const RunRecord& run, const TextSample& sample, int prompt) {
  QString html = QStringLiteral("<p style='color:#666'>%1</p>").arg(escaped(run.text.prompts.at(prompt)));
  if (!run.text.references.empty() && !sample.reference_probability.empty()) {
    html += QObject::tr(
        "<p><b>What follows in the held-out text</b>, each token shaded by the chance "
        "the run gave it (dark: likely; faint: below 1 in 10,000):<br>");
    const auto& tokens = run.text.references.at(prompt);
    const auto& probabilities = sample.reference_probability.at(prompt);
    for (std::size_t t = 0; t < tokens.size(); ++t) {
      html += QStringLiteral("<span style='background-color:%1' title='%2'>%3</span>")
                  .arg(shade_of(probabilities[t]).name(QColor::HexArgb), QString::number(probabilities[t], 'g', 3),
                       escaped(tokens[t]));
    }
    html += QStringLiteral("</p>");
  }
  html +=
      QObject::tr("<p><b>Greedy</b> (the likeliest token each time):<br>%1</p>").arg(escaped(sample.greedy.at(prompt)));
  html += QObject::tr("<p><b>Sampled</b> (each token drawn from the prediction):<br>%1</p>")
              .arg(escaped(sample.sampled.at(prompt)));
  return html;
}

QChartView* new_bar_chart() {
  auto* chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setMargins(QMargins(2, 2, 2, 2));
  chart->setBackgroundRoundness(0);
  auto* view = new QChartView(chart);
  view->setRenderHint(QPainter::Antialiasing);
  view->setMinimumHeight(180);
  // Its height is what the page has left: a chart's preferred height, counted by the
  // scroll area around the view, made the page scroll under a 12-row run table.
  view->setSizePolicy(QSizePolicy::Expanding,
                      QSizePolicy::Ignored);  // ten categories, each a readable line in the labels' smaller font
  return view;
}

// The likeliest tokens as bars, the model's in the run's colour beside the unigram's grey.
void draw_bars(QChartView* view, const Sample& sample, const QColor& colour) {
  QChart* chart = view->chart();
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
  auto* model = new QBarSet(QObject::tr("model"));
  auto* unigram = new QBarSet(QObject::tr("unigram"));
  model->setColor(colour);
  unigram->setColor(QColor(QStringLiteral("#b0b0b0")));
  QStringList tokens;
  double top = 0;
  // A horizontal bar chart draws its first category at the bottom: likeliest on top.
  for (auto it = sample.top.rbegin(); it != sample.top.rend(); ++it) {
    QString token = lab::qstr(it->text).replace('\n', QStringLiteral("\u21b5"));
    while (tokens.contains(token)) token += QChar(0x200b);  // categories must differ
    tokens << QStringLiteral("\u201c%1\u201d").arg(token);
    *model << it->model;
    *unigram << it->unigram;
    top = std::max({top, it->model, it->unigram});
  }
  auto* series = new QHorizontalBarSeries;
  series->append(model);
  series->append(unigram);
  chart->addSeries(series);
  auto* categories = new QBarCategoryAxis;
  categories->append(tokens);
  QFont small = categories->labelsFont();
  small.setPointSizeF(small.pointSizeF() * 0.85);
  categories->setLabelsFont(small);
  auto* probability = new QValueAxis;
  probability->setRange(0, std::max(0.05, top * 1.1));
  probability->setLabelFormat(QStringLiteral("%.2f"));
  probability->setTitleText(QObject::tr("probability of the next token"));
  chart->addAxis(categories, Qt::AlignLeft);
  chart->addAxis(probability, Qt::AlignBottom);
  series->attachAxis(categories);
  series->attachAxis(probability);
}

}  // namespace

TextView::TextView(lab::RunStore& store, QWidget* parent)
    : QWidget(parent),
      store_(store),
      prompts_(new lab::PromptService(this)),
      prompt_choice_(new QComboBox),
      step_(new QSlider(Qt::Horizontal)),
      step_label_(new QLabel),
      context_use_(new ContextUseChart(store)),
      prompt_(new QLineEdit),
      ask_(new QPushButton(tr("C&ontinue"))),
      pages_(new QTabWidget) {
  for (int i = 1; i <= 3; ++i) prompt_choice_->addItem(tr("Held-out prompt %1").arg(i), i - 1);
  step_->setToolTip(tr("The evaluation whose text is shown"));
  step_label_->setMinimumWidth(step_label_->fontMetrics().horizontalAdvance(tr("step 00000 of 00000")));
  auto* top = new QHBoxLayout;
  top->addWidget(prompt_choice_);
  top->addWidget(new QLabel(tr("Evaluation:")));
  top->addWidget(step_, 1);
  top->addWidget(step_label_);

  prompt_->setPlaceholderText(tr("Type any text for both runs to continue, then Enter"));
  prompt_->setClearButtonEnabled(true);
  auto* ask_row = new QHBoxLayout;
  ask_row->addWidget(new QLabel(tr("&Prompt:")));
  ask_row->addWidget(prompt_, 1);
  ask_row->addWidget(ask_);
  qobject_cast<QLabel*>(ask_row->itemAt(0)->widget())->setBuddy(prompt_);

  // The two runs' pickers above two pages: the held-out text at an evaluation, and the
  // user's own prompt with each run's likeliest next tokens. On one page, under a 12-row run
  // table at 1280 x 800, the bars were below the fold (issue 49).
  auto* pickers = new QHBoxLayout;
  auto* held_out = new QWidget;
  auto* held_out_grid = new QGridLayout(held_out);
  held_out_grid->setContentsMargins(0, 4, 0, 0);
  held_out_grid->addLayout(top, 0, 0, 1, 2);
  held_out_grid->addWidget(context_use_, 1, 0, 1, 2);
  auto* own = new QWidget;
  auto* own_grid = new QGridLayout(own);
  own_grid->setContentsMargins(0, 4, 0, 0);
  own_grid->addLayout(ask_row, 0, 0, 1, 2);
  for (int p = 0; p < 2; ++p) {
    Panel& panel = panels_[p];
    panel.run = new QComboBox;
    panel.run->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    panel.run->setMinimumContentsLength(16);
    panel.context_use = new QLabel;
    panel.context_use->setWordWrap(true);
    panel.text = new QTextBrowser;
    panel.text->setMinimumHeight(100);                                        // five lines; it scrolls
    panel.text->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Ignored);  // as the bars: the room left
    panel.answer = new QLabel(tr("Type a prompt above: both runs continue it."));
    panel.answer->setWordWrap(true);
    panel.answer->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panel.bars = new_bar_chart();
    pickers->addWidget(panel.run, 1);
    held_out_grid->addWidget(panel.context_use, 2, p);
    held_out_grid->addWidget(panel.text, 3, p);
    own_grid->addWidget(panel.answer, 1, p);
    own_grid->addWidget(panel.bars, 2, p);
    connect(panel.run, qOverload<int>(&QComboBox::activated), this, [this, p] {
      panels_[p].chosen = true;
      panels_[p].run_id = panels_[p].run->currentData().toInt();
      panels_[p].run->setToolTip(panels_[p].run->currentText());
      refresh_steps();
    });
  }
  held_out_grid->setRowStretch(3, 1);
  own_grid->setRowStretch(2, 1);
  pages_->setObjectName(QStringLiteral("textPages"));
  pages_->setDocumentMode(true);
  pages_->addTab(held_out, tr("Held-out text"));
  pages_->addTab(own, tr("Your prompt"));

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 6, 8, 4);
  layout->addLayout(pickers);
  layout->addWidget(pages_, 1);

  redraw_.setSingleShot(true);
  redraw_.setInterval(kRedrawMs);
  connect(&redraw_, &QTimer::timeout, this, &TextView::redraw);
  connect(prompt_choice_, qOverload<int>(&QComboBox::currentIndexChanged), this, [this] { redraw_.start(); });
  connect(step_, &QSlider::valueChanged, this, [this] {
    following_ = step_->value() == step_->maximum();
    redraw_.start();
  });
  connect(context_use_, &ContextUseChart::step_picked, this, &TextView::show_step);
  connect(prompt_, &QLineEdit::returnPressed, ask_, &QPushButton::click);
  connect(ask_, &QPushButton::clicked, this, [this] { ask(prompt_->text()); });
  connect(prompts_, &lab::PromptService::loading, this, [this](int run_id, const QString& stage) {
    const int p = panel_of(run_id);
    if (p >= 0) panels_[p].answer->setText(tr("%1\u2026").arg(stage));
  });
  connect(prompts_, &lab::PromptService::answered, this, [this](int run_id, const Sample& sample) {
    const int p = panel_of(run_id);
    if (p >= 0) show_answer(p, sample);
  });
  connect(prompts_, &lab::PromptService::refused, this, [this](int run_id, const QString& message) {
    const int p = panel_of(run_id);
    if (p >= 0) panels_[p].answer->setText(message);
  });
  connect(&store_, &lab::RunStore::run_added, this, &TextView::refresh_runs);
  connect(&store_, &lab::RunStore::run_removed, this, &TextView::refresh_runs);
  connect(&store_, &lab::RunStore::text_changed, this, &TextView::refresh_steps);
  refresh_runs();
}

void TextView::show_runs(int left_id, int right_id) {
  const int ids[2] = {left_id, right_id};
  for (int p = 0; p < 2; ++p) {
    panels_[p].run->setCurrentIndex(panels_[p].run->findData(ids[p]));
    panels_[p].run_id = panels_[p].run->currentData().toInt();
    panels_[p].chosen = true;
  }
  refresh_steps();
}

void TextView::show_picked(const QList<int>& run_ids) {
  if (!run_ids.isEmpty()) {
    const int other = panels_[1].run_id == run_ids.front() ? panels_[0].run_id : panels_[1].run_id;
    show_runs(run_ids.front(), run_ids.size() > 1 ? run_ids[1] : other);
    return;
  }
  for (int p = 0; p < 2; ++p) {
    if (!panels_[p].chosen) panels_[p].run_id = fill_run_choice(panels_[p].run, store_, p, 0);
  }
  refresh_steps();
}

void TextView::show_step(int step) {
  following_ = false;
  step_->setValue(std::clamp(step, step_->minimum(), step_->maximum()));
  redraw();
}

void TextView::ask(const QString& prompt) {
  if (prompt_->text() != prompt) prompt_->setText(prompt);
  pages_->setCurrentIndex(kOwnPromptPage);
  asked_ = prompt;
  SampleRequest request;
  request.prompt = prompt.toStdString();
  request.top = kTopTokens;
  request.temperature = 0;  // the likeliest continuation: the same answer each time
  for (int p = 0; p < 2; ++p) {
    const lab::RunEntry* run = store_.find(panels_[p].run_id);
    if (!run) continue;
    if (run->file.isEmpty()) {
      panels_[p].answer->setText(tr("This run has no file in the runs folder, so no weights to continue with."));
      continue;
    }
    panels_[p].answer->setText(tr("Continuing\u2026"));
    prompts_->ask(run->id, run->record, run->file, request);
  }
}

bool TextView::showing_own_prompt() const { return pages_->currentIndex() == kOwnPromptPage; }

QString TextView::text_of(int panel) const { return panels_[panel].text->toPlainText(); }
QString TextView::answer_of(int panel) const { return panels_[panel].answer->text(); }
QStringList TextView::bar_tokens(int panel) const { return panels_[panel].tokens; }

int TextView::panel_of(int run_id) const {
  for (int p = 0; p < 2; ++p) {
    if (panels_[p].run_id == run_id) return p;
  }
  return -1;
}

void TextView::refresh_runs() {
  for (int p = 0; p < 2; ++p) {
    const bool keep = panels_[p].chosen || isVisible();  // never changed by itself while the user is on it
    panels_[p].run_id = fill_run_choice(panels_[p].run, store_, p, keep ? panels_[p].run_id : 0);
  }
  refresh_steps();
}

// The slider spans the evaluations of both runs' text, by step.
void TextView::refresh_steps() {
  context_use_->show_runs({panels_[0].run_id, panels_[1].run_id});
  int last = 0;
  for (const Panel& panel : panels_) {
    const lab::RunEntry* run = store_.find(panel.run_id);
    if (run && !run->record.text.samples.empty()) last = std::max(last, run->record.text.samples.back().step);
  }
  const QSignalBlocker quiet(step_);
  step_->setRange(0, last);
  step_->setSingleStep(std::max(1, last / 30));
  step_->setPageStep(std::max(1, last / 6));
  if (following_) step_->setValue(last);
  redraw_.start();
}

void TextView::redraw() {
  const int step = step_->value();
  step_label_->setText(tr("step %1 of %2").arg(step).arg(step_->maximum()));
  context_use_->mark_step(step);
  const int prompt = prompt_choice_->currentData().toInt();
  for (Panel& panel : panels_) {
    const lab::RunEntry* run = store_.find(panel.run_id);
    const TextSample* sample = run ? sample_at(run->record, step) : nullptr;
    if (!run) {
      panel.context_use->clear();
      panel.text->setHtml(tr("<p>No run to show.</p>"));
      continue;
    }
    // The statistics at the evaluation whose text is shown, as the terminal and Markdown say them.
    const std::string statistics = statistics_line(run->record, sample ? sample->step : step);
    panel.context_use->setText(statistics.empty()
                                   ? tr("No context use recorded yet.")
                                   : tr("<span style='color:%1'>\u25a0</span> %2")
                                         .arg(run_colour(*run).name(), lab::qstr(statistics).toHtmlEscaped()));
    if (!sample || prompt >= int(sample->greedy.size())) {
      panel.text->setHtml(run->record.config.text_every == 0
                              ? tr("<p>This run recorded no text (text every 0 evaluations).</p>")
                              : tr("<p>No text yet: it comes with the first evaluation.</p>"));
      continue;
    }
    panel.text->setHtml(tr("<p><b>Step %1</b></p>").arg(sample->step) + html_for(run->record, *sample, prompt));
  }
}

void TextView::show_answer(int p, const Sample& sample) {
  Panel& panel = panels_[p];
  const lab::RunEntry* run = store_.find(panel.run_id);
  panel.answer->setText(
      tr("<i>%1</i><b>%2</b>").arg(asked_.toHtmlEscaped(), lab::qstr(sample.continuation).toHtmlEscaped()));
  panel.tokens.clear();
  for (const NextToken& t : sample.top) panel.tokens << lab::qstr(t.text);
  draw_bars(panel.bars, sample, run ? run_colour(*run) : QColor(Qt::black));
}

}  // namespace normlab::ui
