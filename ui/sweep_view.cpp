#include "sweep_view.h"

#include <QBuffer>
#include <QCheckBox>
#include <QComboBox>
#include <QFileDialog>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QPushButton>
#include <QSettings>
#include <QSignalBlocker>
#include <QSpinBox>
#include <QSplitter>
#include <QStyle>
#include <QSvgRenderer>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "core/runs/config_fields.h"
#include "core/runs/run_text.h"
#include "core/sweeps/sweep_chart.h"
#include "core/system/atomic_file.h"
#include "lab/lab.h"
#include "lab/qstring.h"

#include "format.h"
#include "loss_chart.h"
#include "loss_chart_view.h"

namespace normlab::ui {

namespace {

constexpr int kRefreshMs = 200;      // results change when runs end, not with every step
constexpr double kPointRadius = 12;  // pixels within which a click picks a point

QString no_point_text() { return SweepView::tr("Click a point to see its runs' curves here."); }

}  // namespace

// The summary chart: the picture sweep_chart_svg draws, at the widget's size, with the
// point under the pointer described and a click reported.
class SweepPlot : public QWidget {
 public:
  SweepPlot() {
    setMouseTracking(true);
    // Not 220: the placements' second row of check boxes and the hint below the chart take
    // the rest of a 700-pixel window.
    setMinimumSize(560, 176);
  }

  SweepChart chart;
  QString empty_text;
  std::function<QString(const SweepMark&)> describe;
  std::function<void(const SweepMark&)> clicked;

  SweepChart sized() const {
    SweepChart c = chart;
    c.width = width();
    c.height = height();
    return c;
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter painter(this);
    QSvgRenderer(QByteArray::fromStdString(sweep_chart_svg(sized()))).render(&painter, QRectF(rect()));
    if (chart.results.empty()) {
      painter.setPen(QColor(0x5f, 0x6b, 0x7a));
      painter.drawText(rect().adjusted(80, 60, -240, -70), Qt::AlignCenter | Qt::TextWordWrap, empty_text);
    }
  }

  void mouseMoveEvent(QMouseEvent* event) override {
    const std::optional<SweepMark> mark = mark_at(event->position());
    setCursor(mark ? Qt::PointingHandCursor : Qt::ArrowCursor);
    if (mark && describe) QToolTip::showText(event->globalPosition().toPoint(), describe(*mark), this);
    else QToolTip::hideText();
  }

  void mousePressEvent(QMouseEvent* event) override {
    if (const std::optional<SweepMark> mark = mark_at(event->position()); mark && clicked) clicked(*mark);
  }

