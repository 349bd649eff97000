// The unigram baselines: one dashed line per distinct value, each labelled where it
// hides no curve.
#include <QFontMetricsF>
#include <QGraphicsRectItem>
#include <QGraphicsSimpleTextItem>
#include <QLineSeries>
#include <QPen>
#include <QValueAxis>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>

#include "core/runs/config_fields.h"
#include "core/runs/run_title.h"
#include "lab/qstring.h"
#include "lab/run_store.h"

#include "loss_chart_parts.h"

namespace normlab::ui {

namespace {
const QColor kBaselineColour(0x55, 0x55, 0x55, 170);

// Whose each baseline is, where several are drawn: the setting its runs share and the
// others' do not (the baseline depends on the held-out positions evaluated: the corpus,
// the context, the evaluation batches; 6.05 nats at the full scale, 6.13 at the CPU
// scale), else the one run's name, else how many runs.
std::vector<QString> owners(const std::vector<std::vector<const TrainConfig*>>& groups) {
  std::vector<QString> whose(groups.size());
  if (groups.size() < 2) return whose;
  // What the held-out positions depend on first (Trainer: the baseline on the positions
  // the held-out loss averages), then any other setting.
  std::vector<const ConfigField*> fields;
  for (const char* key : {"corpus", "vocab", "context", "batch_size", "eval_batches"})
    fields.push_back(&config_field(key));
  for (const ConfigField& field : config_fields()) {
    if (field.shapes_result && field.key != "seed" && std::find(fields.begin(), fields.end(), &field) == fields.end())
      fields.push_back(&field);
  }
  for (std::size_t g = 0; g < groups.size(); ++g) {
    for (const ConfigField* each : fields) {
      const ConfigField& field = *each;
      const std::string value = shown_text(field, *groups[g].front());
      const auto has_it = [&](const TrainConfig* c) { return shown_text(field, *c) == value; };
      const bool shared = std::all_of(groups[g].begin(), groups[g].end(), has_it);
      bool apart = true;  // no other line's runs have it
      for (std::size_t o = 0; o < groups.size() && apart; ++o) {
        if (o != g) apart = std::none_of(groups[o].begin(), groups[o].end(), has_it);
      }
      if (shared && apart) {
        if (field.widget == Widget::File) {
          whose[g] = LossChart::tr("runs on %1")
                         .arg(value.empty() ? LossChart::tr("the built-in text")
                                            : lab::qstr(std::filesystem::path(value).filename().string()));
        } else {
          whose[g] = LossChart::tr("runs at %1 %2").arg(lab::qstr(field.flag), lab::qstr(value));
        }
        break;
      }
    }
    if (!whose[g].isEmpty()) continue;
    whose[g] = groups[g].size() == 1 ? lab::qstr(display_name(*groups[g].front()))
                                     : LossChart::tr("%n runs", nullptr, int(groups[g].size()));
  }
  return whose;
}

}  // namespace

void LossChart::update_baselines() {
  baselines_dirty_ = false;
  std::vector<double> wanted;
  std::vector<std::vector<const TrainConfig*>> runs_of;  // each line's runs
  for (const lab::RunEntry& run : store_.runs()) {
    const double b = run.record.baseline_loss;
    if (!drawn(run) || !std::isfinite(b) || b <= 0) continue;
    // Runs evaluated on the same held-out positions (corpus, vocabulary, context and
    // evaluation batches) share one line (labels show two decimals).
    const auto known = std::find_if(wanted.begin(), wanted.end(), [b](double w) { return std::abs(w - b) < 0.005; });
    if (known == wanted.end()) {
      wanted.push_back(b);
      runs_of.push_back({&run.record.config});
    } else {
      runs_of[std::size_t(known - wanted.begin())].push_back(&run.record.config);
    }
  }
  std::vector<QString> whose = owners(runs_of);
  std::vector<std::size_t> order(wanted.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return wanted[a] < wanted[b]; });
  std::vector<double> sorted_wanted;
  std::vector<QString> sorted_whose;
  for (const std::size_t i : order) {
    sorted_wanted.push_back(wanted[i]);
    sorted_whose.push_back(whose[i]);
  }
  wanted = std::move(sorted_wanted);
  whose = std::move(sorted_whose);
  bool same = wanted.size() == baselines_.size();
  for (std::size_t i = 0; same && i < wanted.size(); ++i) {
    same = std::abs(wanted[i] - baselines_[i]->nats) < 0.005 && whose[i] == baselines_[i]->whose;
  }
  if (!same) {
    for (auto& b : baselines_) {
      give_back(b->series);
      delete b->label;
    }
    baselines_.clear();
    for (std::size_t i = 0; i < wanted.size(); ++i) {
      auto b = std::make_unique<Baseline>();
      b->nats = wanted[i];
      b->whose = whose[i];
      const QString text = baseline_words(*b);
      b->series = take_series();
      b->series->setName(text);
      b->series->setPen(QPen(kBaselineColour, 1.4, Qt::DashLine));
      b->series->setVisible(true);
      b->label = new QGraphicsRectItem(this);
      b->words = new QGraphicsSimpleTextItem(text, b->label);
      b->words->setFont(sized_font(9));
      b->words->setBrush(QColor(0x44, 0x44, 0x44));
      b->words->setPos(4, 1);
      b->label->setRect(b->words->boundingRect().adjusted(0, 0, 8, 2));
      b->label->setBrush(QColor(255, 255, 255, 215));
      b->label->setPen(Qt::NoPen);
      b->label->setZValue(100);  // above every series
      baselines_.push_back(std::move(b));
    }
    styles_dirty_ = true;
  }
  const ViewRange shown = view();
  for (auto& b : baselines_) {
    b->series->replace({{shown.x_min, to_display(b->nats)}, {shown.x_max, to_display(b->nats)}});
  }
  place_baseline_labels();
}

