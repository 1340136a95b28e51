//===- Floorplan.cpp - SVG picture of a program on the tile grid ----------===//
//
// One pass over the instrs gathers each tile's busy cycles per kernel and
// each mesh link's bytes; the rest is layout. Coordinates are computed in
// doubles and printed rounded to a tenth with integer arithmetic (no locale,
// no printf), so the output is a fixed function of the program. See
// Floorplan.h.
//
// It is long (over 1,000 lines) because it draws one picture: the panels,
// regions, shared tiles, links and legends all read the one renderer's
// layout and the text and number helpers at the top.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Floorplan.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace loom::rt {
namespace {

constexpr int kMargin = 16;
constexpr int kHeaderHeight = 84;
constexpr int kPanelGap = 28;
constexpr int kCaptionHeight = 52;
/// A panel is at least this wide, so its caption fits.
constexpr int kMinPanelWidth = 360;
/// Panels wrap into rows no wider than this.
constexpr int kMaxRowWidth = 1800;
/// The grid of a panel is about this many pixels on its longer side.
constexpr int kGridTarget = 512;
constexpr int kMinCell = 8, kMaxCell = 128;
constexpr size_t kMaxPanels = 16;
/// A multi-chip program draws at most this many chips per panel, side by
/// side, this many to a row, each under a label band, this far apart; the
/// grid of one chip is then about kChipGridTarget pixels on its longer side.
constexpr int64_t kMaxChips = 16;
constexpr int kChipsPerRow = 4;
constexpr int kChipLabelHeight = 20;
constexpr int kChipGap = 16;
constexpr int kChipGridTarget = 256;
constexpr size_t kLegendChipLinks = 10;
constexpr size_t kMaxLegendKernels = 40;
constexpr size_t kLegendRowsPerColumn = 20;
constexpr int kLegendColumnWidth = 470;
constexpr int kLegendLine = 16;
constexpr double kLegendFont = 11;
/// Links drawn: the kTopLinks busiest, and any with at least half the
/// busiest's bytes, at most kMaxDrawnLinks; the legend lists kLegendLinks.
constexpr size_t kTopLinks = 10;
constexpr size_t kMaxDrawnLinks = 64;
constexpr size_t kLegendLinks = 10;
/// Region labels show at most this many lines of ONNX node names.
constexpr size_t kMaxNodeLines = 6;
/// Width of an average character, as a fraction of the font size.
constexpr double kCharWidth = 0.6;

const char *const kEllipsis = "\xE2\x80\xA6";
const char *const kLinkColour = "#b03a2e";

//===----------------------------------------------------------------------===//
// Text
//===----------------------------------------------------------------------===//

/// The length in bytes of the well-formed UTF-8 sequence at s[i] if it
/// encodes a character XML allows, else 0.
size_t utf8Length(std::string_view s, size_t i) {
  auto byteAt = [&](size_t j) -> unsigned {
    return j < s.size() ? static_cast<unsigned char>(s[j]) : 0;
  };
  auto inRange = [&](size_t j, unsigned lo, unsigned hi) {
    unsigned b = byteAt(j);
    return b >= lo && b <= hi;
  };
  unsigned c = byteAt(i);
  if (c < 0x80)
    return 1;
  if (c >= 0xC2 && c <= 0xDF)
    return inRange(i + 1, 0x80, 0xBF) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    // No overlong forms (E0 80..9F) and no surrogates (ED A0..BF).
    unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    if (!inRange(i + 1, lo, hi) || !inRange(i + 2, 0x80, 0xBF))
      return 0;
    // U+FFFE and U+FFFF are not XML characters.
    if (c == 0xEF && byteAt(i + 1) == 0xBF && byteAt(i + 2) >= 0xBE)
      return 0;
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return inRange(i + 1, lo, hi) && inRange(i + 2, 0x80, 0xBF) &&
                   inRange(i + 3, 0x80, 0xBF)
               ? 4
               : 0;
  }
  return 0;
}

/// Text for character data or a double-quoted attribute: & < > " ' as
/// entities; control characters (but tab and newline) and malformed UTF-8
/// as '?', which XML 1.0 cannot carry at all.
std::string xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    case '\'':
      out += "&apos;";
      break;
    default: {
      auto u = static_cast<unsigned char>(c);
      if (u < 0x20 && c != '\t' && c != '\n') {
        out += '?';
        break;
      }
      size_t len = utf8Length(s, i);
      if (len == 0) {
        out += '?';
        break;
      }
      out.append(s.substr(i, len));
      i += len;
      continue;
    }
    }
    ++i;
  }
  return out;
}

/// Characters in s (a malformed byte counts as one).
size_t textLength(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size(); ++n)
    i += std::max<size_t>(1, utf8Length(s, i));
  return n;
}

/// s cut to at most maxChars characters, ending in an ellipsis if cut.
std::string clip(std::string_view s, size_t maxChars) {
  if (textLength(s) <= maxChars)
    return std::string(s);
  if (maxChars == 0)
    return "";
  size_t i = 0;
  for (size_t n = 0; i < s.size() && n + 1 < maxChars; ++n)
    i += std::max<size_t>(1, utf8Length(s, i));
  return std::string(s.substr(0, i)) + kEllipsis;
}

/// The last `n` characters of s.
std::string_view tailChars(std::string_view s, size_t n) {
  std::vector<size_t> starts;
  for (size_t i = 0; i < s.size(); i += std::max<size_t>(1, utf8Length(s, i)))
    starts.push_back(i);
  return n >= starts.size() ? s : s.substr(starts[starts.size() - n]);
}

/// The length of the prefix every name shares, cut back to just after a
/// '/' (whole path segments: "/blocks.0/attn/" of a panel of one layer's
/// attention); 0 for fewer than two names.
size_t commonPathPrefix(const std::vector<std::string_view> &names) {
  if (names.size() < 2)
    return 0;
  size_t n = names[0].size();
  for (std::string_view name : names) {
    size_t i = 0;
    while (i < n && i < name.size() && name[i] == names[0][i])
      ++i;
    n = i;
  }
  size_t slash = names[0].substr(0, n).rfind('/');
  return slash == std::string_view::npos ? 0 : slash + 1;
}