 private:
  std::optional<SweepMark> mark_at(QPointF pos) const {
    std::optional<SweepMark> nearest;
    double best = kPointRadius;
    for (const SweepMark& mark : sweep_chart_marks(sized())) {
      const double d = std::hypot(mark.cx - pos.x(), mark.cy - pos.y());
      if (d <= best) best = d, nearest = mark;
    }
    return nearest;
  }
};

SweepView::SweepView(lab::Lab& lab, Hooks hooks, QWidget* parent)
    : QWidget(parent),
      lab_(lab),
      hooks_(std::move(hooks)),
      preset_(new QComboBox),
      setting_(new QComboBox),
      values_(new QLineEdit),
      seeds_(new QSpinBox),
      fixed_(new QLabel),
      cost_(new QLabel),
      start_(new QPushButton(tr("Start sweep"))),
      stop_(new QPushButton(tr("Stop sweep"))),
      export_(new QPushButton(tr("Export"))),
      plot_(new SweepPlot),
      point_title_(new QLabel),
      curves_(new LossChart(lab.store())),
      curves_view_(new LossChartView(curves_)) {
  build_controls();
  curves_->set_only_runs(QSet<int>{});
  curves_->set_smoothing(0.8);
  plot_->empty_text =
      tr("No run of this sweep has finished yet. Start the sweep to train its runs; each point "
         "appears here as its run ends, and runs trained before with the same settings count at once.");
  plot_->describe = [this](const SweepMark& mark) {
    const SweepPoint& p = mark.point;
    QString text = tr("<b>%1</b>, %2").arg(lab::qstr(info(p.placement).label), point_label(p.x));
    if (std::isfinite(p.mean)) {
      text += p.runs > 1 ? tr("<br>mean %1 nats over %2 runs (%3 to %4)")
                               .arg(loss_text(p.mean))
                               .arg(p.runs)
                               .arg(loss_text(p.min), loss_text(p.max))
                         : tr("<br>final held-out %1 nats").arg(loss_text(p.mean));
    }
    if (p.stalled > 0) text += tr("<br>stalled at the baseline: %n run(s)", nullptr, p.stalled);
    if (p.diverged > 0) text += tr("<br>diverged: %n run(s)", nullptr, p.diverged);
    return text + tr("<br><i>click: show the curves</i>");
  };
  plot_->clicked = [this](const SweepMark& mark) { show_point(mark.point.placement, mark.point.x); };

  refresh_timer_.setSingleShot(true);
  refresh_timer_.setInterval(kRefreshMs);
  connect(&refresh_timer_, &QTimer::timeout, this, &SweepView::refresh);
  const lab::RunStore& store = lab_.store();
  connect(&store, &lab::RunStore::run_added, this, &SweepView::schedule_refresh);
  connect(&store, &lab::RunStore::run_removed, this, &SweepView::schedule_refresh);
  connect(&store, &lab::RunStore::status_changed, this, &SweepView::schedule_refresh);
  connect(&lab_, &lab::Lab::sweep_changed, this, &SweepView::schedule_refresh);
  // The live estimate follows the running run.
  connect(&lab_, &lab::Lab::progress_changed, this, [this] {
    if (!refresh_timer_.isActive()) refresh_timer_.start(1000);
  });
  restore_controls();
  refresh();
}

QWidget* SweepView::summary_plot() const { return plot_; }

void SweepView::build_controls() {
  for (const SweepPresetInfo& preset : kSweepPresets) {
    preset_->addItem(lab::qstr(preset.label), int(preset.value));
    preset_->setItemData(preset_->count() - 1, lab::qstr(preset.help), Qt::ToolTipRole);
  }
  preset_->addItem(tr("Custom"), -1);
  preset_->setItemData(preset_->count() - 1, tr("Your own setting, values and placements"), Qt::ToolTipRole);
  for (const SweepSettingInfo& setting : kSweepSettings) {
    const ConfigField& field = config_field(setting.key);
    setting_->addItem(lab::qstr(field.label), lab::qstr(field.key));
  }
  values_->setToolTip(tr("The values to try, separated by commas: 2, 4, 8 or 3e-4, 1e-3"));
  values_->setMinimumWidth(120);
  seeds_->setRange(1, 100);
  seeds_->setToolTip(tr("Runs per point with seeds %1, %1 + 1, \u2026: the chart shows their mean and range, since "
                        "one run can mislead at a high learning rate")
                         .arg(TrainConfig{}.seed));
  fixed_->setWordWrap(true);
  fixed_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  cost_->setWordWrap(true);
  start_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  start_->setToolTip(
      tr("Queue the runs this sweep still lacks; runs that trained before with the same settings are "
         "reused"));
  stop_->setIcon(style()->standardIcon(QStyle::SP_MediaStop));
  stop_->setToolTip(tr("Stop the sweep's running run (its points are kept) and take its other runs out of the queue"));
  auto* menu = new QMenu(export_);
  menu->addAction(tr("Summary as CSV\u2026"), this, [this] { export_dialog(QStringLiteral("csv")); });
  menu->addAction(tr("Summary as JSON\u2026"), this, [this] { export_dialog(QStringLiteral("json")); });
  menu->addAction(tr("Chart as PNG\u2026"), this, [this] { export_dialog(QStringLiteral("png")); });
  menu->addAction(tr("Chart as SVG\u2026"), this, [this] { export_dialog(QStringLiteral("svg")); });
  export_->setMenu(menu);
  connect(start_, &QPushButton::clicked, this, &SweepView::start);
  connect(stop_, &QPushButton::clicked, this, &SweepView::stop);

  // Two rows, so the tab fits beside the settings on a 1280-pixel screen.
  auto* row = new QHBoxLayout;
  row->setSpacing(6);
  row->addWidget(new QLabel(tr("Sweep")));
  row->addWidget(preset_);
  row->addSpacing(10);
  row->addWidget(new QLabel(tr("Vary")));
  row->addWidget(setting_);
  row->addWidget(values_, 1);
  row->addSpacing(10);
  row->addWidget(new QLabel(tr("Seeds")));
  row->addWidget(seeds_);
  auto* placements_row = new QHBoxLayout;
  placements_row->setSpacing(10);
  placements_row->addWidget(new QLabel(tr("Placements")), 0, Qt::AlignTop);
  // In rows of four: all of them in one row would widen the tab past what the settings leave.
  constexpr int kPerRow = 4;
  auto* placement_grid = new QGridLayout;
  placement_grid->setHorizontalSpacing(10);
  placement_grid->setVerticalSpacing(2);
  placements_row->addLayout(placement_grid);
  for (const PlacementInfo& placement : kPlacements) {
    auto* box = new QCheckBox(lab::qstr(placement.label));
    box->setToolTip(QStringLiteral("%1\n%2").arg(lab::qstr(placement.formula), lab::qstr(placement.help)));
    const int index = int(placements_.size());
    placements_.emplace_back(placement.value, box);
    placement_grid->addWidget(box, index / kPerRow, index % kPerRow);
    connect(box, &QCheckBox::toggled, this, [this] {
      save_controls();
      refresh();
    });
  }
  placements_row->addStretch(1);

  auto* actions = new QHBoxLayout;
  actions->addWidget(cost_, 1);
  actions->addWidget(start_);
  actions->addWidget(stop_);
  actions->addWidget(export_);

  point_title_->setObjectName(QStringLiteral("pointTitle"));
  point_title_->setText(no_point_text());
  const QString choose = tr("Click a point of the sweep above to draw its runs here.");
  curves_view_->set_empty_texts(choose, choose);
  point_title_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  auto* below = new QWidget;
  auto* below_layout = new QVBoxLayout(below);
  below_layout->setContentsMargins(0, 4, 0, 0);
  below_layout->addWidget(point_title_);
  below_layout->addWidget(curves_view_, 1);
  below_layout->addStretch(0);  // the hint at the top while there is no chart
  point_title_->setSizePolicy(QSizePolicy::Preferred, QSizePolicy::Fixed);
  curves_view_->setObjectName(QStringLiteral("pointCurves"));
  curves_view_->setMinimumHeight(160);
  // Only once a point is chosen: an empty chart took the room of the hint, whose text in
  // its middle fell below the tab's fold on a 1280 x 800 screen, half hidden.
  curves_view_->hide();
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(plot_);
  split->addWidget(below);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setChildrenCollapsible(false);

  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 6, 8, 4);
  layout->addLayout(row);
  layout->addLayout(placements_row);
  layout->addWidget(fixed_);
  layout->addLayout(actions);
  layout->addWidget(split, 1);

