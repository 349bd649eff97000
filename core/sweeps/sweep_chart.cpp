#include "sweep_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "core/runs/config_fields.h"
#include "core/runs/palette.h"

namespace normlab {

namespace {

std::string escaped(const std::string& text) {
  std::string out;
  for (const char ch : text) {
    switch (ch) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

std::string hex(std::uint32_t rgb) {
  char text[8];
  std::snprintf(text, sizeof text, "#%06x", unsigned(rgb & 0xffffff));
  return text;
}

std::string fixed(double value, int decimals = 1) {
  char text[32];
  std::snprintf(text, sizeof text, "%.*f", decimals, value + 0.0);  // + 0.0: never "-0.0"
  return text;
}

// The first step of 0.1, 0.2, 0.25, 0.5, 1, 2, 5 that puts at most 8 ticks on `span`.
double tick_step(double span) {
  for (const double step : {0.1, 0.2, 0.25, 0.5, 1.0, 2.0, 5.0}) {
    if (span / step <= 8) return step;
  }
  return 10.0;
}

// Where everything goes: the plot's box in pixels, the axes' ranges and the points.
struct Geometry {
  double left = 0, right = 0, top = 0, bottom = 0;
  bool log_axis = false;
  double t0 = 0, t1 = 1, lo = 0, hi = 1;  // x in axis units (log10 on a log axis), y in nats
  std::map<double, std::string> ticks;    // the swept values, labelled as they were given
  double baseline = std::nan("");
  std::vector<SweepPoint> points;

  double axis_t(double x) const { return log_axis ? std::log10(x) : x; }
  double px(double x) const { return left + (axis_t(x) - t0) / (t1 - t0) * (right - left); }
  // A placement's marks sit a few pixels aside, each placement its own way, so equal
  // losses at one value stay visible side by side instead of one hiding the other.
  std::vector<NormPlacement> order;  // of the placements, as the legend lists them
  double px(double x, NormPlacement placement) const {
    const auto i = std::find(order.begin(), order.end(), placement) - order.begin();
    return px(x) + 4.0 * (double(i) - (double(order.size()) - 1) / 2);
  }
  double py(double loss) const { return bottom - (loss - lo) / (hi - lo) * (bottom - top); }
  double diverged_y() const { return top + 12; }  // crosses along the top: they have no loss
};

Geometry geometry_of(const SweepChart& chart) {
  Geometry g;
  g.log_axis = sweep_setting(chart.setting).log_axis;
  g.points = aggregate(chart.results);
  for (const SweepPoint& p : g.points) {
    if (std::find(g.order.begin(), g.order.end(), p.placement) == g.order.end()) g.order.push_back(p.placement);
  }
  g.left = 70, g.right = chart.width - 220.0, g.top = 50, g.bottom = chart.height - 60.0;
  for (const SweepResult& r : chart.results) {
    g.ticks.emplace(r.x, r.value);
    if (std::isfinite(r.baseline)) g.baseline = r.baseline;
  }
  if (!g.ticks.empty()) g.t0 = g.axis_t(g.ticks.begin()->first), g.t1 = g.axis_t(g.ticks.rbegin()->first);
  if (g.t1 - g.t0 <= 0) g.t0 -= 1, g.t1 += 1;
  const double t_pad = 0.06 * (g.t1 - g.t0);
  g.t0 -= t_pad, g.t1 += t_pad;
  double lo = std::isfinite(g.baseline) ? g.baseline : INFINITY,
         hi = std::isfinite(g.baseline) ? g.baseline : -INFINITY;
  for (const SweepPoint& p : g.points) {
    if (!std::isfinite(p.mean)) continue;
    lo = std::min(lo, p.min);
    hi = std::max(hi, p.max);
  }
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  const double y_pad = std::max(0.1 * (hi - lo), 0.15);
  g.lo = lo - y_pad, g.hi = hi + 2 * y_pad;  // room along the top for the diverged marks
  return g;
}

std::vector<SweepMark> marks_of(const Geometry& g) {
  std::vector<SweepMark> marks;
  for (const SweepPoint& p : g.points) {
    if (std::isfinite(p.mean)) marks.push_back({p, g.px(p.x, p.placement), g.py(p.mean)});
    else if (p.diverged > 0) marks.push_back({p, g.px(p.x, p.placement), g.diverged_y()});
  }
  return marks;
}

}  // namespace

std::string sweep_chart_title(const Sweep& sweep) {
  // The legend names only placements, so a sweep of QK-norm or DyT says so here.
  const std::string options = design_options(sweep.base);
  return "Final held-out loss against " + config_field(sweep.setting).noun +
         (options.empty() ? "" : ", with" + options) + " (" + std::to_string(sweep.base.steps) + " steps of " +
         std::to_string(sweep.base.batch_size) + " x " + std::to_string(sweep.base.model.context) + " tokens)";
}

std::vector<SweepMark> sweep_chart_marks(const SweepChart& chart) { return marks_of(geometry_of(chart)); }

std::string sweep_chart_svg(const SweepChart& chart) {
  const Geometry g = geometry_of(chart);
  const double left = g.left, right = g.right, top = g.top, bottom = g.bottom, lo = g.lo, hi = g.hi;
  const bool log_axis = g.log_axis;
  const double baseline = g.baseline;
  const auto& ticks = g.ticks;
  const std::vector<SweepPoint>& points = g.points;
  auto px = [&](double x) { return g.px(x); };
  auto py = [&](double loss) { return g.py(loss); };

  std::ostringstream svg;
  svg << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << chart.width << "\" height=\"" << chart.height
      << "\" font-family=\"sans-serif\" font-size=\"13\">\n"
      << "<rect width=\"" << chart.width << "\" height=\"" << chart.height << "\" fill=\"white\"/>\n"
      << "<text x=\"" << left << "\" y=\"28\" font-size=\"16\" font-weight=\"bold\">" << escaped(chart.title)
      << "</text>\n";

  // Grid and axes; the loss axis is labelled once there is a loss to show.
  const double step = tick_step(hi - lo);
  const bool any_loss = !chart.results.empty();
  for (double y = std::ceil(lo / step) * step; any_loss && y <= hi; y += step) {
    svg << "<line x1=\"" << left << "\" x2=\"" << right << "\" y1=\"" << fixed(py(y)) << "\" y2=\"" << fixed(py(y))
        << "\" stroke=\"#e4e4e4\"/>\n"
        << "<text x=\"" << left - 8 << "\" y=\"" << fixed(py(y) + 4) << "\" text-anchor=\"end\">"
        << fixed(y, step < 0.25 ? 1 : 2) << "</text>\n";
  }
  for (const auto& [x, label] : ticks) {
    svg << "<line x1=\"" << fixed(px(x)) << "\" x2=\"" << fixed(px(x)) << "\" y1=\"" << top << "\" y2=\"" << bottom
        << "\" stroke=\"#eeeeee\"/>\n"
        << "<text x=\"" << fixed(px(x)) << "\" y=\"" << bottom + 18 << "\" text-anchor=\"middle\">" << escaped(label)
        << "</text>\n";
  }
  svg << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << right - left << "\" height=\"" << bottom - top
      << "\" fill=\"none\" stroke=\"#888888\"/>\n";
  const ConfigField& field = config_field(sweep_setting(chart.setting).key);
  svg << "<text x=\"" << (left + right) / 2 << "\" y=\"" << bottom + 42 << "\" text-anchor=\"middle\">"
      << escaped(field.label) << (log_axis ? " (log scale)" : "") << "</text>\n"
      << "<text transform=\"translate(18," << (top + bottom) / 2
      << ") rotate(-90)\" text-anchor=\"middle\">final held-out loss (nats)</text>\n";

  if (std::isfinite(baseline)) {
    svg << "<line class=\"baseline\" x1=\"" << left << "\" x2=\"" << right << "\" y1=\"" << fixed(py(baseline))
        << "\" y2=\"" << fixed(py(baseline)) << "\" stroke=\"#555555\" stroke-dasharray=\"6,4\"/>\n"
        << "<text x=\"" << right - 6 << "\" y=\"" << fixed(py(baseline) - 6)
        << "\" text-anchor=\"end\" fill=\"#555555\">unigram baseline " << fixed(baseline, 2) << "</text>\n";
  }

  // Per placement: the min-max band, the line through the means, a mark per value.
  const std::vector<NormPlacement>& placements = g.order;
  bool seeds = false, stalled = false, diverged = false;
  for (const SweepPoint& p : points) {
    seeds = seeds || p.runs > 1;
    stalled = stalled || p.stalled > 0;
    diverged = diverged || p.diverged > 0;
  }
  for (const NormPlacement placement : placements) {
    const std::string colour = hex(hue_colour(info(placement).hue, 0));
    std::vector<const SweepPoint*> mine;
    for (const SweepPoint& p : points) {
      if (p.placement == placement && std::isfinite(p.mean)) mine.push_back(&p);
    }
    std::ostringstream band, line;
    for (const SweepPoint* p : mine) band << fixed(g.px(p->x, placement)) << ',' << fixed(py(p->max)) << ' ';
    for (auto p = mine.rbegin(); p != mine.rend(); ++p) {
      band << fixed(g.px((*p)->x, placement)) << ',' << fixed(py((*p)->min)) << ' ';
    }
    for (const SweepPoint* p : mine) line << fixed(g.px(p->x, placement)) << ',' << fixed(py(p->mean)) << ' ';
    if (seeds) {
      svg << "<polygon class=\"band\" points=\"" << band.str() << "\" fill=\"" << colour
          << "\" fill-opacity=\"0.18\" stroke=\"none\"/>\n";
    }
    svg << "<polyline class=\"placement\" data-placement=\"" << to_string(placement) << "\" points=\"" << line.str()
        << "\" fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2.5\"/>\n";
    for (const SweepPoint& p : points) {
      if (p.placement != placement) continue;
      if (std::isfinite(p.mean)) {
        const bool hollow = p.stalled > 0;
        svg << "<circle class=\"" << (hollow ? "stalled" : "trained") << "\" cx=\"" << fixed(g.px(p.x, placement))
            << "\" cy=\"" << fixed(py(p.mean)) << "\" r=\"5\" fill=\"" << (hollow ? "white" : colour) << "\" stroke=\""
            << colour << "\" stroke-width=\"2\"/>\n";
      }
      if (p.diverged > 0) {
        const double cx = g.px(p.x, placement), cy = g.diverged_y();
        svg << "<path class=\"diverged\" d=\"M" << fixed(cx - 5) << ',' << fixed(cy - 5) << " L" << fixed(cx + 5) << ','
            << fixed(cy + 5) << " M" << fixed(cx - 5) << ',' << fixed(cy + 5) << " L" << fixed(cx + 5) << ','
            << fixed(cy - 5) << "\" stroke=\"" << colour << "\" stroke-width=\"2.5\"/>\n";
      }
    }
  }

  if (chart.selected) {
    for (const SweepMark& mark : marks_of(g)) {
      if (mark.point.placement != chart.selected->first || mark.point.x != chart.selected->second) continue;
      svg << "<circle class=\"selected\" cx=\"" << fixed(mark.cx) << "\" cy=\"" << fixed(mark.cy)
          << "\" r=\"10\" fill=\"none\" stroke=\"#1d2530\" stroke-width=\"1.5\"/>\n";
    }
  }

  // Legend: the placements, then what the marks mean.
  double y = top + 10;
  const double lx = right + 20;
  for (const NormPlacement placement : placements) {
    const std::string colour = hex(hue_colour(info(placement).hue, 0));
    svg << "<line x1=\"" << lx << "\" x2=\"" << lx + 24 << "\" y1=\"" << y << "\" y2=\"" << y << "\" stroke=\""
        << colour << "\" stroke-width=\"2.5\"/>\n"
        << "<text x=\"" << lx + 32 << "\" y=\"" << y + 4 << "\">" << escaped(info(placement).label) << "</text>\n";
    y += 22;
  }
  y += 8;
  auto note = [&](const std::string& mark, const std::string& text) {
    svg << mark << "<text x=\"" << lx + 32 << "\" y=\"" << y + 4 << "\" fill=\"#333333\">" << escaped(text)
        << "</text>\n";
    y += 22;
  };
  if (!placements.empty()) {
    note("<circle cx=\"" + fixed(lx + 12) + "\" cy=\"" + fixed(y) + "\" r=\"5\" fill=\"#555555\"/>", "trained");
  }
  if (stalled) {
    note("<circle cx=\"" + fixed(lx + 12) + "\" cy=\"" + fixed(y) +
             "\" r=\"5\" fill=\"white\" stroke=\"#555555\" stroke-width=\"2\"/>",
         info(Outcome::Stalled).label);
  }
  if (diverged) {
    note("<path d=\"M" + fixed(lx + 7) + "," + fixed(y - 5) + " L" + fixed(lx + 17) + "," + fixed(y + 5) + " M" +
             fixed(lx + 7) + "," + fixed(y + 5) + " L" + fixed(lx + 17) + "," + fixed(y - 5) +
             "\" stroke=\"#555555\" stroke-width=\"2.5\"/>",
         "diverged (no loss)");
  }
  if (seeds) {
    note("<rect x=\"" + fixed(lx) + "\" y=\"" + fixed(y - 6) +
             "\" width=\"24\" height=\"12\" fill=\"#555555\" fill-opacity=\"0.18\"/>",
         "min-max over seeds");
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace normlab