/// A kernel's label in at most maxChars characters: its name without the
/// `prefix` characters its panel's kernels share; where that does not fit,
/// "k<id> " and the name's end (its op: "k21 ...MatMul"; the legend names
/// k21 in full). Names are distinct, and so are the ids: labels keep what
/// tells kernels apart (cut from the end, sixteen tiles of one layer read
/// "/enc/layers.0/s...").
std::string kernelLabel(std::string_view name, int64_t id, size_t prefix,
                        size_t maxChars) {
  std::string_view rest = prefix < name.size() ? name.substr(prefix) : name;
  if (textLength(rest) <= maxChars)
    return std::string(rest);
  std::string k = "k" + std::to_string(id);
  // (An end of fewer than three characters tells nothing: the id alone.)
  if (maxChars < k.size() + 5)
    return textLength(k) <= maxChars ? k : clip(k, maxChars);
  // The end after the last '/' where it fits, else the last characters.
  size_t room = maxChars - k.size() - 2; // a space and the ellipsis
  return k + " " + kEllipsis + std::string(tailChars(rest, room));
}

std::string moreSuffix(size_t rest) {
  return rest ? " +" + std::to_string(rest) + " more" : "";
}

/// nodes[first..] as "conv1, relu1 +3 more" in at most maxChars characters.
std::string nodeList(const std::vector<std::string> &nodes, size_t first,
                     size_t maxChars) {
  std::string out;
  size_t shown = first;
  for (; shown < nodes.size(); ++shown) {
    std::string next = out.empty() ? nodes[shown] : out + ", " + nodes[shown];
    if (textLength(next) + textLength(moreSuffix(nodes.size() - shown - 1)) >
        maxChars)
      break;
    out = std::move(next);
  }
  if (!out.empty())
    return out + moreSuffix(nodes.size() - shown);
  if (first >= nodes.size())
    return "";
  // Not even the first name fits whole: cut it.
  std::string suffix = moreSuffix(nodes.size() - first - 1);
  size_t suffixLength = textLength(suffix);
  if (maxChars >= suffixLength + 3)
    return clip(nodes[first], maxChars - suffixLength) + suffix;
  return clip("+" + std::to_string(nodes.size() - first) + " nodes", maxChars);
}

/// The ONNX node names over at most maxLines lines of maxChars characters;
/// the last line says how many more there are.
std::vector<std::string> wrapNodes(const std::vector<std::string> &nodes,
                                   size_t maxChars, size_t maxLines) {
  std::vector<std::string> lines;
  size_t next = 0;
  while (next < nodes.size() && lines.size() < maxLines) {
    if (lines.size() + 1 == maxLines) {
      lines.push_back(nodeList(nodes, next, maxChars));
      break;
    }
    std::string line;
    size_t taken = next;
    while (taken < nodes.size()) {
      std::string candidate =
          line.empty() ? nodes[taken] : line + ", " + nodes[taken];
      // Room for the "," that continues the list on the next line.
      size_t need = textLength(candidate) + (taken + 1 < nodes.size());
      if (need > maxChars)
        break;
      line = std::move(candidate);
      ++taken;
    }
    if (taken == next) {
      line = clip(nodes[next], maxChars);
      ++taken;
    }
    next = taken;
    if (next < nodes.size() && textLength(line) < maxChars)
      line += ",";
    lines.push_back(std::move(line));
  }
  return lines;
}

/// v rounded to one decimal, without locale: "12", "2.5", "-0.3".
std::string num(double v) {
  long long tenths = std::llround(v * 10);
  std::string s = tenths < 0 ? "-" : "";
  unsigned long long a = tenths < 0
                             ? 0ULL - static_cast<unsigned long long>(tenths)
                             : static_cast<unsigned long long>(tenths);
  s += std::to_string(a / 10);
  if (a % 10)
    s += "." + std::to_string(a % 10);
  return s;
}

std::string num(int64_t v) { return std::to_string(v); }
std::string num(int v) { return std::to_string(v); }
std::string num(size_t v) { return std::to_string(v); }

