#include "inside_view.h"

#include <QAbstractItemView>
#include <QComboBox>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QImage>
#include <QLabel>
#include <QMouseEvent>
#include <QPainter>
#include <QPainterPath>
#include <QPushButton>
#include <QSignalBlocker>
#include <QSvgGenerator>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "core/runs/run_title.h"
#include "core/training/layer_stats.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "elided_label.h"
#include "format.h"
#include "heatmap_math.h"
#include "run_choice.h"
#include "run_colors.h"
#include "run_details.h"

namespace normlab::ui {

namespace {

constexpr int kRedrawMs = 33;      // as the loss chart: at most one redraw per frame at 30 Hz
constexpr int kRunNameChars = 16;  // "post-norm lr 1e-3"

// Where the parts of the plot go at a given size: painting and hit-testing share it. In a
// tall plot the profile across layers lies under the heatmaps; in a wide, short one (the
// view under a 12-row run table at 1280 x 800) it stands to the right of the colour bar,
// whose ticks are its axis, so that nothing needs scrolling.
struct PlotLayout {
  QRect panels[2];  // the heatmaps themselves, without their labels
  QRect colour_bar;
  QRect profile;
  bool beside = false;  // the profile to the right of the colour bar, sharing its ticks
};

PlotLayout layout_for(QSize size) {
  const int w = size.width(), h = size.height();
  const int bar_width = 92, left = 46, gap = 58, top = 30;
  PlotLayout l;
  l.beside = w >= 2.4 * h;
  if (l.beside) {
    const int height = h - top - 40;
    const int profile_width = std::clamp(int(w * 0.27), 160, 360);
    const int heat_right = w - profile_width - 16 - bar_width - 16;  // the last step's label clear of the bar
    const int panel_width = std::max(20, (heat_right - left - gap) / 2);
    for (int i = 0; i < 2; ++i) l.panels[i] = QRect(left + i * (panel_width + gap), top, panel_width, height);
    l.colour_bar = QRect(heat_right + 24, top, 14, height);
    l.profile = QRect(w - profile_width - 8, top, profile_width, height);
    return l;
  }
  const int heat_bottom = int(h * 0.6);
  const int panel_width = std::max(20, (w - left - bar_width - gap - 16) / 2);
  for (int i = 0; i < 2; ++i)
    l.panels[i] = QRect(left + i * (panel_width + gap), top, panel_width, heat_bottom - top - 36);
  l.colour_bar = QRect(w - bar_width + 8, top, 14, heat_bottom - top - 36);
  l.profile = QRect(left + 24, heat_bottom + 30, w - left - 24 - bar_width - 16, h - heat_bottom - 30 - 40);
  return l;
}

QString value_text(double v) { return std::isfinite(v) ? QString::number(v, 'g', 3) : QStringLiteral("\u2014"); }

// Why a panel's run (or no run) has no values of the statistic.
QString why_no_values(const lab::RunEntry* run, const StatisticInfo& info) {
  if (!run) return QObject::tr("No run to show.");
  const RunRecord& r = run->record;
  if (!records(info, r.config.model)) {
    return QObject::tr("None: this run's design has no such parameter; it is recorded for %1.")
        .arg(lab::qstr(info.only_for));
  }
  if (r.config.layer_stats_every == 0) {
    return QObject::tr("Not recorded: \u201cInside the model\u201d was off for this run.");
  }
  if (r.status == RunStatus::Queued) return QObject::tr("Queued: its values come as it trains.");
  if (r.steps.empty()) {
    return r.status == RunStatus::Running ? QObject::tr("No values yet: they come with its first steps.")
                                          : QObject::tr("None: the run ended before its first step.");
  }
  return QObject::tr("None in this run's file: it was recorded before NormLab kept this statistic.");
}

// The index of the last recorded step at or before `step` (the last one when step < 0).
std::optional<std::size_t> index_at(const Series& s, int step) {
  if (s.steps.empty()) return std::nullopt;
  if (step < 0) return s.steps.size() - 1;
  const auto after = std::upper_bound(s.steps.begin(), s.steps.end(), step);
  if (after == s.steps.begin()) return std::nullopt;
  return std::size_t(after - s.steps.begin() - 1);
}

}  // namespace

// The drawing itself; the view around it holds the controls.
class InsidePlot : public QWidget {
 public:
  InsidePlot(const lab::RunStore& store, std::function<void(QString)> on_hover)
      : store_(store), on_hover_(std::move(on_hover)) {
    setMouseTracking(true);
    setMinimumSize(600, 200);  // beside the settings in a 1024-pixel-wide window, under 12 table rows
  }

