//===- SweepReportTest.cpp - The sweep's Pareto front and HTML page -------===//

#include "loom/Sweep/Sweep.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace loom::sweep;

namespace {

size_t count(const std::string &haystack, const std::string &needle) {
  size_t n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + needle.size()))
    ++n;
  return n;
}

using Pts = std::vector<std::pair<double, double>>;

TEST(ParetoFront, Empty) { EXPECT_TRUE(paretoFront({}).empty()); }

TEST(ParetoFront, SinglePoint) {
  EXPECT_EQ(paretoFront({{3, 7}}), (std::vector<size_t>{0}));
}

TEST(ParetoFront, ExcludesDominatedAndSortsByCost) {
  // (cost, benefit): 0 (4,10), 1 (1,2), 2 (2,2) dominated by 1 (same
  // benefit, dearer), 3 (2,5), 4 (3,4) dominated by 3, 5 (4,9) dominated by
  // 0 (same cost, less), 6 (8,10) dominated by 0 (same benefit, dearer).
  Pts pts = {{4, 10}, {1, 2}, {2, 2}, {2, 5}, {3, 4}, {4, 9}, {8, 10}};
  EXPECT_EQ(paretoFront(pts), (std::vector<size_t>{1, 3, 0}));
}

TEST(ParetoFront, DuplicatesKeptInIndexOrder) {
  // Equal points do not dominate each other: both stay, lower index first.
  Pts pts = {{2, 5}, {1, 1}, {2, 5}, {2, 4}, {3, 5}};
  EXPECT_EQ(paretoFront(pts), (std::vector<size_t>{1, 0, 2}));
  Pts same = {{1, 1}, {1, 1}, {1, 1}};
  EXPECT_EQ(paretoFront(same), (std::vector<size_t>{0, 1, 2}));
}

TEST(ParetoFront, AllOnFront) {
  Pts pts = {{3, 30}, {1, 10}, {2, 20}};
  EXPECT_EQ(paretoFront(pts), (std::vector<size_t>{1, 2, 0}));
}

/// Two models over a 2 x 3 sweep; one point of `mlp.onnx` fails.
struct Sweep2x3 {
  std::vector<Axis> axes = {{"chip.tile.sram.bytes", {1048576, 2097152}},
                            {"chip.mesh.rows", {2, 4, 8}}};
  std::vector<Outcome> outcomes;
  std::vector<Sensitivity> sensitivity = {
      {"mlp.onnx", "chip.mesh.link.bytes_per_cycle", 0.012},
      {"mlp.onnx", "chip.tile.matrix.macs_per_cycle.bf16", 0.081},
      {"mlp.onnx", "chip.tile.sram.bytes", -0.003},
      {"resnet.onnx", "chip.tile.sram.bytes", 0.02}};

  Sweep2x3() {
    for (const char *model : {"mlp.onnx", "resnet.onnx"})
      for (double sram : axes[0].values)
        for (double rows : axes[1].values) {
          Outcome o;
          o.point.model = model;
          o.point.values = {sram, rows};
          o.point.key = std::string(model) + "|" + std::to_string(sram) + "|" +
                        std::to_string(rows);
          o.ok = true;
          o.chips = rows / 2;
          o.throughput = 1000 * rows * (sram / 1048576);
          o.latency = 1 / o.throughput * 3;
          o.utilisation = 0.5;
          o.sramPeak = sram * 0.8;
          o.perfPerWatt = o.throughput / 40;
          o.bound = "compute";
          if (std::string(model) == "mlp.onnx" && sram == 2097152 &&
              rows == 8) {
            o.ok = false;
            o.error = "does not fit: <tag> & \"more\"";
            o.bound = "capacity";
          }
          outcomes.push_back(o);
        }
  }
  std::string render(const std::string &objective = "throughput") const {
    return renderHtml(axes, outcomes, sensitivity, objective, "Sweep <test>");
  }
};

TEST(SweepReport, NamesModelsAndDrawsSvg) {
  Sweep2x3 s;
  std::string html = s.render();
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("mlp.onnx"), std::string::npos);
  EXPECT_NE(html.find("resnet.onnx"), std::string::npos);
  EXPECT_NE(html.find("<svg"), std::string::npos);
  EXPECT_NE(html.find("Sweep &lt;test&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://www.w3.org/2000/svg\""), html.find("<svg") + 12);
  // Two Pareto charts per model, front marked.
  EXPECT_EQ(count(html, "class=\"pareto\""), 4u);
  EXPECT_GT(count(html, "class=\"point pareto\""), 0u);
  // mlp's SRAM chart has one Pareto point (the failure took the other), so
  // three lines join fronts.
  EXPECT_EQ(count(html, "class=\"front\""), 3u);
  // The header counts points and failures.
  EXPECT_NE(html.find("<b>12</b> points"), std::string::npos);
  EXPECT_NE(html.find("<b>1</b> failure"), std::string::npos);
}

