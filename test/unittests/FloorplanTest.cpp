//===- FloorplanTest.cpp - The floorplan SVG of a program
//------------------===//
//
// Programs are filled in by hand (rt::Program's fields are public; nothing
// here needs the loader's id index) and rendered; the tests check that the
// SVG is well formed and carries what the picture must show: every kernel,
// a panel per pipeline group, the busiest links with their bytes, escaped
// names, and the same bytes every time.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Floorplan.h"
#include "ProgramBuilders.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace loom::rt;

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

ProgramKernel makeKernel(int32_t id, const std::string &name, int32_t row,
                         int32_t col, int32_t rows, int32_t cols,
                         int32_t group = 0, int64_t cycles = 100,
                         std::vector<std::string> nodes = {}) {
  ProgramKernel k;
  k.id = id;
  k.name = name;
  k.onnxNodes = nodes.empty() ? std::vector<std::string>{name} : nodes;
  k.kind = KernelKind::MatMul;
  k.precision = NumericFormat::F32;
  k.tileRow = row;
  k.tileCol = col;
  k.tileRows = rows;
  k.tileCols = cols;
  k.cycles = cycles;
  k.group = group;
  return k;
}

ProgramInstr makeInstr(int32_t id, int32_t kernel, Unit unit, int32_t resource,
                       int64_t start, int64_t duration, int64_t bytes = 0) {
  return loom::rt::testing::instr(id, kernel, unit, resource, start, duration,
                                 {}, {}, {}, bytes);
}

Program makeProgram(int32_t rows, int32_t cols, const std::string &mapping) {
  Program p;
  p.path = "test.loom";
  p.model = "tiny";
  p.targetName = "test-chip";
  p.tileRows = rows;
  p.tileCols = cols;
  p.mapping = mapping;
  p.totalCycles = 1000;
  p.initiationInterval = 1000;
  return p;
}

