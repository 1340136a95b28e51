//===- Floorplan.h - SVG picture of a program on the tile grid --*- C++ -*-===//
//
// `loom compile --floorplan=FILE.svg`: the chip's tile grid with each
// kernel's region coloured and labelled with its ONNX node names, and the
// busiest mesh links marked. Plain C++ over a loaded rt::Program (no MLIR).
//
// The picture has
//  - a header: model, target, grid, mapping, pipeline groups, initiation
//    interval and total cycles;
//  - one panel (a copy of the grid) per pipeline group, side by side and
//    wrapping into rows, at most 16 ("+N more groups" beyond). In a
//    multi-chip program a panel holds a grid per chip, four to a row, each
//    under its "chip N" label, at most 16 chips: beyond, the picture says
//    "Partial floorplan: chips 0-15 of N drawn; M chips not drawn" (in the
//    header note and under the panels), never leaving chips out silently;
//    tile indices are then system-wide (chip * tiles per chip + local).
//    Kernels of a group have disjoint regions, each drawn as one coloured rectangle
//    labelled with the kernel's name and ONNX nodes ("conv1, relu1 +3 more")
//    whose <title> (a hover tooltip) gives the kernel's id, name, every ONNX
//    node, cycles and region. The "sequential" mapping runs the kernels one
//    after another on shared tiles, so it gets one panel in which each tile
//    is coloured by the kernel that keeps it busiest (the sum of its Matrix,
//    Vector and DMA instr durations there) and labelled with that kernel's
//    name and "+N" for the other kernels that run there; any group whose
//    regions overlap is drawn the same way;
//  - the busiest mesh links (by bytes moved: the 10 busiest and any with at
//    least half the busiest's bytes, at most 64) as arrows between the tile
//    centres, offset to the right of their direction so both directions of
//    a pair show, width scaled by bytes, each with a <title> giving its bytes
//    and busy cycles. Links are not per group, so they are drawn on every
//    panel (the legend says so);
//  - a legend of kernels (id, name, colour, cycles, region): all of them up
//    to 40, otherwise the 40 with the most cycles; of the links drawn; and,
//    for several chips, the busiest chip links by bytes (at most 10).
//
// Colours are a fixed function of the kernel's position in program.kernels
// (golden-ratio hue steps), and every number is printed with integer
// arithmetic, so one program always gives the same bytes. The SVG is
// self-contained (no scripts, fonts or other external resources); names are
// XML-escaped. Only the public vectors of the Program are read, so a
// hand-built Program (without its id index) renders too; a program with no
// kernels, instrs or links still gives a valid picture.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_FLOORPLAN_H
#define LOOM_RUNTIME_FLOORPLAN_H

#include "loom/Runtime/Program.h"

#include <string>
#include <string_view>

namespace loom::rt {

/// A self-contained SVG document (UTF-8, no scripts, no external resources)
/// of the program's tile grid: kernel regions per pipeline group, the
/// busiest mesh links, a header and a legend. Deterministic: the same
/// program gives the same bytes.
std::string renderFloorplanSvg(const Program &program);

/// Shared with the HTML report (Report.h), so both draw alike:
/// `s` escaped for XML text and attributes (malformed UTF-8 and control
/// characters become '?');
std::string xmlEscape(std::string_view s);
/// the fill colour ("#rrggbb") of the kernel at `index` in
/// Program::kernels;
std::string kernelFill(size_t index);
/// `v` with at most one decimal, without locale or exponent.
std::string svgNumber(double v);

} // namespace loom::rt

#endif // LOOM_RUNTIME_FLOORPLAN_H