TEST(SweepReport, HeatMapHasRowsTimesColumnsCells) {
  Sweep2x3 s;
  std::string html = s.render();
  // Per model 2 x 3 cells: 5 ok and 1 failure for mlp, 6 ok for resnet.
  EXPECT_EQ(count(html, "<rect class=\"cell"), 2u * 2u * 3u);
  EXPECT_EQ(count(html, "<rect class=\"cell fail\""), 1u);
  EXPECT_EQ(count(html, "<rect class=\"cell missing\""), 0u);
  EXPECT_EQ(count(html, "class=\"heatmap\""), 2u);

  // One model only: exactly rows x cols cells.
  Sweep2x3 one;
  one.outcomes.resize(6);
  one.sensitivity.resize(3);
  EXPECT_EQ(count(one.render("latency"), "<rect class=\"cell"), 6u);
}

TEST(SweepReport, OneAxisIsOneRow) {
  std::vector<Axis> axes = {{"chip.tile.sram.bytes", {1, 2, 3, 4}}};
  std::vector<Outcome> outcomes;
  for (double v : axes[0].values) {
    Outcome o;
    o.point = {"m.onnx", {v}, "m.onnx|" + std::to_string(v)};
    o.ok = true;
    o.throughput = v * 10;
    o.chips = 1;
    o.sramPeak = v;
    outcomes.push_back(o);
  }
  std::string html = renderHtml(axes, outcomes, {}, "perf-per-watt", "t");
  EXPECT_EQ(count(html, "<rect class=\"cell"), 4u);
}

TEST(SweepReport, FailureReasonEscaped) {
  Sweep2x3 s;
  std::string html = s.render();
  EXPECT_EQ(html.find("<tag>"), std::string::npos);
  EXPECT_NE(html.find("does not fit: &lt;tag&gt; &amp; &quot;more&quot;"),
            std::string::npos);
  // In the heat map's cell tooltip and in the table of points.
  EXPECT_NE(html.find("fails: does not fit: &lt;tag&gt;"), std::string::npos);
  EXPECT_NE(html.find("error: does not fit: &lt;tag&gt;"), std::string::npos);
}

TEST(SweepReport, SensitivityBestRowBold) {
  Sweep2x3 s;
  std::string html = s.render();
  size_t table = html.find("<table class=\"sensitivity\"");
  ASSERT_NE(table, std::string::npos);
  std::string t = html.substr(table, html.find("</table>", table) - table);
  // Best first, in bold; signed percentages.
  size_t best = t.find("<tr class=\"best\"><td><b>mlp.onnx</b>");
  ASSERT_NE(best, std::string::npos);
  EXPECT_NE(t.find("<b><code>chip.tile.matrix.macs_per_cycle.bf16</code></b>"),
            std::string::npos);
  EXPECT_NE(t.find("<b>+8.1%</b>"), std::string::npos);
  EXPECT_NE(t.find("+1.2%"), std::string::npos);
  EXPECT_NE(t.find("-0.3%"), std::string::npos);
  EXPECT_LT(t.find("+8.1%"), t.find("+1.2%"));
  EXPECT_LT(t.find("+1.2%"), t.find("-0.3%"));
  EXPECT_NE(t.find("<tr class=\"best\"><td><b>resnet.onnx</b>"),
            std::string::npos);
  EXPECT_EQ(count(t, "class=\"best\""), 2u);
}

TEST(SweepReport, Deterministic) {
  Sweep2x3 s;
  EXPECT_EQ(s.render(), s.render());
  EXPECT_EQ(s.render("latency"), s.render("latency"));
}

TEST(SweepReport, LogScaleAndSiTicks) {
  // Chips from 1 to 512: more than 20x, so decade ticks.
  std::vector<Axis> axes = {{"chips", {1, 8, 64, 512}}};
  std::vector<Outcome> outcomes;
  for (double v : axes[0].values) {
    Outcome o;
    o.point = {"big.onnx", {v}, ""};
    o.ok = true;
    o.chips = v;
    o.throughput = 2e6 * v;
    o.sramPeak = 3e6;
    outcomes.push_back(o);
  }
  std::string html = renderHtml(axes, outcomes, {}, "throughput", "t");
  EXPECT_NE(html.find("chips, log scale"), std::string::npos);
  EXPECT_NE(html.find(">1K</text>"), std::string::npos);
  EXPECT_NE(html.find(">1G</text>"), std::string::npos);
}

TEST(SweepReport, EmptySweep) {
  std::string html = renderHtml({}, {}, {}, "latency", "");
  EXPECT_NE(html.find("<b>0</b> points"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

} // namespace