std::string plural(int64_t n, const char *word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

//===----------------------------------------------------------------------===//
// Colours and geometry
//===----------------------------------------------------------------------===//

/// The colour of the kernel at `index` in program.kernels: hues a golden
/// ratio apart, lightness and saturation cycling so that near hues differ.
std::string kernelColour(size_t index) {
  double hue =
      std::fmod(0.08 + static_cast<double>(index) * 0.6180339887498949, 1.0);
  static const double kLightness[] = {0.72, 0.62, 0.80};
  static const double kSaturation[] = {0.65, 0.50, 0.80};
  double l = kLightness[index % 3], s = kSaturation[(index / 3) % 3];
  double chroma = (1 - std::fabs(2 * l - 1)) * s;
  double h6 = hue * 6;
  double x = chroma * (1 - std::fabs(std::fmod(h6, 2.0) - 1));
  double rgb[3] = {0, 0, 0};
  switch (std::min(5, static_cast<int>(h6))) {
  case 0:
    rgb[0] = chroma, rgb[1] = x;
    break;
  case 1:
    rgb[0] = x, rgb[1] = chroma;
    break;
  case 2:
    rgb[1] = chroma, rgb[2] = x;
    break;
  case 3:
    rgb[1] = x, rgb[2] = chroma;
    break;
  case 4:
    rgb[0] = x, rgb[2] = chroma;
    break;
  default:
    rgb[0] = chroma, rgb[2] = x;
    break;
  }
  static const char kHex[] = "0123456789abcdef";
  std::string out = "#";
  for (double channel : rgb) {
    long v =
        std::clamp(std::lround((channel + l - chroma / 2) * 255), 0L, 255L);
    out += kHex[v / 16];
    out += kHex[v % 16];
  }
  return out;
}

/// A kernel's region clipped to the grid: rows [r0, r1), cols [c0, c1).
struct Rect {
  int r0 = 0, c0 = 0, r1 = 0, c1 = 0;
  bool empty() const { return r0 >= r1 || c0 >= c1; }
};

Rect regionOf(const ProgramKernel &k, int rows, int cols) {
  auto clampTo = [](int64_t v, int hi) {
    return static_cast<int>(std::clamp<int64_t>(v, 0, hi));
  };
  Rect r;
  r.r0 = clampTo(k.tileRow, rows);
  r.c0 = clampTo(k.tileCol, cols);
  r.r1 = clampTo(int64_t(k.tileRow) + std::max(0, k.tileRows), rows);
  r.c1 = clampTo(int64_t(k.tileCol) + std::max(0, k.tileCols), cols);
  return r;
}

/// The region; with several chips (`chips` > 1) the chip too.
std::string describeRegion(const ProgramKernel &k, int32_t chips) {
  return num(int64_t(k.tileRows)) + "x" + num(int64_t(k.tileCols)) +
         " tiles: rows " + num(int64_t(k.tileRow)) + "-" +
         num(int64_t(k.tileRow) + k.tileRows - 1) + ", cols " +
         num(int64_t(k.tileCol)) + "-" +
         num(int64_t(k.tileCol) + k.tileCols - 1) +
         (chips > 1 ? " of chip " + num(int64_t(k.chip)) : "");
}

/// The hover text of a kernel: everything the label may have cut.
std::string kernelTitle(const ProgramKernel &k, int32_t chips) {
  std::string s = "kernel " + num(int64_t(k.id)) + " '" + k.name + "'";
  s += std::string(" (") + kernelKindName(k.kind) + ", " +
       numericFormatName(k.precision) + ")";
  s += "\nONNX nodes:";
  if (k.onnxNodes.empty())
    s += " (none)";
  for (size_t i = 0; i < k.onnxNodes.size(); ++i)
    s += (i ? ", " : " ") + k.onnxNodes[i];
  s += "\ncycles: " + num(k.cycles);
  s += std::string(" (") + costBoundName(k.bound) + " bound)";
  s += "\nregion: " + describeRegion(k, chips);
  s += "\npipeline group: " + num(int64_t(k.group));
  return s;
}

struct Point {
  double x = 0, y = 0;
};

/// One tile's kernels: position in program.kernels -> busy cycles there.
using TileLoad = std::map<size_t, int64_t>;

struct LinkLoad {
  size_t index = 0;
  int64_t bytes = 0, busy = 0;
};

struct Panel {
  /// Positions in program.kernels, in execution order.
  std::vector<size_t> kernels;
  int32_t group = 0;
  /// Regions overlap: colour each tile by its busiest kernel.
  bool shared = false;
  int64_t tilesUsed = 0;
  /// A bold line, then two plain ones.
  std::string caption[3];
};

//===----------------------------------------------------------------------===//
// The renderer
//===----------------------------------------------------------------------===//

class FloorplanRenderer {
public:
  explicit FloorplanRenderer(const Program &program) : p(program) {}
  std::string render();

private:
  void gather();
  void buildPanels();
  void drawPanel(const Panel &panel, int x, int y);
  void drawChip(const Panel &panel, int64_t chip);
  void drawRegions(const Panel &panel, int64_t chip);
  void drawSharedTiles(const Panel &panel, int64_t chip);
  void drawTileIndices(int64_t chip);
  void drawLinks(int64_t chip);
  void drawText(double x, double y, double size, std::string_view text,
                std::string_view extra = "");
  void drawLabel(const std::vector<std::string> &lines, double cx, double top,
                 double height, double size, bool boldFirst,
                 bool firstIsName = true);
  /// The characters every kernel name of the panel on `chip` starts with
  /// (whole path segments), which their labels leave out.
  size_t panelPrefix(const Panel &panel, int64_t chip) const;
  int drawKernelLegend(int y);
  int drawLinkLegend(int y);
  int drawChipLinkLegend(int y);
  /// The centre of system-wide tile `tile` in its chip's grid.
  Point tileCentre(int64_t tile) const {
    tile %= std::max<int64_t>(1, numTiles);
    return {(tile % cols) * cell + cell / 2.0,
            (tile / cols) * cell + cell / 2.0};
  }
  /// "tile 5 (row 1, col 1)", or "tile 5 (chip 1, row 0, col 1)".
  std::string tileName(int64_t tile) const {
    int64_t local = tile % std::max<int64_t>(1, numTiles);
    return "tile " + num(tile) + " (" +
           (multiChip() ? "chip " + num(tile / numTiles) + ", " : "") +
           "row " + num(local / cols) + ", col " + num(local % cols) + ")";
  }
  bool multiChip() const { return p.chips > 1; }
  /// The chips' grids of a panel: their size, side by side and wrapping.
  int chipsPerRow() const {
    return static_cast<int>(std::min<int64_t>(drawnChips, kChipsPerRow));
  }
  int chipsWidth() const {
    if (!multiChip())
      return cols * cell;
    return chipsPerRow() * (cols * cell + kChipGap) - kChipGap;
  }
  int chipsHeight() const {
    if (!multiChip())
      return rows * cell;
    int64_t chipRows = (drawnChips + chipsPerRow() - 1) / chipsPerRow();
    return static_cast<int>(chipRows) *
               (kChipLabelHeight + rows * cell + kChipGap) -
           kChipGap;
  }
  double linkWidth(int64_t bytes) const;
  double tileIndexFont() const { return std::clamp(cell * 0.17, 5.0, 10.0); }
  bool showTileIndices() const { return cell >= 12; }

  const Program &p;
  std::string out;
  /// The kernel labels of the panel being drawn.
  std::string labels;
  int rows = 0, cols = 0, cell = kMaxCell;
  /// Tiles of one chip; chips drawn (the first min(chips, kMaxChips)).
  int64_t numTiles = 0;
  int64_t drawnChips = 1;
  std::unordered_map<int32_t, size_t> kernelPos, linkPos;
  std::vector<std::string> colours;
  /// Per tile of the drawn chips, filled only if some panel is shared.
  std::vector<TileLoad> tileLoad;
  /// Chip links with traffic, busiest first (positions in program.links).
  std::vector<LinkLoad> rankedChipLinks;
  /// Links with traffic that can be drawn, busiest first; the first
  /// numDrawn of them are drawn.
  std::vector<LinkLoad> rankedLinks;
  size_t numDrawn = 0;
  std::vector<Panel> panels;
};

void FloorplanRenderer::gather() {
  rows = std::max(0, p.tileRows);
  cols = std::max(0, p.tileCols);
  numTiles = int64_t(rows) * cols;
  drawnChips = multiChip() ? std::min<int64_t>(p.chips, kMaxChips) : 1;
  cell = std::clamp((multiChip() ? kChipGridTarget : kGridTarget) /
                        std::max({rows, cols, 1}),
                    kMinCell, kMaxCell);
  for (size_t i = 0; i < p.kernels.size(); ++i) {
    kernelPos.emplace(p.kernels[i].id, i);
    colours.push_back(kernelColour(i));
  }
  for (size_t i = 0; i < p.links.size(); ++i)
    linkPos.emplace(p.links[i].id, i);

  buildPanels();
  bool anyShared = std::any_of(panels.begin(), panels.end(),
                               [](const Panel &panel) { return panel.shared; });
  int64_t drawnTiles = drawnChips * numTiles;
  if (anyShared)
    tileLoad.resize(drawnTiles);
  std::vector<LinkLoad> linkLoad(p.links.size());
  for (size_t i = 0; i < p.links.size(); ++i)
    linkLoad[i].index = i;
  for (const ProgramInstr &instr : p.instrs) {
    if (isLinkUnit(instr.unit)) {
      auto it = linkPos.find(instr.resource);
      if (it == linkPos.end())
        continue;
      linkLoad[it->second].bytes += instr.bytes;
      linkLoad[it->second].busy += instr.duration;
      continue;
    }
    if (!anyShared || instr.resource < 0 || instr.resource >= drawnTiles)
      continue;
    auto it = kernelPos.find(instr.kernel);
    if (it != kernelPos.end())
      tileLoad[instr.resource][it->second] += instr.duration;
  }

  // Mesh links are drawn within their chip; chip links are listed.
  int64_t allTiles = int64_t(std::max(1, p.chips)) * numTiles;
  for (const LinkLoad &load : linkLoad) {
    const ProgramLink &link = p.links[load.index];
    if (!(load.bytes > 0 || load.busy > 0))
      continue;
    if (link.chipLink) {
      rankedChipLinks.push_back(load);
      continue;
    }
    bool inGrid = link.fromTile >= 0 && link.fromTile < allTiles &&
                  link.toTile >= 0 && link.toTile < allTiles &&
                  link.fromTile / numTiles == link.toTile / numTiles;
    if (inGrid && link.fromTile != link.toTile)
      rankedLinks.push_back(load);
  }
  auto busiestFirst = [&](const LinkLoad &a, const LinkLoad &b) {
    if (a.bytes != b.bytes)
      return a.bytes > b.bytes;
    if (a.busy != b.busy)
      return a.busy > b.busy;
    return a.index < b.index;
  };
  std::sort(rankedLinks.begin(), rankedLinks.end(), busiestFirst);
  std::sort(rankedChipLinks.begin(), rankedChipLinks.end(), busiestFirst);
  int64_t maxBytes = rankedLinks.empty() ? 0 : rankedLinks.front().bytes;
  while (numDrawn < rankedLinks.size() && numDrawn < kMaxDrawnLinks &&
         (numDrawn < kTopLinks || rankedLinks[numDrawn].bytes * 2 >= maxBytes))
    ++numDrawn;
}

void FloorplanRenderer::buildPanels() {
  bool sequential = p.mapping == "sequential";
  if (sequential || p.kernels.empty()) {
    Panel panel;
    for (size_t i = 0; i < p.kernels.size(); ++i)
      panel.kernels.push_back(i);
    panels.push_back(std::move(panel));
  } else {
    std::map<int32_t, std::vector<size_t>> byGroup;
    for (size_t i = 0; i < p.kernels.size(); ++i)
      byGroup[p.kernels[i].group].push_back(i);
    for (auto &[group, kernels] : byGroup) {
      Panel panel;
      panel.group = group;
      panel.kernels = std::move(kernels);
      panels.push_back(std::move(panel));
    }
  }

  // Tiles of every chip, system-wide; only the entries a panel set are
  // cleared for the next.
  int64_t chips = std::max(1, p.chips);
  std::vector<uint8_t> cover(chips * numTiles);
  std::vector<int64_t> covered;
  for (size_t index = 0; index < panels.size(); ++index) {
    Panel &panel = panels[index];
    for (int64_t t : covered)
      cover[t] = 0;
    covered.clear();
    for (size_t k : panel.kernels) {
      const ProgramKernel &kernel = p.kernels[k];
      if (kernel.chip < 0 || kernel.chip >= chips)
        continue;
      Rect r = regionOf(kernel, rows, cols);
      for (int row = r.r0; row < r.r1; ++row)
        for (int col = r.c0; col < r.c1; ++col) {
          int64_t t = kernel.chip * numTiles + int64_t(row) * cols + col;
          uint8_t &c = cover[t];
          if (c) {
            panel.shared = true;
          } else {
            ++panel.tilesUsed;
            covered.push_back(t);
          }
          c = 1;
        }
    }

    std::string kernels = plural(int64_t(panel.kernels.size()), "kernel");
    std::string tiles = num(panel.tilesUsed) + " of " +
                        plural(chips * numTiles, "tile") + " used" +
                        (multiChip() ? " on " + num(chips) + " chips" : "");
    if (p.kernels.empty()) {
      panel.caption[0] = "No kernels";
      panel.caption[1] = "grid " + num(rows) + "x" + num(cols) + " tiles" +
                         (multiChip() ? " per chip, " + num(chips) + " chips"
                                      : "");
    } else if (sequential) {
      panel.caption[0] =
          "Sequential mapping: " + kernels + ", one after another";
      panel.caption[1] = "on shared tiles; " + tiles;
      panel.caption[2] = panel.shared
                             ? "colour: the busiest kernel; +N: others there"
                             : "no tile is shared";
    } else {
      panel.caption[0] = "Pipeline group " + num(int64_t(panel.group)) + " (" +
                         num(index + 1) + " of " + num(panels.size()) +
                         "): " + kernels;
      panel.caption[1] = tiles;
      if (panel.shared)
        panel.caption[2] = "regions overlap; colour: busiest kernel, +N others";
      else if (panels.size() > 1)
        panel.caption[2] = "pipelined on disjoint tiles; groups run in turn";
      else
        panel.caption[2] = "pipelined: every kernel on its own tiles";
    }
  }
}

void FloorplanRenderer::drawText(double x, double y, double size,
                                 std::string_view text,
                                 std::string_view extra) {
  out += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" +
         num(size) + "\"";
  if (!extra.empty()) {
    out += ' ';
    out += extra;
  }
  out += ">" + xml(text) + "</text>\n";
}

/// Lines centred on cx, in a box from `top` of `height` pixels.
void FloorplanRenderer::drawLabel(const std::vector<std::string> &lines,
                                  double cx, double top, double height,
                                  double size, bool boldFirst,
                                  bool firstIsName) {
  double lineHeight = size * 1.2;
  double y = top + (height - lineHeight * lines.size()) / 2 + size * 0.95;
  // Into `labels`, drawn over the link arrows.
  std::swap(out, labels);
  // The name's line is class "kname" (the report's browser test checks
  // that they differ).
  for (size_t i = 0; i < lines.size(); ++i, y += lineHeight)
    drawText(cx, y, size, lines[i],
             i == 0 && firstIsName
                 ? (boldFirst ? "class=\"kname\" text-anchor=\"middle\" "
                                "font-weight=\"bold\""
                              : "class=\"kname\" text-anchor=\"middle\"")
                 : "text-anchor=\"middle\"");
  std::swap(out, labels);
}

size_t FloorplanRenderer::panelPrefix(const Panel &panel, int64_t chip) const {
  std::vector<std::string_view> names;
  for (size_t k : panel.kernels)
    if (p.kernels[k].chip == chip)
      names.push_back(p.kernels[k].name);
  return commonPathPrefix(names);
}

void FloorplanRenderer::drawRegions(const Panel &panel, int64_t chip) {
  double size = std::clamp(cell * 0.28, 7.0, 13.0);
  double indexBand = showTileIndices() ? tileIndexFont() + 2 : 0;
  const size_t prefix = panelPrefix(panel, chip);
  for (size_t k : panel.kernels) {
    const ProgramKernel &kernel = p.kernels[k];
    if (kernel.chip != chip)
      continue;
    Rect r = regionOf(kernel, rows, cols);
    if (r.empty())
      continue;
    int inset = cell >= 16 ? 2 : 1;
    int x = r.c0 * cell + inset, y = r.r0 * cell + inset;
    int w = (r.c1 - r.c0) * cell - 2 * inset,
        h = (r.r1 - r.r0) * cell - 2 * inset;
    out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
           "\" height=\"" + num(h) + "\" rx=\"3\" fill=\"" + colours[k] +
           "\" fill-opacity=\"0.92\" stroke=\"#333333\" stroke-width=\"1\">"
           "<title>" +
           xml(kernelTitle(kernel, p.chips)) + "</title></rect>\n";

    // The label: the name, then the ONNX nodes in the lines left.
    double top = y + indexBand, height = h - indexBand - 2;
    auto maxChars = static_cast<size_t>(
        std::max(0.0, std::floor((w - 6) / (size * kCharWidth))));
    auto maxLines =
        static_cast<size_t>(std::max(0.0, std::floor(height / (size * 1.2))));
    if (maxChars < 2 || maxLines < 1)
      continue;
    std::vector<std::string> lines = {
        kernelLabel(kernel.name, kernel.id, prefix, maxChars)};
    bool nodesAreName =
        kernel.onnxNodes.size() == 1 && kernel.onnxNodes[0] == kernel.name;
    if (maxLines >= 2 && !nodesAreName)
      for (std::string &line : wrapNodes(kernel.onnxNodes, maxChars,
                                         std::min(maxLines - 1, kMaxNodeLines)))
        lines.push_back(std::move(line));
    drawLabel(lines, x + w / 2.0, top, height, size, true);
  }
}

void FloorplanRenderer::drawSharedTiles(const Panel &panel, int64_t chip) {
  std::vector<uint8_t> inPanel(p.kernels.size());
  for (size_t k : panel.kernels)
    inPanel[k] = 1;
  // Each tile's kernels (tiles of this chip): those whose region covers it
  // (perhaps idle there) and those with instrs on it.
  int64_t base = chip * numTiles;
  std::vector<TileLoad> load(numTiles);
  for (size_t k : panel.kernels) {
    if (p.kernels[k].chip != chip)
      continue;
    Rect r = regionOf(p.kernels[k], rows, cols);
    for (int row = r.r0; row < r.r1; ++row)
      for (int col = r.c0; col < r.c1; ++col)
        load[int64_t(row) * cols + col].emplace(k, 0);
  }
  for (int64_t t = 0; t < numTiles; ++t)
    for (const auto &[k, busy] : tileLoad[base + t])
      if (inPanel[k])
        load[t][k] += busy;

  double size = std::clamp(cell * 0.22, 6.0, 12.0);
  double indexBand = showTileIndices() ? tileIndexFont() + 2 : 0;
  const size_t prefix = panelPrefix(panel, chip);
  for (int64_t t = 0; t < numTiles; ++t) {
    if (load[t].empty())
      continue;
    // The busiest kernel; ties go to the costlier, then the earlier one.
    size_t best = load[t].begin()->first;
    for (const auto &[k, busy] : load[t]) {
      int64_t bestBusy = load[t][best];
      if (busy > bestBusy ||
          (busy == bestBusy && p.kernels[k].cycles > p.kernels[best].cycles))
        best = k;
    }
    size_t others = load[t].size() - 1;
    const ProgramKernel &kernel = p.kernels[best];

    std::string title = tileName(base + t) + "\nbusiest: kernel " +
                        num(int64_t(kernel.id)) + " '" + kernel.name + "', " +
                        num(load[t][best]) + " busy cycles";
    if (others) {
      title += "\nalso here:";
      size_t listed = 0;
      for (const auto &[k, busy] : load[t]) {
        if (k == best)
          continue;
        if (listed == 12) {
          title += "\n  +" + num(others - listed) + " more";
          break;
        }
        title += "\n  kernel " + num(int64_t(p.kernels[k].id)) + " '" +
                 p.kernels[k].name + "', " + num(busy) + " busy cycles";
        ++listed;
      }
    }
    int inset = 1;
    int x = static_cast<int>(t % cols) * cell + inset,
        y = static_cast<int>(t / cols) * cell + inset;
    int w = cell - 2 * inset;
    out += "<rect x=\"" + num(x) + "\" y=\"" + num(y) + "\" width=\"" + num(w) +
           "\" height=\"" + num(w) + "\" fill=\"" + colours[best] +
           "\" stroke=\"#ffffff\" stroke-width=\"1\"><title>" + xml(title) +
           "</title></rect>\n";

    double top = y + indexBand, height = w - indexBand - 1;
    auto maxChars = static_cast<size_t>(
        std::max(0.0, std::floor((w - 4) / (size * kCharWidth))));
    auto maxLines =
        static_cast<size_t>(std::max(0.0, std::floor(height / (size * 1.2))));
    if (maxChars < 2 || maxLines < 1)
      continue;
    std::string more = others ? "+" + num(others) : "";
    std::vector<std::string> lines;
    if (maxLines >= 2 || more.empty()) {
      lines.push_back(kernelLabel(kernel.name, kernel.id, prefix, maxChars));
      if (!more.empty())
        lines.push_back(more);
    } else if (maxChars > more.size() + 2) {
      lines.push_back(kernelLabel(kernel.name, kernel.id, prefix,
                                  maxChars - more.size() - 1) +
                      " " + more);
    } else {
      lines.push_back(more);
    }
    drawLabel(lines, x + w / 2.0, top, height, size, false,
              lines.front() != more);
  }
}

void FloorplanRenderer::drawTileIndices(int64_t chip) {
  if (!showTileIndices() || numTiles == 0)
    return;
  double size = tileIndexFont();
  out += "<g fill=\"#555555\" font-size=\"" + num(size) +
         "\" pointer-events=\"none\">\n";
  // System-wide indices.
  for (int64_t t = 0; t < numTiles; ++t)
    out += "<text x=\"" + num((t % cols) * cell + 3) + "\" y=\"" +
           num((t / cols) * cell + size + 1.5) + "\">" +
           num(chip * numTiles + t) + "</text>\n";
  out += "</g>\n";
}

double FloorplanRenderer::linkWidth(int64_t bytes) const {
  double widest = std::clamp(cell * 0.12, 1.5, 6.0);
  int64_t maxBytes = rankedLinks.empty() ? 0 : rankedLinks.front().bytes;
  if (maxBytes <= 0)
    return 1.0;
  return 1.0 + (widest - 1.0) * static_cast<double>(bytes) /
                   static_cast<double>(maxBytes);
}

std::string linkTitle(const ProgramLink &link, const LinkLoad &load,
                      size_t rank, size_t ranked,
                      const std::function<std::string(int64_t)> &tile) {
  return "link " + num(int64_t(link.id)) + ": " + tile(link.fromTile) + " -> " +
         tile(link.toTile) + "\n" + num(load.bytes) + " bytes, " +
         num(load.busy) + " busy cycles\nbusiest link #" + num(rank + 1) +
         " of " + num(ranked) + " with traffic";
}

void FloorplanRenderer::drawLinks(int64_t chip) {
  size_t onChip = 0;
  for (size_t i = 0; i < numDrawn; ++i)
    onChip += p.links[rankedLinks[i].index].fromTile / numTiles == chip;
  if (onChip == 0)
    return;
  auto tile = [this](int64_t t) { return tileName(t); };
  out += "<g fill=\"" + std::string(kLinkColour) + "\" stroke=\"" +
         kLinkColour + "\" stroke-linecap=\"round\" opacity=\"0.8\">\n";
  // The least busy first, so the busiest are drawn on top.
  for (size_t i = numDrawn; i-- > 0;) {
    const LinkLoad &load = rankedLinks[i];
    const ProgramLink &link = p.links[load.index];
    if (link.fromTile / numTiles != chip)
      continue;
    Point from = tileCentre(link.fromTile), to = tileCentre(link.toTile);
    double dx = to.x - from.x, dy = to.y - from.y;
    double length = std::hypot(dx, dy);
    double ux = dx / length, uy = dy / length;
    // To the right of the direction (y points down), so a link and its
    // reverse sit side by side.
    double nx = -uy, ny = ux;
    // Large cells keep the middle of each tile, where its label is, clear.
    double offset = cell * 0.14, trim = cell * (cell >= 48 ? 0.32 : 0.2);
    double width = linkWidth(load.bytes);
    double headLength = std::min(width * 1.8 + 4, length / 2),
           headHalf = width * 0.9 + 2.5;
    Point tail{from.x + ux * trim + nx * offset,
               from.y + uy * trim + ny * offset};
    Point tip{to.x - ux * trim + nx * offset, to.y - uy * trim + ny * offset};
    Point base{tip.x - ux * headLength, tip.y - uy * headLength};
    out +=
        "<g><title>" + xml(linkTitle(link, load, i, rankedLinks.size(), tile)) +
        "</title><line x1=\"" + num(tail.x) + "\" y1=\"" + num(tail.y) +
        "\" x2=\"" + num(base.x) + "\" y2=\"" + num(base.y) +
        "\" stroke-width=\"" + num(width) + "\"/><polygon points=\"" +
        num(tip.x) + "," + num(tip.y) + " " + num(base.x + nx * headHalf) +
        "," + num(base.y + ny * headHalf) + " " + num(base.x - nx * headHalf) +
        "," + num(base.y - ny * headHalf) + "\" stroke=\"none\"/></g>\n";
  }
  out += "</g>\n";
}

void FloorplanRenderer::drawPanel(const Panel &panel, int x, int y) {
  out += "<g transform=\"translate(" + num(x) + "," + num(y) + ")\">\n";
  // Captions are cut to the panel's width.
  double width = std::max(kMinPanelWidth, chipsWidth());
  drawText(0, 15, 12, clip(panel.caption[0], size_t(width / (12 * kCharWidth))),
           "font-weight=\"bold\"");
  for (int line = 1; line < 3; ++line)
    drawText(0, 15 + 15 * line, 11,
             clip(panel.caption[line], size_t(width / (11 * kCharWidth))),
             "fill=\"#444444\"");
  out += "<g transform=\"translate(0," + num(kCaptionHeight) + ")\">\n";
  if (!multiChip()) {
    drawChip(panel, 0);
    out += "</g>\n</g>\n";
    return;
  }
  // The chips side by side, each under its label.
  int perRow = chipsPerRow();
  for (int64_t chip = 0; chip < drawnChips; ++chip) {
    int x = static_cast<int>(chip % perRow) * (cols * cell + kChipGap);
    int y = static_cast<int>(chip / perRow) *
            (kChipLabelHeight + rows * cell + kChipGap);
    out += "<g transform=\"translate(" + num(x) + "," + num(y) + ")\">\n";
    drawText(0, 14, 12, "chip " + num(chip), "font-weight=\"bold\"");
    out += "<g transform=\"translate(0," + num(kChipLabelHeight) + ")\">\n";
    drawChip(panel, chip);
    out += "</g>\n</g>\n";
  }
  out += "</g>\n</g>\n";
}

/// One chip's grid of a panel at the origin: its tiles, the panel's regions
/// there (or tiles by busiest kernel), tile indices, mesh links and labels.
void FloorplanRenderer::drawChip(const Panel &panel, int64_t chip) {
  // The tiles.
  out += "<g fill=\"#f2f2f2\" stroke=\"#c8c8c8\" stroke-width=\"1\">\n";
  for (int row = 0; row < rows; ++row)
    for (int col = 0; col < cols; ++col)
      out += "<rect x=\"" + num(col * cell) + "\" y=\"" + num(row * cell) +
             "\" width=\"" + num(cell) + "\" height=\"" + num(cell) + "\"/>\n";
  out += "</g>\n";
  // Regions (or tiles), tile indices, the link arrows, then the labels over
  // them all, with a white halo, and transparent to the mouse so the hover
  // titles show.
  labels.clear();
  if (panel.shared)
    drawSharedTiles(panel, chip);
  else
    drawRegions(panel, chip);
  drawTileIndices(chip);
  drawLinks(chip);
  if (!labels.empty())
    out += "<g pointer-events=\"none\" stroke=\"#ffffff\" "
           "stroke-opacity=\"0.7\" stroke-width=\"2\" "
           "stroke-linejoin=\"round\" paint-order=\"stroke\">\n" +
           labels + "</g>\n";
  out += "<rect width=\"" + num(cols * cell) + "\" height=\"" +
         num(rows * cell) +
         "\" fill=\"none\" stroke=\"#666666\" stroke-width=\"1.5\"/>\n";
}

/// The kernel legend from y; returns the y below it.
int FloorplanRenderer::drawKernelLegend(int y) {
  if (p.kernels.empty())
    return y;
  std::vector<size_t> order(p.kernels.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::string heading = "Kernels (id, name, cycles, pipeline group, region)";
  if (order.size() > kMaxLegendKernels) {
    // The costliest first; ties in kernel order.
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      if (p.kernels[a].cycles != p.kernels[b].cycles)
        return p.kernels[a].cycles > p.kernels[b].cycles;
      return a < b;
    });
    order.resize(kMaxLegendKernels);
    heading = "Kernels: the " + num(kMaxLegendKernels) + " of " +
              num(p.kernels.size()) +
              " with the most cycles (id, name, cycles, group, region)";
  }
  drawText(kMargin, y + 12, 12, heading, "font-weight=\"bold\"");
  y += 20;
  auto maxChars = static_cast<size_t>((kLegendColumnWidth - 24) /
                                      (kLegendFont * kCharWidth));
  for (size_t i = 0; i < order.size(); ++i) {
    const ProgramKernel &k = p.kernels[order[i]];
    int x = kMargin +
            static_cast<int>(i / kLegendRowsPerColumn) * kLegendColumnWidth;
    int row = y + static_cast<int>(i % kLegendRowsPerColumn) * kLegendLine;
    std::string text = "k" + num(int64_t(k.id)) + " " + k.name + ": " +
                       num(k.cycles) + " cycles, group " +
                       num(int64_t(k.group)) + ", " + num(int64_t(k.tileRows)) +
                       "x" + num(int64_t(k.tileCols)) + " tiles at (" +
                       num(int64_t(k.tileRow)) + "," + num(int64_t(k.tileCol)) +
                       ")" + (multiChip() ? " of chip " + num(int64_t(k.chip))
                                          : "");
    out += "<g><title>" + xml(kernelTitle(k, p.chips)) + "</title><rect x=\"" +
           num(x) +
           "\" y=\"" + num(row + 2) + "\" width=\"12\" height=\"12\" fill=\"" +
           colours[order[i]] + "\" stroke=\"#333333\" stroke-width=\"0.5\"/>";
    out += "<text x=\"" + num(x + 18) + "\" y=\"" + num(row + 12) +
           "\" font-size=\"" + num(kLegendFont) + "\">" +
           xml(clip(text, maxChars)) + "</text></g>\n";
  }
  return y + static_cast<int>(std::min(order.size(), kLegendRowsPerColumn)) *
                 kLegendLine;
}

