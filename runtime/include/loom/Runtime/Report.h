//===- Report.h - One self-contained HTML page about a program --*- C++ -*-===//
//
// `loom compile ... --report=FILE.html` and `loom run ... --report=FILE.html`
// write this page: no network access is needed to view it (inline SVG, CSS
// and a few lines of script, no external resources). It shows
//   - a header: model, target, mapping, latency, interval, roofline ratio;
//   - the floorplan (rt::renderFloorplanSvg), one panel per pipeline group;
//   - a heat map of each tile's utilisation (busy cycles of its matrix,
//     vector and DMA units per initiation interval); with several chips a
//     grid per chip under its label, at most 16 ("Partial: ..." beyond);
//   - a timeline of every unit, mesh link and chip link (bars coloured by
//     kernel);
//   - a roofline plot: each kernel's attained FLOP/s against its arithmetic
//     intensity (FLOPs per SRAM byte), under the target's compute and SRAM
//     bandwidth ceilings for the kernel's precision;
//   - SRAM occupancy over one input's time for the busiest tiles;
//   - a table of kernels: ONNX nodes, simulated and estimated cycles, bound,
//     share of the total, region and group;
//   - the pass pipeline with each pass's time (when the compiler wrote it).
// Elements carry ids (floorplan, heatmap, timeline, roofline, sram,
// kernels, passes) so tests can find them; the script marks the body
// data-ready="1" once it has run. Deterministic for a given input.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_REPORT_H
#define LOOM_RUNTIME_REPORT_H

#include "loom/Runtime/Program.h"
#include "loom/Runtime/Simulator.h"

#include <string>
#include <utility>
#include <vector>

namespace loom::rt {

struct ReportInput {
  const Program *program = nullptr;
  const SimStats *stats = nullptr;
  /// (pass or step, seconds), in order; empty when not compiled here.
  std::vector<std::pair<std::string, double>> passTimings;
  /// Who wrote it ("loom compile", "loom run").
  std::string producer;
};

std::string renderReportHtml(const ReportInput &input);

} // namespace loom::rt

#endif // LOOM_RUNTIME_REPORT_H