  std::string statistic;
  int run_ids[2] = {0, 0};
  int hover_step = -1;  // -1: the latest step

  const Series* series_of(int panel) const {
    const lab::RunEntry* run = store_.find(run_ids[panel]);
    return run ? run->record.find_series(statistic) : nullptr;
  }

  void paint(QPainter& p, QSize size) const {
    p.fillRect(QRect(QPoint(0, 0), size), Qt::white);
    p.setRenderHint(QPainter::Antialiasing);
    const StatisticInfo* info = find_statistic(statistic);
    const std::vector<const Series*> shown{series_of(0), series_of(1)};
    const auto scale = info && info->signed_values ? linear_scale_of(shown) : log_scale_of(shown);
    if (!info || !scale) {
      p.setPen(QColor(0x5f, 0x6b, 0x7a));
      const lab::RunEntry* runs[2] = {store_.find(run_ids[0]), store_.find(run_ids[1])};
      const bool other_designs = info && std::none_of(std::begin(runs), std::end(runs), [&](const lab::RunEntry* run) {
                                   return run && records(*info, run->record.config.model);
                                 });
      p.drawText(
          QRect(QPoint(0, 0), size), Qt::AlignCenter | Qt::TextWordWrap,
          other_designs
              ? QObject::tr("Neither run has this parameter: it is recorded for %1.").arg(lab::qstr(info->only_for))
              : QObject::tr("No values of this statistic in these runs yet.\nRuns record them while they train, "
                            "unless \u201cInside the model\u201d is off in the settings; older run files have none."));
      return;
    }
    const PlotLayout l = layout_for(size);
    for (int panel = 0; panel < 2; ++panel) paint_panel(p, l.panels[panel], panel, *scale);
    paint_colour_bar(p, l.colour_bar, *scale, *info, l.beside);
    paint_profile(p, l.profile, *scale, *info, l.beside);
  }

  // "run: step 20, layer 3: 2.1e-06 L2 norm" for a point over a panel; empty elsewhere.
  QString hit(QPoint point) {
    const PlotLayout l = layout_for(size());
    for (int panel = 0; panel < 2; ++panel) {
      const QRect& r = l.panels[panel];
      const Series* s = series_of(panel);
      if (!r.contains(point) || !s || s->steps.empty()) continue;
      const std::size_t i = column_index(point.x() - r.left(), r.width(), s->steps.size());
      const int layer = s->width() - 1 - std::min(s->width() - 1, (point.y() - r.top()) * s->width() / r.height());
      hover_step = s->steps[i];
      const lab::RunEntry* run = store_.find(run_ids[panel]);
      const StatisticInfo* info = find_statistic(statistic);
      return QObject::tr("%1: step %2%3: %4 %5")
          .arg(lab::qstr(display_name(run->record.config)))
          .arg(hover_step)
          .arg(s->layers ? QObject::tr(", layer %1").arg(layer + 1) : QString())
          .arg(value_text(s->at(i, layer)), lab::qstr(info->unit));
    }
    return {};
  }