size_t count(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

/// A small XML well-formedness check: one root <svg> element, balanced and
/// properly nested tags, quoted attributes, and every '&' an entity.
::testing::AssertionResult isWellFormedSvg(const std::string &s) {
  std::vector<std::string> open;
  size_t roots = 0;
  auto checkEntities = [&](size_t from, size_t to) -> std::string {
    for (size_t i = s.find('&', from); i < to; i = s.find('&', i + 1)) {
      size_t semi = s.find(';', i);
      if (semi == std::string::npos || semi > to)
        return "unterminated '&' at " + std::to_string(i);
      std::string name = s.substr(i + 1, semi - i - 1);
      if (name != "amp" && name != "lt" && name != "gt" && name != "quot" &&
          name != "apos" && (name.empty() || name[0] != '#'))
        return "unknown entity '&" + name + ";' at " + std::to_string(i);
    }
    return "";
  };
  size_t i = 0;
  while (i < s.size()) {
    size_t lt = s.find('<', i);
    size_t textEnd = lt == std::string::npos ? s.size() : lt;
    if (std::string e = checkEntities(i, textEnd); !e.empty())
      return ::testing::AssertionFailure() << e;
    if (s.find('>', i) < textEnd)
      return ::testing::AssertionFailure() << "raw '>' in text at " << i;
    if (lt == std::string::npos)
      break;
    if (s.compare(lt, 2, "<?") == 0) {
      size_t end = s.find("?>", lt);
      if (end == std::string::npos || lt != 0)
        return ::testing::AssertionFailure() << "bad prolog";
      i = end + 2;
      continue;
    }
    bool closing = s.compare(lt, 2, "</") == 0;
    size_t nameStart = lt + (closing ? 2 : 1);
    size_t nameEnd = s.find_first_of(" \t\n/>", nameStart);
    if (nameEnd == std::string::npos || nameEnd == nameStart)
      return ::testing::AssertionFailure() << "bad tag at " << lt;
    std::string name = s.substr(nameStart, nameEnd - nameStart);
    // Scan the attributes to the '>', respecting quotes.
    size_t j = nameEnd;
    char quote = 0;
    for (; j < s.size(); ++j) {
      char c = s[j];
      if (quote) {
        if (c == quote)
          quote = 0;
        else if (c == '<')
          return ::testing::AssertionFailure() << "'<' in attribute at " << j;
      } else if (c == '"' || c == '\'') {
        quote = c;
      } else if (c == '>') {
        break;
      } else if (c == '<') {
        return ::testing::AssertionFailure() << "'<' in tag at " << j;
      }
    }
    if (j == s.size())
      return ::testing::AssertionFailure() << "unterminated tag at " << lt;
    if (std::string e = checkEntities(nameEnd, j); !e.empty())
      return ::testing::AssertionFailure() << e;
    bool selfClosing = s[j - 1] == '/';
    if (closing) {
      if (open.empty() || open.back() != name)
        return ::testing::AssertionFailure()
               << "</" << name << "> at " << lt << " closes "
               << (open.empty() ? std::string("nothing") : open.back());
      open.pop_back();
    } else {
      if (open.empty()) {
        if (++roots > 1 || name != "svg")
          return ::testing::AssertionFailure()
                 << "root element <" << name << "> at " << lt;
      }
      if (!selfClosing)
        open.push_back(name);
    }
    i = j + 1;
  }
  if (!open.empty())
    return ::testing::AssertionFailure()
           << "<" << open.back() << "> never closed";
  if (roots != 1)
    return ::testing::AssertionFailure() << "no root element";
  return ::testing::AssertionSuccess();
}

/// The value of attribute `name` of the root <svg> element, as a number.
int svgAttr(const std::string &svg, const std::string &name) {
  size_t root = svg.find("<svg ");
  size_t at = svg.find(" " + name + "=\"", root);
  if (root == std::string::npos || at == std::string::npos)
    return -1;
  return std::stoi(svg.substr(at + name.size() + 3));
}

//===----------------------------------------------------------------------===//
// Tests
//===----------------------------------------------------------------------===//

TEST(Floorplan, WellFormednessCheckCatchesBrokenSvg) {
  // The checker the other tests rely on fails where it should.
  EXPECT_TRUE(isWellFormedSvg("<svg><g><rect/></g></svg>"));
  EXPECT_FALSE(isWellFormedSvg("<svg><g></svg>"));
  EXPECT_FALSE(isWellFormedSvg("<svg><text>a<b</text></svg>"));
  EXPECT_FALSE(isWellFormedSvg("<svg><text>a&b</text></svg>"));
  EXPECT_FALSE(isWellFormedSvg("<svg></svg><svg></svg>"));
  EXPECT_FALSE(isWellFormedSvg("<svg><rect x=\"<\"/></svg>"));
}

TEST(Floorplan, EmptyProgram) {
  Program p;
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(svg.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_NE(svg.find("xmlns=\"http://www.w3.org/2000/svg\""),
            std::string::npos);
  EXPECT_NE(svg.find(">No kernels</text>"), std::string::npos);
  EXPECT_NE(svg.find(">No mesh links.</text>"), std::string::npos);
  EXPECT_EQ(svg.find("<polygon"), std::string::npos);
  EXPECT_EQ(svg.find("<script"), std::string::npos);
  EXPECT_GT(svgAttr(svg, "width"), 0);
  EXPECT_GT(svgAttr(svg, "height"), 0);

  // A degenerate grid still gives a picture.
  p.tileRows = 0;
  p.tileCols = 0;
  svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_NE(svg.find("grid 0x0 tiles"), std::string::npos);
}

TEST(Floorplan, PipelinedRegionsLabelsAndHeader) {
  Program p = makeProgram(8, 8, "pipelined");
  p.pipelineGroups = 1;
  p.initiationInterval = 250;
  p.totalCycles = 900;
  p.kernels.push_back(makeKernel(
      0, "stem", 0, 0, 1, 8, 0, 1234,
      {"conv1_aaaaaaaaaaaaaa", "relu1_bbbbbbbbbbbbbb", "pool1_cccccccccccccc",
       "conv2_dddddddddddddd", "relu2_eeeeeeeeeeeeee"}));
  p.kernels.push_back(makeKernel(7, "head", 2, 2, 2, 3, 0, 55));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));

  // The header.
  EXPECT_NE(svg.find("Loom floorplan: model &apos;tiny&apos; on target "
                     "&apos;test-chip&apos;"),
            std::string::npos);
  EXPECT_NE(svg.find("grid 8x8 tiles, 2 kernels, mapping pipelined, 1 "
                     "pipeline group, initiation interval 250 cycles, total "
                     "900 cycles"),
            std::string::npos);
  // One panel, with kernels on their own tiles.
  EXPECT_EQ(count(svg, "Pipeline group "), 1u);
  EXPECT_NE(svg.find("pipelined: every kernel on its own tiles"),
            std::string::npos);
  // A region per kernel (8x8 tiles: 64-pixel cells, regions inset by 2),
  // with a hover title giving everything.
  EXPECT_NE(svg.find("<rect x=\"2\" y=\"2\" width=\"508\" height=\"60\""),
            std::string::npos);
  EXPECT_NE(svg.find("<rect x=\"130\" y=\"130\" width=\"188\" height=\"124\""),
            std::string::npos);
  EXPECT_NE(svg.find("<title>kernel 0 &apos;stem&apos; (matmul, fp32)\nONNX "
                     "nodes: conv1_aaaaaaaaaaaaaa, relu1_bbbbbbbbbbbbbb, "
                     "pool1_cccccccccccccc, conv2_dddddddddddddd, "
                     "relu2_eeeeeeeeeeeeee\ncycles: 1234 (compute "
                     "bound)\nregion: 1x8 tiles: "
                     "rows 0-0, cols 0-7\npipeline group: 0</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>kernel 7 &apos;head&apos;"), std::string::npos);
  // Labels: the names, then the ONNX nodes, cut to the region's width.
  EXPECT_NE(svg.find(">stem</text>"), std::string::npos);
  EXPECT_NE(svg.find(">head</text>"), std::string::npos);
  EXPECT_NE(svg.find(">conv1_aaaaaaaaaaaaaa, relu1_bbbbbbbbbbbbbb +3 "
                     "more</text>"),
            std::string::npos);
  // Tile indices, row-major.
  EXPECT_NE(svg.find(">63</text>"), std::string::npos);
  // The legend, in kernel order, with colours.
  size_t stem = svg.find(">k0 stem: 1234 cycles, group 0, 1x8 tiles");
  size_t head = svg.find(">k7 head: 55 cycles, group 0, 2x3 tiles");
  ASSERT_NE(stem, std::string::npos);
  ASSERT_NE(head, std::string::npos);
  EXPECT_LT(stem, head);
  // Distinct colours, each used by the region and the legend swatch.
  size_t fill0 = svg.find("fill=\"#", svg.find("<rect x=\"2\" y=\"2\""));
  size_t fill1 = svg.find("fill=\"#", svg.find("<rect x=\"130\" y=\"130\""));
  std::string colour0 = svg.substr(fill0, 14), colour1 = svg.substr(fill1, 14);
  EXPECT_NE(colour0, colour1);
  EXPECT_EQ(count(svg, colour0), 2u);
  EXPECT_EQ(count(svg, colour1), 2u);
}