/// The chip links by traffic from y (nothing for one chip); returns the y
/// below it.
int FloorplanRenderer::drawChipLinkLegend(int y) {
  if (!multiChip())
    return y;
  size_t numChipLinks = 0;
  for (const ProgramLink &l : p.links)
    numChipLinks += l.chipLink;
  if (rankedChipLinks.empty()) {
    drawText(kMargin, y + 12, 12,
             numChipLinks ? "No chip link traffic." : "No chip links.",
             "font-weight=\"bold\"");
    return y + 20;
  }
  size_t listed = std::min(rankedChipLinks.size(), kLegendChipLinks);
  drawText(kMargin, y + 12, 12,
           "Chip links by bytes (" + num(listed) + " of " +
               plural(int64_t(rankedChipLinks.size()), "chip link") +
               " with traffic, of " + num(numChipLinks) + ")",
           "font-weight=\"bold\"");
  y += 20;
  for (size_t i = 0; i < listed; ++i) {
    const LinkLoad &load = rankedChipLinks[i];
    const ProgramLink &link = p.links[load.index];
    drawText(kMargin + 20, y + 12, kLegendFont,
             "chip link " + num(int64_t(link.id)) + ": chip " +
                 num(int64_t(link.fromChip)) + " -> chip " +
                 num(int64_t(link.toChip)) + ", " + num(load.bytes) +
                 " bytes, " + num(load.busy) + " busy cycles");
    y += kLegendLine;
  }
  return y;
}