 protected:
  void paintEvent(QPaintEvent*) override {
    QPainter p(this);
    paint(p, size());
  }
  void mouseMoveEvent(QMouseEvent* event) override {
    const QString text = hit(event->position().toPoint());
    if (text.isEmpty()) return;
    on_hover_(text);
    update();
  }
  void leaveEvent(QEvent*) override {
    hover_step = -1;
    on_hover_({});
    update();
  }

 private:
  void paint_panel(QPainter& p, const QRect& r, int panel, const ColourScale& scale) const {
    const lab::RunEntry* run = store_.find(run_ids[panel]);
    const Series* s = series_of(panel);
    p.setPen(run ? run_colour(*run) : Qt::black);
    p.drawText(QRect(r.left(), 4, r.width(), 22), Qt::AlignLeft | Qt::AlignVCenter | Qt::TextSingleLine,
               run ? lab::qstr(display_name(run->record.config)) : QObject::tr("(no run)"));
    p.setPen(QColor(0xb0, 0xb7, 0xc0));
    p.drawRect(r.adjusted(0, 0, -1, -1));
    if (!s || s->steps.empty()) {
      p.setPen(QColor(0x5f, 0x6b, 0x7a));
      p.drawText(r.adjusted(12, 12, -12, -12), Qt::AlignCenter | Qt::TextWordWrap,
                 why_no_values(run, *find_statistic(statistic)));
      return;
    }
    const int rows = s->width();
    QImage image(r.width(), rows, QImage::Format_RGB32);
    for (int x = 0; x < r.width(); ++x) {
      const std::size_t i = column_index(x, r.width(), s->steps.size());
      for (int layer = 0; layer < rows; ++layer) {
        const double position = scale_position(scale, s->at(i, layer));
        const Rgb c = std::isnan(position) ? Rgb{200, 200, 200} : colour_at(position);
        image.setPixel(x, rows - 1 - layer, qRgb(c.r, c.g, c.b));  // layer 1 at the bottom, as data flows up
      }
    }
    p.drawImage(r, image);
    // Labels: layers on the left, a few recorded steps below.
    p.setPen(QColor(0x33, 0x33, 0x33));
    const int label_every = rows <= 12 ? 1 : (rows + 7) / 8;
    for (int layer = 0; layer < rows; layer += label_every) {
      const int y = r.bottom() - int((layer + 0.5) * r.height() / rows);
      p.drawText(QRect(r.left() - 40, y - 8, 34, 16), Qt::AlignRight | Qt::AlignVCenter,
                 s->layers ? QString::number(layer + 1) : QObject::tr("all"));
    }
    for (int k = 0; k <= 4; ++k) {
      const int x = r.left() + k * (r.width() - 1) / 4;
      const int step = s->steps[column_index(x - r.left(), r.width(), s->steps.size())];
      p.drawLine(x, r.bottom() + 1, x, r.bottom() + 4);
      p.drawText(QRect(x - 30, r.bottom() + 5, 60, 16), Qt::AlignCenter, QString::number(step));
    }
    // The longest title the panel's width holds: at 1024 x 700 the long one was cut to
    // "p (each recorded step one colun".
    QString step_title = QObject::tr("step");
    for (const QString& title :
         {QObject::tr("step (each recorded step one column)"), QObject::tr("step (a column each)")}) {
      if (p.fontMetrics().horizontalAdvance(title) <= r.width()) {
        step_title = title;
        break;
      }
    }
    p.drawText(QRect(r.left(), r.bottom() + 20, r.width(), 16), Qt::AlignCenter, step_title);
    if (panel == 0 && s->layers) {
      p.save();
      // Turned, the text's top faces left: its box reaches from the turning point to the
      // right, clear of the plot's edge (reaching left, the "l" was cut to "ayer").
      p.translate(r.left() - 44, r.center().y());
      p.rotate(-90);
      p.drawText(QRect(-40, 0, 80, 16), Qt::AlignCenter, QObject::tr("layer"));
      p.restore();
    }
    if (const auto i = index_at(*s, hover_step); i && hover_step >= 0) {
      const int x = r.left() + int((double(*i) + 0.5) * r.width() / s->steps.size());
      p.setPen(QPen(Qt::white, 1, Qt::DashLine));
      p.drawLine(x, r.top(), x, r.bottom());
    }
  }

