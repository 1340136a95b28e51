//===- Report.cpp - One self-contained HTML page about a sweep ------------===//
//
// Every picture is inline SVG built here from the outcomes; the page needs
// nothing from the network and no script. The look follows the program
// report (runtime/lib/Report.cpp). Numbers are written with snprintf in
// fixed formats, so the same sweep gives the same bytes.
//
//===----------------------------------------------------------------------===//

#include "loom/Sweep/Sweep.h"
#include "loom/Runtime/Floorplan.h"

#include <algorithm>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <limits>
#include <map>
#include <sstream>
#include <string_view>

namespace loom::sweep {

std::vector<size_t>
paretoFront(const std::vector<std::pair<double, double>> &points) {
  // Cheapest first; at equal cost the best benefit first; then by index, so
  // that exact duplicates (which dominate each other nowhere) come in a
  // fixed order. A point is on the front when its benefit beats every
  // cheaper-or-equal point's, or when it repeats the last front point.
  std::vector<size_t> order;
  order.reserve(points.size());
  for (size_t i = 0; i < points.size(); ++i)
    if (!std::isnan(points[i].first) && !std::isnan(points[i].second))
      order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const auto &pa = points[a], &pb = points[b];
    if (pa.first != pb.first)
      return pa.first < pb.first;
    if (pa.second != pb.second)
      return pa.second > pb.second;
    return a < b;
  });
  std::vector<size_t> front;
  for (size_t i : order) {
    const auto &p = points[i];
    if (front.empty() || p.second > points[front.back()].second) {
      front.push_back(i);
      continue;
    }
    const auto &last = points[front.back()];
    if (p.first == last.first && p.second == last.second)
      front.push_back(i);
  }
  return front;
}

namespace {

__attribute__((format(printf, 1, 2))) std::string format(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(nullptr, 0, fmt, copy);
  va_end(copy);
  std::string s;
  if (n > 0) {
    s.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(s.data(), s.size(), fmt, args);
    s.resize(static_cast<size_t>(n));
  }
  va_end(args);
  return s;
}

std::string esc(std::string_view s) { return rt::xmlEscape(s); }

/// An SVG coordinate.
std::string px(double v) {
  if (!std::isfinite(v))
    v = 0;
  std::string s = format("%.1f", v);
  return s == "-0.0" ? "0.0" : s;
}

/// An axis value as given: integers in full, others to 6 digits.
std::string axisValue(double v) {
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    return format("%.0f", v);
  return format("%.6g", v);
}

/// "1.23 s", "4.567 ms", "45.60 us", "789 ns".
std::string duration(double seconds) {
  if (!std::isfinite(seconds))
    return format("%g s", seconds);
  if (seconds >= 1)
    return format("%.3f s", seconds);
  if (seconds >= 1e-3)
    return format("%.3f ms", seconds * 1e3);
  if (seconds >= 1e-6)
    return format("%.2f us", seconds * 1e6);
  return format("%.0f ns", seconds * 1e9);
}

const char *kSuffix[] = {"", "K", "M", "G", "T", "P"};

/// Three significant digits with an SI suffix: 812, 1.25K, 40.0M.
std::string si3(double v) {
  if (!std::isfinite(v))
    return format("%g", v);
  double a = std::fabs(v);
  int k = 0;
  while (a >= 999.5 && k < 5) {
    a /= 1000;
    v /= 1000;
    ++k;
  }
  if (a == 0)
    return "0";
  if (a < 1)
    return format("%.3g%s", v, kSuffix[k]);
  int decimals = a >= 99.95 ? 0 : a >= 9.995 ? 1 : 2;
  return format("%.*f%s", decimals, v, kSuffix[k]);
}

/// A tick label: `v` with an SI suffix and as many decimals as `unit`
/// (the spacing the ticks are multiples of) needs.
std::string tickLabel(double v, double unit) {
  if (v == 0 || !std::isfinite(v))
    return "0";
  double a = std::fabs(v);
  int k = 0;
  while (a >= 1000 && k < 5) {
    a /= 1000;
    v /= 1000;
    unit /= 1000;
    ++k;
  }
  int decimals = 0;
  if (unit < 1 && unit > 0)
    decimals =
        std::min(9, static_cast<int>(std::ceil(-std::log10(unit) - 1e-6)));
  return format("%.*f%s", decimals, v, kSuffix[k]);
}

/// A chart axis: its domain after rounding out to ticks, and the ticks.
struct Scale {
  bool log = false;
  double lo = 0, hi = 1;
  std::vector<std::pair<double, std::string>> ticks;

