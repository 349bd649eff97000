#include "settings_panel.h"

#include <QAction>
#include <QButtonGroup>
#include <QComboBox>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QValidator>
#include <algorithm>
#include <cmath>
#include <limits>

#include "corpus.h"
#include "format.h"
#include "presets.h"

namespace normlab::ui {

namespace {

constexpr int kRefusalShownMs = 5000;

// Accepts learning rates the engine takes, (0, 1], typed as 6e-3 or 0.006; refuses
// keystrokes that cannot become a number.
class LearningRateValidator : public QValidator {
 public:
  using QValidator::QValidator;
  State validate(QString& input, int&) const override {
    static const QRegularExpression partial(QStringLiteral(R"(^\d*\.?\d*([eE][-+]?\d*)?$)"));
    const QString text = input.trimmed();
    if (text.isEmpty()) return Intermediate;
    if (!partial.match(text).hasMatch()) return Invalid;
    bool ok = false;
    const double value = QLocale::c().toDouble(text, &ok);
    return ok && value > 0 && value <= 1 ? Acceptable : Intermediate;
  }
};

QLabel* section_label(const QString& text) {
  auto* label = new QLabel(text.toUpper());
  label->setStyleSheet(QStringLiteral("color: #5f6b7a; font-weight: 600; font-size: 8.5pt;"
                                      " letter-spacing: 1px; padding-top: 6px;"));
  return label;
}

QFormLayout* form_layout() {
  auto* form = new QFormLayout;
  form->setLabelAlignment(Qt::AlignLeft | Qt::AlignVCenter);
  form->setFieldGrowthPolicy(QFormLayout::AllNonFixedFieldsGrow);
  form->setHorizontalSpacing(14);
  form->setVerticalSpacing(6);
  form->setContentsMargins(0, 0, 0, 0);
  return form;
}

QString capitalised_sentence(QString text) {
  if (!text.isEmpty()) text[0] = text[0].toUpper();
  if (!text.endsWith('.')) text += '.';
  return text;
}

}  // namespace

SettingsPanel::SettingsPanel(QWidget* parent)
    : QWidget(parent),
      norm_(new QButtonGroup(this)),
      lr_(new QComboBox),
      more_button_(new QToolButton),
      more_(new QWidget),
      device_(new QComboBox),
      device_found_(new QLabel),
      corpus_label_(new QLabel),
      message_(new QLabel),
      refusal_timer_(new QTimer(this)),
      buttons_(new QWidget),
      course_note_(new QLabel) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(12, 6, 12, 12);
  layout->setSpacing(6);

  // Norm placement, each with the update rule it stands for.
  layout->addWidget(section_label(tr("Norm placement")));
  auto* norm_grid = new QGridLayout;
  norm_grid->setHorizontalSpacing(14);
  norm_grid->setVerticalSpacing(4);
  QFont formula_font(QStringLiteral("DejaVu Serif"));
  formula_font.setItalic(true);
  const NormPlacement placements[] = {NormPlacement::Pre, NormPlacement::Post};
  for (int i = 0; i < 2; ++i) {
    auto* radio = new QRadioButton(i == 0 ? tr("Pre-norm") : tr("Post-norm"));
    auto* formula = new QLabel(QString::fromUtf8(normlab::formula(placements[i])));
    formula->setFont(formula_font);
    formula->setStyleSheet(QStringLiteral("color: #333;"));
    formula->setBuddy(radio);
    radio->setToolTip(i == 0 ? tr("Normalise each sub-layer's input; the residual stream is never rescaled")
                             : tr("Normalise after each residual addition, as in the 2017 Transformer"));
    norm_->addButton(radio, i);
    norm_grid->addWidget(radio, i, 0);
    norm_grid->addWidget(formula, i, 1);
  }
  norm_grid->setColumnStretch(1, 1);
  norm_->button(0)->setChecked(true);
  layout->addLayout(norm_grid);

