//===- Replay.h - The schedule replayed event by event ----------*- C++ -*-===//
//
// The simulator's own enforcement of the timing, independent of the
// schedule verifier (ScheduleVerifier.h): where the verifier proves the
// scheduler's lists consistent (deps before starts, declared lifetimes
// disjoint), the replay runs the machine. Every instruction issues at its
// scheduled start, as on a statically scheduled chip, and takes what its
// timing rule gives (InstrTiming.h, re-derived from the program); what it
// writes arrives then (a chip link's later by its wire latency). It reads
// neither the deps, nor the declared durations (except to compare them
// with the rule), nor the declared lifetimes. Hazards, each found at the
// cycle it happens:
//  - operand-late: an instruction starts before a write of bytes it reads
//    (its operand's box, for a transfer the part of its source buffer a
//    destination holds) that began by then has arrived (a kernel's matrix
//    part and its epilogue both write its result: both must be done),
//    naming the writer and the cycles missing;
//  - unwritten-read: the writes begun by its start do not cover the bytes
//    it reads (a buffer no instruction writes, a model input's or a
//    constant's, the host binds before cycle 0);
//  - unit-busy: its unit or link is still busy with an earlier
//    instruction's rule cycles (links with the same ends are one wire);
//  - too-fast: its scheduled duration is shorter than its rule: the unit
//    would still be working when the schedule says it is done;
//  - sram-overwrite: it writes SRAM bytes of another buffer of its tile
//    whose data is still to be read (from its first write, or cycle 0 when
//    bound, to its last reader's end; always for a resident weight, to the
//    end for a model output a kernel writes); the host's binding of a
//    buffer no instruction writes is a write at cycle 0 (instr -1);
//  - remote-access: a matrix or vector instruction reads or writes, or a
//    DMA instruction reads, a buffer in another tile's SRAM (a unit reaches
//    only its own tile's; a DMA writes elsewhere only through the mesh).
//
// One input (iteration 0) is replayed; the overlap of a pipelined stream's
// inputs is the verifier's to prove (partial: the replay does not run a
// stream). Time is linear in the instrs and buffers, with a sort per tile.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_REPLAY_H
#define LOOM_RUNTIME_REPLAY_H

#include "loom/Runtime/InstrTiming.h"
#include "loom/Runtime/Program.h"

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::rt {

enum class HazardKind : uint8_t {
  OperandLate,
  UnwrittenRead,
  UnitBusy,
  TooFast,
  SramOverwrite,
  RemoteAccess,
};
inline constexpr int kNumHazardKinds = 6;
/// "operand-late", "unwritten-read", "unit-busy", "too-fast",
/// "sram-overwrite", "remote-access".
const char *hazardKindName(HazardKind kind);

struct Hazard {
  HazardKind kind = HazardKind::OperandLate;
  /// The instruction it happens to, at its start `cycle` (-1: the host's
  /// binding of an input or constant at cycle 0).
  int32_t instr = -1;
  int64_t cycle = 0;
  /// The cycles it would have had to wait (-1: the bytes never arrive).
  int64_t missing = 0;
  /// The other party, -1 if none: the writer that is late, the earlier
  /// occupant of the unit, the last reader of the data overwritten.
  int32_t other = -1;
  /// The buffer read (operand-late, unwritten-read), written and the one
  /// overwritten (sram-overwrite), or out of reach (remote-access).
  int32_t buffer = -1, otherBuffer = -1;
};

struct Replay {
  /// Per instr position: when it finishes by its rule (start + rule
  /// cycles), and when what it writes is there.
  std::vector<int64_t> finish, arrival;
  /// Every hazard, by (cycle, instr, kind).
  std::vector<Hazard> hazards;
  /// Hazards per kind and per kernel id (transfers under -1).
  int64_t byKind[kNumHazardKinds] = {};
  std::unordered_map<int32_t, int64_t> byKernel;
};

/// Replays one input of `p` with the rule cycles `rules` (instrTimings(p),
/// by instr position; with none, for a program built in code without a
/// chip, every instruction takes its scheduled duration).
Replay replaySchedule(const Program &p,
                      const std::vector<InstrTiming> &rules);

/// One line, without the file name: "instr 12 of kernel 3 'conv' (onnx:
/// Conv_0) on tile 5 (1,1) starts at cycle 100, but buffer 7 (tensor 4 'x'
/// [0, 2) x [0, 8)) arrives at cycle 130 (instr 11): 30 cycles missing
/// (operand-late)".
std::string describeHazard(const Program &p, const Hazard &h);

} // namespace loom::rt

#endif // LOOM_RUNTIME_REPLAY_H