/// The link legend from y; returns the y below it.
int FloorplanRenderer::drawLinkLegend(int y) {
  if (rankedLinks.empty()) {
    drawText(kMargin, y + 12, 12,
             p.links.empty() ? "No mesh links." : "No mesh link traffic.",
             "font-weight=\"bold\"");
    return y + 20;
  }
  std::string heading = "Arrows: the busiest mesh links by bytes (" +
                        num(numDrawn) + " of " +
                        plural(int64_t(rankedLinks.size()), "link") +
                        " with traffic; width by bytes), drawn on every panel";
  drawText(kMargin, y + 12, 12, heading, "font-weight=\"bold\"");
  y += 20;
  size_t listed = std::min(numDrawn, kLegendLinks);
  for (size_t i = 0; i < listed; ++i) {
    const LinkLoad &load = rankedLinks[i];
    const ProgramLink &link = p.links[load.index];
    int row = y + static_cast<int>(i) * kLegendLine;
    double width = linkWidth(load.bytes);
    std::string text = "link " + num(int64_t(link.id)) + ": tile " +
                       num(int64_t(link.fromTile)) + " -> tile " +
                       num(int64_t(link.toTile)) + ", " + num(load.bytes) +
                       " bytes, " + num(load.busy) + " busy cycles";
    out += "<g><title>" +
           xml(linkTitle(link, load, i, rankedLinks.size(),
                         [this](int64_t t) { return tileName(t); })) +
           "</title><line x1=\"" + num(kMargin) + "\" y1=\"" + num(row + 8) +
           "\" x2=\"" + num(kMargin + 14) + "\" y2=\"" + num(row + 8) +
           "\" stroke=\"" + kLinkColour + "\" stroke-width=\"" +
           num(std::min(width, 6.0)) + "\"/><text x=\"" + num(kMargin + 20) +
           "\" y=\"" + num(row + 12) + "\" font-size=\"" + num(kLegendFont) +
           "\">" + xml(text) + "</text></g>\n";
  }
  y += static_cast<int>(listed) * kLegendLine;
  if (numDrawn > listed) {
    drawText(kMargin + 20, y + 12, kLegendFont,
             "+" + num(numDrawn - listed) +
                 " more drawn (hover an arrow for its bytes)",
             "fill=\"#444444\"");
    y += kLegendLine;
  }
  return y;
}

