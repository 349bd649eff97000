#include "settings_panel.h"

#include <QAbstractSpinBox>
#include <QAction>
#include <QButtonGroup>
#include <QComboBox>
#include <QCoreApplication>
#include <QDoubleSpinBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPushButton>
#include <QRadioButton>
#include <QRegularExpression>
#include <QScrollArea>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QTimer>
#include <QToolButton>
#include <QVBoxLayout>
#include <QValidator>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <type_traits>

#include "core/data/corpora.h"
#include "core/data/corpus.h"
#include "core/runs/presets.h"
#include "lab/qstring.h"

#include "format.h"

namespace normlab::ui {

namespace {

// The panel scrolls under the wheel; a spin box or menu passing under the pointer must not
// change its value on the way. They take the wheel only once focused (clicked or tabbed to).
class WheelWhenFocused : public QObject {
 public:
  using QObject::QObject;

 protected:
  bool eventFilter(QObject* watched, QEvent* event) override {
    auto* widget = qobject_cast<QWidget*>(watched);
    if (event->type() != QEvent::Wheel || !widget || widget->hasFocus() || !widget->parentWidget()) return false;
    QCoreApplication::sendEvent(widget->parentWidget(), event);  // on up to the scroll area
    return true;
  }
};

void take_wheel_when_focused(QWidget* control) {
  control->setFocusPolicy(Qt::StrongFocus);
  control->installEventFilter(new WheelWhenFocused(control));
}

constexpr int kRefusalShownMs = 5000;

// Accepts the rates a field takes, such as (0, 1], typed as 6e-3 or 0.006; refuses
// keystrokes that cannot become a number.
class RateValidator : public QValidator {
 public:
  RateValidator(const ConfigField& field, QObject* parent) : QValidator(parent), field_(field) {}
  State validate(QString& input, int&) const override {
    static const QRegularExpression partial(QStringLiteral(R"(^\d*\.?\d*([eE][-+]?\d*)?$)"));
    const QString text = input.trimmed();
    if (text.isEmpty()) return Intermediate;
    if (!partial.match(text).hasMatch()) return Invalid;
    bool ok = false;
    const double value = QLocale::c().toDouble(text, &ok);
    const bool above_min = field_.above_min ? value > field_.min : value >= field_.min;
    return ok && above_min && value <= field_.max ? Acceptable : Intermediate;
  }