  connect(preset_, &QComboBox::activated, this, [this] {
    const int preset = preset_->currentData().toInt();
    choose_preset(preset < 0 ? std::nullopt : std::optional<SweepPreset>(SweepPreset(preset)));
  });
  connect(setting_, &QComboBox::currentIndexChanged, this, [this] {
    // Another setting's values would be refused: a rate is no number of layers.
    fill_values(starting_values(setting_->currentData().toString().toStdString(), scale()));
    save_controls();
    refresh();
  });
  connect(values_, &QLineEdit::textEdited, this, [this] {
    save_controls();
    schedule_refresh();
  });
  connect(seeds_, &QSpinBox::valueChanged, this, [this] {
    save_controls();
    refresh();
  });
}

void SweepView::choose_preset(std::optional<SweepPreset> preset) {
  {
    const QSignalBlocker block(preset_);
    preset_->setCurrentIndex(preset_->findData(preset ? int(*preset) : -1));
  }
  if (preset) {
    const Sweep chosen = sweep_preset(*preset, TrainConfig{}, scale());
    {
      const QSignalBlocker block(setting_);  // the preset's values, not the setting's
      setting_->setCurrentIndex(setting_->findData(lab::qstr(chosen.setting)));
    }
    fill_values(chosen.values);
    set_placements(chosen.placements);  // refreshes
  }
  save_controls();
  refresh();
}