  void paint_colour_bar(QPainter& p, const QRect& r, const ColourScale& scale, const StatisticInfo& info,
                        bool beside) const {
    QLinearGradient gradient(r.bottomLeft(), r.topLeft());
    for (int k = 0; k <= 10; ++k) {
      const Rgb c = colour_at(k / 10.0);
      gradient.setColorAt(k / 10.0, QColor(c.r, c.g, c.b));
    }
    p.fillRect(r, gradient);
    p.setPen(QColor(0x33, 0x33, 0x33));
    for (double tick : colour_bar_ticks(scale, 7)) {
      const int y = r.bottom() - int(scale_position(scale, tick) * r.height());
      p.drawLine(r.right() + 1, y, r.right() + 4, y);
      p.drawText(QRect(r.right() + 6, y - 8, 64, 16), Qt::AlignLeft | Qt::AlignVCenter, value_text(tick));
    }
    // Under the bar; beside the profile, above it, clear of the heatmap's step labels.
    const QString unit = lab::qstr(info.unit) + (scale.linear ? QString() : QObject::tr(", log"));
    if (beside) {
      p.drawText(QRect(r.left() - 8, 4, 90, 22), Qt::AlignLeft | Qt::AlignVCenter, unit);
    } else {
      p.drawText(QRect(r.left() - 8, r.bottom() + 4, 90, 32), Qt::AlignLeft | Qt::TextWordWrap, unit);
    }
  }

  // `beside`: right of the colour bar, whose tick labels stand for its own.
  void paint_profile(QPainter& p, const QRect& r, const ColourScale& scale, const StatisticInfo& info,
                     bool beside) const {
    p.setPen(QColor(0xb0, 0xb7, 0xc0));
    p.drawRect(r.adjusted(0, 0, -1, -1));
    p.setPen(QColor(0x33, 0x33, 0x33));
    auto y_of = [&](double v) { return r.bottom() - scale_position(scale, v) * r.height(); };
    for (double tick : colour_bar_ticks(scale, 5)) {
      p.setPen(QColor(0xe3, 0xe6, 0xea));
      p.drawLine(QPointF(r.left(), y_of(tick)), QPointF(r.right(), y_of(tick)));
      if (beside) continue;
      p.setPen(QColor(0x33, 0x33, 0x33));
      p.drawText(QRectF(r.left() - 64, y_of(tick) - 8, 60, 16), Qt::AlignRight | Qt::AlignVCenter, value_text(tick));
    }
    // Beside the heatmaps the statistic is named by the list above and the colour bar's unit.
    QString title = beside ? QObject::tr("Across layers") : lab::qstr(info.label) + QObject::tr(" across layers");
    QList<int> steps;              // beside: the steps shown, said in the title
    int legend_right = r.right();  // entries above the plot, from the right, clear of the lines
    // Each of the two entries gets half the room the title leaves; long run names are elided.
    const int entry_room = (r.width() - p.fontMetrics().horizontalAdvance(title) - 24) / 2 - 16;
    for (int panel = 0; panel < 2; ++panel) {
      const Series* s = series_of(panel);
      const auto i = s ? index_at(*s, hover_step) : std::nullopt;
      if (!i) continue;
      const lab::RunEntry* run = store_.find(run_ids[panel]);
      const int n = s->width();
      auto x_of = [&](int layer) {
        return n == 1 ? r.center().x() : r.left() + 12 + layer * (r.width() - 24.0) / (n - 1);
      };
      QPainterPath line;
      p.setPen(QPen(run_colour(*run), 2));
      p.setBrush(run_colour(*run));
      for (int layer = 0; layer < n; ++layer) {
        const double v = s->at(*i, layer);
        if (std::isnan(scale_position(scale, v))) continue;
        const QPointF point(x_of(layer), y_of(v));
        line.elementCount() == 0 ? line.moveTo(point) : line.lineTo(point);
        p.drawEllipse(point, 3, 3);
      }
      p.setBrush(Qt::NoBrush);
      p.drawPath(line);
      for (int layer = 0; layer < n && panel == 0; ++layer) {
        p.setPen(QColor(0x33, 0x33, 0x33));
        p.drawText(QRectF(x_of(layer) - 20, r.bottom() + 3, 40, 16), Qt::AlignCenter,
                   n == 1 ? QObject::tr("all") : QString::number(layer + 1));
      }
      if (beside) {  // no room for names: the heatmaps' titles above say each colour's run
        steps << s->steps[*i];
        continue;
      }
      const QString step_text = QObject::tr("\u25cf %1, step %2").arg(QString()).arg(s->steps[*i]);
      const QString name = p.fontMetrics().elidedText(lab::qstr(display_name(run->record.config)), Qt::ElideMiddle,
                                                      entry_room - p.fontMetrics().horizontalAdvance(step_text));
      const QString entry = QObject::tr("\u25cf %1, step %2").arg(name).arg(s->steps[*i]);
      const int entry_width = p.fontMetrics().horizontalAdvance(entry);
      p.drawText(QRect(legend_right - entry_width, r.top() - 22, entry_width, 18), Qt::AlignRight, entry);
      legend_right -= entry_width + 16;
    }
    if (beside && !steps.isEmpty()) {
      std::sort(steps.begin(), steps.end());
      steps.erase(std::unique(steps.begin(), steps.end()), steps.end());
      title = steps.size() == 1 ? QObject::tr("Across layers, step %1").arg(steps[0])
                                : QObject::tr("Across layers, steps %1 and %2").arg(steps[0]).arg(steps[1]);
    }
    p.setPen(QColor(0x33, 0x33, 0x33));
    p.drawText(QRect(r.left(), r.top() - 22, r.width(), 18), Qt::AlignLeft, title);
    p.drawText(QRect(r.left(), r.bottom() + 18, r.width(), 16), Qt::AlignCenter,
               QObject::tr("layer (1 = next to the input)"));
  }