  layout->addWidget(section_label(tr("Schedule")));
  auto* schedule = form_layout();
  lr_->setObjectName(QStringLiteral("learningRate"));
  lr_->setEditable(true);
  lr_->addItems({QStringLiteral("1e-3"), QStringLiteral("6e-3")});
  lr_->setValidator(new LearningRateValidator(lr_));
  lr_->setInsertPolicy(QComboBox::NoInsert);
  lr_->setToolTip(tr("Peak learning rate after warmup: the course compares 1e-3 and 6e-3; any value in (0, 1]"));
  const QString lr_reason = tr("Peak learning rate takes a number such as 6e-3 or 0.0006");
  connect(lr_->lineEdit(), &QLineEdit::inputRejected, this, [this, lr_reason] { show_refusal(lr_reason); });
  connect(lr_, &QComboBox::currentTextChanged, this, &SettingsPanel::revalidate);
  warmup_ = spin_box(tr("Warmup"), 1, 10'000'000);
  steps_ = spin_box(tr("Steps"), 1, 10'000'000);
  warmup_->setSuffix(tr(" steps"));
  schedule->addRow(tr("Peak learning rate"), lr_);
  schedule->addRow(tr("Warmup"), warmup_);
  schedule->addRow(tr("Steps"), steps_);
  layout->addLayout(schedule);

  more_button_->setText(tr("More settings"));
  more_button_->setCheckable(true);
  more_button_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  more_button_->setAutoRaise(true);
  more_button_->setStyleSheet(QStringLiteral(
      "QToolButton { font-weight: 600; padding: 4px 0; border: none; background: transparent; color: #1b3a5c; }"));
  connect(more_button_, &QToolButton::toggled, this, &SettingsPanel::set_more_shown);
  layout->addWidget(more_button_);

  auto* more_layout = new QVBoxLayout(more_);
  more_layout->setContentsMargins(0, 0, 0, 0);
  more_layout->setSpacing(6);
  more_layout->addWidget(section_label(tr("Model")));
  auto* model = form_layout();
  layers_ = spin_box(tr("Layers"), 1, 64);
  d_model_ = spin_box(tr("Width"), 8, 4096);
  heads_ = spin_box(tr("Heads"), 1, 4096);
  vocab_ = spin_box(tr("Vocabulary"), 64, 65536);
  context_ = spin_box(tr("Context"), 2, 4096);
  context_->setSuffix(tr(" tokens"));
  model->addRow(tr("Layers"), layers_);
  model->addRow(tr("Width (d_model)"), d_model_);
  model->addRow(tr("Heads"), heads_);
  model->addRow(tr("Vocabulary"), vocab_);
  model->addRow(tr("Context"), context_);
  more_layout->addLayout(model);

  more_layout->addWidget(section_label(tr("Training")));
  auto* training = form_layout();
  batch_ = spin_box(tr("Batch"), 1, 4096);
  batch_->setSuffix(tr(" sequences"));
  eval_interval_ = spin_box(tr("Evaluate every"), 1, 10'000'000);
  eval_interval_->setSuffix(tr(" steps"));
  clip_ = new QDoubleSpinBox;
  clip_->setRange(0, 1e6);
  clip_->setDecimals(2);
  clip_->setSingleStep(0.25);
  clip_->setSpecialValueText(tr("off"));
  clip_->setToolTip(tr("Clip the gradient norm at this value; 0 = off (the course uses no clipping)"));
  connect(clip_, qOverload<double>(&QDoubleSpinBox::valueChanged), this, &SettingsPanel::revalidate);
  seed_ = spin_box(tr("Seed"), 0, std::numeric_limits<int>::max());
  training->addRow(tr("Batch"), batch_);
  training->addRow(tr("Gradient clipping"), clip_);
  training->addRow(tr("Evaluate every"), eval_interval_);
  training->addRow(tr("Seed"), seed_);
  more_layout->addLayout(training);

  more_layout->addWidget(section_label(tr("Device and data")));
  auto* data = form_layout();
  device_->addItem(tr("Auto"), QStringLiteral("auto"));
  device_->addItem(tr("CPU"), QStringLiteral("cpu"));
  device_->addItem(tr("CUDA GPU"), QStringLiteral("cuda"));
  device_->setToolTip(tr("Auto takes the GPU when LibTorch sees one"));
  connect(device_, &QComboBox::currentIndexChanged, this, &SettingsPanel::revalidate);
  device_found_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  device_found_->setText(tr("Looking for a GPU\u2026"));
  auto* device_box = new QVBoxLayout;
  device_box->setSpacing(2);
  device_box->addWidget(device_);
  device_box->addWidget(device_found_);
  data->addRow(tr("Device"), device_box);
  threads_ = spin_box(tr("CPU threads"), 0, 1024);
  threads_->setSpecialValueText(tr("one per core"));
  threads_->setToolTip(tr("Threads LibTorch trains with on the CPU; fewer leave room for other work"));
  data->addRow(tr("CPU threads"), threads_);