namespace {

// Whether the segment from a to b passes through `box` (Liang-Barsky clipping).
bool crosses(QPointF a, QPointF b, const QRectF& box) {
  const double dx = b.x() - a.x(), dy = b.y() - a.y();
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x() - box.left(), box.right() - a.x(), a.y() - box.top(), box.bottom() - a.y()};
  double t0 = 0, t1 = 1;
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

}  // namespace

void LossChart::set_baseline_words(Baseline& b, const QString& text) {
  if (b.words->text() == text) return;
  b.words->setText(text);
  b.label->setRect(b.words->boundingRect().adjusted(0, 0, 8, 2));
}

// Each label sits just above or below its line, at the place nearest the right end where
// it covers no curve: post-norm runs often lie right on the baseline, and a label that
// only covered the fewest curves still sat on them. Where the line has no such place, the
// label goes under the plot, beside the x-axis's title, and says which line it names; with
// no room there either, the legend alone names it.
void LossChart::place_baseline_labels() {
  const QRectF plot = plotArea();
  constexpr int kPlaces = 17;  // along the line, from its right end
  constexpr double kGap = 3;   // between the line and its label
  std::vector<QRectF> placed;  // labels of the lines below: two lines 0.07 nats apart must not share one place
  for (auto& b : baselines_) {
    const QString value = QString::number(b->nats, 'f', 2);
    set_baseline_words(*b, baseline_words(*b));
    const double line_y = position_of({0, b->nats}).y();
    const bool line_shown = b->series->isVisible() && line_y >= plot.top() && line_y <= plot.bottom();
    std::optional<QPointF> place;
    for (int i = 0; i < kPlaces && line_shown && !place; ++i) {
      const QSizeF size = b->label->rect().size();
      const double along = 1.0 - double(i) / (kPlaces - 1);
      for (const bool above : {true, false}) {
        const QRectF box(plot.left() + 4 + along * (plot.width() - size.width() - 8),
                         above ? line_y - size.height() - kGap : line_y + kGap, size.width(), size.height());
        const bool clear =
            std::none_of(placed.begin(), placed.end(), [&](const QRectF& r) { return r.intersects(box); });
        if (plot.contains(box) && clear && curves_under(box) == 0) {
          place = box.topLeft();
          break;
        }
      }
    }
    if (line_shown && !place) {
      set_baseline_words(*b, b->whose.isEmpty() ? tr("dashed: unigram %1 nats").arg(value)
                                                : tr("dashed: unigram %1 nats, %2").arg(value, b->whose));
      const QSizeF size = b->label->rect().size();
      // In the row of the x-axis's title, which is centred under the plot: beside it on the
      // right, else on the left.
      const double below_ticks = plot.bottom() + QFontMetricsF(axis_x_->labelsFont()).height() + 4;
      const double y = geometry().height() - margins().bottom() - size.height();
      const double title = QFontMetricsF(axis_x_->titleFont()).horizontalAdvance(axis_x_->titleText());
      const double title_left = plot.center().x() - title / 2 - 8, title_right = plot.center().x() + title / 2 + 8;
      const auto clear = [&](QPointF at) {
        const QRectF box(at, size);
        return std::none_of(placed.begin(), placed.end(), [&](const QRectF& r) { return r.intersects(box); });
      };
      if (y >= below_ticks && plot.right() - size.width() >= title_right && clear({plot.right() - size.width(), y})) {
        place = QPointF(plot.right() - size.width(), y);
      } else if (y >= below_ticks && plot.left() + size.width() <= title_left && clear({plot.left(), y})) {
        place = QPointF(plot.left(), y);
      }
    }
    if (place) {
      b->label->setPos(*place);
      placed.push_back(QRectF(*place, b->label->rect().size()));
    }
    b->label->setVisible(place.has_value());
  }
}