  const lab::RunStore& store_;
  std::function<void(QString)> on_hover_;
};

InsideView::InsideView(lab::RunStore& store, QWidget* parent)
    : QWidget(parent),
      store_(store),
      statistic_(new QComboBox),
      runs_{new QComboBox, new QComboBox},
      readout_(new QLabel),
      about_statistic_(new ElidedLabel),
      verdicts_(new QLabel),
      plot_(new InsidePlot(store, [this](const QString& text) { readout_->setText(text); })) {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(8, 6, 8, 4);
  auto* bar = new QHBoxLayout;  // the statistic, and the export
  bar->addWidget(new QLabel(tr("Statistic")));
  for (const StatisticInfo& info : layer_statistics()) statistic_->addItem(lab::qstr(info.label), lab::qstr(info.name));
  bar->addWidget(statistic_);
  auto* export_button = new QPushButton(tr("Export image\u2026"));
  connect(export_button, &QPushButton::clicked, this, [this] {
    const QString path = QFileDialog::getSaveFileName(this, tr("Export view"), QStringLiteral("inside-the-model.png"),
                                                      tr("PNG image (*.png);;SVG drawing (*.svg)"));
    if (!path.isEmpty() && !export_image(path)) readout_->setText(tr("Could not write %1").arg(path));
  });
  // What the statistic measures, beside its list in the room up to the export: on a line of
  // its own it pushed the plot's foot below the fold at 1280 x 800 (cut there, whole in the tooltip).
  about_statistic_->setStyleSheet(QStringLiteral("color: #5f6b7a;"));
  bar->addWidget(about_statistic_, 1);
  bar->addWidget(export_button);
  layout->addLayout(bar);
  auto* panels = new QHBoxLayout;  // the two runs, on a row of their own: beside the rest they outgrew a small window
  for (int panel = 0; panel < 2; ++panel) {
    panels->addWidget(new QLabel(panel == 0 ? tr("Left") : tr("Right")));
    // A few words of a name, whatever the names: a long one widened the window past the
    // screen. The list opens as wide as its longest name, and the tooltip has it whole.
    runs_[panel]->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    runs_[panel]->setMinimumContentsLength(kRunNameChars);
    panels->addWidget(runs_[panel], 1);
    connect(runs_[panel], &QComboBox::currentIndexChanged, this, [this, panel] {
      runs_[panel]->setToolTip(runs_[panel]->currentText());
      chosen_[panel] = true;
      plot_->run_ids[panel] = runs_[panel]->currentData().toInt();
      plot_->update();
      show_verdicts();
    });
  }
  layout->addLayout(panels);
  verdicts_->setObjectName(QStringLiteral("insideVerdicts"));
  verdicts_->setWordWrap(true);
  verdicts_->setTextFormat(Qt::RichText);
  verdicts_->setTextInteractionFlags(Qt::LinksAccessibleByMouse | Qt::LinksAccessibleByKeyboard);
  // At least a line; the layout gives it the lines its width needs. A wrapped label's own
  // least height is taken at a narrow width (98 px here), which made the view scroll.
  verdicts_->setMinimumHeight(verdicts_->fontMetrics().lineSpacing());
  connect(verdicts_, &QLabel::linkActivated, this, [this](const QString& link) {
    if (link.startsWith(QLatin1String("statistic:"))) {
      show_statistic(link.mid(link.indexOf(QLatin1Char(':')) + 1));
    } else {
      emit evidence_requested(link, {plot_->run_ids[0], plot_->run_ids[1]});
    }
  });
  layout->addWidget(verdicts_);
  layout->addWidget(plot_, 1);
  readout_->setMinimumHeight(20);
  layout->addWidget(readout_);

  connect(statistic_, &QComboBox::currentIndexChanged, this, [this] {
    plot_->statistic = statistic_->currentData().toString().toStdString();
    if (const StatisticInfo* info = find_statistic(plot_->statistic))
      about_statistic_->set_full_text(lab::qstr(info->help));
    plot_->update();
  });
  show_statistic(QStringLiteral("attention_grad_norm"));

  redraw_.setSingleShot(true);
  redraw_.setInterval(kRedrawMs);
  connect(&redraw_, &QTimer::timeout, plot_, qOverload<>(&QWidget::update));
  connect(&redraw_, &QTimer::timeout, this, &InsideView::show_verdicts);  // their evidence grows with the points
  connect(&store_, &lab::RunStore::points_changed, this, [this](int id) {
    if (id == plot_->run_ids[0] || id == plot_->run_ids[1]) schedule_redraw();
  });
  connect(&store_, &lab::RunStore::run_added, this, &InsideView::refresh_runs);
  connect(&store_, &lab::RunStore::run_removed, this, &InsideView::refresh_runs);
  connect(&store_, &lab::RunStore::status_changed, this, &InsideView::refresh_runs);
  connect(&store_, &lab::RunStore::verdict_changed, this, [this](int id) {
    if (id == plot_->run_ids[0] || id == plot_->run_ids[1]) show_verdicts();
  });
  refresh_runs();
}

// Each panel's verdict in a few words under its picker, the gradient's clause a link to that
// statistic, the whole sentence in the tooltip: the two paragraphs of sentences took 100 px
// and pushed the profile across layers below the fold at 1280 x 800.
void InsideView::show_verdicts() {
  QString cells, tooltip;
  for (int panel = 0; panel < 2; ++panel) {
    const lab::RunEntry* run = store_.find(plot_->run_ids[panel]);
    const bool shown = run && !(panel == 1 && plot_->run_ids[1] == plot_->run_ids[0]);
    QString cell;
    if (shown) {
      const RunVerdict& v = run->verdict;
      const QString side = panel == 0 ? tr("Left") : tr("Right");  // as the pickers say it
      cell = QStringLiteral("%1: <span style='color:%2'>\u25cf</span> %3")
                 .arg(side, verdict_colour(v.verdict).name(), lab::qstr(headline(v)).toHtmlEscaped());
      const std::string gradient = gradient_clause(v.evidence);
      if (!gradient.empty()) {
        cell +=
            QStringLiteral("; <a href='statistic:attention_grad_norm'>%1</a>").arg(lab::qstr(gradient).toHtmlEscaped());
      }
      tooltip += (tooltip.isEmpty() ? QString() : QStringLiteral("\n\n")) + side + QStringLiteral(": ") +
                 lab::qstr(v.sentence);
    }
    cells += QStringLiteral("<td width='50%'>%1</td>").arg(cell);
  }
  verdicts_->setText(
      QStringLiteral("<table width='100%' cellspacing='0' cellpadding='0'><tr>%1</tr></table>").arg(cells));
  verdicts_->setToolTip(tooltip);
}

QString InsideView::verdicts_text() const { return verdicts_->text(); }

void InsideView::show_statistic(const QString& name) { statistic_->setCurrentIndex(statistic_->findData(name)); }

void InsideView::show_runs(int left_id, int right_id) {
  runs_[0]->setCurrentIndex(runs_[0]->findData(left_id));
  runs_[1]->setCurrentIndex(runs_[1]->findData(right_id));
}

void InsideView::show_picked(const QList<int>& run_ids) {
  if (!run_ids.isEmpty()) {
    const int other = plot_->run_ids[1] == run_ids.front() ? plot_->run_ids[0] : plot_->run_ids[1];
    show_runs(run_ids.front(), run_ids.size() > 1 ? run_ids[1] : other);
    return;
  }
  for (int panel = 0; panel < 2; ++panel) {
    if (!chosen_[panel]) plot_->run_ids[panel] = fill_run_choice(runs_[panel], store_, panel, 0);
  }
  show_verdicts();
  schedule_redraw();
}

QWidget* InsideView::plot() const { return plot_; }

QRect InsideView::panel_rect(int panel) const { return layout_for(plot_->size()).panels[panel]; }

QString InsideView::readout_at(QPoint plot_point) {
  const QString text = plot_->hit(plot_point);
  readout_->setText(text);
  return text;
}

bool InsideView::export_image(const QString& path) const {
  if (path.endsWith(QStringLiteral(".svg"), Qt::CaseInsensitive)) {
    QSvgGenerator svg;
    svg.setFileName(path);
    svg.setSize(plot_->size());
    svg.setViewBox(QRect(QPoint(0, 0), plot_->size()));
    svg.setTitle(tr("NormLab: inside the model"));
    QPainter painter;
    if (!painter.begin(&svg)) return false;
    plot_->paint(painter, plot_->size());
    return painter.end();
  }
  QImage image(plot_->size() * 2, QImage::Format_ARGB32);
  image.setDevicePixelRatio(2);
  QPainter painter(&image);
  plot_->paint(painter, plot_->size());
  painter.end();
  return image.save(path);
}

void InsideView::schedule_redraw() {
  if (!redraw_.isActive()) redraw_.start();
}

// Both lists hold every run. A panel keeps the run chosen for it, or shown while the user
// is on the view, while that exists (seen: the 6e-3 pair turned into the 1e-3 pair while
// the user watched); otherwise it shows the default pair (run_choice.h).
void InsideView::refresh_runs() {
  for (int panel = 0; panel < 2; ++panel) {
    const bool keep = chosen_[panel] || isVisible();
    plot_->run_ids[panel] = fill_run_choice(runs_[panel], store_, panel, keep ? plot_->run_ids[panel] : 0);
  }
  show_verdicts();
  schedule_redraw();
}

}  // namespace normlab::ui