TEST(Floorplan, HybridDrawsAPanelPerGroup) {
  Program p = makeProgram(4, 4, "hybrid");
  p.pipelineGroups = 3;
  // The groups share tiles; within a group the regions are disjoint.
  p.kernels.push_back(makeKernel(0, "g0_first", 0, 0, 2, 4, 0));
  p.kernels.push_back(makeKernel(1, "g0_second", 2, 0, 2, 4, 0));
  p.kernels.push_back(makeKernel(2, "g1_only", 0, 0, 4, 4, 1));
  p.kernels.push_back(makeKernel(3, "g2_left", 0, 0, 4, 2, 2));
  p.kernels.push_back(makeKernel(4, "g2_right", 0, 2, 4, 2, 2));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(count(svg, "Pipeline group "), 3u);
  EXPECT_NE(svg.find(">Pipeline group 0 (1 of 3): 2 kernels</text>"),
            std::string::npos);
  EXPECT_NE(svg.find(">Pipeline group 1 (2 of 3): 1 kernel</text>"),
            std::string::npos);
  EXPECT_NE(svg.find(">Pipeline group 2 (3 of 3): 2 kernels</text>"),
            std::string::npos);
  EXPECT_EQ(count(svg, ">16 of 16 tiles used</text>"), 3u);
  EXPECT_EQ(count(svg, "pipelined on disjoint tiles; groups run in turn"), 3u);
  EXPECT_EQ(svg.find("regions overlap"), std::string::npos);
  for (const ProgramKernel &k : p.kernels) {
    EXPECT_NE(svg.find(">" + k.name + "</text>"), std::string::npos) << k.name;
    EXPECT_NE(svg.find("&apos;" + k.name + "&apos;"), std::string::npos);
  }
  // Three copies of the grid: 16 tiles each, and the tile indices.
  EXPECT_EQ(count(svg, ">15</text>"), 3u);
  // Side by side: the panels start at three different x.
  EXPECT_NE(svg.find("<g transform=\"translate(16,84)\">"), std::string::npos);
  EXPECT_EQ(count(svg, ",84)\">"), 3u);
}

