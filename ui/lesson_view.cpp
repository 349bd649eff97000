#include "lesson_view.h"

#include <QComboBox>
#include <QFormLayout>
#include <QLabel>
#include <QPushButton>
#include <QSpinBox>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>
#include <cstring>

#include "core/runs/lesson_text.h"
#include "core/runs/verdict.h"
#include "lab/lab.h"
#include "lab/lesson.h"
#include "lab/qstring.h"

namespace normlab::ui {

namespace {

namespace text = lesson_text;

QString words(const char* utf8) { return QString::fromUtf8(utf8); }

constexpr const char* kRightColour = "#2e7d32";
constexpr const char* kWrongColour = "#b71c1c";
constexpr const char* kQuietColour = "#5f6b7a";

QString lower_first(QString s) {
  if (!s.isEmpty()) s[0] = s[0].toLower();
  return s;
}

// The row of the answer table for a verdict's name as the lesson kept it.
const VerdictAnswer* answer_named(const std::string& name) {
  for (const VerdictInfo& v : kVerdicts) {
    if (name == v.name) return &answer_of(v.value);
  }
  return nullptr;
}

QPushButton* button(const char* label, const char* object_name) {
  auto* b = new QPushButton(words(label));
  b->setObjectName(QString::fromLatin1(object_name));
  return b;
}

}  // namespace

LessonView::LessonView(lab::Lab& lab, lab::Lesson& lesson, Hooks hooks, QWidget* parent)
    : QWidget(parent),
      lab_(lab),
      lesson_(lesson),
      hooks_(std::move(hooks)),
      title_(new QLabel),
      body_(new QLabel),
      seen_(new QLabel),
      choices_box_(new QWidget),
      further_box_(new QWidget),
      placement_(new QComboBox),
      layers_(new QSpinBox),
      warmup_(new QSpinBox),
      lr_(new QComboBox),
      ask_(button(text::kAsk, "lessonAsk")),
      begin_(button(text::kBegin, "lessonBegin")),
      not_now_(button(text::kNotNow, "lessonNotNow")),
      train_on_(button(text::kTrainOn, "lessonTrainOn")),
      next_(button(text::kNext, "lessonNext")),
      start_over_(button(text::kStartOver, "lessonStartOver")),
      leave_(button(text::kLeave, "lessonLeave")),
      refresh_timer_(new QTimer(this)) {
  setObjectName(QStringLiteral("lessonView"));
  title_->setObjectName(QStringLiteral("lessonTitle"));
  title_->setWordWrap(true);
  title_->setStyleSheet(QStringLiteral("QLabel { font-size: 13pt; font-weight: 600; }"));
  body_->setObjectName(QStringLiteral("lessonBody"));
  body_->setWordWrap(true);
  body_->setTextFormat(Qt::RichText);
  body_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
  body_->setTextInteractionFlags(Qt::TextBrowserInteraction);
  body_->setOpenExternalLinks(false);
  connect(body_, &QLabel::linkActivated, this, &LessonView::follow);
  seen_->setObjectName(QStringLiteral("lessonSeen"));
  seen_->setWordWrap(true);
  seen_->setTextFormat(Qt::RichText);

  auto* choices = new QVBoxLayout(choices_box_);
  choices->setContentsMargins(0, 0, 0, 0);
  auto* predict = new QLabel(words(text::kPredict));
  predict->setStyleSheet(QStringLiteral("QLabel { font-weight: 600; }"));
  choices->addWidget(predict);
  for (const LessonOutcomeInfo& o : kLessonOutcomes) {
    QPushButton* b = button(o.choice, "");
    b->setObjectName(QStringLiteral("lessonPredict-%1").arg(QString::fromLatin1(o.name)));
    choices_[int(o.value)] = b;
    choices->addWidget(b);
    connect(b, &QPushButton::clicked, this, [this, outcome = o.value] { lesson_.predict(outcome); });
  }

  // One more experiment: the placement, depth, warmup and rate the learner chooses.
  for (const NormPlacement p : {NormPlacement::Pre, NormPlacement::Post}) {
    placement_->addItem(words(info(p).label), int(p));
  }
  placement_->setCurrentIndex(1);
  layers_->setRange(1, 48);
  layers_->setValue(16);
  warmup_->setRange(0, 100000);
  for (const double lr : {1e-3, 3e-3, 6e-3}) lr_->addItem(lab::qstr(format_lr(lr)), lr);
  auto* form = new QFormLayout;
  form->setContentsMargins(0, 0, 0, 0);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->addRow(words(text::kPlacement), placement_);
  form->addRow(words(text::kLayers), layers_);
  form->addRow(words(text::kWarmup), warmup_);
  form->addRow(words(text::kLearningRate), lr_);
  auto* further = new QVBoxLayout(further_box_);
  further->setContentsMargins(0, 0, 0, 0);
  further->addLayout(form);
  further->addWidget(ask_);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(10, 8, 10, 8);
  layout->setSpacing(8);
  layout->addWidget(title_);
  layout->addWidget(body_);
  layout->addWidget(choices_box_);
  layout->addWidget(further_box_);
  for (QPushButton* b : {begin_, not_now_, train_on_, next_, start_over_, leave_}) layout->addWidget(b);
  layout->addWidget(seen_);
  layout->addStretch(1);

  connect(begin_, &QPushButton::clicked, this, [this] { lesson_.begin(hooks_.base ? hooks_.base() : TrainConfig{}); });
  connect(not_now_, &QPushButton::clicked, this, &LessonView::left);
  connect(train_on_, &QPushButton::clicked, this, [this] { lesson_.train_on(lesson_.state().current); });
  connect(next_, &QPushButton::clicked, this, [this] { lesson_.go_on(); });
  connect(start_over_, &QPushButton::clicked, this, [this] { lesson_.start_over(); });
  connect(ask_, &QPushButton::clicked, this, [this] { lesson_.ask_further(further_config()); });
  connect(leave_, &QPushButton::clicked, this, [this] {
    lesson_.leave();
    emit left();
  });

  refresh_timer_->setSingleShot(true);
  refresh_timer_->setInterval(250);
  connect(refresh_timer_, &QTimer::timeout, this, &LessonView::refresh);
  const auto soon = [this] {
    if (!refresh_timer_->isActive()) refresh_timer_->start();
  };
  connect(&lesson_, &lab::Lesson::changed, this, &LessonView::refresh);
  connect(&lab_, &lab::Lab::progress_changed, this, soon);
  connect(&lab_.store(), &lab::RunStore::verdict_changed, this, soon);
  connect(&lab_.store(), &lab::RunStore::status_changed, this, soon);
  refresh();
}

QString LessonView::title() const { return title_->text(); }

QString LessonView::text() const {
  QTextDocument document;
  document.setHtml(body_->text() + seen_->text());
  return document.toPlainText();
}

void LessonView::follow(const QString& link) {
  if (!hooks_.show_evidence) return;
  const LessonState& s = lesson_.state();
  const int run = lesson_.run_of(s.current);
  if (!run) return hooks_.show_evidence(link, {});
  QList<int> runs{run};
  // Inside the model compares two runs: beside this one, the first seen that did otherwise.
  const std::optional<LessonOutcome> outcome = s.questions[std::size_t(s.current)].outcome;
  for (int i = 0; outcome && link.startsWith(QLatin1String("statistic:")) && i < int(s.questions.size()); ++i) {
    const std::optional<LessonOutcome> other = s.questions[std::size_t(i)].outcome;
    if (i == s.current || !other || *other == *outcome || !lesson_.run_of(i)) continue;
    runs << lesson_.run_of(i);
    break;
  }
  hooks_.show_evidence(link, runs);
}

TrainConfig LessonView::further_config() const {
  const LessonState& s = lesson_.state();
  TrainConfig c = s.questions.empty() ? TrainConfig{} : s.questions.front().config;
  c.model.norm = NormPlacement(placement_->currentData().toInt());
  c.model.layers = layers_->value();
  c.warmup_steps = warmup_->value();
  c.peak_lr = lr_->currentData().toDouble();
  return c;
}

QString LessonView::status_html(int question) const {
  const LessonQuestion& q = lesson_.state().questions[std::size_t(question)];
  if (!q.prediction) return {};
  QString html = QStringLiteral("<p>%1</p>")
                     .arg(words(text::kYouSaid).arg(lower_first(words(info(*q.prediction).choice))).toHtmlEscaped());
  if (q.outcome) {
    const QString answer = lab::qstr(answer_text(q));
    const QString lead = words(q.right() ? text::kRight : text::kWrong);
    html += QStringLiteral("<p style='font-size:12pt'><b style='color:%1'>%2</b>%3</p>")
                .arg(QLatin1String(q.right() ? kRightColour : kWrongColour), lead.toHtmlEscaped(),
                     answer.mid(lead.size()).toHtmlEscaped());
    if (lesson_.reused(question)) {
      html += QStringLiteral("<p style='color:%1'>%2</p>").arg(QLatin1String(kQuietColour), words(text::kReused));
    }
    html += QStringLiteral("<p>%1</p>").arg(lab::qstr(q.sentence).toHtmlEscaped());
    if (const VerdictAnswer* row = answer_named(q.verdict)) {
      QStringList links;
      for (const ProofLink& proof : row->proofs) {
        if (proof.link) links << QStringLiteral("<a href='%1'>%2</a>").arg(words(proof.link), words(proof.words));
      }
      if (!links.isEmpty()) {
        html += QStringLiteral("<p>%1</p>").arg(words(text::kSee).arg(links.join(QStringLiteral(", "))));
      }
    }
    return html;
  }
  const lab::RunEntry* run = lab_.store().find(lesson_.run_of(question));
  if (run && run->record.status == RunStatus::Running) {
    const int step = run->record.steps.empty() ? 0 : run->record.steps.back().step;
    html += QStringLiteral("<p>%1</p>")
                .arg(words(text::kTraining)
                         .arg(step)
                         .arg(run->record.config.steps)
                         .arg(words(info(run->verdict.verdict).label))
                         .toHtmlEscaped());
  } else if (run && run->record.status == RunStatus::Queued && lab_.queue().is_queued(run->id)) {
    html += QStringLiteral("<p>%1</p>").arg(words(text::kQueued));
  } else {
    const QString status = run ? lab::qstr(to_string(run->record.status)) : tr("its run is gone");
    return html + QStringLiteral("<p>%1</p>").arg(words(text::kUnclear).arg(status).toHtmlEscaped());
  }
  return html +
         QStringLiteral("<p style='color:%1'>%2</p>").arg(QLatin1String(kQuietColour), words(text::kGoOnWhileTraining));
}

QString LessonView::question_html(int question) const {
  const LessonQuestion& q = lesson_.state().questions[std::size_t(question)];
  QString html = QStringLiteral("<p style='font-size:12pt'><b>%1</b><br><span style='color:%2'>%3</span></p>")
                     .arg(lab::qstr(question_text(q.config)).toHtmlEscaped(), QLatin1String(kQuietColour),
                          words(formula(q.config.model.norm)).toHtmlEscaped());
  return html + status_html(question);
}

QString LessonView::seen_html(int current) const {
  QString rows;
  const std::vector<LessonQuestion>& qs = lesson_.state().questions;
  for (int i = 0; i < int(qs.size()); ++i) {
    const LessonQuestion& q = qs[std::size_t(i)];
    if (i == current || !q.prediction) continue;
    const QString mark = !q.outcome  ? QStringLiteral("<span style='color:%1'>\u2026</span>").arg(kQuietColour)
                         : q.right() ? QStringLiteral("<span style='color:%1'>\u2714</span>").arg(kRightColour)
                                     : QStringLiteral("<span style='color:%1'>\u2718</span>").arg(kWrongColour);
    const QString did = q.outcome ? words(info(*q.outcome).past) : words(text::kPending);
    rows +=
        QStringLiteral("<tr><td style='padding-right:6px'>%1</td><td>%2<br><span style='color:%3'>%4</span></td></tr>")
            .arg(mark, lab::qstr(settings_text(q.config)).toHtmlEscaped(), QLatin1String(kQuietColour),
                 words(text::kSeenRow).arg(lower_first(words(info(*q.prediction).choice)), did).toHtmlEscaped());
  }
  if (rows.isEmpty()) {
    if (current >= int(qs.size())) return {};
    rows = QStringLiteral("<tr><td style='color:%1'>%2</td></tr>").arg(kQuietColour, words(text::kNothingSeen));
  }
  return QStringLiteral("<p style='margin-top:10px'><b>%1</b></p><table cellspacing='2'>%2</table>")
      .arg(words(current >= int(qs.size()) ? text::kSummary : text::kSeenSoFar), rows);
}

QString LessonView::summary_html() const {
  const LessonScore s = score(lesson_.state());
  QString html = QStringLiteral("<p style='font-size:12pt'>%1</p>").arg(lab::qstr(score_text(s)).toHtmlEscaped());
  html += seen_html(int(lesson_.state().questions.size()));
  html += QStringLiteral("<p style='margin-top:10px'><b>%1</b></p><p>%2</p>")
              .arg(words(text::kWhatItShows), words(text::kConclusion).toHtmlEscaped());
  html += QStringLiteral("<p style='margin-top:10px'><b>%1</b></p><p>%2</p>")
              .arg(words(text::kFurther), words(text::kFurtherHelp).toHtmlEscaped());
  return html;
}

void LessonView::refresh() {
  refresh_timer_->stop();
  const LessonState& s = lesson_.state();
  const bool begun = lesson_.begun();
  const bool summary = begun && s.at_summary();
  const bool question = begun && !summary;
  const LessonQuestion* q = question ? &s.questions[std::size_t(s.current)] : nullptr;

  QString html, seen;
  if (!begun) {
    title_->setText(words(text::kTitle));
    html = QStringLiteral("<p>%1</p>").arg(words(text::kOffer).toHtmlEscaped());
    if (lesson_.waiting_for_device()) html += QStringLiteral("<p>%1</p>").arg(words(text::kWaitingForDevice));
  } else if (summary) {
    title_->setText(words(text::kTitle));
    html = summary_html();
  } else {
    int course = 0;
    for (const LessonQuestion& each : s.questions) course += each.further ? 0 : 1;
    title_->setText(q->further ? words(text::kFurtherQuestion)
                               : words(text::kQuestionOf).arg(s.current + 1).arg(course));
    html = question_html(s.current);
    seen = seen_html(s.current);
  }
  if (!lesson_.writable())
    html += QStringLiteral("<p style='color:%1'>%2</p>").arg(kWrongColour, words(text::kReadOnly));
  if (!lesson_.problem().isEmpty()) {
    html += QStringLiteral("<p style='color:%1'>%2</p>").arg(kWrongColour, lesson_.problem().toHtmlEscaped());
  }
  body_->setText(html);
  seen_->setText(seen);
  seen_->setVisible(!seen.isEmpty());

  begin_->setVisible(!begun);
  begin_->setEnabled(lesson_.writable() && !lesson_.waiting_for_device());
  not_now_->setVisible(!begun);
  choices_box_->setVisible(question && !q->prediction);
  for (QPushButton* b : choices_) b->setEnabled(lesson_.writable());
  const lab::RunEntry* run = question ? lab_.store().find(lesson_.run_of(s.current)) : nullptr;
  const bool unclear = q && q->prediction && !q->outcome &&
                       (!run || (run->record.status != RunStatus::Running && !lab_.queue().is_queued(run->id)));
  train_on_->setVisible(unclear);
  train_on_->setEnabled(lesson_.writable());
  next_->setVisible(question);
  next_->setEnabled(lesson_.can_go_on());
  next_->setText(words(question && s.current + 1 >= int(s.questions.size()) ? text::kToSummary : text::kNext));
  further_box_->setVisible(summary);
  ask_->setEnabled(lesson_.writable());
  if (summary && !s.questions.empty() && warmup_->maximum() != s.questions.front().config.steps) {
    warmup_->setMaximum(s.questions.front().config.steps);
    warmup_->setValue(s.questions.front().config.warmup_steps);
  }
  start_over_->setVisible(summary);
  leave_->setVisible(begun);
}

}  // namespace normlab::ui