void SweepView::set_setting(const std::string& key) { setting_->setCurrentIndex(setting_->findData(lab::qstr(key))); }

Scale SweepView::scale() const {
  const bool gpu = lab_.on_gpu() && (!hooks_.next_run || hooks_.next_run().device != "cpu");
  return gpu ? Scale::Full : Scale::Cpu;
}

void SweepView::fill_values(const std::vector<std::string>& values) {
  QStringList texts;
  for (const std::string& value : values) texts << lab::qstr(value);
  values_->setText(texts.join(QStringLiteral(", ")));
}

void SweepView::set_values(const QString& comma_separated) {
  values_->setText(comma_separated);
  save_controls();
  refresh();
}

void SweepView::set_placements(const std::vector<NormPlacement>& placements) {
  for (auto& [placement, box] : placements_) {
    const QSignalBlocker block(box);
    box->setChecked(std::find(placements.begin(), placements.end(), placement) != placements.end());
  }
  save_controls();
  refresh();
}

void SweepView::set_seeds(int seeds) { seeds_->setValue(seeds); }

Sweep SweepView::sweep() const {
  const TrainConfig next = hooks_.next_run ? hooks_.next_run() : TrainConfig{};
  const int preset = preset_->currentData().toInt();
  Sweep s;
  if (preset >= 0) {
    s = sweep_preset(SweepPreset(preset), next, scale());  // its rate and warmup over the next run's
  } else {
    s.base = next;
    s.name = config_field(setting_->currentData().toString().toStdString()).flag + "-sweep";
  }
  s.base.name.clear();
  s.setting = setting_->currentData().toString().toStdString();
  s.values.clear();
  for (const QString& value : values_->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
    if (!value.trimmed().isEmpty()) s.values.push_back(value.trimmed().toStdString());
  }
  s.placements.clear();
  for (const auto& [placement, box] : placements_) {
    if (box->isChecked()) s.placements.push_back(placement);
  }
  s.seeds = seeds_->value();
  expand(s);  // says what is wrong, if anything
  return s;
}

void SweepView::schedule_refresh() {
  if (!refresh_timer_.isActive() || refresh_timer_.remainingTime() > kRefreshMs) refresh_timer_.start(kRefreshMs);
}

void SweepView::refresh() {
  refresh_timer_.stop();
  sweep_.reset();
  problem_.clear();
  standing_ = {};
  try {
    sweep_ = sweep();
    standing_ = lab::stand(*sweep_, lab_);
  } catch (const UserError& e) {
    problem_ = lab::qstr(e.what());
  }
  const auto shown = [this](const SweepRun& run) {
    return run.placement == shown_point_->first && run.x == shown_point_->second;
  };
  if (shown_point_ && std::none_of(standing_.runs.begin(), standing_.runs.end(), shown)) {
    // Its caption and curves would describe a point the sweep no longer has.
    shown_point_.reset();
    point_title_->setText(no_point_text());
    curves_view_->hide();
    shown_runs_.clear();
    curves_->set_only_runs(QSet<int>{});
  }
  plot_->chart.results = standing_.results;
  plot_->chart.setting = sweep_ ? sweep_->setting : "layers";
  plot_->chart.title = sweep_ ? sweep_chart_title(*sweep_) : std::string();
  plot_->chart.selected = shown_point_;
  plot_->update();

  if (shown_point_) {
    QList<int> ids;
    for (std::size_t i = 0; i < standing_.runs.size(); ++i) {
      if (standing_.ids[i] && shown(standing_.runs[i])) ids << standing_.ids[i];
    }
    shown_runs_ = ids;
    curves_->set_only_runs(QSet<int>(ids.begin(), ids.end()));
  }
  update_controls();
}

void SweepView::start() {
  refresh();
  if (!sweep_) {
    if (hooks_.report) hooks_.report(tr("Sweep not started"), problem_);
    return;
  }
  lab_.start_sweep(*sweep_);
  refresh();
}

void SweepView::stop() {
  lab_.stop_sweep();
  refresh();
}