TEST(Floorplan, OverlappingRegionsInAGroupShareTiles) {
  // Not from the compiler, but drawn honestly: by the busiest kernel.
  Program p = makeProgram(2, 2, "pipelined");
  p.kernels.push_back(makeKernel(0, "a", 0, 0, 2, 2));
  p.kernels.push_back(makeKernel(1, "b", 0, 0, 1, 1));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_NE(svg.find("regions overlap; colour: busiest kernel, +N others"),
            std::string::npos);
}

TEST(Floorplan, ManyGroupsAreCapped) {
  Program p = makeProgram(2, 2, "hybrid");
  p.pipelineGroups = 20;
  for (int g = 0; g < 20; ++g)
    p.kernels.push_back(
        makeKernel(g, "group" + std::to_string(g), 0, 0, 2, 2, g));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(count(svg, "Pipeline group "), 16u);
  EXPECT_NE(svg.find("Pipeline group 15 (16 of 20)"), std::string::npos);
  EXPECT_EQ(svg.find("Pipeline group 16 "), std::string::npos);
  EXPECT_NE(svg.find(">+4 more groups"), std::string::npos);
  // The legend still lists the kernels of the groups not drawn.
  EXPECT_NE(svg.find(">k19 group19: "), std::string::npos);
}

TEST(Floorplan, SequentialColoursEachTileByItsBusiestKernel) {
  Program p = makeProgram(1, 4, "sequential");
  // Both kernels cover the whole chip; "conv" keeps tiles 0 and 1 busiest,
  // "fc" tiles 2 and 3.
  p.kernels.push_back(makeKernel(0, "conv", 0, 0, 1, 4, 0, 500));
  p.kernels.push_back(makeKernel(1, "fc", 0, 0, 1, 4, 1, 400));
  int32_t id = 0;
  for (int32_t tile = 0; tile < 4; ++tile) {
    p.instrs.push_back(
        makeInstr(id++, 0, Unit::Matrix, tile, 0, tile < 2 ? 300 : 10));
    p.instrs.push_back(
        makeInstr(id++, 1, Unit::Vector, tile, 300, tile < 2 ? 20 : 200));
  }
  p.instrs.push_back(makeInstr(id++, 1, Unit::Dma, 3, 500, 50));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  // One panel, however many groups the kernels name.
  EXPECT_EQ(count(svg, "Pipeline group "), 0u);
  EXPECT_NE(
      svg.find(">Sequential mapping: 2 kernels, one after another</text>"),
      std::string::npos);
  EXPECT_NE(svg.find(">on shared tiles; 4 of 4 tiles used</text>"),
            std::string::npos);
  EXPECT_NE(svg.find(">colour: the busiest kernel; +N: others there</text>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>tile 0 (row 0, col 0)\nbusiest: kernel 0 "
                     "&apos;conv&apos;, 300 busy cycles\nalso here:\n  "
                     "kernel 1 &apos;fc&apos;, 20 busy cycles</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>tile 3 (row 0, col 3)\nbusiest: kernel 1 "
                     "&apos;fc&apos;, 250 busy cycles"),
            std::string::npos);
  // Each tile names its kernel and the one other kernel there.
  EXPECT_EQ(count(svg, ">conv</text>"), 2u);
  EXPECT_EQ(count(svg, ">fc</text>"), 2u);
  EXPECT_EQ(count(svg, ">+1</text>"), 4u);
  // The tiles take the colours of their busiest kernels.
  size_t tile0 = svg.find("fill=\"#", svg.find("<rect x=\"1\" y=\"1\""));
  size_t tile3 = svg.find("fill=\"#", svg.find("<rect x=\"385\" y=\"1\""));
  ASSERT_NE(tile0, std::string::npos);
  ASSERT_NE(tile3, std::string::npos);
  EXPECT_NE(svg.substr(tile0, 14), svg.substr(tile3, 14));
}