QString LossChart::baseline_words(const Baseline& b) const {
  const QString value = QString::number(b.nats, 'f', 2);
  return b.whose.isEmpty() ? tr("unigram baseline %1 nats").arg(value)
                           : tr("unigram baseline %1 nats, %2").arg(value, b.whose);
}

// How much of the drawn curves a box in chart coordinates would hide: each stretch of a
// curve through it, a held-out one weighing most (dark, with its dots).
int LossChart::curves_under(const QRectF& box) const {
  const auto display_box = [this](const QRectF& r) {
    return QRectF(display_at(r.bottomLeft()), display_at(r.topRight())).normalized();
  };
  const QRectF lines = display_box(box), dots = display_box(box.adjusted(-2.5, -2.5, 2.5, 2.5));  // a dot's radius
  int cover = 0;
  // Points are in step order: only those near the box's steps are looked at, which for a
  // 100,000-step run is a small share of them, at every refresh while one trains.
  const auto count = [&](const QList<QPointF>& points, const QRectF& area, int weight) {
    const double x0 = area.left(), x1 = area.right();
    auto p = std::lower_bound(points.begin(), points.end(), x0, [](const QPointF& q, double x) { return q.x() < x; });
    if (p != points.begin()) --p;  // the stretch coming into the box
    if (points.size() == 1) cover += weight * area.contains(points.front());
    for (; p != points.end() && std::next(p) != points.end() && p->x() <= x1; ++p) {
      cover += weight * crosses(*p, *std::next(p), area);
    }
  };
  for (const lab::RunEntry& run : store_.runs()) {
    auto it = curves_.find(run.id);
    if (!drawn(run) || it == curves_.end()) continue;
    const Curves& c = *it->second;
    count(c.heldout_points, dots, 10);
    count(c.raw_points, lines, 1);  // the training curve, or the faint raw one behind it
    if (smoothing_ > 0) count(c.smooth_points, lines, 1);
  }
  return cover;
}

}  // namespace normlab::ui
