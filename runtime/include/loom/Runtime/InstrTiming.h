//===- InstrTiming.h - Each instruction's timing rule, re-derived -*- C++ -*-===//
//
// The cycles the ISA's timing rules (Isa.h) give every instruction of a
// loaded program, from the program alone: the target's chip (target_json),
// the kernel's ops, the boxes of the buffers each instruction reads and
// writes, and the tiles and links it names. Nothing the scheduler wrote to
// describe its own reasoning is read (not an instruction's duration, not
// its bytes, not a kernel's estimate), so the schedule verifier and the
// simulator check the scheduler's durations against an independent
// derivation:
//  - a kernel's instruction: the work of the boxes it writes (tileWork) on
//    its unit (kernel.matrix, kernel.epilogue for a Vector instruction
//    beside a Matrix one of the same kernel and tile, kernel.vector,
//    kernel.dma), its SRAM bytes those of the buffers it reads and writes
//    (for kernel.dma twice those it writes: it reads each element it
//    writes once, a gather its rows and not the table), each buffer as
//    stored (its box at its tensor's format, or its size where smaller: a
//    weight a narrow kernel reads is stored at the kernel's precision);
//  - a transfer's DMA instruction: the bytes of its source buffer's box
//    that each buffer it writes holds, summed (its copies); within a chip
//    transfer.mesh, over the longest XY route (columns first, then rows)
//    to a tile it writes; across chips transfer.chip;
//  - a mesh link: the copies of the transfer's DMA instrs (each from the
//    buffer it reads into a buffer it writes, their boxes' overlap) between
//    a buffer the link reads and one it writes whose XY route crosses the
//    link, summed; link.mesh over the longest such route;
//  - a chip link: those copies between a buffer it reads and one it writes
//    on another chip, summed; link.chip at the link's own rate.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_INSTRTIMING_H
#define LOOM_RUNTIME_INSTRTIMING_H

#include "loom/Runtime/Program.h"
#include "loom/Runtime/TileExecutor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace loom::rt {

/// The box of its tensor that buffer `b` holds (the whole tensor when its
/// box is empty).
Box bufferBox(const Program &p, const ProgramBuffer &b);

/// Bytes of `elements` elements of tensor `t` as stored (its storage
/// format when narrower than its dtype).
int64_t storedBytes(const ProgramTensor &t, int64_t elements);

struct InstrTiming {
  /// The ISA timing rule (docs/isa.md) that gave `cycles`.
  enum class Rule : uint8_t {
    None,
    KernelMatrix,
    KernelEpilogue,
    KernelVector,
    KernelDma,
    TransferChip,
    TransferMesh,
    LinkMesh,
    LinkChip,
  };
  /// The rule's cycles: the least duration the instruction may have.
  int64_t cycles = 0;
  /// The bytes it moves (DMA of a transfer, links), re-derived; 0 for a
  /// kernel's instruction.
  int64_t bytes = 0;
  Rule rule = Rule::None;
  /// The shape the rule was applied to; each rule reads its own fields.
  int64_t contractions = 0;
  Contraction firstContraction;
  NumericFormat format = NumericFormat::F32;
  int64_t vectorOps = 0, sramBytes = 0, hops = 0;
  /// A transfer's DMA copies to another tile (false: within its tile).
  bool leaves = false;
  /// A chip link's bytes per cycle.
  double rate = 0;

  /// The rule and the shape it was applied to, for messages (built only
  /// when asked: a program has hundreds of thousands of instructions):
  /// "kernel.matrix: 1 contraction (1 x 64x64x147) in fp32, 81920 SRAM
  /// bytes".
  std::string ruleText() const;
};

/// The timing of every instruction of `p`, by position in p.instrs.
/// Throws Error if the program carries no chip (built in code without
/// one) or a kernel's ops cannot be propagated (naming the instruction).
std::vector<InstrTiming> instrTimings(const Program &p);
/// The same, deriving each kernel instruction's work through `plans` (the
/// schedule verifier shares its cache with its data-flow check); null
/// makes a cache of its own.
std::vector<InstrTiming> instrTimings(const Program &p, TilePlanCache *plans);

} // namespace loom::rt

#endif // LOOM_RUNTIME_INSTRTIMING_H