TEST(Floorplan, BusiestLinksAreMarked) {
  Program p = makeProgram(2, 2, "pipelined");
  p.kernels.push_back(makeKernel(0, "a", 0, 0, 1, 2));
  p.kernels.push_back(makeKernel(1, "b", 1, 0, 1, 2));
  auto link = [&](int32_t id, int32_t from, int32_t to) {
    ProgramLink l;
    l.id = id;
    l.fromTile = from;
    l.toTile = to;
    p.links.push_back(l);
  };
  link(10, 0, 1);
  link(11, 1, 0);
  link(12, 0, 2);
  link(13, 2, 3);
  int32_t id = 0;
  p.instrs.push_back(makeInstr(id++, -1, Unit::MeshLink, 10, 0, 1000, 524288));
  p.instrs.push_back(
      makeInstr(id++, -1, Unit::MeshLink, 10, 1000, 1000, 524288));
  p.instrs.push_back(makeInstr(id++, -1, Unit::MeshLink, 11, 0, 8, 4096));
  p.instrs.push_back(makeInstr(id++, -1, Unit::MeshLink, 12, 0, 600, 600000));
  // A MeshLink instr naming no link is ignored, not a crash.
  p.instrs.push_back(makeInstr(id++, -1, Unit::MeshLink, 99, 0, 5, 77));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_NE(svg.find("<title>link 10: tile 0 (row 0, col 0) -&gt; tile 1 (row "
                     "0, col 1)\n1048576 bytes, 2000 busy cycles\nbusiest "
                     "link #1 of 3 with traffic</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>link 12: tile 0 (row 0, col 0) -&gt; tile 2 (row "
                     "1, col 0)\n600000 bytes, 600 busy cycles\nbusiest link "
                     "#2 of 3 with traffic</title>"),
            std::string::npos);
  EXPECT_NE(svg.find("4096 bytes, 8 busy cycles"), std::string::npos);
  // Link 13 moved nothing: not drawn.
  EXPECT_EQ(svg.find("link 13"), std::string::npos);
  // One panel: three arrows.
  EXPECT_EQ(count(svg, "<polygon"), 3u);
  // Widths by bytes: the busiest at the widest (6), the least at little
  // more than 1.
  EXPECT_NE(svg.find("stroke-width=\"6\"/><polygon"), std::string::npos);
  EXPECT_NE(svg.find("stroke-width=\"1\"/><polygon"), std::string::npos);
  // Both directions of the 0-1 pair, side by side: link 10 (east) runs
  // below the centre line y = 64, link 11 (west) above it.
  EXPECT_NE(svg.find("y1=\"81.9\" x2=\"136.2\" y2=\"81.9\""),
            std::string::npos);
  EXPECT_NE(svg.find("y1=\"46.1\""), std::string::npos);
  EXPECT_NE(svg.find("Arrows: the busiest mesh links by bytes (3 of 3 links "
                     "with traffic; width by bytes), drawn on every panel"),
            std::string::npos);
  EXPECT_NE(svg.find(">link 10: tile 0 -&gt; tile 1, 1048576 bytes, 2000 busy "
                     "cycles</text>"),
            std::string::npos);
}

