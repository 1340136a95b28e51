//===- ScheduleVerifier.h - Prove a program's schedule is sound -*- C++ -*-===//
//
// The independent schedule verifier. It reads nothing but the program (the
// file the runtime loads) and shares no code or state with the scheduler
// that produced it, so a scheduler bug cannot hide itself. The compiler runs
// it after every compile (the `sched-verify` pass, on the program it is
// about to write), and the simulator runs it again before every run.
//
// It proves, for one input and, in a software-pipelined program, for every
// overlap of consecutive inputs of a stream (iteration k runs every instr
// k * II cycles later):
//  1. no deadlock: the dependency graph of the instrs has no cycle;
//  2. every instr starts no earlier than each of its deps ends;
//  3. no read before its data arrives: every instr that reads a buffer
//     depends directly on every instr that writes that buffer, and a buffer
//     of a computed tensor that is read has a writer; only constants are
//     resident (one copy for every input), nothing writes them, and a
//     constant no instr writes is resident; a model input no instr writes
//     is live from cycle 0 and a model output a kernel writes lives to the
//     end of the iteration (the host writes and reads them then);
//  4. a tile's units touch only its SRAM (a matrix or vector instr reads
//     and writes its tile's buffers, a DMA instr reads its tile's), and
//     every instr reads and writes only buffers live for its whole run;
//  5. no unit or link is double-booked: two instrs on one resource (a
//     tile's matrix, vector or DMA unit, one mesh link, or one chip link:
//     link records with the same kind and ends are one resource) never
//     overlap, also across iterations: their intervals modulo II are
//     disjoint and none is longer than II; and a link instr names a link of
//     its kind (MeshLink: a mesh link, ChipLink: a chip link);
//  6. every buffer (all its rotating copies) lies inside its tile's SRAM;
//  7. a rotating buffer has enough copies: copies * II covers its lifetime;
//  8. no two buffers of one tile share a byte while both are live, across
//     iterations: each buffer's footprint (all copies) is taken over its
//     lifetime modulo II (always, when it lives II cycles or more, and for
//     resident buffers);
//  9. no instr ends after the program's total_cycles (its stated latency);
// 10. every kernel instr reads, on its tile, what its ops need of the
//     kernel's inputs for the boxes it writes (re-derived from the ops by
//     rt::checkTileOperands: a convolution's rows with their halo, a
//     matmul's whole K), and every byte read of a computed tensor's buffer
//     was written there (its writers' boxes cover the buffer's: a K
//     split's partial sums arrive from every part);
// 11. every instr lasts at least its timing rule's cycles for the shape
//     re-derived from the program (InstrTiming.h: the kernel's ops on the
//     boxes it writes, the bytes of the boxes a transfer moves), and a
//     transfer's instr says it carries at least those bytes, and a mesh
//     link instr that says it carries bytes is on the XY route of one of
//     its transfer's copies (skipped for a
//     program built in code without a target chip; a loaded one has one).
// Checks run in that order; violations are named by instr, buffer, kernel
// and ONNX node, tiles as "tile 5 (1,1)" (row, column) or, in a multi-chip
// program, "tile 5 (chip 1, 0,1)" (chip, then row and column on it), and
// chip links as "chip link 3 (chip 0 -> chip 1)". Every check is a sort and
// a sweep or a graph walk: time near-linear in the instrs and buffers.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_SCHEDULEVERIFIER_H
#define LOOM_RUNTIME_SCHEDULEVERIFIER_H

#include "loom/Runtime/InstrTiming.h"
#include "loom/Runtime/Program.h"

#include <string>
#include <vector>

namespace loom::rt {

enum class ViolationKind {
  Deadlock,
  Dependency,
  DataArrival,
  Locality,
  Liveness,
  ResourceConflict,
  SramBounds,
  BufferCopies,
  SramOverlap,
  Latency,
  DataFlow,
  Timing,
};
/// "deadlock", "dependency", "data-arrival", "locality", "liveness",
/// "resource-conflict", "sram-bounds", "buffer-copies", "sram-overlap",
/// "latency", "data-flow", "timing".
const char *violationKindName(ViolationKind kind);

struct Violation {
  ViolationKind kind;
  /// One line, without the file name.
  std::string message;
  /// The instr and buffer it is about (-1: none), for tools that point at
  /// the op that made them.
  int32_t instr = -1;
  int32_t buffer = -1;
};

/// Every violation found, up to `maxViolations` (checks stop early once
/// that many are found). Empty when the schedule is sound.
std::vector<Violation> verifySchedule(const Program &program,
                                      size_t maxViolations = 1);

/// The most SRAM bytes live at once on each tile (indexed by tile), with
/// every buffer's full footprint (all its copies) over its lifetime, taken
/// modulo the initiation interval in a pipelined program.
std::vector<int64_t> sramPeakPerTile(const Program &program);

/// Throws Error "<path>: schedule violation: <message>" for the first
/// violation. With `timings`, stores there what the timing check derived
/// (instrTimings of the program), so a caller need not derive it again.
void verifyScheduleOrThrow(const Program &program,
                           std::vector<InstrTiming> *timings = nullptr);

} // namespace loom::rt

#endif // LOOM_RUNTIME_SCHEDULEVERIFIER_H