  corpus_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  corpus_label_->setMinimumWidth(60);
  auto* open_corpus = new QPushButton(tr("Open\u2026"));
  auto* default_corpus = new QPushButton(tr("Default"));
  open_corpus->setToolTip(tr("Train on any UTF-8 text file of at least %1 bytes").arg(kMinCorpusBytes));
  default_corpus->setToolTip(tr("Go back to the King James Bible"));
  connect(open_corpus, &QPushButton::clicked, this, &SettingsPanel::choose_corpus);
  connect(default_corpus, &QPushButton::clicked, this, [this] { set_corpus({}); });
  auto* corpus_buttons = new QHBoxLayout;
  corpus_buttons->addWidget(open_corpus);
  corpus_buttons->addWidget(default_corpus);
  corpus_buttons->addStretch();
  auto* corpus_box = new QVBoxLayout;
  corpus_box->setSpacing(4);
  corpus_box->addWidget(corpus_label_);
  corpus_box->addLayout(corpus_buttons);
  data->addRow(tr("Corpus"), corpus_box);
  more_layout->addLayout(data);

  auto* reset = new QPushButton(tr("Restore course settings"));
  reset->setToolTip(tr("The course's model and schedule, scaled for this machine; keeps device and corpus"));
  connect(reset, &QPushButton::clicked, this, [this] {
    TrainConfig defaults = scaled(TrainConfig{}, gpu_found_ ? Scale::Full : Scale::Cpu);
    const TrainConfig now = config();
    defaults.device = now.device;
    defaults.threads = now.threads;
    defaults.corpus_path = now.corpus_path;
    set_config(defaults);
  });
  more_layout->addSpacing(4);
  more_layout->addWidget(reset, 0, Qt::AlignLeft);
  layout->addWidget(more_);

  message_->setWordWrap(true);
  message_->setObjectName(QStringLiteral("settingsMessage"));
  message_->setStyleSheet(QStringLiteral(
      "#settingsMessage { color: #8a1c1c; background: #fdecea; border: 1px solid #f3c1bd;"
      " border-radius: 3px; padding: 5px 7px; }"));
  message_->hide();
  layout->addWidget(message_);

  refusal_timer_->setSingleShot(true);
  refusal_timer_->setInterval(kRefusalShownMs);
  connect(refusal_timer_, &QTimer::timeout, this, &SettingsPanel::revalidate);

  layout->addSpacing(6);
  layout->addWidget(buttons_);
  course_note_->setWordWrap(true);
  course_note_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  course_note_->hide();
  layout->addWidget(course_note_);
  layout->addStretch(1);

  // Separate forms, one column: give every label the width of the widest.
  const QList<QFormLayout*> forms = {schedule, model, training, data};
  int label_width = 0;
  for (QFormLayout* form : forms) {
    for (int row = 0; row < form->rowCount(); ++row) {
      if (QLayoutItem* label = form->itemAt(row, QFormLayout::LabelRole)) label_width = std::max(label_width, label->sizeHint().width());
    }
  }
  for (QFormLayout* form : forms) {
    for (int row = 0; row < form->rowCount(); ++row) {
      if (QLayoutItem* label = form->itemAt(row, QFormLayout::LabelRole)) label->widget()->setMinimumWidth(label_width);
    }
  }

  set_corpus({});
  set_more_shown(true);
  set_config(TrainConfig{});
}

QSpinBox* SettingsPanel::spin_box(const QString& what, int min, int max) {
  auto* box = new QSpinBox;
  box->setRange(min, max);
  box->setAccelerated(true);
  const QString reason = tr("%1 takes a whole number from %2 to %3").arg(what).arg(min).arg(max);
  box->setToolTip(reason);
  // The box refuses keystrokes that cannot give a value in range; say why.
  if (auto* edit = box->findChild<QLineEdit*>()) {
    connect(edit, &QLineEdit::inputRejected, this, [this, reason] { show_refusal(reason); });
  }
  connect(box, &QSpinBox::textChanged, this, [this, box, reason] {
    if (!box->hasAcceptableInput()) show_refusal(reason);
  });
  connect(box, &QSpinBox::valueChanged, this, &SettingsPanel::revalidate);
  return box;
}