TEST(Floorplan, TopTenLinksAndAnyWithinHalfOfTheBusiest) {
  Program p = makeProgram(1, 8, "pipelined");
  p.kernels.push_back(makeKernel(0, "k", 0, 0, 1, 8));
  // 14 links, 7 each way.
  for (int32_t i = 0; i < 7; ++i) {
    p.links.push_back(ProgramLink{2 * i, i, i + 1});
    p.links.push_back(ProgramLink{2 * i + 1, i + 1, i});
  }
  auto traffic = [&](std::vector<int64_t> bytes) {
    p.instrs.clear();
    for (int32_t i = 0; i < static_cast<int32_t>(bytes.size()); ++i)
      p.instrs.push_back(makeInstr(i, -1, Unit::MeshLink, i, 0, 10, bytes[i]));
    return renderFloorplanSvg(p);
  };
  // Ten busiest only.
  std::string svg = traffic(
      {1000, 600, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 10, 10});
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(count(svg, "<polygon"), 10u);
  EXPECT_NE(svg.find("(10 of 14 links with traffic"), std::string::npos);
  // Twelve within half of the busiest: all twelve.
  svg = traffic(
      {1000, 900, 800, 700, 600, 500, 500, 500, 500, 500, 500, 500, 499, 1});
  EXPECT_EQ(count(svg, "<polygon"), 12u);
  EXPECT_NE(svg.find("(12 of 14 links with traffic"), std::string::npos);
  EXPECT_NE(svg.find(">+2 more drawn"), std::string::npos);
}

TEST(Floorplan, EscapesNames) {
  Program p = makeProgram(2, 4, "pipelined");
  p.model = "m&m's";
  p.kernels.push_back(
      makeKernel(0, "a<b&c", 0, 0, 2, 2, 0, 10, {"x\"y'z", "</svg>"}));
  p.kernels.push_back(makeKernel(1, "bad\x01utf8\xff", 0, 2, 2, 2));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(svg.find("a<b&c"), std::string::npos);
  EXPECT_NE(svg.find(">a&lt;b&amp;c</text>"), std::string::npos);
  EXPECT_NE(svg.find("x&quot;y&apos;z, &lt;/svg&gt;"), std::string::npos);
  EXPECT_NE(svg.find("model &apos;m&amp;m&apos;s&apos;"), std::string::npos);
  EXPECT_NE(svg.find(">bad?utf8?</text>"), std::string::npos);
  EXPECT_EQ(count(svg, "</svg>"), 1u);
}