QString SweepView::cost_text() const {
  if (!problem_.isEmpty()) return problem_;
  const std::size_t missing = standing_.to_train.size(), in_progress = standing_.pending.size(),
                    resuming = standing_.to_resume.size();
  QString text =
      tr("%n run(s): ", nullptr, int(standing_.runs.size())) + tr("%1 done").arg(standing_.ended_with_result());
  if (in_progress > 0) text += tr(", %1 queued or training").arg(in_progress);
  if (resuming > 0) text += tr(", %1 to go on from a checkpoint").arg(resuming);
  if (missing > 0) text += tr(", %1 to train").arg(missing);
  if (missing == 0 && in_progress == 0 && resuming == 0) return text;
  const lab::SweepTime time = lab_.sweep_time(standing_, isVisible());
  if (time.total.seconds < 0) {
    return text + (time.total.timing ? tr(" \u00b7 timing a few steps to estimate the time\u2026")
                                     : tr(" \u00b7 time: known after the first run's first steps"));
  }
  const QString ahead =
      time.ahead_seconds > 0
          ? tr(", %1 of it for other runs queued first").arg(lab::qstr(duration_text(time.ahead_seconds)))
          : QString();
  return text + (in_progress == 0 ? tr(" \u00b7 about %1%2 (%3)") : tr(" \u00b7 about %1 left%2 (%3)"))
                    .arg(lab::qstr(duration_text(time.total.seconds)), ahead, estimate_basis_text(time.total));
}

void SweepView::update_controls() {
  const bool ok = problem_.isEmpty();
  cost_->setText(cost_text());
  cost_->setStyleSheet(ok ? QString() : QStringLiteral("color: #b3261e;"));
  const bool writable = !lab_.read_only();
  start_->setEnabled(ok && writable &&
                     (!standing_.to_train.empty() || !standing_.to_resume.empty() ||
                      std::any_of(standing_.pending.begin(), standing_.pending.end(),
                                  [this](int id) { return !lab_.queue().is_queued(id); })));
  stop_->setEnabled(lab_.sweep_in_progress());
  export_->setEnabled(!standing_.results.empty());
  if (sweep_) {
    const TrainConfig& b = sweep_->base;
    const bool preset = preset_->currentData().toInt() >= 0;
    QStringList fixed;
    if (sweep_->setting != "layers") fixed << tr("%1 layers").arg(b.model.layers);
    fixed << tr("width %1").arg(b.model.d_model) << lab::qstr(kNormTypes[std::size_t(b.model.norm_type)].label);
    if (sweep_->setting != "peak_lr") fixed << tr("lr %1").arg(lr_text(b.peak_lr));
    if (sweep_->setting != "warmup_steps") fixed << tr("warmup %1").arg(b.warmup_steps);
    fixed << tr("%1 steps of %2\u00d7%3 tokens").arg(b.steps).arg(b.batch_size).arg(b.model.context)
          << (b.clip_grad_norm > 0 ? tr("clip %1").arg(b.clip_grad_norm) : tr("no clipping"));
    if (sweep_->seeds == 1) fixed << tr("seed %1").arg(b.seed);
    fixed_->setText(tr("Fixed: %1. From the next run's settings%2.")
                        .arg(fixed.join(QStringLiteral(" \u00b7 ")),
                             preset ? tr(", except the rate and warmup the preset sets") : QString()));
  } else {
    fixed_->clear();
  }
}

QString SweepView::point_label(double x) const {
  std::string value;
  for (const SweepRun& run : standing_.runs) {
    if (run.x == x) value = run.value;  // as the user typed it: "3e-4", not 0.0003
  }
  const std::string setting = sweep_ ? sweep_->setting : "";
  if (setting == "layers") return tr("%1 layers").arg(lab::qstr(value));
  if (setting == "peak_lr") return tr("lr %1").arg(lab::qstr(value));
  return tr("%1 %2").arg(lab::qstr(setting.empty() ? "" : config_field(setting).noun), lab::qstr(value));
}