std::string FloorplanRenderer::render() {
  gather();

  int gridW = chipsWidth(), gridH = chipsHeight();
  int slotW = std::max(gridW, kMinPanelWidth), slotH = kCaptionHeight + gridH;
  size_t drawn = std::min(panels.size(), kMaxPanels);
  size_t perRow = std::clamp<size_t>(
      (kMaxRowWidth + kPanelGap) / (slotW + kPanelGap), 1, drawn);
  size_t panelRows = (drawn + perRow - 1) / perRow;
  int panelsWidth = static_cast<int>(perRow) * (slotW + kPanelGap) - kPanelGap;

  std::string title =
      "Loom floorplan: model '" +
      (p.model.empty() ? std::string("?") : p.model) + "' on target '" +
      (p.targetName.empty() ? std::string("?") : p.targetName) + "'";
  std::string grid = "grid " + num(rows) + "x" + num(cols) + " tiles";
  if (multiChip())
    grid = num(int64_t(p.chips)) + " chips of " + num(rows) + "x" + num(cols) +
           " tiles" + (p.topology.empty() ? "" : " (" + p.topology + ")");
  std::string summary = grid + ", " +
                        plural(int64_t(p.kernels.size()), "kernel") +
                        ", mapping " + p.mapping + ", " +
                        plural(int64_t(p.pipelineGroups), "pipeline group") +
                        ", initiation interval " + num(p.initiationInterval) +
                        " cycles, total " + num(p.totalCycles) + " cycles";
  std::string note = std::string("Tile index = ") +
                     (multiChip() ? "chip * " + num(numTiles) + " + " : "") +
                     "row * " + num(cols) +
                     " + col. Hover a region, tile or arrow for the details.";
  // Never silently wrong: a picture of some of the chips says so.
  std::string partial;
  if (p.chips > drawnChips) {
    partial = "Partial floorplan: chips 0-" + num(drawnChips - 1) + " of " +
              num(int64_t(p.chips)) + " drawn; " +
              plural(int64_t(p.chips) - drawnChips, "chip") + " not drawn";
    note = partial + ". " + note;
  }
  int headerChars = static_cast<int>(
      std::max({textLength(title) * 16, textLength(summary) * 12,
                textLength(note) * 11}) *
      kCharWidth);

  // Lay out the body (into `out`) first, then wrap it in the <svg> element
  // sized to fit.
  int y = kHeaderHeight;
  for (size_t i = 0; i < drawn; ++i)
    drawPanel(panels[i],
              kMargin + static_cast<int>(i % perRow) * (slotW + kPanelGap),
              y + static_cast<int>(i / perRow) * (slotH + kPanelGap));
  y += static_cast<int>(panelRows) * (slotH + kPanelGap);
  if (!partial.empty()) {
    drawText(kMargin, y + 4, 13,
             partial + " (the legend still lists their kernels)",
             "font-weight=\"bold\"");
    y += 24;
  }
  if (panels.size() > drawn) {
    drawText(kMargin, y + 4, 13,
             "+" + num(panels.size() - drawn) +
                 " more groups (not drawn; the legend lists their kernels)",
             "font-weight=\"bold\"");
    y += 24;
  }
  y = drawKernelLegend(y) + 12;
  y = drawLinkLegend(y);
  if (multiChip())
    y = drawChipLinkLegend(y + 8);

  size_t legendColumns = (std::min(p.kernels.size(), kMaxLegendKernels) +
                          kLegendRowsPerColumn - 1) /
                         kLegendRowsPerColumn;
  int width = 2 * kMargin +
              std::max({panelsWidth, headerChars,
                        static_cast<int>(legendColumns) * kLegendColumnWidth,
                        kLegendColumnWidth});
  int height = y + kMargin;

  std::string body = std::move(out);
  out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
        num(width) + "\" height=\"" + num(height) + "\" viewBox=\"0 0 " +
        num(width) + " " + num(height) +
        "\" font-family=\"sans-serif\" fill=\"#111111\">\n";
  out += "<title>" + xml(title) + "</title>\n";
  out += "<rect width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" fill=\"#ffffff\"/>\n";
  drawText(kMargin, kMargin + 14, 16, title, "font-weight=\"bold\"");
  drawText(kMargin, kMargin + 34, 12, summary);
  drawText(kMargin, kMargin + 52, 11, note, "fill=\"#444444\"");
  out += body;
  out += "</svg>\n";
  return std::move(out);
}

} // namespace

std::string renderFloorplanSvg(const Program &program) {
  return FloorplanRenderer(program).render();
}

std::string xmlEscape(std::string_view s) { return xml(s); }
std::string kernelFill(size_t index) { return kernelColour(index); }
std::string svgNumber(double v) { return num(v); }

} // namespace loom::rt