TEST(Floorplan, Deterministic) {
  Program p = makeProgram(4, 4, "hybrid");
  p.pipelineGroups = 2;
  p.kernels.push_back(makeKernel(0, "k0", 0, 0, 2, 4, 0));
  p.kernels.push_back(makeKernel(1, "k1", 2, 0, 2, 4, 0));
  p.kernels.push_back(makeKernel(2, "k2", 0, 0, 4, 4, 1));
  p.links.push_back(ProgramLink{0, 0, 4});
  p.links.push_back(ProgramLink{1, 4, 0});
  p.instrs.push_back(makeInstr(0, -1, Unit::MeshLink, 0, 0, 10, 640));
  p.instrs.push_back(makeInstr(1, -1, Unit::MeshLink, 1, 0, 10, 640));
  p.instrs.push_back(makeInstr(2, 2, Unit::Matrix, 5, 0, 10));
  std::string first = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(first));
  EXPECT_EQ(first, renderFloorplanSvg(p));
  Program copy = p;
  EXPECT_EQ(first, renderFloorplanSvg(copy));
  // And it depends on the program.
  copy.kernels[0].name = "renamed";
  EXPECT_NE(first, renderFloorplanSvg(copy));
}

TEST(Floorplan, LegendListsTheCostliestFortyKernels) {
  Program p = makeProgram(8, 8, "pipelined");
  for (int i = 0; i < 45; ++i)
    p.kernels.push_back(makeKernel(i, "kern" + std::to_string(i), i / 8, i % 8,
                                   1, 1, 0, 1000 + i));
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_NE(svg.find("Kernels: the 40 of 45 with the most cycles"),
            std::string::npos);
  // The costliest first; the five cheapest left out of the legend, though
  // still drawn.
  size_t first = svg.find(">k44 kern44: 1044 cycles");
  size_t last = svg.find(">k5 kern5: 1005 cycles");
  ASSERT_NE(first, std::string::npos);
  ASSERT_NE(last, std::string::npos);
  EXPECT_LT(first, last);
  for (int i = 0; i < 5; ++i) {
    std::string name = "kern" + std::to_string(i);
    EXPECT_EQ(svg.find(">k" + std::to_string(i) + " " + name + ":"),
              std::string::npos);
    EXPECT_NE(svg.find("&apos;" + name + "&apos;"), std::string::npos);
  }
}

TEST(Floorplan, SizedForSmallAndLargeGrids) {
  // The grid is 512 pixels on its longer side, from 1x4 to 32x32 tiles.
  for (auto [rows, cols] : {std::pair{1, 4}, {4, 4}, {8, 16}, {32, 32}}) {
    Program p = makeProgram(rows, cols, "pipelined");
    p.kernels.push_back(makeKernel(0, "all", 0, 0, rows, cols));
    std::string svg = renderFloorplanSvg(p);
    EXPECT_TRUE(isWellFormedSvg(svg));
    int cell = 512 / std::max(rows, cols);
    std::string outline = "<rect width=\"" + std::to_string(cols * cell) +
                          "\" height=\"" + std::to_string(rows * cell) +
                          "\" fill=\"none\"";
    EXPECT_NE(svg.find(outline), std::string::npos) << rows << "x" << cols;
    EXPECT_GE(svgAttr(svg, "width"), 512 + 32);
    EXPECT_LE(svgAttr(svg, "width"), 1200);
    EXPECT_GE(svgAttr(svg, "height"), 84 + 52 + rows * cell);
    EXPECT_LE(svgAttr(svg, "height"), 900);
    // Every tile is labelled with its index.
    EXPECT_NE(svg.find(">" + std::to_string(rows * cols - 1) + "</text>"),
              std::string::npos);
  }
}