 private:
  const ConfigField& field_;
};

QLabel* section_label(const QString& text) {
  auto* label = new QLabel(text.toUpper());
  label->setStyleSheet(
      QStringLiteral("color: #5f6b7a; font-weight: 600; font-size: 8.5pt;"
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

QString section_title(Section section) {
  switch (section) {
    case Section::Placement: return SettingsPanel::tr("Norm placement");
    case Section::Schedule: return SettingsPanel::tr("Schedule");
    case Section::Model: return SettingsPanel::tr("Model");
    case Section::Training: return SettingsPanel::tr("Training");
    case Section::DeviceAndData: return SettingsPanel::tr("Device and data");
    case Section::Hidden: break;
  }
  return {};
}

// Sections under "More settings"; the others are always shown.
bool under_more(Section section) {
  switch (section) {
    case Section::Placement:
    case Section::Schedule:
    case Section::Hidden: return false;
    case Section::Model:
    case Section::Training:
    case Section::DeviceAndData: return true;
  }
  return false;
}

QString utf8(const std::string& text) { return QString::fromUtf8(text.c_str()); }

}  // namespace

SettingsPanel::SettingsPanel(QWidget* parent)
    : QWidget(parent),
      more_button_(new QToolButton),
      more_(new QWidget),
      device_found_(new QLabel),
      corpus_menu_(new QComboBox),
      message_(new QLabel),
      refusal_timer_(new QTimer(this)),
      buttons_(new QWidget),
      course_note_(new QLabel),
      start_estimate_(new QLabel),
      course_seeds_(new QSpinBox(buttons_)) {  // owned from the start: add_actions lays it out
  // The fields scroll; the message, the buttons and the course note stay in view below them,
  // so Start is never scrolled away however many settings there are.
  auto* scrolled = new QWidget;
  auto* layout = new QVBoxLayout(scrolled);
  layout->setContentsMargins(12, 6, 12, 6);
  layout->setSpacing(6);
  auto* more_layout = new QVBoxLayout(more_);
  more_layout->setContentsMargins(0, 0, 0, 0);
  more_layout->setSpacing(6);

  // One section after another, in the table's order; each gets a heading and a form.
  const auto& fields = config_fields();
  controls_.assign(fields.size(), nullptr);
  labels_.assign(fields.size(), nullptr);
  QList<QFormLayout*> forms;
  for (Section section :
       {Section::Placement, Section::Schedule, Section::Model, Section::Training, Section::DeviceAndData}) {
    QVBoxLayout* target = under_more(section) ? more_layout : layout;
    target->addWidget(section_label(section_title(section)));
    auto* form = form_layout();
    for (const ConfigField& field : fields) {
      if (field.section == section) add_control(field, form);
    }
    forms << form;
    target->addLayout(form);
    if (section == Section::Schedule) {
      more_button_->setText(tr("More settings"));
      more_button_->setCheckable(true);
      more_button_->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
      more_button_->setAutoRaise(true);
      more_button_->setStyleSheet(QStringLiteral(
          "QToolButton { font-weight: 600; padding: 4px 0; border: none; background: transparent; color: #1b3a5c; }"));
      connect(more_button_, &QToolButton::toggled, this, &SettingsPanel::set_more_shown);
      layout->addWidget(more_button_);
    }
  }

  auto* reset = new QPushButton(tr("Restore course settings"));
  reset->setToolTip(tr("The course's model and schedule, scaled for this machine; keeps device and corpus"));
  connect(reset, &QPushButton::clicked, this, [this] {
    TrainConfig defaults = scaled(TrainConfig{}, gpu_found_ ? Scale::Full : Scale::Cpu);
    copy_device_and_data(defaults);
    set_config(defaults);
  });
  more_layout->addSpacing(4);
  more_layout->addWidget(reset, 0, Qt::AlignLeft);
  layout->addWidget(more_);

  message_->setWordWrap(true);
  message_->setObjectName(QStringLiteral("settingsMessage"));
  message_->setStyleSheet(
      QStringLiteral("#settingsMessage { color: #8a1c1c; background: #fdecea; border: 1px solid #f3c1bd;"
                     " border-radius: 3px; padding: 5px 7px; }"));
  message_->hide();
  layout->addStretch(1);

  refusal_timer_->setSingleShot(true);
  refusal_timer_->setInterval(kRefusalShownMs);
  connect(refusal_timer_, &QTimer::timeout, this, &SettingsPanel::revalidate);

  auto* scroll = new QScrollArea;
  scroll->setWidget(scrolled);
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setMinimumWidth(scrolled->sizeHint().width() + 24);
  course_note_->setWordWrap(true);
  course_note_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  course_note_->hide();
  auto* footer = new QWidget;
  auto* footer_layout = new QVBoxLayout(footer);
  footer_layout->setContentsMargins(12, 0, 12, 12);
  footer_layout->setSpacing(6);
  footer_layout->addWidget(message_);
  footer_layout->addWidget(buttons_);
  footer_layout->addWidget(course_note_);
  auto* outer = new QVBoxLayout(this);
  outer->setContentsMargins(0, 0, 0, 0);
  outer->setSpacing(6);
  outer->addWidget(scroll, 1);
  outer->addWidget(footer);

  // Separate forms, one column: give every label the width of the widest.
  int label_width = 0;
  for (QFormLayout* form : forms) {
    for (int row = 0; row < form->rowCount(); ++row) {
      if (QLayoutItem* label = form->itemAt(row, QFormLayout::LabelRole))
        label_width = std::max(label_width, label->sizeHint().width());
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

void SettingsPanel::add_control(const ConfigField& field, QFormLayout* form) {
  QObject*& control = controls_[std::size_t(&field - config_fields().data())];
  const QString label = utf8(field.label);
  switch (field.widget) {
    case Widget::Buttons: {
      auto* group = new QButtonGroup(this);
      control = group;
      form->addRow(buttons(field, group));
      break;
    }
    case Widget::Rate: {
      QWidget* box = rate_box(field);
      control = box;
      form->addRow(label, box);
      break;
    }
    case Widget::WholeNumber:
    case Widget::Decimal: {
      QWidget* box = spin_box(field);
      box->setObjectName(utf8(field.key));
      control = box;
      form->addRow(label, box);
      labels_[std::size_t(&field - config_fields().data())] = form->labelForField(box);
      break;
    }
    case Widget::Menu: {
      auto* menu = new QComboBox;
      menu->setObjectName(utf8(field.key));
      control = menu;
      QLayout* box = menu_box(field, menu);
      form->addRow(label, box);
      labels_[std::size_t(&field - config_fields().data())] = form->labelForField(box);
      break;
    }
    case Widget::File: form->addRow(label, corpus_box()); break;  // read from corpus_path_
    case Widget::None: break;
  }
}

QLayout* SettingsPanel::buttons(const ConfigField& field, QButtonGroup* group) {
  auto* grid = new QGridLayout;
  grid->setHorizontalSpacing(14);
  grid->setVerticalSpacing(4);
  QFont formula_font(QStringLiteral("DejaVu Serif"));
  formula_font.setItalic(true);
  for (int i = 0; i < int(field.choices.size()); ++i) {
    const Choice& choice = field.choices[std::size_t(i)];
    auto* radio = new QRadioButton(utf8(choice.label));
    auto* formula = new QLabel(utf8(choice.formula));
    formula->setFont(formula_font);
    formula->setStyleSheet(QStringLiteral("color: #333;"));
    formula->setBuddy(radio);
    radio->setToolTip(utf8(choice.help));
    group->addButton(radio, i);
    grid->addWidget(radio, i, 0);
    grid->addWidget(formula, i, 1);
  }
  grid->setColumnStretch(1, 1);
  group->button(0)->setChecked(true);
  connect(group, &QButtonGroup::idToggled, this, &SettingsPanel::revalidate);
  return grid;
}

QWidget* SettingsPanel::rate_box(const ConfigField& field) {
  lr_ = new QComboBox;
  lr_->setObjectName(QStringLiteral("learningRate"));
  lr_->setEditable(true);
  for (const std::string& rate : field.suggestions) lr_->addItem(utf8(rate));
  lr_->setValidator(new RateValidator(field, lr_));
  lr_->setInsertPolicy(QComboBox::NoInsert);
  take_wheel_when_focused(lr_);
  lr_->setToolTip(capitalised_sentence(utf8(field.help + "; any value " + accepted_values(field))));
  const QString reason = tr("%1 takes a number such as 6e-3 or 0.0006").arg(utf8(field.label));
  connect(lr_->lineEdit(), &QLineEdit::inputRejected, this, [this, reason] { show_refusal(reason); });
  connect(lr_, &QComboBox::currentTextChanged, this, [this] {
    if (lr_->lineEdit()->hasAcceptableInput()) withdraw_refusal();
    revalidate();
  });
  return lr_;
}

QWidget* SettingsPanel::spin_box(const ConfigField& field) {
  const QString reason = tr("%1 takes a number %2").arg(utf8(field.label), utf8(accepted_values(field)));
  QAbstractSpinBox* box = nullptr;
  if (field.widget == Widget::Decimal) {
    auto* decimal = new QDoubleSpinBox;
    decimal->setRange(field.min, field.max);
    decimal->setDecimals(2);
    decimal->setSingleStep(field.step);
    connect(decimal, &QDoubleSpinBox::valueChanged, this, &SettingsPanel::revalidate);
    box = decimal;
  } else {
    auto* whole = new QSpinBox;
    constexpr double kIntMax = std::numeric_limits<int>::max();
    whole->setRange(int(field.min), int(std::min(field.max, kIntMax)));
    connect(whole, &QSpinBox::valueChanged, this, &SettingsPanel::revalidate);
    box = whole;
  }
  box->setAccelerated(true);
  take_wheel_when_focused(box);
  box->setSpecialValueText(utf8(field.zero_text));
  box->setToolTip(capitalised_sentence(utf8(field.help)));
  // "1 sequence", "8 sequences": the unit follows the number (ui/plurals picks the form).
  const std::string unit = field.unit;
  const auto unit_for = [unit](int n) {
    return QCoreApplication::translate("SettingsPanel", unit.c_str(), nullptr, n);
  };
  if (auto* spin = qobject_cast<QSpinBox*>(box)) {
    spin->setSuffix(unit_for(spin->value()));
    connect(spin, &QSpinBox::valueChanged, spin, [spin, unit_for](int n) {
      if (const QString suffix = unit_for(n); suffix != spin->suffix()) spin->setSuffix(suffix);
    });
  }
  if (auto* spin = qobject_cast<QDoubleSpinBox*>(box)) spin->setSuffix(unit_for(2));  // "0.5 steps"
  // The box refuses keystrokes that cannot give a value in range; say why.
  if (auto* edit = box->findChild<QLineEdit*>()) {
    connect(edit, &QLineEdit::inputRejected, this, [this, reason] { show_refusal(reason); });
    connect(edit, &QLineEdit::textChanged, this, [this, box, reason] {
      if (!box->hasAcceptableInput()) {
        show_refusal(reason);
      } else {
        withdraw_refusal();  // fixed: the reason no longer holds
      }
    });
  }
  return box;
}

QLayout* SettingsPanel::menu_box(const ConfigField& field, QComboBox* menu) {
  take_wheel_when_focused(menu);
  bool formulas = false;
  for (const Choice& choice : field.choices) {
    menu->addItem(utf8(choice.label), utf8(choice.name));
    if (!choice.help.empty()) menu->setItemData(menu->count() - 1, utf8(choice.help), Qt::ToolTipRole);
    formulas = formulas || !choice.formula.empty();
  }
  menu->setToolTip(capitalised_sentence(utf8(field.help)));
  connect(menu, &QComboBox::currentIndexChanged, this, &SettingsPanel::revalidate);
  auto* box = new QVBoxLayout;
  box->setSpacing(2);
  box->addWidget(menu);
  if (formulas) {  // the chosen norm type's or switch's formula under the menu, as the placements show theirs
    auto* formula = new QLabel;
    formula->setObjectName(utf8(field.key + "_formula"));
    QFont formula_font(QStringLiteral("DejaVu Serif"));
    formula_font.setItalic(true);
    formula->setFont(formula_font);
    formula->setStyleSheet(QStringLiteral("color: #333;"));
    formula->setWordWrap(true);
    const auto show_formula = [formula, &field](int index) {
      formula->setText(index < 0 ? QString() : utf8(field.choices[std::size_t(index)].formula));
      formula->setVisible(!formula->text().isEmpty());
    };
    connect(menu, &QComboBox::currentIndexChanged, formula, show_formula);
    show_formula(menu->currentIndex());
    box->addWidget(formula);
  }
  if (field.key == "device") {  // shows what "auto" found (set_device)
    device_ = menu;
    device_found_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
    device_found_->setText(tr("Looking for a GPU\u2026"));
    box->addWidget(device_found_);
  }
  return box;
}

QLayout* SettingsPanel::corpus_box() {
  corpus_menu_->setObjectName(QStringLiteral("corpusMenu"));
  corpus_menu_->setToolTip(tr("The text the model learns from: `normlab-cli corpora` lists the same"));
  take_wheel_when_focused(corpus_menu_);
  auto* open_corpus = new QPushButton(tr("Open\u2026"));
  open_corpus->setToolTip(tr("Train on any UTF-8 text file of at least %1 bytes").arg(kMinCorpusBytes));
  connect(open_corpus, &QPushButton::clicked, this, &SettingsPanel::choose_corpus);
  connect(corpus_menu_, QOverload<int>::of(&QComboBox::activated), this,
          [this](int index) { set_corpus(corpus_menu_->itemData(index).toString()); });
  auto* box = new QHBoxLayout;
  box->setSpacing(4);
  box->addWidget(corpus_menu_, 1);
  box->addWidget(open_corpus);
  return box;
}

void SettingsPanel::read_control(const ConfigField& field, const QObject* control, TrainConfig& c) const {
  visit_field(field, c, [&](auto& value) {
    using T = std::decay_t<decltype(value)>;
    if (field.widget == Widget::File) {
      if constexpr (std::is_same_v<T, std::string>) value = corpus_path_.toStdString();
    } else if (auto* group = qobject_cast<const QButtonGroup*>(control)) {
      if constexpr (std::is_enum_v<T>) value = T(std::max(0, group->checkedId()));
    } else if (auto* menu = qobject_cast<const QComboBox*>(control); menu && field.widget == Widget::Menu) {
      set_field_text(field, c, menu->currentData().toString().toStdString());
    } else if (auto* rate = qobject_cast<const QComboBox*>(control)) {
      bool ok = false;
      const double number = QLocale::c().toDouble(rate->currentText().trimmed(), &ok);
      if constexpr (std::is_floating_point_v<T>) value = ok ? number : std::numeric_limits<double>::quiet_NaN();
    } else if (auto* whole = qobject_cast<const QSpinBox*>(control)) {
      if constexpr (std::is_arithmetic_v<T>) value = T(whole->value());
    } else if (auto* decimal = qobject_cast<const QDoubleSpinBox*>(control)) {
      if constexpr (std::is_arithmetic_v<T>) value = T(decimal->value());
    }
  });
}

void SettingsPanel::write_control(const ConfigField& field, QObject* control, const TrainConfig& c) {
  visit_field(field, c, [&](const auto& value) {
    using T = std::decay_t<decltype(value)>;
    if (field.widget == Widget::File) {
      if constexpr (std::is_same_v<T, std::string>) set_corpus(QString::fromStdString(value));
    } else if (auto* group = qobject_cast<QButtonGroup*>(control)) {
      if constexpr (std::is_enum_v<T>) group->button(int(value))->setChecked(true);
    } else if (auto* menu = qobject_cast<QComboBox*>(control); menu && field.widget == Widget::Menu) {
      const int found = menu->findData(utf8(field_text(field, c)));
      menu->setCurrentIndex(found < 0 ? 0 : found);
    } else if (auto* rate = qobject_cast<QComboBox*>(control)) {
      if constexpr (std::is_floating_point_v<T>) rate->setCurrentText(lr_text(value));
    } else if (auto* whole = qobject_cast<QSpinBox*>(control)) {
      // A seed beyond what the box holds shows as its largest value.
      if constexpr (std::is_arithmetic_v<T>) whole->setValue(int(std::min<double>(double(value), whole->maximum())));
    } else if (auto* decimal = qobject_cast<QDoubleSpinBox*>(control)) {
      if constexpr (std::is_arithmetic_v<T>) decimal->setValue(double(value));
    }
  });
}

void SettingsPanel::copy_device_and_data(TrainConfig& target) const {
  copy_section(Section::DeviceAndData, config(), target);
}

TrainConfig SettingsPanel::config() const {
  TrainConfig c = base_;
  // Settings taken from a run are the next run's, not its name, label or note.
  c.name.clear();
  c.label.clear();
  c.note.clear();
  const auto& fields = config_fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (controls_[i] || fields[i].widget == Widget::File) read_control(fields[i], controls_[i], c);
  }
  return c;
}

void SettingsPanel::set_config(const TrainConfig& c) {
  base_ = c;
  const auto& fields = config_fields();
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (controls_[i] || fields[i].widget == Widget::File) write_control(fields[i], controls_[i], c);
  }
  revalidate();
}

QString SettingsPanel::problem() const {
  if (!lr_->lineEdit()->hasAcceptableInput()) {
    const ConfigField& rate = config_field("peak_lr");
    return tr("%1: type a number %2, such as 6e-3.").arg(utf8(rate.label), utf8(accepted_values(rate)));
  }
  try {
    validate(config());
    // A corpus by name whose packages are missing: what to install, before any run fails on it.
    if (const NamedCorpus* corpus = find_named_corpus(corpus_path_.toStdString()); corpus && !is_built(*corpus)) {
      if (const auto missing = corpus->missing_packages(); !missing.empty()) {
        QString install = QStringLiteral("sudo apt-get install");
        for (const std::string& package : missing) install += QLatin1Char(' ') + utf8(package);
        return tr("The %1 corpus is built from Debian packages that are not installed; run: %2")
            .arg(utf8(corpus->name), install);
      }
    }
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

void SettingsPanel::withdraw_refusal() {
  if (!refusal_timer_->isActive()) return;
  refusal_timer_->stop();
  revalidate();
}

// A ReZero block has no norm, so the norm type and DyT's α₀ do nothing there, and α₀
// does nothing but with DyT: their controls are greyed out, their values kept. QK-norm
// stays: it normalises queries and keys under every placement, ReZero's too.
void SettingsPanel::update_applicable(const TrainConfig& config) {
  const bool norms = info(config.model.norm).norms;
  const auto set_applies = [this](const char* key, bool applies) {
    const std::size_t i = std::size_t(&config_field(key) - config_fields().data());
    if (auto* control = qobject_cast<QWidget*>(controls_[i])) control->setEnabled(applies);
    if (labels_[i]) labels_[i]->setEnabled(applies);
    if (auto* formula = findChild<QLabel*>(QString::fromLatin1(key) + QStringLiteral("_formula")))
      formula->setEnabled(applies);
  };
  set_applies("norm_type", norms);
  set_applies("dyt_alpha0", norms && config.model.norm_type == NormType::Dyt);
}

void SettingsPanel::revalidate() {
  update_applicable(config());
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
  emit changed();
}

void SettingsPanel::set_more_shown(bool shown) {
  more_button_->setChecked(shown);
  more_button_->setArrowType(shown ? Qt::DownArrow : Qt::RightArrow);
  more_->setVisible(shown);
}

namespace {

// "59.3 MB, 16.7 M tokens": what a built corpus holds, read once per process for each
// version of its file (reading the bookshelf and its tokens takes about half a second).
QString corpus_size(const NamedCorpus& corpus) {
  static std::map<std::string, std::pair<std::filesystem::file_time_type, QString>> known;
  std::error_code error;
  const auto changed = std::filesystem::last_write_time(corpus_cache_file(corpus), error);
  if (error) return {};
  auto& [when, text] = known[corpus.name];
  if (text.isEmpty() || when != changed) {
    when = changed;
    try {
      const auto facts = corpus_facts(corpus, TrainConfig{}.model.vocab);
      text = facts ? QStringLiteral("%1 MB").arg(double(facts->bytes) / 1e6, 0, 'f', 1) : QString();
      if (facts && facts->tokens) text += QStringLiteral(", %1 M tokens").arg(double(*facts->tokens) / 1e6, 0, 'f', 2);
    } catch (const std::exception&) {
      text.clear();
    }
  }
  return text;
}

}  // namespace

void SettingsPanel::fill_corpus_menu(const QString& path) {
  corpus_menu_->clear();
  for (const NamedCorpus& corpus : named_corpora()) {
    const bool built = is_built(corpus);
    const std::vector<std::string> missing = built ? std::vector<std::string>{} : corpus.missing_packages();
    QString install = QStringLiteral("sudo apt-get install");
    for (const std::string& package : missing) install += QLatin1Char(' ') + utf8(package);
    const QString size = built ? corpus_size(corpus) : QString();
    const QString shown = !missing.empty() ? tr("%1 (needs Debian packages)").arg(utf8(corpus.title))
                          : built          ? tr("%1 (%2)").arg(utf8(corpus.title), size)
                                           : tr("%1 (built by its first run)").arg(utf8(corpus.title));
    // The default corpus is the empty setting, as every run file before the names had it.
    corpus_menu_->addItem(shown, corpus.name == kDefaultCorpus ? QString() : utf8(corpus.name));
    QString tip = utf8(corpus.about);
    if (!missing.empty()) tip += QStringLiteral("\n") + tr("Install its packages first: %1").arg(install);
    corpus_menu_->setItemData(corpus_menu_->count() - 1, tip, Qt::ToolTipRole);
  }
  if (corpus_menu_->findData(path) < 0) {  // a file, or a name given on the command line
    corpus_menu_->addItem(QFileInfo(path).fileName(), path);
    corpus_menu_->setItemData(corpus_menu_->count() - 1, path, Qt::ToolTipRole);
  }
  corpus_menu_->setCurrentIndex(corpus_menu_->findData(path));
}

void SettingsPanel::set_corpus(const QString& path) {
  // "kjv" by name is the default, kept as the empty setting.
  corpus_path_ = path == utf8(kDefaultCorpus) ? QString() : path;
  fill_corpus_menu(corpus_path_);
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
  device_found_->setText(gpu ? tr("Found: CUDA, %1").arg(lab::qstr(found.device_name))
                             : tr("Found: %1 (no GPU)").arg(lab::qstr(found.device_name)));
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
  start_button->setStyleSheet(
      QStringLiteral("#startButton { font-weight: 600; color: white; background: #1f5fb0; border: 1px solid #174a8a;"
                     " border-radius: 4px; padding: 4px 10px; }"
                     "#startButton:hover { background: #2468bf; }"
                     "#startButton:pressed { background: #174a8a; }"
                     "#startButton:disabled { background: #9fb3cc; border-color: #9fb3cc; }"));
  grid->addWidget(start_button, 0, 0);
  grid->addWidget(button(stop), 0, 1);
  start_estimate_->setObjectName(QStringLiteral("startEstimate"));
  start_estimate_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  start_estimate_->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);  // the panel's width, not its own
  grid->addWidget(start_estimate_, 1, 0, 1, 2);
  grid->addWidget(button(course), 2, 0);
  course_seeds_->setRange(1, 100);
  course_seeds_->setPrefix(tr("\u00d7 "));
  course_seeds_->setSuffix(tr(" seed"));
  connect(course_seeds_, &QSpinBox::valueChanged, course_seeds_,
          [this](int seeds) { course_seeds_->setSuffix(seeds == 1 ? tr(" seed") : tr(" seeds")); });
  course_seeds_->setMinimumHeight(34);
  course_seeds_->setToolTip(tr("Run the course experiment this many times, with seeds %1, %1 + 1, \u2026; the chart "
                               "then draws each of its five runs as the mean over its seeds with their range")
                                .arg(TrainConfig{}.seed));
  connect(course_seeds_, &QSpinBox::valueChanged, this, &SettingsPanel::course_seeds_changed);
  grid->addWidget(course_seeds_, 2, 1);
}

void SettingsPanel::set_start_estimate(const QString& text, const QString& basis) {
  start_estimate_->setText(text);
  start_estimate_->setToolTip(basis);
}

QString SettingsPanel::start_estimate() const { return start_estimate_->text(); }

int SettingsPanel::course_seeds() const { return course_seeds_->value(); }
void SettingsPanel::set_course_seeds(int seeds) { course_seeds_->setValue(seeds); }

QString SettingsPanel::course_note() const { return course_note_->text(); }

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
  for (const ConfigField& field : config_fields()) {
    s.setValue(QString::fromStdString(field.key), utf8(field_text(field, c)));
  }
  s.setValue("more_shown", more_button_->isChecked());
  s.setValue("course_seeds", course_seeds_->value());
  s.endGroup();
}

bool SettingsPanel::restore(QSettings& s) {
  s.beginGroup(kGroup);
  const bool saved = s.contains("steps");
  if (saved) {
    TrainConfig c = config();
    for (const ConfigField& field : config_fields()) {
      const QString key = QString::fromStdString(field.key);
      if (!s.contains(key)) continue;
      try {
        set_field_text(field, c, s.value(key).toString().toStdString());
      } catch (const UserError&) {
        // A value edited by hand into nonsense: the control keeps what it has.
      }
    }
    set_config(c);
  }
  set_more_shown(s.value("more_shown", true).toBool());
  course_seeds_->setValue(std::clamp(s.value("course_seeds", 1).toInt(), 1, 100));
  s.endGroup();
  return saved;
}

}  // namespace normlab::ui