  /// The pixel of `v` between `a` (at lo) and `b` (at hi).
  double at(double v, double a, double b) const {
    double t;
    if (log)
      t = (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo));
    else
      t = (v - lo) / (hi - lo);
    return a + (b - a) * t;
  }
};

/// Nice ticks over `values` (finite): log-scaled when all are positive and
/// they span more than 20x, else linear with a step of 1, 2 or 5 x 10^k.
Scale makeScale(const std::vector<double> &values) {
  Scale s;
  if (values.empty())
    return s;
  double mn = *std::min_element(values.begin(), values.end());
  double mx = *std::max_element(values.begin(), values.end());
  if (mn > 0 && mx / mn > 20) {
    s.log = true;
    int e0 = static_cast<int>(std::floor(std::log10(mn) + 1e-9));
    int e1 = static_cast<int>(std::ceil(std::log10(mx) - 1e-9));
    if (e1 <= e0)
      e1 = e0 + 1;
    s.lo = std::pow(10.0, e0);
    s.hi = std::pow(10.0, e1);
    bool fine = e1 - e0 <= 3;
    for (int e = e0; e <= e1; ++e) {
      double unit = std::pow(10.0, e);
      for (double m : {1.0, 2.0, 5.0}) {
        if (m != 1 && (!fine || e == e1))
          continue;
        s.ticks.push_back({m * unit, tickLabel(m * unit, unit)});
      }
    }
    return s;
  }
  if (mn == mx) {
    if (mn == 0) {
      mx = 1;
    } else {
      double d = std::fabs(mn) / 2;
      mn -= d;
      mx += d;
    }
  }
  double raw = (mx - mn) / 5;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double norm = raw / mag;
  double step = (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
  s.lo = std::floor(mn / step) * step;
  s.hi = std::ceil(mx / step) * step;
  if (s.hi <= s.lo)
    s.hi = s.lo + step;
  for (int i = 0; i <= 100; ++i) {
    double v = s.lo + step * i;
    if (v > s.hi + step * 1e-6)
      break;
    if (std::fabs(v) < step * 1e-6)
      v = 0;
    s.ticks.push_back({v, tickLabel(v, step)});
  }
  return s;
}

/// The objective a heat map colours by.
struct Metric {
  std::string name;
  bool lowerIsBetter = false;
  double (*get)(const Outcome &) = nullptr;
  std::string (*show)(double) = nullptr;
};

Metric metricFor(const std::string &objective) {
  if (objective == "latency")
    return {"latency", true, [](const Outcome &o) { return o.latency; },
            [](double v) { return duration(v); }};
  if (objective == "perf-per-watt")
    return {"perf per watt", false,
            [](const Outcome &o) { return o.perfPerWatt; },
            [](double v) { return si3(v) + "/s/W"; }};
  return {"throughput", false, [](const Outcome &o) { return o.throughput; },
          [](double v) { return si3(v) + "/s"; }};
}

/// The colour of goodness `t` (0 worst, 1 best): pale to deep blue.
std::string shade(double t) {
  t = std::clamp(t, 0.0, 1.0);
  auto mix = [&](int a, int b) {
    return static_cast<int>(std::lround(a + (b - a) * t));
  };
  return format("rgb(%d,%d,%d)", mix(239, 8), mix(246, 81), mix(252, 156));
}

/// A heat map's grid: rows are the first axis's values, columns the
/// second's, any further axes at their first value.
struct HeatGrid {
  std::vector<double> rowVals, colVals;
  std::string rowPath, colPath;
  bool hasRows = false, hasCols = false;
  std::map<std::vector<double>, const Outcome *> byValues;
  bool rest = true;
  std::vector<double> key;
  /// The colour range: the objective over the map's ok cells.
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  bool any = false, logShade = false;

  /// The outcome at row `r`, column `c`, or null.
  const Outcome *find(size_t r, size_t c) {
    if (!rest)
      return nullptr;
    if (hasRows)
      key[0] = rowVals[r];
    if (hasCols)
      key[hasRows ? 1 : 0] = colVals[c];
    auto it = byValues.find(key);
    return it == byValues.end() ? nullptr : it->second;
  }

  /// How good `v` is in the colour range: 0 worst, 1 best.
  double goodness(double v, bool lowerIsBetter) const {
    if (!any || hi == lo)
      return 1.0;
    double t =
        logShade ? std::log(v / lo) / std::log(hi / lo) : (v - lo) / (hi - lo);
    t = std::clamp(t, 0.0, 1.0);
    return lowerIsBetter ? 1 - t : t;
  }
};

class SweepReport {
public:
  SweepReport(const std::vector<Axis> &axes,
              const std::vector<Outcome> &outcomes,
              const std::vector<Sensitivity> &sensitivity,
              const std::string &objective, const std::string &title)
      : axes_(axes), outcomes_(outcomes), sensitivity_(sensitivity),
        objective_(objective), title_(title.empty() ? "Loom sweep" : title),
        metric_(metricFor(objective)) {
    auto add = [&](const std::string &m) {
      if (std::find(models_.begin(), models_.end(), m) == models_.end())
        models_.push_back(m);
    };
    for (const Outcome &o : outcomes_)
      add(o.point.model);
    for (const Sensitivity &s : sensitivity_)
      add(s.model);
  }

  std::string render();

private:
  void header();
  void model(size_t index, const std::string &name);
  void paretoChart(const std::vector<const Outcome *> &ok, bool bySram);
  void heatMap(size_t index, const std::string &name);
  HeatGrid heatGrid(const std::string &name) const;
  void heatMapNote(HeatGrid &g);
  void heatMapCells(size_t index, HeatGrid &g, double left, double top,
                    double cw, double ch);
  void heatMapLegend(size_t index, const HeatGrid &g, double lx, double top);
  void sensitivityTable();
  void pointTable();

  std::string pointSummary(const Outcome &o) const;

  const std::vector<Axis> &axes_;
  const std::vector<Outcome> &outcomes_;
  const std::vector<Sensitivity> &sensitivity_;
  std::string objective_, title_;
  Metric metric_;
  std::vector<std::string> models_;
  std::ostringstream out_;
};

std::string SweepReport::pointSummary(const Outcome &o) const {
  std::string s = o.point.model;
  for (size_t i = 0; i < axes_.size(); ++i)
    s += "\n" + axes_[i].path + " = " +
         (i < o.point.values.size() ? axisValue(o.point.values[i]) : "?");
  if (!o.ok)
    return s + "\nfails: " + o.error;
  s += "\nlatency " + duration(o.latency) + ", " + si3(o.throughput) +
       " inputs/s, " + axisValue(o.chips) + " chips";
  s += format("\nutilisation %.1f%%, SRAM peak %.2f MiB per tile",
              o.utilisation * 100, o.sramPeak / 1048576.0);
  s += "\n" + si3(o.perfPerWatt) + " inputs/s/W";
  if (!o.bound.empty())
    s += ", " + o.bound + " bound";
  return s;
}

void SweepReport::header() {
  size_t failures = 0;
  for (const Outcome &o : outcomes_)
    failures += o.ok ? 0 : 1;
  out_ << "<header><h1>" << esc(title_) << "</h1><p>objective <b>"
       << esc(objective_.empty() ? metric_.name : objective_) << "</b>";
  if (!objective_.empty() && objective_ != "latency" &&
      objective_ != "throughput" && objective_ != "perf-per-watt")
    out_ << " (not known: the heat maps show throughput)";
  out_ << " &middot; " << axes_.size()
       << (axes_.size() == 1 ? " axis" : " axes");
  for (const Axis &a : axes_) {
    out_ << " &middot; <code>" << esc(a.path) << "</code> = ";
    for (size_t i = 0; i < a.values.size(); ++i)
      out_ << (i ? ", " : "") << esc(axisValue(a.values[i]));
  }
  out_ << "</p><p><b>" << outcomes_.size() << "</b> points over "
       << models_.size() << (models_.size() == 1 ? " model" : " models")
       << " &middot; <b>" << outcomes_.size() - failures
       << "</b> ok &middot; <b>" << failures << "</b> "
       << (failures == 1 ? "failure" : "failures")
       << "</p><p class=\"note\">throughput is in inputs/s: runs of the "
          "compiled program a second, one batch of an ONNX model, one decode "
          "step of the whole batch of an LLM config (tokens/s is inputs/s x "
          "the batch)</p></header>\n";
}

void SweepReport::paretoChart(const std::vector<const Outcome *> &ok,
                              bool bySram) {
  struct Dot {
    double x, y;
    const Outcome *o;
  };
  std::vector<Dot> dots;
  for (const Outcome *o : ok) {
    double x = bySram ? o->sramPeak : o->chips;
    if (std::isfinite(x) && std::isfinite(o->throughput))
      dots.push_back({x, o->throughput, o});
  }
  std::vector<double> xs, ys;
  std::vector<std::pair<double, double>> pairs;
  for (const Dot &d : dots) {
    xs.push_back(d.x);
    ys.push_back(d.y);
    pairs.push_back({d.x, d.y});
  }
  Scale sx = makeScale(xs), sy = makeScale(ys);
  std::vector<size_t> front = paretoFront(pairs);
  const double W = 420, H = 250, L = 64, T = 24, B = 44, R = 20;
  double x0 = L, x1 = L + W, y0 = T + H, y1 = T;
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"pareto\" width=\""
       << px(L + W + R) << "\" height=\"" << px(T + H + B) << "\">";
  out_ << "<text x=\"" << px(L)
       << "\" y=\"14\" font-size=\"12\" "
          "font-weight=\"bold\">throughput against "
       << (bySram ? "SRAM peak per tile" : "chips") << "</text>";
  out_ << "<rect x=\"" << px(L) << "\" y=\"" << px(T) << "\" width=\"" << px(W)
       << "\" height=\"" << px(H) << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  for (const auto &[v, label] : sx.ticks) {
    double x = sx.at(v, x0, x1);
    out_ << "<line x1=\"" << px(x) << "\" y1=\"" << px(y1) << "\" x2=\""
         << px(x) << "\" y2=\"" << px(y0) << "\" stroke=\"#eee\"/><text x=\""
         << px(x) << "\" y=\"" << px(y0 + 14)
         << "\" font-size=\"10\" text-anchor=\"middle\">" << esc(label)
         << "</text>";
  }
  for (const auto &[v, label] : sy.ticks) {
    double y = sy.at(v, y0, y1);
    out_ << "<line x1=\"" << px(x0) << "\" y1=\"" << px(y) << "\" x2=\""
         << px(x1) << "\" y2=\"" << px(y) << "\" stroke=\"#eee\"/><text x=\""
         << px(x0 - 4) << "\" y=\"" << px(y + 3)
         << "\" font-size=\"10\" text-anchor=\"end\">" << esc(label)
         << "</text>";
  }
  std::string xLabel = bySram ? "SRAM peak per tile (bytes)" : "chips";
  if (sx.log)
    xLabel += ", log scale";
  // An input is one run of the program: a batch of an ONNX model, a decode
  // step of the whole batch of an LLM config (cli.md).
  std::string yLabel = "throughput (inputs/s: program runs a second)";
  if (sy.log)
    yLabel += ", log scale";
  out_ << "<text x=\"" << px(L + W / 2) << "\" y=\"" << px(T + H + 32)
       << "\" font-size=\"11\" text-anchor=\"middle\">" << esc(xLabel)
       << "</text><text x=\"14\" y=\"" << px(T + H / 2)
       << "\" font-size=\"11\" transform=\"rotate(-90 14 " << px(T + H / 2)
       << ")\" text-anchor=\"middle\">" << esc(yLabel) << "</text>";
  if (front.size() > 1) {
    out_ << "<polyline class=\"front\" points=\"";
    for (size_t i = 0; i < front.size(); ++i)
      out_ << (i ? " " : "") << px(sx.at(dots[front[i]].x, x0, x1)) << ","
           << px(sy.at(dots[front[i]].y, y0, y1));
    out_ << "\" fill=\"none\" stroke=\"#c0392b\" stroke-width=\"1.5\"/>";
  }
  std::vector<bool> onFront(dots.size(), false);
  for (size_t i : front)
    onFront[i] = true;
  // Dominated points first, so the front's marks lie on top.
  for (int pass = 0; pass < 2; ++pass)
    for (size_t i = 0; i < dots.size(); ++i) {
      if (onFront[i] != (pass == 1))
        continue;
      const Dot &d = dots[i];
      out_ << "<circle class=\"" << (onFront[i] ? "point pareto" : "point")
           << "\" cx=\"" << px(sx.at(d.x, x0, x1)) << "\" cy=\""
           << px(sy.at(d.y, y0, y1)) << "\" r=\"" << (onFront[i] ? 5 : 3)
           << "\" fill=\"" << (onFront[i] ? "#c0392b" : "#5b8cc0")
           << "\" stroke=\"#333\" stroke-width=\"0.5\"><title>"
           << esc((onFront[i] ? "Pareto point: " : "") + pointSummary(*d.o))
           << "</title></circle>";
    }
  out_ << "</svg>";
}

HeatGrid SweepReport::heatGrid(const std::string &name) const {
  HeatGrid g;
  // Rows: the first axis's values; columns: the second's (one row when there
  // is one axis, one cell when there are none).
  g.hasRows = axes_.size() >= 2;
  g.hasCols = !axes_.empty();
  if (axes_.size() >= 2) {
    g.rowVals = axes_[0].values;
    g.rowPath = axes_[0].path;
    g.colVals = axes_[1].values;
    g.colPath = axes_[1].path;
  } else if (axes_.size() == 1) {
    g.rowVals = {0};
    g.colVals = axes_[0].values;
    g.colPath = axes_[0].path;
  } else {
    g.rowVals = {0};
    g.colVals = {0};
  }
  for (const Outcome &o : outcomes_)
    if (o.point.model == name && o.point.values.size() == axes_.size())
      g.byValues.emplace(o.point.values, &o);
  g.key.assign(axes_.size(), 0);
  for (size_t k = 2; k < axes_.size(); ++k) {
    if (axes_[k].values.empty())
      g.rest = false;
    else
      g.key[k] = axes_[k].values[0];
  }
  // The colour range: the objective over the map's ok cells.
  for (size_t r = 0; r < g.rowVals.size(); ++r)
    for (size_t c = 0; c < g.colVals.size(); ++c)
      if (const Outcome *o = g.find(r, c); o && o->ok) {
        double v = metric_.get(*o);
        if (std::isfinite(v)) {
          g.lo = std::min(g.lo, v);
          g.hi = std::max(g.hi, v);
        }
      }
  g.any = g.lo <= g.hi;
  // Over more than 20x the shades follow the logarithm, as the charts do.
  g.logShade = g.any && g.lo > 0 && g.hi / g.lo > 20;
  return g;
}

void SweepReport::heatMapNote(HeatGrid &g) {
  std::string note = "Each cell: " + metric_.name + " (" +
                     (metric_.lowerIsBetter ? "lower" : "higher") +
                     " is better; darker is better" +
                     (g.logShade ? ", shaded on a log scale" : "") +
                     "). Hatched cells failed; "
                     "hover a cell for its metrics or its reason.";
  // Every ok cell the same: one shade says nothing, so say it.
  size_t okCells = 0;
  for (size_t r = 0; r < g.rowVals.size(); ++r)
    for (size_t c = 0; c < g.colVals.size(); ++c)
      if (const Outcome *o = g.find(r, c); o && o->ok)
        ++okCells;
  const bool allEqual = g.any && g.hi == g.lo && okCells > 1;
  if (allEqual)
    note = "Every point that compiles has the same " + metric_.name + ", " +
           si3(g.hi) + ": these axes do not move it (one shade). " + note;
  if (axes_.size() > 2) {
    note += " Other axes at their first value:";
    for (size_t k = 2; k < axes_.size(); ++k)
      note += std::string(k > 2 ? "," : "") + " " + axes_[k].path + " = " +
              (axes_[k].values.empty() ? "?" : axisValue(axes_[k].values[0]));
    note += ".";
  }
  out_ << "<h3>Heat map of " << esc(metric_.name) << "</h3><p class=\"note"
       << (allEqual ? " all-equal" : "") << "\">" << esc(note) << "</p>";
}

void SweepReport::heatMapCells(size_t index, HeatGrid &g, double left,
                               double top, double cw, double ch) {
  for (size_t r = 0; r < g.rowVals.size(); ++r)
    for (size_t c = 0; c < g.colVals.size(); ++c) {
      const Outcome *o = g.find(r, c);
      double x = left + cw * double(c), y = top + ch * double(r);
      std::string cls, fill, text, tip, ink = "#222";
      if (!o) {
        cls = "cell missing";
        fill = "#f4f4f4";
        text = "-";
        tip = "not run";
      } else if (!o->ok) {
        cls = "cell fail";
        fill = "url(#hatch-" + std::to_string(index) + ")";
        text = "fails";
        tip = pointSummary(*o);
      } else {
        double v = metric_.get(*o);
        double t = std::isfinite(v) ? g.goodness(v, metric_.lowerIsBetter) : 0;
        cls = "cell";
        fill = std::isfinite(v) ? shade(t) : "#f4f4f4";
        text = metric_.show(v);
        tip = pointSummary(*o);
        if (t > 0.55)
          ink = "#fff";
      }
      out_ << "<rect class=\"" << cls << "\" x=\"" << px(x) << "\" y=\""
           << px(y) << "\" width=\"" << px(cw - 2) << "\" height=\""
           << px(ch - 2) << "\" fill=\"" << fill << "\" stroke=\"#ccc\"><title>"
           << esc(tip) << "</title></rect><text x=\"" << px(x + cw / 2 - 1)
           << "\" y=\"" << px(y + ch / 2 + 3)
           << "\" font-size=\"11\" text-anchor=\"middle\" "
              "pointer-events=\"none\" fill=\""
           << ink << "\">" << esc(text) << "</text>";
    }
}

void SweepReport::heatMapLegend(size_t index, const HeatGrid &g, double lx,
                                double top) {
  // The legend: five steps from best to worst, and the failure mark.
  out_ << "<text x=\"" << px(lx) << "\" y=\"" << px(top - 6)
       << "\" font-size=\"11\" font-weight=\"bold\">" << esc(metric_.name)
       << "</text>";
  for (int i = 0; i < 5; ++i) {
    double t = 1 - i / 4.0;
    double y = top + i * 18;
    std::string label = "-";
    if (g.any) {
      double frac = metric_.lowerIsBetter ? 1 - t : t;
      label = metric_.show(g.logShade ? g.lo * std::pow(g.hi / g.lo, frac)
                                      : g.lo + (g.hi - g.lo) * frac);
      if (i == 0)
        label += " (best)";
      if (i == 4)
        label += " (worst)";
    }
    out_ << "<rect class=\"legend\" x=\"" << px(lx) << "\" y=\"" << px(y)
         << "\" width=\"14\" height=\"14\" fill=\"" << shade(t)
         << "\" stroke=\"#ccc\"/><text x=\"" << px(lx + 20) << "\" y=\""
         << px(y + 11) << "\" font-size=\"11\">" << esc(label) << "</text>";
  }
  double fy = top + 5 * 18;
  out_ << "<rect class=\"legend\" x=\"" << px(lx) << "\" y=\"" << px(fy)
       << "\" width=\"14\" height=\"14\" fill=\"url(#hatch-" << index
       << ")\" stroke=\"#ccc\"/><text x=\"" << px(lx + 20) << "\" y=\""
       << px(fy + 11) << "\" font-size=\"11\">fails</text>";
}

void SweepReport::heatMap(size_t index, const std::string &name) {
  HeatGrid g = heatGrid(name);
  heatMapNote(g);

  const double cw = 96, ch = 32, top = 40;
  size_t labelChars = g.rowPath.size();
  for (double v : g.rowVals)
    labelChars = std::max(labelChars, axisValue(v).size());
  double left =
      g.hasRows ? std::clamp(double(labelChars) * 7 + 16, 80.0, 320.0) : 16;
  double gridW = cw * double(g.colVals.size()),
         gridH = ch * double(g.rowVals.size());
  double lx = left + gridW + 24;
  double w = lx + 170, h = std::max(top + gridH + 12, top + 5 * 18 + 24);
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"heatmap\" width=\""
       << px(w) << "\" height=\"" << px(h) << "\"><defs><pattern id=\"hatch-"
       << index
       << "\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
          "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" "
          "fill=\"#e4e4e4\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" "
          "stroke=\"#b0b0b0\" stroke-width=\"2\"/></pattern></defs>";
  if (!g.colPath.empty())
    out_ << "<text x=\"" << px(left + gridW / 2)
         << "\" y=\"14\" "
            "font-size=\"11\" font-weight=\"bold\" text-anchor=\"middle\">"
         << esc(g.colPath) << "</text>";
  if (!g.rowPath.empty())
    out_ << "<text x=\"" << px(left - 6) << "\" y=\"" << px(top - 6)
         << "\" font-size=\"11\" font-weight=\"bold\" text-anchor=\"end\">"
         << esc(g.rowPath) << "</text>";
  if (g.hasCols)
    for (size_t c = 0; c < g.colVals.size(); ++c)
      out_ << "<text x=\"" << px(left + cw * double(c) + cw / 2) << "\" y=\""
           << px(top - 6) << "\" font-size=\"11\" text-anchor=\"middle\">"
           << esc(axisValue(g.colVals[c])) << "</text>";
  if (g.hasRows)
    for (size_t r = 0; r < g.rowVals.size(); ++r)
      out_ << "<text x=\"" << px(left - 6) << "\" y=\""
           << px(top + ch * double(r) + ch / 2 + 4)
           << "\" font-size=\"11\" text-anchor=\"end\">"
           << esc(axisValue(g.rowVals[r])) << "</text>";
  heatMapCells(index, g, left, top, cw, ch);
  heatMapLegend(index, g, lx, top);
  out_ << "</svg>";
}

void SweepReport::model(size_t index, const std::string &name) {
  std::vector<const Outcome *> ok;
  size_t total = 0;
  for (const Outcome &o : outcomes_)
    if (o.point.model == name) {
      ++total;
      if (o.ok)
        ok.push_back(&o);
    }
  out_ << "<section><h2>Model " << esc(name) << "</h2><p class=\"note\">"
       << total << " points, " << ok.size() << " ok, " << total - ok.size()
       << " failed.</p>";
  out_ << "<h3>Pareto fronts</h3><p class=\"note\">Every point that compiled "
          "is a dot; the Pareto points (no other point has as few chips, or "
          "as little SRAM, and as much throughput) are red, larger, and "
          "joined. Hover a dot for its values.</p>";
  out_ << "<div class=\"figure\">";
  if (ok.empty()) {
    out_ << "<p class=\"note\">No point of this model compiled.</p>";
  } else {
    paretoChart(ok, false);
    paretoChart(ok, true);
  }
  out_ << "</div><div class=\"figure\">";
  heatMap(index, name);
  out_ << "</div></section>\n";
}

void SweepReport::sensitivityTable() {
  out_ << "<section><h2>Sensitivity</h2><p class=\"note\">Per model: the "
       << esc(metric_.name)
       << "'s gain when one resource improves by 10%, best first; the best "
          "resource of each model is in bold.</p>";
  if (sensitivity_.empty()) {
    out_ << "<p class=\"note\">Not recorded.</p></section>\n";
    return;
  }
  out_ << "<div class=\"figure\"><table class=\"sensitivity\"><thead><tr>"
          "<th>model</th><th>resource</th><th>gain</th></tr></thead><tbody>";
  for (const std::string &m : models_) {
    // Best gain first (unknown gains last), then by resource, then as given.
    std::vector<size_t> rows;
    for (size_t i = 0; i < sensitivity_.size(); ++i)
      if (sensitivity_[i].model == m)
        rows.push_back(i);
    auto key = [&](size_t i) {
      double g = sensitivity_[i].gain;
      return std::isnan(g) ? -std::numeric_limits<double>::infinity() : g;
    };
    std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
      if (key(a) != key(b))
        return key(a) > key(b);
      if (sensitivity_[a].resource != sensitivity_[b].resource)
        return sensitivity_[a].resource < sensitivity_[b].resource;
      return a < b;
    });
    for (size_t i = 0; i < rows.size(); ++i) {
      const Sensitivity &s = sensitivity_[rows[i]];
      std::string gain = "n/a";
      if (!std::isnan(s.gain)) {
        double pct = std::round(s.gain * 1000) / 10;
        if (pct == 0)
          pct = 0; // no "-0.0%"
        gain = format("%+.1f%%", pct);
      }
      const char *open = i == 0 ? "<b>" : "", *close = i == 0 ? "</b>" : "";
      out_ << "<tr" << (i == 0 ? " class=\"best\"" : "") << "><td>" << open
           << esc(s.model) << close << "</td><td>" << open << "<code>"
           << esc(s.resource) << "</code>" << close << "</td><td>" << open
           << esc(gain) << close << "</td></tr>";
    }
  }
  out_ << "</tbody></table></div></section>\n";
}