TrainConfig SettingsPanel::config() const {
  TrainConfig c = base_;
  c.name.clear();
  c.model.norm = norm_->checkedId() == 1 ? NormPlacement::Post : NormPlacement::Pre;
  bool ok = false;
  const double lr = QLocale::c().toDouble(lr_->currentText().trimmed(), &ok);
  c.peak_lr = ok ? lr : std::numeric_limits<double>::quiet_NaN();
  c.warmup_steps = warmup_->value();
  c.steps = steps_->value();
  c.model.layers = layers_->value();
  c.model.d_model = d_model_->value();
  c.model.heads = heads_->value();
  c.model.vocab = vocab_->value();
  c.model.context = context_->value();
  c.batch_size = batch_->value();
  c.eval_interval = eval_interval_->value();
  c.clip_grad_norm = clip_->value();
  c.seed = std::uint64_t(seed_->value());
  c.device = device_->currentData().toString().toStdString();
  c.threads = threads_->value();
  c.corpus_path = corpus_path_.toStdString();
  return c;
}

void SettingsPanel::set_config(const TrainConfig& c) {
  base_ = c;
  norm_->button(c.model.norm == NormPlacement::Post ? 1 : 0)->setChecked(true);
  lr_->setCurrentText(lr_text(c.peak_lr));
  warmup_->setValue(c.warmup_steps);
  steps_->setValue(c.steps);
  layers_->setValue(c.model.layers);
  d_model_->setValue(c.model.d_model);
  heads_->setValue(c.model.heads);
  vocab_->setValue(c.model.vocab);
  context_->setValue(c.model.context);
  batch_->setValue(c.batch_size);
  eval_interval_->setValue(c.eval_interval);
  clip_->setValue(c.clip_grad_norm);
  seed_->setValue(int(std::min<std::uint64_t>(c.seed, std::numeric_limits<int>::max())));
  const int device = device_->findData(QString::fromStdString(c.device));
  device_->setCurrentIndex(device < 0 ? 0 : device);
  threads_->setValue(c.threads);
  set_corpus(QString::fromStdString(c.corpus_path));
  revalidate();
}

QString SettingsPanel::problem() const {
  if (!lr_->lineEdit()->hasAcceptableInput()) {
    return tr("Peak learning rate: type a number above 0 and at most 1, such as 6e-3.");
  }
  try {
    validate(config());
  } catch (const UserError& error) {
    return capitalised_sentence(QString::fromStdString(error.what()));
  }
  return {};
}

void SettingsPanel::show_refusal(const QString& reason) {
  message_->setText(capitalised_sentence(reason));
  message_->show();
  refusal_timer_->start();
}

void SettingsPanel::revalidate() {
  const QString why = problem();
  if (!refusal_timer_->isActive()) {
    message_->setText(why);
    message_->setVisible(!why.isEmpty());
  }
  const bool valid = why.isEmpty();
  if (valid != valid_) {
    valid_ = valid;
    emit validity_changed(valid);
  }
}

void SettingsPanel::set_more_shown(bool shown) {
  more_button_->setChecked(shown);
  more_button_->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
  more_->setVisible(shown);
}

void SettingsPanel::set_corpus(const QString& path) {
  corpus_path_ = path;
  corpus_label_->setText(path.isEmpty() ? tr("King James Bible (built in)") : QFileInfo(path).fileName());
  corpus_label_->setToolTip(path.isEmpty() ? tr("Generated once with the `bible` program and cached") : path);
  revalidate();
}

void SettingsPanel::choose_corpus() {
  const QString start = corpus_path_.isEmpty() ? QString() : QFileInfo(corpus_path_).absolutePath();
  const QString path = QFileDialog::getOpenFileName(this, tr("Train on a text file"), start,
                                                    tr("Text files (*.txt *.md);;All files (*)"));
  if (path.isEmpty()) return;
  try {
    load_corpus(path.toStdString());  // refuse it now rather than when a run starts
  } catch (const std::exception& error) {
    show_refusal(tr("Corpus not used: %1").arg(QString::fromStdString(error.what())));
    return;
  }
  set_corpus(path);
}

void SettingsPanel::set_device(const Environment& found) {
  const bool gpu = found.device == "cuda";
  gpu_found_ = gpu;
  device_found_->setText(gpu ? tr("Found: CUDA, %1").arg(qstr(found.device_name))
                             : tr("Found: %1 (no GPU)").arg(qstr(found.device_name)));
  if (auto* model = qobject_cast<QStandardItemModel*>(device_->model())) {
    QStandardItem* cuda = model->item(device_->findData(QStringLiteral("cuda")));
    cuda->setEnabled(gpu);
    cuda->setText(gpu ? tr("CUDA GPU") : tr("CUDA GPU (none found)"));
  }
  if (!gpu && device_->currentData() == QStringLiteral("cuda")) {
    device_->setCurrentIndex(device_->findData(QStringLiteral("auto")));
    show_refusal(tr("No CUDA GPU here: device set to Auto"));
  }
}

