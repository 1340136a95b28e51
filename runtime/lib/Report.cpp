//===- Report.cpp - One self-contained HTML page about a program ----------===//
//
// Every picture is inline SVG built here from the program and the
// simulator's statistics; the page needs nothing from the network. See
// Report.h for what it shows.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Report.h"

#include "loom/Runtime/Floorplan.h"
#include "loom/Runtime/ScheduleVerifier.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>

namespace loom::rt {
namespace {

std::string esc(std::string_view s) { return xmlEscape(s); }
std::string num(double v) { return svgNumber(v); }

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(digits);
  os << v;
  return os.str();
}

/// "1.23 ms", "45.6 us", "789 ns".
std::string duration(double seconds) {
  if (seconds >= 1e-3)
    return fixed(seconds * 1e3, 3) + " ms";
  if (seconds >= 1e-6)
    return fixed(seconds * 1e6, 2) + " us";
  return fixed(seconds * 1e9, 0) + " ns";
}

/// Engineering notation for axis labels: 1.5k, 20M, 3G, 4T.
std::string si(double v) {
  static const char *suffix[] = {"", "k", "M", "G", "T", "P", "E"};
  // Below 1, two significant digits: a log axis's 0.01 is no "0.0".
  if (v != 0 && std::fabs(v) < 1) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2g", v);
    return buf;
  }
  int i = 0;
  while (std::fabs(v) >= 1000 && i < 6) {
    v /= 1000;
    ++i;
  }
  return (v >= 10 || v == std::floor(v) ? fixed(v, 0) : fixed(v, 1)) +
         suffix[i];
}

/// Peak rates the roofline plot needs, from the program's copy of the
/// target description (absent fields leave 0).
struct Ceilings {
  double clockHz = 0;
  int64_t tiles = 1;
  std::map<std::string, double> macsPerCycle; // per tile, by format
  double vectorLanes = 0;
  double sramBytesPerCycle = 0; // per tile

  /// FLOP/s of the chip for a kernel of `precision` (its matrix unit if it
  /// runs that format, else the vector unit).
  double flops(const std::string &precision) const {
    auto it = macsPerCycle.find(precision);
    double perTile = it != macsPerCycle.end() ? it->second : vectorLanes;
    return 2 * perTile * double(tiles) * clockHz;
  }
  double sramBytesPerSecond() const {
    return sramBytesPerCycle * double(tiles) * clockHz;
  }
};