TEST(Floorplan, ChipsSideBySide) {
  Program p = loom::rt::testing::twoChipProgram();
  p.mapping = "pipelined";
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_NE(svg.find("2 chips of 1x2 tiles (ring), 2 kernels, mapping "
                     "pipelined"),
            std::string::npos);
  EXPECT_NE(svg.find("Tile index = chip * 2 + row * 2 + col."),
            std::string::npos);
  // A grid per chip, labelled, side by side; each kernel on its chip.
  EXPECT_EQ(count(svg, "font-weight=\"bold\">chip 0</text>"), 1u);
  EXPECT_EQ(count(svg, "font-weight=\"bold\">chip 1</text>"), 1u);
  EXPECT_NE(svg.find("2 of 4 tiles used on 2 chips"), std::string::npos);
  EXPECT_NE(svg.find("region: 1x1 tiles: rows 0-0, cols 0-0 of chip 1"),
            std::string::npos);
  EXPECT_NE(svg.find(">k1 add: 20 cycles, group 0, 1x1 tiles at (0,0) of "
                     "chip 1"),
            std::string::npos);
  // System-wide tile indices: chip 1 holds tiles 2 and 3.
  EXPECT_NE(svg.find(">3</text>"), std::string::npos);
  // The chip link's traffic is listed.
  EXPECT_NE(svg.find("Chip links by bytes (1 of 1 chip link with traffic, "
                     "of 2)"),
            std::string::npos);
  EXPECT_NE(svg.find("chip link 4: chip 0 -&gt; chip 1, 16 bytes, 10 busy "
                     "cycles"),
            std::string::npos);
  EXPECT_EQ(svg.find("Partial"), std::string::npos);

  // A mesh link busy on chip 1 is drawn in chip 1's grid, named there.
  p.instrs.push_back(
      loom::rt::testing::instr(9, -1, Unit::MeshLink, 2, 40, 5, {}, {}, {}, 8));
  svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(count(svg, "<polygon"), 1u);
  EXPECT_NE(svg.find("link 2: tile 2 (chip 1, row 0, col 0) -&gt; tile 3 "
                     "(chip 1, row 0, col 1)"),
            std::string::npos);
  EXPECT_EQ(renderFloorplanSvg(p), svg); // deterministic
}

TEST(Floorplan, SharedTilesOfSeveralChips) {
  // Sequential: every chip's tiles coloured by their busiest kernel.
  Program p = loom::rt::testing::twoChipProgram();
  p.kernels.push_back(p.kernels[1]);
  p.kernels.back().id = 2;
  p.kernels.back().name = "again";
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_NE(svg.find("<title>tile 2 (chip 1, row 0, col 0)\nbusiest: kernel "
                     "1 &apos;add&apos;, 20 busy cycles\nalso here:\n  "
                     "kernel 2 &apos;again&apos;, 0 busy cycles"),
            std::string::npos);
  EXPECT_NE(svg.find("<title>tile 0 (chip 0, row 0, col 0)\nbusiest: kernel "
                     "0 &apos;mm&apos;"),
            std::string::npos);
}

TEST(Floorplan, ManyChipsArePartialAndSaySo) {
  Program p = makeProgram(2, 2, "pipelined");
  p.chips = 40;
  for (int c = 0; c < 40; ++c) {
    p.kernels.push_back(makeKernel(c, "k" + std::to_string(c), 0, 0, 2, 2));
    p.kernels.back().chip = c;
  }
  std::string svg = renderFloorplanSvg(p);
  EXPECT_TRUE(isWellFormedSvg(svg));
  EXPECT_EQ(count(svg, "font-weight=\"bold\">chip "), 16u);
  EXPECT_NE(svg.find(">chip 15</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">chip 16</text>"), std::string::npos);
  EXPECT_NE(svg.find("Partial floorplan: chips 0-15 of 40 drawn; 24 chips "
                     "not drawn"),
            std::string::npos);
  // Kernels of the chips not drawn have no region, but are in the legend.
  EXPECT_NE(svg.find(">k15</text>"), std::string::npos);
  EXPECT_EQ(svg.find(">k16</text>"), std::string::npos);
  EXPECT_NE(svg.find(">k39 k39: "), std::string::npos);
  EXPECT_NE(svg.find("160 tiles"), std::string::npos);
}

} // namespace