void SweepView::show_point(NormPlacement placement, double x) {
  shown_point_ = {placement, x};
  refresh();
  curves_view_->show();
  const QString what = tr("%1, %2").arg(lab::qstr(info(placement).label), point_label(x));
  point_title_->setText(
      shown_runs_.isEmpty()
          ? tr("%1: no run yet").arg(what)
          : tr("%1: %n run(s), training (light) and held-out (dark) loss", nullptr, int(shown_runs_.size())).arg(what));
  emit runs_shown(shown_runs_);
}

void SweepView::export_csv(const QString& path) const {
  write_file_atomically(path.toStdString(), summary_csv(sweep_ ? sweep_->setting : "value", standing_.results));
}

void SweepView::export_json(const QString& path) const {
  if (!sweep_) throw UserError(problem_.toStdString());
  write_file_atomically(path.toStdString(), sweep_json_text(*sweep_, standing_.results));
}

void SweepView::export_picture(const QString& path, QSize pixels) const {
  SweepChart chart = plot_->chart;
  chart.selected.reset();
  chart.width = pixels.width();
  chart.height = pixels.height();
  const std::string svg = sweep_chart_svg(chart);
  if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
    write_file_atomically(path.toStdString(), svg);
    return;
  }
  // Drawn twice as large and halved, as the other exports, so lines and text stay sharp.
  QImage image(pixels * 2, QImage::Format_ARGB32_Premultiplied);
  image.fill(Qt::white);
  {
    QPainter painter(&image);
    painter.setRenderHint(QPainter::Antialiasing);
    QSvgRenderer(QByteArray::fromStdString(svg)).render(&painter, QRectF(image.rect()));
  }
  image.setDevicePixelRatio(2);
  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  image.save(&buffer, "PNG");
  write_file_atomically(path.toStdString(), bytes.toStdString());
}

void SweepView::export_dialog(const QString& suffix) {
  const QString stem = lab::qstr(file_stem(sweep_ ? sweep_->name : "sweep"));
  const QString filter = suffix.toUpper() + tr(" files (*.%1)").arg(suffix);
  QString path = QFileDialog::getSaveFileName(this, tr("Export the sweep"), stem + QLatin1Char('.') + suffix, filter);
  if (path.isEmpty()) return;
  if (!path.endsWith(QLatin1Char('.') + suffix, Qt::CaseInsensitive)) path += QLatin1Char('.') + suffix;
  try {
    if (suffix == QLatin1String("csv")) export_csv(path);
    else if (suffix == QLatin1String("json")) export_json(path);
    else export_picture(path, plot_->size().expandedTo(QSize(900, 560)));
  } catch (const UserError& e) {
    if (hooks_.report) hooks_.report(tr("Export failed"), lab::qstr(e.what()));
  }
}

void SweepView::save_controls() const {
  QSettings settings;
  settings.setValue(QStringLiteral("sweep/preset"), preset_->currentData());
  settings.setValue(QStringLiteral("sweep/setting"), setting_->currentData());
  settings.setValue(QStringLiteral("sweep/values"), values_->text());
  QStringList placements;
  for (const auto& [placement, box] : placements_) {
    if (box->isChecked()) placements << lab::qstr(to_string(placement));
  }
  settings.setValue(QStringLiteral("sweep/placements"), placements);
  settings.setValue(QStringLiteral("sweep/seeds"), seeds_->value());
}

void SweepView::restore_controls() {
  QSettings settings;
  if (!settings.contains(QStringLiteral("sweep/values"))) {
    choose_preset(SweepPreset::Depth);
    return;
  }
  const QSignalBlocker a(preset_), b(setting_), c(seeds_);
  preset_->setCurrentIndex(std::max(0, preset_->findData(settings.value(QStringLiteral("sweep/preset")).toInt())));
  setting_->setCurrentIndex(
      std::max(0, setting_->findData(settings.value(QStringLiteral("sweep/setting")).toString())));
  values_->setText(settings.value(QStringLiteral("sweep/values")).toString());
  const QStringList placements = settings.value(QStringLiteral("sweep/placements")).toStringList();
  for (auto& [placement, box] : placements_) {
    const QSignalBlocker block(box);
    box->setChecked(placements.contains(lab::qstr(to_string(placement))));
  }
  seeds_->setValue(std::clamp(settings.value(QStringLiteral("sweep/seeds"), 1).toInt(), 1, 100));
}

}  // namespace normlab::ui