Ceilings readCeilings(const Program &p) {
  Ceilings c;
  c.clockHz = p.clockHz;
  c.tiles = p.numTiles();
  nlohmann::json j = nlohmann::json::parse(p.targetJson, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return c;
  const nlohmann::json *tile = nullptr;
  if (j.contains("chip") && j["chip"].is_object() &&
      j["chip"].contains("tile") && j["chip"]["tile"].is_object())
    tile = &j["chip"]["tile"];
  if (!tile)
    return c;
  auto number = [](const nlohmann::json &n, const char *key) {
    return n.contains(key) && n[key].is_number() ? n[key].get<double>() : 0.0;
  };
  if (tile->contains("matrix") && (*tile)["matrix"].contains("macs_per_cycle") &&
      (*tile)["matrix"]["macs_per_cycle"].is_object())
    for (auto &[format, v] : (*tile)["matrix"]["macs_per_cycle"].items())
      if (v.is_number())
        c.macsPerCycle[format] = v.get<double>();
  if (tile->contains("vector") && (*tile)["vector"].is_object())
    c.vectorLanes = number((*tile)["vector"], "lanes");
  if (tile->contains("sram") && (*tile)["sram"].is_object())
    c.sramBytesPerCycle = number((*tile)["sram"], "bytes_per_cycle");
  return c;
}

class ReportWriter {
public:
  explicit ReportWriter(const ReportInput &in)
      : in_(in), p_(*in.program), s_(*in.stats) {
    for (size_t i = 0; i < p_.kernels.size(); ++i)
      kernelPos_.emplace(p_.kernels[i].id, i);
    period_ = std::max<int64_t>(1, s_.initiationInterval);
    latency_ = std::max<int64_t>(1, s_.totalCycles);
  }

  std::string render();

private:
  void header();
  void floorplan();
  void heatmap();
  void timeline();
  void roofline();
  void sram();
  void kernelTable();
  void passTable();

  std::string kernelColourOf(int32_t kernel) const {
    auto it = kernelPos_.find(kernel);
    return it == kernelPos_.end() ? "#9a9a9a" : kernelFill(it->second);
  }
  std::string kernelNameOf(int32_t kernel) const {
    auto it = kernelPos_.find(kernel);
    return it == kernelPos_.end() ? "transfer" : p_.kernels[it->second].name;
  }
  void section(const char *id, const std::string &title,
               const std::string &note) {
    out_ << "<section><h2>" << esc(title) << "</h2>";
    if (!note.empty())
      out_ << "<p class=\"note\">" << note << "</p>";
    out_ << "<div class=\"figure\" id=\"" << id << "\">";
  }
  void endSection() { out_ << "</div></section>\n"; }

  const ReportInput &in_;
  const Program &p_;
  const SimStats &s_;
  std::unordered_map<int32_t, size_t> kernelPos_;
  int64_t period_ = 1, latency_ = 1;
  std::ostringstream out_;
};

void ReportWriter::header() {
  double roof = double(std::max<int64_t>(1, s_.rooflineCycles));
  out_ << "<header><h1>Loom report: " << esc(p_.model) << "</h1><p>"
       << "target <b>" << esc(p_.targetName) << "</b> (";
  if (p_.chips > 1)
    out_ << p_.chips << " chips of ";
  out_ << p_.tileRows << " x " << p_.tileCols << " tiles, "
       << fixed(p_.clockHz / 1e6, 0)
       << " MHz) &middot; " << p_.kernels.size() << " kernels &middot; mapping <b>"
       << esc(s_.mapping) << "</b>";
  if (s_.mapping == "hybrid")
    out_ << " (" << s_.pipelineGroups << " groups)";
  out_ << "</p><p>latency <b>" << s_.totalCycles << " cycles</b> ("
       << duration(double(s_.totalCycles) / p_.clockHz) << ", "
       << fixed(double(s_.totalCycles) / roof, 2)
       << "x the roofline) &middot; a new input every <b>"
       << s_.initiationInterval << " cycles</b> ("
       << fixed(p_.clockHz / double(period_), 1)
       << " <abbr title=\"runs of the program a second: one batch of an ONNX "
          "model, one decode step of the whole batch of an LLM config\">"
          "inputs/s</abbr>, "
       << fixed(double(period_) / roof, 2)
       << "x the roofline) &middot; roofline " << s_.rooflineCycles
       << " cycles &middot; SRAM peak " << s_.sramPeakBytes << " of "
       << s_.sramBytesPerTile << " bytes on one tile</p><p class=\"note\">"
       << "Written by " << esc(in_.producer)
       << ". Every figure is the simulator's (cycles at the target's "
          "clock), from the program's static schedule.</p></header>\n";
}

void ReportWriter::floorplan() {
  section("floorplan", "Floorplan",
          "Each kernel's region of tiles, one panel per pipeline group; "
          "arrows mark the busiest mesh links.");
  std::string svg = renderFloorplanSvg(p_);
  if (svg.rfind("<?xml", 0) == 0)
    svg = svg.substr(svg.find("?>") + 2);
  // Scaled down to the page's width (its viewBox keeps the proportions).
  out_ << "<div class=\"floorplan\">" << svg << "</div>";
  endSection();
}

void ReportWriter::heatmap() {
  // Several chips are drawn side by side, at most kMaxChips of them, each
  // under its label; the map says when it leaves chips out.
  constexpr int64_t kMaxChips = 16;
  constexpr int kChipsPerRow = 4, kChipGap = 16, kChipLabel = 18;
  bool multiChip = p_.chips > 1;
  int64_t perChip = p_.tilesPerChip();
  int64_t drawnChips = multiChip ? std::min<int64_t>(p_.chips, kMaxChips) : 1;
  int64_t drawnTiles = drawnChips * perChip;
  // Busy cycles per tile and unit, per initiation interval.
  std::vector<std::array<int64_t, kTileUnits>> busy(
      static_cast<size_t>(drawnTiles), {0, 0, 0});
  for (const ProgramInstr &in : p_.instrs)
    if (!isLinkUnit(in.unit) && in.resource >= 0 && in.resource < drawnTiles)
      busy[static_cast<size_t>(in.resource)][static_cast<size_t>(in.unit)] +=
          in.duration;
  std::string partial =
      p_.chips > drawnChips
          ? "Partial: chips 0-" + std::to_string(drawnChips - 1) + " of " +
                std::to_string(p_.chips) + " shown, " +
                std::to_string(p_.chips - drawnChips) + " not shown."
          : "";
  section("heatmap", "Tile utilisation",
          "Per tile: the busiest of its matrix, vector and DMA units, as a "
          "share of the " +
              std::string(s_.mapping == "sequential" ? "latency"
                                                     : "initiation interval") +
              " (" + std::to_string(period_) +
              " cycles). Hover a tile for each unit." +
              (multiChip ? " One grid per chip. " + partial : ""));
  const int cell =
      std::max(multiChip ? 6 : 8,
               std::min(48, (multiChip ? 240 : 480) /
                                std::max(p_.tileRows, p_.tileCols)));
  int perRow = static_cast<int>(std::min<int64_t>(drawnChips, kChipsPerRow));
  int chipW = p_.tileCols * cell, chipH = p_.tileRows * cell;
  int64_t chipRows = (drawnChips + perRow - 1) / perRow;
  int gridW = multiChip ? perRow * (chipW + kChipGap) - kChipGap : chipW;
  int gridH = multiChip ? static_cast<int>(chipRows) *
                                  (kChipLabel + chipH + kChipGap) -
                              kChipGap
                        : chipH;
  int w = gridW + 140, h = gridH + 10 + (partial.empty() ? 0 : 20);
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w
       << "\" height=\"" << std::max(h, 90) << "\">";
  // Where local tile (0, 0) of `chip` is drawn.
  auto chipOrigin = [&](int64_t chip) -> std::pair<int64_t, int64_t> {
    if (!multiChip)
      return {0, 0};
    return {(chip % perRow) * (chipW + kChipGap),
            (chip / perRow) * (kChipLabel + chipH + kChipGap) + kChipLabel};
  };
  for (int64_t chip = 0; multiChip && chip < drawnChips; ++chip) {
    auto [x0, y0] = chipOrigin(chip);
    out_ << "<text x=\"" << x0 << "\" y=\"" << y0 - 5
         << "\" font-size=\"11\" font-weight=\"bold\">chip " << chip
         << "</text>";
  }
  static const char *units[] = {"matrix", "vector", "dma"};
  for (int64_t t = 0; t < drawnTiles; ++t) {
    const auto &b = busy[static_cast<size_t>(t)];
    double u = double(*std::max_element(b.begin(), b.end())) / double(period_);
    u = std::min(1.0, u);
    int shade = static_cast<int>(std::lround(255 * (1 - u)));
    int64_t local = t % perChip;
    auto [x0, y0] = chipOrigin(t / perChip);
    out_ << "<rect x=\"" << x0 + (local % p_.tileCols) * cell << "\" y=\""
         << y0 + (local / p_.tileCols) * cell << "\" width=\"" << cell - 1
         << "\" height=\"" << cell - 1 << "\" fill=\"rgb(255," << shade << ","
         << shade << ")\" stroke=\"#ccc\"><title>tile " << t;
    if (multiChip)
      out_ << " (chip " << t / perChip << ", " << local / p_.tileCols << ","
           << local % p_.tileCols << ")";
    for (int k = 0; k < kTileUnits; ++k)
      out_ << "\n" << units[k] << ": " << b[static_cast<size_t>(k)]
           << " busy cycles ("
           << fixed(100.0 * double(b[static_cast<size_t>(k)]) / double(period_),
                    1)
           << "%)";
    out_ << "</title></rect>";
    // The share as a number where the cell holds one (dark cells in white).
    if (cell >= 18) {
      int size = std::min(12, cell / 3);
      out_ << "<text class=\"share\" x=\""
           << x0 + (local % p_.tileCols) * cell + (cell - 1) / 2.0 << "\" y=\""
           << y0 + (local / p_.tileCols) * cell + (cell - 1) / 2.0 + size / 3.0
           << "\" font-size=\"" << size
           << "\" text-anchor=\"middle\" pointer-events=\"none\" fill=\""
           << (u > 0.6 ? "#fff" : "#333") << "\">"
           << std::lround(100 * u) << "%</text>";
    }
  }
  int lx = gridW + 16;
  for (int i = 0; i <= 4; ++i) {
    int shade = 255 - 255 * i / 4;
    out_ << "<rect x=\"" << lx << "\" y=\"" << 4 + i * 16
         << "\" width=\"14\" height=\"14\" fill=\"rgb(255," << shade << ","
         << shade << ")\" stroke=\"#ccc\"/><text x=\"" << lx + 20 << "\" y=\""
         << 15 + i * 16 << "\" font-size=\"11\">" << i * 25 << "%</text>";
  }
  if (!partial.empty())
    out_ << "<text x=\"0\" y=\"" << gridH + 22
         << "\" font-size=\"12\" font-weight=\"bold\">" << esc(partial)
         << "</text>";
  out_ << "</svg>";
  endSection();
}

/// A timeline row's label: "link 3", or "chip link 4 (0 -> 1)".
static std::string linkLabel(const ProgramLink &l) {
  if (!l.chipLink)
    return "link " + std::to_string(l.id);
  return "chip link " + std::to_string(l.id) + " (" +
         std::to_string(l.fromChip) + " -> " + std::to_string(l.toChip) + ")";
}

/// The critical path: from the instruction that finishes last, back
/// through whatever held up each one's start, the latest of its
/// dependences' arrivals and the instruction before it on its unit.
static std::unordered_set<int32_t> criticalPath(
    const std::map<int64_t, std::vector<const ProgramInstr *>> &rows) {
  std::unordered_set<int32_t> critical;
  std::unordered_map<int32_t, const ProgramInstr *> byId;
  std::unordered_map<int32_t, int64_t> rowOf;
  std::map<int64_t, std::vector<const ProgramInstr *>> byEnd = rows;
  for (auto &[row, instrs] : byEnd) {
    std::sort(instrs.begin(), instrs.end(),
              [](const ProgramInstr *a, const ProgramInstr *b) {
                return a->end() != b->end() ? a->end() < b->end()
                                            : a->id < b->id;
              });
    for (const ProgramInstr *in : instrs) {
      byId.emplace(in->id, in);
      rowOf.emplace(in->id, row);
    }
  }
  const ProgramInstr *cur = nullptr;
  for (const auto &[id, in] : byId)
    if (!cur || in->arrival() > cur->arrival() ||
        (in->arrival() == cur->arrival() && in->id < cur->id))
      cur = in;
  while (cur && critical.insert(cur->id).second) {
    const ProgramInstr *next = nullptr;
    int64_t latest = -1;
    for (int32_t d : cur->deps) {
      auto it = byId.find(d);
      if (it == byId.end() || it->second->arrival() > cur->start)
        continue;
      if (it->second->arrival() > latest) {
        latest = it->second->arrival();
        next = it->second;
      }
    }
    const auto &unit = byEnd[rowOf[cur->id]];
    auto after = std::upper_bound(
        unit.begin(), unit.end(), cur->start,
        [](int64_t t, const ProgramInstr *in) { return t < in->end(); });
    for (auto it = after; it != unit.begin();) {
      --it;
      if ((*it)->id == cur->id)
        continue;
      if ((*it)->end() > latest) {
        latest = (*it)->end();
        next = *it;
      }
      break;
    }
    cur = next;
  }
  return critical;
}

void ReportWriter::timeline() {
  // One row per resource with work, tiles' units first, then links.
  std::map<int64_t, std::vector<const ProgramInstr *>> rows;
  std::unordered_map<int32_t, size_t> linkPos;
  for (size_t i = 0; i < p_.links.size(); ++i)
    linkPos.emplace(p_.links[i].id, i);
  for (const ProgramInstr &in : p_.instrs) {
    if (in.duration <= 0)
      continue;
    int64_t row = isLinkUnit(in.unit)
                      ? p_.numTiles() * kTileUnits +
                            int64_t(linkPos.count(in.resource)
                                        ? linkPos.at(in.resource)
                                        : 0)
                      : in.resource * kTileUnits + int64_t(in.unit);
    rows[row].push_back(&in);
  }
  // The replay's hazards by the instr they happen to (the first
  // SimStats::kMaxHazardRecords).
  std::unordered_map<int32_t, std::vector<const std::string *>> hazardsAt;
  for (const HazardRecord &h : s_.hazardRecords)
    hazardsAt[h.hazard.instr].push_back(&h.message);
  // The critical path: from the instruction that finishes last.
  std::unordered_set<int32_t> critical = criticalPath(rows);
  const size_t kMaxRows = 160;
  size_t shown = std::min(rows.size(), kMaxRows);
  section("timeline", "Timeline",
          std::string(p_.chips > 1 ? "One input's instructions on every "
                                     "unit, mesh link and chip link ("
                                   : "One input's instructions on every unit "
                                     "and mesh link (") +
              std::to_string(rows.size()) + " with work" +
              (rows.size() > kMaxRows
                   ? ", the first " + std::to_string(kMaxRows) + " shown"
                   : std::string()) +
              "), coloured by kernel; transfers are grey. Hover a bar for "
              "its kernel, cycles and bytes. Outlined in black: the critical "
              "path (" +
              std::to_string(critical.size()) +
              " instructions), the chain of dependences and unit waits back "
              "from the instruction that finishes last." +
              (s_.hazards > 0
                   ? " " + std::to_string(s_.hazards) +
                         " schedule hazards of the replay are outlined in "
                         "red, with a red mark at their cycle."
                   : std::string()));
  const double width = 1000, rowH = 9, left = 170;
  double scale = width / double(latency_);
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
       << num(left + width + 20) << "\" height=\""
       << num(double(shown) * rowH + 40) << "\">";
  // Axis.
  for (int i = 0; i <= 10; ++i) {
    double x = left + width * i / 10;
    out_ << "<line x1=\"" << num(x) << "\" y1=\"0\" x2=\"" << num(x)
         << "\" y2=\"" << num(double(shown) * rowH) << "\" stroke=\"#eee\"/>"
         << "<text class=\"xtick\" x=\"" << num(x) << "\" y=\""
         << num(double(shown) * rowH + 14)
         << "\" font-size=\"10\" text-anchor=\"middle\">"
         << si(double(latency_) * i / 10) << "</text>";
  }
  out_ << "<text class=\"xlabel\" x=\"" << num(left + width / 2) << "\" y=\""
       << num(double(shown) * rowH + 30)
       << "\" font-size=\"11\" text-anchor=\"middle\">cycle</text>";
  static const char *units[] = {"matrix", "vector", "dma"};
  size_t r = 0;
  for (const auto &[row, instrs] : rows) {
    if (r == shown)
      break;
    double y = double(r) * rowH;
    std::string label =
        row >= p_.numTiles() * kTileUnits
            ? linkLabel(p_.links[static_cast<size_t>(
                  row - p_.numTiles() * kTileUnits)])
            : "tile " + std::to_string(row / kTileUnits) + " " +
                  units[row % kTileUnits];
    out_ << "<text x=\"" << num(left - 4) << "\" y=\"" << num(y + rowH - 1.5)
         << "\" font-size=\"8\" text-anchor=\"end\">" << esc(label)
         << "</text>";
    for (const ProgramInstr *in : instrs) {
      auto hz = hazardsAt.find(in->id);
      out_ << "<rect x=\"" << num(left + double(in->start) * scale)
           << "\" y=\"" << num(y + 0.5) << "\" width=\""
           << num(std::max(0.5, double(in->duration) * scale))
           << "\" height=\"" << num(rowH - 1) << "\" fill=\""
           << (in->kernel >= 0 ? kernelColourOf(in->kernel) : "#9a9a9a")
           << "\""
           << (hz != hazardsAt.end()
                   ? " class=\"hazard\" stroke=\"#d00\" stroke-width=\"1.5\""
               : critical.count(in->id)
                   ? " class=\"critical\" stroke=\"#000\" stroke-width=\"1.2\""
                   : "")
           << "><title>" << esc(kernelNameOf(in->kernel)) << ", instr "
           << in->id << ": cycles " << in->start << "-" << in->end()
           << (critical.count(in->id) ? " (critical path)" : "");
      if (in->bytes)
        out_ << ", " << in->bytes << " bytes";
      if (hz != hazardsAt.end())
        for (const std::string *m : hz->second)
          out_ << "\nhazard: " << esc(*m);
      out_ << "</title></rect>";
      // A hazard is marked where it happens: a red tick at its start.
      if (hz != hazardsAt.end())
        out_ << "<path class=\"hazard-mark\" d=\"M"
             << num(left + double(in->start) * scale) << " " << num(y)
             << "l-3 -4h6z\" fill=\"#d00\"/>";
    }
    ++r;
  }
  out_ << "</svg>";
  endSection();
}

void ReportWriter::roofline() {
  Ceilings c = readCeilings(p_);
  std::unordered_map<int32_t, int64_t> cycles;
  for (const KernelStats &k : s_.kernels)
    cycles[k.id] = k.cycles();
  struct Point {
    double intensity, flops;
    size_t kernel;
  };
  std::vector<Point> points;
  std::set<std::string> precisions;
  for (size_t i = 0; i < p_.kernels.size(); ++i) {
    const ProgramKernel &k = p_.kernels[i];
    int64_t cy = cycles.count(k.id) ? cycles[k.id] : k.cycles;
    if (k.flops <= 0 || k.bytes <= 0 || cy <= 0)
      continue;
    double intensity = double(k.flops) / double(k.bytes);
    double attained = double(k.flops) * p_.clockHz / double(cy);
    // A hostile file can make these overflow: such points are left out.
    if (!std::isfinite(intensity) || !std::isfinite(attained) ||
        intensity <= 0 || attained <= 0)
      continue;
    points.push_back({intensity, attained, i});
    precisions.insert(numericFormatName(k.precision));
  }
  section("roofline", "Roofline",
          "Each matrix kernel's attained FLOP/s (useful FLOPs over its "
          "simulated time) against its arithmetic intensity (FLOPs per "
          "SRAM byte read and written), under the chip's compute ceiling for "
          "its precision and its SRAM bandwidth (log-log). " +
              std::to_string(points.size()) + " kernels with matrix work.");
  double peak = 0;
  for (const std::string &prec : precisions)
    if (std::isfinite(c.flops(prec)))
      peak = std::max(peak, c.flops(prec));
  for (const Point &pt : points)
    peak = std::max(peak, pt.flops);
  double bw = c.sramBytesPerSecond();
  if (!std::isfinite(bw))
    bw = 0;
  double xmin = 0.01, xmax = 1e4, ymax = std::max(peak * 2, 1e9);
  if (!std::isfinite(ymax))
    ymax = 1e30;
  double ymin = ymax / 1e6;
  for (const Point &pt : points) {
    xmin = std::min(xmin, pt.intensity / 2);
    xmax = std::max(xmax, pt.intensity * 2);
    ymin = std::min(ymin, pt.flops / 2);
  }
  const double W = 640, H = 360, L = 70, B = 40;
  auto X = [&](double v) {
    return L + W * (std::log10(v) - std::log10(xmin)) /
                   (std::log10(xmax) - std::log10(xmin));
  };
  auto Y = [&](double v) {
    return H - H * (std::log10(v) - std::log10(ymin)) /
                   (std::log10(ymax) - std::log10(ymin));
  };
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(L + W + 180)
       << "\" height=\"" << num(H + B + 10) << "\">";
  out_ << "<rect x=\"" << num(L) << "\" y=\"0\" width=\"" << num(W)
       << "\" height=\"" << num(H) << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  int ticks = 0;
  for (double d = std::pow(10, std::ceil(std::log10(xmin)));
       d <= xmax && ++ticks <= 40; d *= 10)
    out_ << "<text class=\"xtick\" x=\"" << num(X(d)) << "\" y=\""
         << num(H + 14) << "\" font-size=\"10\" text-anchor=\"middle\">"
         << si(d) << "</text>";
  ticks = 0;
  for (double d = std::pow(10, std::ceil(std::log10(ymin)));
       d <= ymax && ++ticks <= 40; d *= 10)
    out_ << "<text class=\"ytick\" x=\"" << num(L - 4) << "\" y=\""
         << num(Y(d) + 3) << "\" font-size=\"10\" text-anchor=\"end\">"
         << si(d) << "</text>";
  out_ << "<text class=\"xlabel\" x=\"" << num(L + W / 2) << "\" y=\""
       << num(H + 32)
       << "\" font-size=\"11\" text-anchor=\"middle\">FLOPs per SRAM byte"
          "</text><text class=\"ylabel\" x=\"14\" y=\""
       << num(H / 2) << "\" font-size=\"11\" transform=\"rotate(-90 14 "
       << num(H / 2) << ")\" text-anchor=\"middle\">FLOP/s</text>";
  // Ceilings: min(peak, bandwidth x intensity) per precision.
  int line = 0;
  for (const std::string &prec : precisions) {
    double f = c.flops(prec);
    if (!(f > 0) || !std::isfinite(f) || bw <= 0)
      continue;
    double knee = f / bw;
    std::string path = "M" + num(X(xmin)) + "," + num(Y(std::max(ymin, bw * xmin)));
    if (knee > xmin && knee < xmax)
      path += " L" + num(X(knee)) + "," + num(Y(f));
    path += " L" + num(X(xmax)) + "," + num(Y(std::min(f, bw * xmax)));
    out_ << "<path class=\"ceiling\" d=\"" << path
         << "\" fill=\"none\" stroke=\"#333\" stroke-width=\"1.5\"><title>"
         << esc(prec) << ": " << si(f) << "FLOP/s compute, " << si(bw)
         << "B/s SRAM</title></path><text x=\"" << num(L + W + 6) << "\" y=\""
         << num(Y(f) + 3 + 12 * line) << "\" font-size=\"10\">" << esc(prec)
         << " peak " << si(f) << "FLOP/s</text>";
    ++line;
  }
  for (const Point &pt : points) {
    const ProgramKernel &k = p_.kernels[pt.kernel];
    out_ << "<circle class=\"kernel\" cx=\"" << num(X(pt.intensity))
         << "\" cy=\"" << num(Y(pt.flops)) << "\" r=\"4\" fill=\""
         << kernelFill(pt.kernel) << "\" stroke=\"#333\"><title>" << esc(k.name)
         << " (" << numericFormatName(k.precision) << ", "
         << costBoundName(k.bound) << " bound): " << si(pt.flops)
         << "FLOP/s at " << fixed(pt.intensity, 2)
         << " FLOPs/byte</title></circle>";
  }
  out_ << "</svg>";
  endSection();
}

void ReportWriter::sram() {
  // Live footprint over one input's time, for the tiles with the highest
  // peaks.
  std::map<int32_t, std::vector<std::pair<int64_t, int64_t>>> events;
  for (const ProgramBuffer &b : p_.buffers) {
    if (b.size <= 0)
      continue;
    int64_t start = b.resident ? 0 : b.liveStart;
    int64_t end = b.resident ? latency_ : b.liveEnd;
    if (end <= start)
      continue;
    events[b.tile].push_back({start, b.footprint()});
    events[b.tile].push_back({end, -b.footprint()});
  }
  std::vector<std::pair<int64_t, int32_t>> byPeak;
  for (size_t t = 0; t < s_.sramPeakPerTile.size(); ++t)
    byPeak.push_back({-s_.sramPeakPerTile[t], int32_t(t)});
  std::sort(byPeak.begin(), byPeak.end());
  size_t shown = std::min<size_t>(byPeak.size(), 8);
  section("sram", "SRAM occupancy",
          "Bytes live on a tile over one input's time (every copy of a "
          "rotating buffer counted), for the " +
              std::to_string(shown) + " tiles with the highest peaks, on a "
              "scale up to the highest; the dashed line is a tile's capacity "
              "where it is within the scale.");
  const double W = 800, H = 240, L = 70;
  const double capacity = double(std::max<int64_t>(1, p_.sramBytesPerTile));
  // The scale shows the data: up to the highest peak drawn (a 1, 2 or 5
  // step above it), the capacity's dashed line only where it is within
  // 1.5 times that; else the capacity is written above the plot (27 kB of
  // a 262 kB tile drew as a flat line at the bottom).
  double top = 0;
  for (size_t i = 0; i < shown; ++i)
    top = std::max(top, double(-byPeak[i].first));
  double step = 1;
  if (top > 0) {
    step = std::pow(10, std::floor(std::log10(top / 4)));
    for (double k : {1.0, 2.0, 5.0, 10.0})
      if (top / (k * step) <= 5) {
        step *= k;
        break;
      }
  }
  double scale = top > 0 ? std::ceil(top / step * 1.0001) * step : capacity;
  const bool capacityShown = capacity <= scale * 1.5;
  if (capacityShown)
    scale = std::max(scale, capacity);
  double cap = scale; // the bytes at the plot's top
  // (10 pixels above the plot for its top tick's label.)
  out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(L + W + 160)
       << "\" height=\"" << num(H + 50) << "\"><g transform=\"translate(0,10)\">";
  out_ << "<rect x=\"" << num(L) << "\" y=\"0\" width=\"" << num(W)
       << "\" height=\"" << num(H) << "\" fill=\"#fafafa\" stroke=\"#999\"/>";
  if (capacityShown)
    out_ << "<line class=\"capacity\" x1=\"" << num(L) << "\" y1=\""
         << num(H - H * capacity / cap) << "\" x2=\"" << num(L + W)
         << "\" y2=\"" << num(H - H * capacity / cap)
         << "\" stroke=\"#c00\" stroke-dasharray=\"4 3\"><title>a tile's "
            "capacity, "
         << si(capacity) << "B</title></line>";
  else
    out_ << "<text class=\"capacity\" x=\"" << num(L + W - 4) << "\" y=\"12\" "
            "font-size=\"10\" text-anchor=\"end\" fill=\"#c00\">a tile holds "
         << si(capacity) << "B, above the scale</text>";
  for (double v = 0; v <= cap * 1.0001 && step > 0; v += step)
    out_ << "<line x1=\"" << num(L) << "\" y1=\"" << num(H - H * v / cap)
         << "\" x2=\"" << num(L + W) << "\" y2=\"" << num(H - H * v / cap)
         << "\" stroke=\"#eee\"/><text class=\"ytick\" x=\"" << num(L - 4)
         << "\" y=\"" << num(H - H * v / cap + 3)
         << "\" font-size=\"10\" text-anchor=\"end\">"
         << (v == 0 ? std::string("0") : si(v) + "B") << "</text>";
  out_ << "<text class=\"xlabel\" x=\"" << num(L + W / 2) << "\" y=\""
       << num(H + 16)
       << "\" font-size=\"11\" text-anchor=\"middle\">cycle (0 to " << latency_
       << ")</text>";
  for (size_t i = 0; i < shown; ++i) {
    int32_t t = byPeak[i].second;
    auto ev = events[t];
    std::sort(ev.begin(), ev.end());
    std::string pts = num(L) + "," + num(H);
    int64_t live = 0;
    for (auto [cycle, delta] : ev) {
      double x = L + W * double(std::min(cycle, latency_)) / double(latency_);
      pts += " " + num(x) + "," + num(H - H * double(live) / cap);
      live += delta;
      pts += " " + num(x) + "," + num(H - H * double(live) / cap);
    }
    std::string colour = kernelFill(size_t(i) * 5 + 1);
    out_ << "<polyline class=\"sram-line\" points=\"" << pts
         << "\" fill=\"none\" stroke=\"" << colour
         << "\" stroke-width=\"1.5\"><title>tile " << t << ": peak "
         << -byPeak[i].first << " bytes</title></polyline><text x=\""
         << num(L + W + 8) << "\" y=\"" << 12 + 14 * i
         << "\" font-size=\"11\" fill=\"" << colour << "\">tile " << t << ": "
         << si(double(-byPeak[i].first)) << "B</text>";
  }
  out_ << "</g></svg>";
  endSection();
}

void ReportWriter::kernelTable() {
  int64_t total = 0;
  for (const KernelStats &k : s_.kernels)
    total += k.cycles();
  section("kernels", "Kernels",
          "In program order. <i>Cycles</i> are scheduled, <i>simulated</i> "
          "the replay's (each instruction at its start for its timing "
          "rule's cycles), <i>estimate</i> the cost model's. <i>Share</i> "
          "is the kernel's cycles over the sum over kernels; click a "
          "heading to sort.");
  // What each bound says (the cost model's terms: lib/Target/CostModel.cpp).
  out_ << "<p class=\"note legend bounds\"><b>bound</b>, the cost model's "
          "longest term: <b>compute</b> the matrix or vector unit's "
          "arithmetic; <b>sram</b> the tiles' SRAM bandwidth; <b>mesh</b> "
          "the on-chip mesh links; <b>link</b> the chip-to-chip links; "
          "<b>offchip</b> off-chip memory; <b>fill_drain</b> the fixed "
          "cycles of filling and draining the unit's pipeline, longer than "
          "the kernel's streaming work (a small kernel).</p>";
  out_ << "<table class=\"sortable\"><thead><tr><th>id</th><th>kernel</th>"
          "<th>ONNX nodes</th><th>kind</th><th>precision</th><th>cycles</th>"
          "<th>simulated</th><th>estimate</th>"
       << (s_.hazards > 0 ? "<th>hazards</th>" : "")
       << "<th>bound</th><th>share</th><th>region</th>"
          "<th>group</th></tr></thead><tbody>";
  for (const KernelStats &ks : s_.kernels) {
    auto it = kernelPos_.find(ks.id);
    if (it == kernelPos_.end())
      continue;
    const ProgramKernel &k = p_.kernels[it->second];
    std::string nodes;
    for (size_t i = 0; i < k.onnxNodes.size(); ++i)
      nodes += (i ? ", " : "") + k.onnxNodes[i];
    out_ << "<tr><td>" << k.id << "</td><td><span class=\"swatch\" "
         << "style=\"background:" << kernelFill(it->second) << "\"></span>"
         << esc(k.name) << "</td><td>" << esc(nodes) << "</td><td>"
         << kernelKindName(k.kind) << "</td><td>"
         << numericFormatName(k.precision) << "</td><td>" << ks.cycles()
         << "</td><td>" << ks.simulatedCycles << "</td><td>" << k.cycles
         << "</td><td>";
    if (s_.hazards > 0)
      out_ << ks.hazards << "</td><td>";
    out_ << costBoundName(k.bound) << "</td><td>"
         << fixed(total ? 100.0 * double(ks.cycles()) / double(total) : 0, 1)
         << "%</td><td>" << k.tileRows << "x" << k.tileCols << " at ("
         << k.tileRow << "," << k.tileCol << ")</td><td>" << k.group
         << "</td></tr>";
  }
  out_ << "</tbody></table>";
  endSection();
}

void ReportWriter::passTable() {
  section("passes", "Pass pipeline",
          in_.passTimings.empty()
              ? "Not recorded: " + esc(in_.producer) +
                    " read a compiled program (loom compile --report "
                    "records each pass's time)."
              : "Each step of the compile that produced this program, in "
                "order, with its wall time.");
  double total = 0;
  for (const auto &[name, seconds] : in_.passTimings)
    total += seconds;
  out_ << "<table><thead><tr><th>step</th><th>time</th><th>share</th></tr>"
          "</thead><tbody>";
  for (const auto &[name, seconds] : in_.passTimings)
    out_ << "<tr><td>" << esc(name) << "</td><td>" << duration(seconds)
         << "</td><td>"
         << fixed(total > 0 ? 100.0 * seconds / total : 0, 1) << "%</td></tr>";
  out_ << "</tbody></table>";
  endSection();
}

std::string ReportWriter::render() {
  out_ << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
       << "<title>Loom report: " << esc(p_.model) << "</title><style>"
       << "body{font-family:sans-serif;margin:24px;color:#222;max-width:1400px}"
          "h1{font-size:20px}h2{font-size:16px;margin-top:28px;border-bottom:"
          "1px solid #ddd}.note{color:#555;font-size:13px}"
          "table{border-collapse:collapse;font-size:12px}td,th{border:1px "
          "solid #ddd;padding:2px 6px;text-align:left}th{background:#f3f3f3;"
          "cursor:pointer}.swatch{display:inline-block;width:10px;height:10px;"
          "margin-right:4px;border:1px solid #888}.figure{overflow-x:auto}"
          ".floorplan svg{max-width:100%;height:auto}"
       << "</style></head>\n<body>\n";
  header();
  floorplan();
  heatmap();
  timeline();
  roofline();
  sram();
  kernelTable();
  passTable();
  // Sorting the kernel table by a click; marks the page ready.
  out_ << "<script>\n"
          "window.addEventListener('error', function (e) {\n"
          "  document.body.dataset.error = String(e.message);\n"
          "});\n"
          "document.querySelectorAll('table.sortable').forEach(function (t) {\n"
          "  t.querySelectorAll('th').forEach(function (th, col) {\n"
          "    th.addEventListener('click', function () {\n"
          "      var rows = Array.from(t.tBodies[0].rows);\n"
          "      var up = th.dataset.up !== '1';\n"
          "      th.dataset.up = up ? '1' : '0';\n"
          "      rows.sort(function (a, b) {\n"
          "        var x = a.cells[col].textContent, y = b.cells[col].textContent;\n"
          "        var nx = parseFloat(x), ny = parseFloat(y);\n"
          "        var c = isNaN(nx) || isNaN(ny) ? x.localeCompare(y) : nx - ny;\n"
          "        return up ? c : -c;\n"
          "      });\n"
          "      rows.forEach(function (r) { t.tBodies[0].appendChild(r); });\n"
          "    });\n"
          "  });\n"
          "});\n"
          "document.body.dataset.ready = '1';\n"
          "</script>\n</body></html>\n";
  return out_.str();
}

} // namespace

std::string renderReportHtml(const ReportInput &input) {
  return ReportWriter(input).render();
}

} // namespace loom::rt