void SweepReport::pointTable() {
  out_ << "<section><h2>Points</h2><p class=\"note\">Every point in the "
          "order written; failures with their reason.</p><div "
          "class=\"figure\"><table class=\"points\"><thead><tr><th>model</th>";
  for (const Axis &a : axes_)
    out_ << "<th>" << esc(a.path) << "</th>";
  out_ << "<th>status</th><th>latency (us)</th><th>throughput (/s)</th>"
          "<th>chips</th><th>utilisation (%)</th><th>SRAM peak (MiB)</th>"
          "<th>perf per watt</th><th>bound</th></tr></thead><tbody>";
  for (const Outcome &o : outcomes_) {
    out_ << "<tr" << (o.ok ? "" : " class=\"fail\"") << "><td>"
         << esc(o.point.model) << "</td>";
    for (size_t i = 0; i < axes_.size(); ++i)
      out_ << "<td>"
           << (i < o.point.values.size() ? esc(axisValue(o.point.values[i]))
                                         : "")
           << "</td>";
    if (!o.ok) {
      out_ << "<td>error: " << esc(o.error)
           << "</td><td></td><td></td><td></td><td></td><td></td><td></td><td>"
           << esc(o.bound) << "</td></tr>";
      continue;
    }
    out_ << "<td>ok</td><td>" << format("%.2f", o.latency * 1e6) << "</td><td>"
         << format("%.1f", o.throughput) << "</td><td>"
         << esc(axisValue(o.chips)) << "</td><td>"
         << format("%.1f", o.utilisation * 100) << "</td><td>"
         << format("%.2f", o.sramPeak / 1048576.0) << "</td><td>"
         << format("%.2f", o.perfPerWatt) << "</td><td>" << esc(o.bound)
         << "</td></tr>";
  }
  out_ << "</tbody></table></div></section>\n";
}

std::string SweepReport::render() {
  out_ << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       << "<title>" << esc(title_) << "</title><style>"
       << "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
          "h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:"
          "1px solid #ddd}h3{font-size:14px;margin:16px 0 4px}"
          ".note{color:#555;font-size:13px}"
          "table{border-collapse:collapse;font-size:12px}td,th{border:1px "
          "solid #ddd;padding:2px 6px;text-align:left}th{background:#f3f3f3}"
          "tr.fail td{color:#a33}.figure{overflow-x:auto}svg{margin-right:"
          "16px;vertical-align:top}"
       << "</style></head>\n<body>\n";
  header();
  for (size_t i = 0; i < models_.size(); ++i)
    model(i, models_[i]);
  sensitivityTable();
  pointTable();
  out_ << "</body></html>\n";
  return out_.str();
}

} // namespace

std::string renderHtml(const std::vector<Axis> &axes,
                       const std::vector<Outcome> &outcomes,
                       const std::vector<Sensitivity> &sensitivity,
                       const std::string &objective, const std::string &title) {
  return SweepReport(axes, outcomes, sensitivity, objective, title).render();
}

} // namespace loom::sweep