void SettingsPanel::add_actions(QAction* start, QAction* stop, QAction* course) {
  auto button = [](QAction* action) {
    auto* b = new QToolButton;
    b->setDefaultAction(action);
    b->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    b->setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    b->setMinimumHeight(34);
    return b;
  };
  auto* grid = new QGridLayout(buttons_);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(6);
  QToolButton* start_button = button(start);
  start_button->setObjectName(QStringLiteral("startButton"));
  start_button->setStyleSheet(QStringLiteral(
      "#startButton { font-weight: 600; color: white; background: #1f5fb0; border: 1px solid #174a8a;"
      " border-radius: 4px; padding: 4px 10px; }"
      "#startButton:hover { background: #2468bf; }"
      "#startButton:pressed { background: #174a8a; }"
      "#startButton:disabled { background: #9fb3cc; border-color: #9fb3cc; }"));
  grid->addWidget(start_button, 0, 0);
  grid->addWidget(button(stop), 0, 1);
  grid->addWidget(button(course), 1, 0, 1, 2);
}

void SettingsPanel::set_course_note(const QString& text) {
  course_note_->setText(text);
  course_note_->setVisible(!text.isEmpty());
}

namespace {
const char* const kGroup = "next-run";
}  // namespace

void SettingsPanel::save(QSettings& s) const {
  const TrainConfig c = config();
  s.beginGroup(kGroup);
  s.setValue("norm", qstr(to_string(c.model.norm)));
  s.setValue("lr", lr_->currentText());
  s.setValue("warmup", c.warmup_steps);
  s.setValue("steps", c.steps);
  s.setValue("layers", c.model.layers);
  s.setValue("d_model", c.model.d_model);
  s.setValue("heads", c.model.heads);
  s.setValue("vocab", c.model.vocab);
  s.setValue("context", c.model.context);
  s.setValue("batch", c.batch_size);
  s.setValue("eval_interval", c.eval_interval);
  s.setValue("eval_batches", c.eval_batches);
  s.setValue("clip", c.clip_grad_norm);
  s.setValue("seed", qulonglong(c.seed));
  s.setValue("device", qstr(c.device));
  s.setValue("threads", c.threads);
  s.setValue("corpus", corpus_path_);
  s.setValue("more_shown", more_button_->isChecked());
  s.endGroup();
}

bool SettingsPanel::restore(QSettings& s) {
  s.beginGroup(kGroup);
  const bool saved = s.contains("steps");
  if (saved) {
    TrainConfig c = config();
    c.model.norm = s.value("norm").toString() == QStringLiteral("post") ? NormPlacement::Post : NormPlacement::Pre;
    bool ok = false;
    const double lr = QLocale::c().toDouble(s.value("lr").toString(), &ok);
    if (ok) c.peak_lr = lr;
    c.warmup_steps = s.value("warmup", c.warmup_steps).toInt();
    c.steps = s.value("steps", c.steps).toInt();
    c.model.layers = s.value("layers", c.model.layers).toInt();
    c.model.d_model = s.value("d_model", c.model.d_model).toInt();
    c.model.heads = s.value("heads", c.model.heads).toInt();
    c.model.vocab = s.value("vocab", c.model.vocab).toInt();
    c.model.context = s.value("context", c.model.context).toInt();
    c.batch_size = s.value("batch", c.batch_size).toInt();
    c.eval_interval = s.value("eval_interval", c.eval_interval).toInt();
    c.eval_batches = s.value("eval_batches", c.eval_batches).toInt();
    c.clip_grad_norm = s.value("clip", c.clip_grad_norm).toDouble();
    c.seed = s.value("seed", qulonglong(c.seed)).toULongLong();
    c.device = s.value("device", qstr(c.device)).toString().toStdString();
    c.threads = s.value("threads", c.threads).toInt();
    c.corpus_path = s.value("corpus").toString().toStdString();
    set_config(c);
  }
  set_more_shown(s.value("more_shown", true).toBool());
  s.endGroup();
  return saved;
}

}  // namespace normlab::ui
