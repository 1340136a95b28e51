//===- loom-verify-mutations.cpp - Fault injection for the verifier -------===//
//
// Mutates compiled schedules and checks that the independent schedule
// verifier (loom/Runtime/ScheduleVerifier.h) rejects every mutant:
//
//   loom-verify-mutations [--per-kind N] [--seed S] [--verbose]
//       PROGRAM.loom...
//
// Each program must pass the verifier unmutated. Then, for every mutation
// kind, up to N distinct mutations are drawn from a fixed-seed PRNG, each
// applied to a fresh copy of the program, and each copy must be rejected.
// Every mutation is a real fault: its target is chosen so that the mutated
// schedule is invalid whatever else holds (a kind the program offers no
// target for is skipped and reported). A rejection with a different
// ViolationKind than the one the fault should show as still counts, but is
// listed.
//
// Kinds (shrink-ii and too-few-copies only for software-pipelined programs):
//   early-start        an instr starts before one of its deps ends (or,
//                      for a chip link, before its message arrives)
//   overlap-buffers    two buffers of one tile live at the same time (modulo
//                      the II when pipelined) are moved onto shared bytes
//   double-book-link   two mesh-link transfers that overlap in time (modulo
//                      the II) are put on one link
//   double-book-unit   the same for matrix, vector and DMA instrs of tiles
//   drop-dependency    an instr loses its dep on the writer of a buffer it
//                      reads
//   buffer-past-sram   a buffer is moved to end past its tile's SRAM
//   shrink-lifetime    a buffer dies before (or as) an instr reading it
//                      starts
//   cycle              a dep that closes a cycle in the dependency graph
//   shrink-ii          the initiation interval is cut below a resource's
//                      busy cycles per input or a buffer's lifetime / copies
//   too-few-copies     a rotating buffer gets fewer copies than its lifetime
//                      needs at the II
//
// and three faults an earlier verifier missed (found by this tool; the
// scheduler and the verifier were fixed since):
//   early-read         a reader of a kernel's output starts before the
//                      kernel's matrix part ends (when only the shorter
//                      epilogue vector part was declared its writer; now
//                      the matrix part writes the output too, so compiled
//                      programs offer no target)
//   wrong-tile         a buffer a matrix or vector instr uses is moved to
//                      another tile's SRAM (the locality check)
//   link-early         a mesh-link transfer runs before its data exists
//                      (link instrs now read and write the shards they
//                      carry)
//
// and, for multi-chip programs (those with chip links), the link faults
// again on chip-to-chip links:
//   double-book-chip-link  two chip-link transfers that overlap in time
//                      (modulo the II) are put on one chip link
//   chip-link-early-start  a chip-link instr starts before one of its deps
//                      ends
//   chip-link-early    a chip-link transfer drops its deps and runs before
//                      its data exists
//   chip-link-kind     a chip-link instr is pointed at a mesh link, or a
//                      mesh-link instr at a chip link
//
// and the faults of physics and data flow (docs/isa.md), which a verifier
// of the scheduler's lists alone cannot see:
//   work-too-fast      a kernel's instr lasts one cycle less than its
//                      timing rule gives
//   bytes-too-fast     the same for a transfer's DMA or link instr
//   fewer-bytes        a transfer's DMA says it carries fewer bytes than
//                      its buffers' boxes overlap by
//   wrong-route        a mesh-link instr is moved to a link no XY route of
//                      its transfer takes
//   missing-operand    a kernel's instr drops the read of its first op's
//                      input
//   missing-halo       a convolution split by output rows holds one input
//                      row fewer than its halo needs
//   missing-part       a buffer several DMAs fill from disjoint sources
//                      (a K split's partial sums) loses one of them
//
// Prints a table (per kind: mutations applied, rejected, rejected with the
// expected kind, and those the simulator's own event-by-event replay
// (loom/Runtime/Replay.h, which reads neither deps nor lifetimes) finds a
// hazard in) and a final line; exits 0 only if every unmutated program
// passes and replays without a hazard, every mutation is rejected, and the
// replay finds every work-too-fast and bytes-too-fast mutant (a duration
// below its rule is a hazard whatever else holds; other faults are hazards
// only when they matter physically, so their replay figure is a measure,
// not a requirement), else 1 with a one-line reason.
//
//===----------------------------------------------------------------------===//

#include "loom/Runtime/Program.h"
#include "loom/Runtime/InstrTiming.h"
#include "loom/Runtime/Replay.h"
#include "loom/Runtime/ScheduleVerifier.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

using namespace loom::rt;

namespace {

//===----------------------------------------------------------------------===//
// Randomness and intervals
//===----------------------------------------------------------------------===//

/// A fixed-seed generator; draws are reduced with `%` (not the standard
/// distributions, which differ between standard libraries) so a seed gives
/// the same mutations everywhere.
class Rng {
public:
  explicit Rng(uint64_t seed) : engine_(seed) {}
  /// Uniform in [0, n) (n > 0).
  uint64_t below(uint64_t n) { return engine_() % n; }
  /// Uniform in [lo, hi] (lo <= hi).
  int64_t between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(below(static_cast<uint64_t>(hi - lo) + 1));
  }
  template <typename T> const T &pick(const std::vector<T> &v) {
    return v[below(v.size())];
  }

private:
  std::mt19937_64 engine_;
};

using Pieces = std::vector<std::pair<int64_t, int64_t>>;

/// [start, end) on the line (`period` 0) or on the circle of `period` cycles
/// where iteration k runs k * period later.
Pieces piecesOf(int64_t start, int64_t end, int64_t period) {
  if (end <= start)
    return {};
  if (!period)
    return {{start, end}};
  if (end - start >= period)
    return {{0, period}};
  int64_t lo = ((start % period) + period) % period;
  int64_t hi = lo + (end - start);
  if (hi <= period)
    return {{lo, hi}};
  return {{lo, period}, {0, hi - period}};
}

bool intersect(const Pieces &a, const Pieces &b) {
  for (auto [alo, ahi] : a)
    for (auto [blo, bhi] : b)
      if (alo < bhi && blo < ahi)
        return true;
  return false;
}

int64_t periodOf(const Program &p) {
  return p.pipelined() ? p.initiationInterval : 0;
}

/// When a buffer holds its bytes: its lifetime, modulo the period when
/// pipelined, and always when it is resident in a pipelined program.
Pieces bufferTime(const ProgramBuffer &b, int64_t period) {
  if (b.size <= 0)
    return {};
  if (b.resident && period)
    return {{0, period}};
  return piecesOf(b.liveStart, b.liveEnd, period);
}

Pieces instrTime(const ProgramInstr &in, int64_t period) {
  return piecesOf(in.start, in.end(), period);
}

//===----------------------------------------------------------------------===//
// Mutations
//===----------------------------------------------------------------------===//

struct Mutation {
  /// What was changed, by ids; also what makes two draws the same.
  std::string what;
  ViolationKind expected;
  std::function<void(Program &)> apply;
};

/// Draws one candidate mutation, or nothing when the draw hit a target that
/// cannot be made invalid this way (the caller draws again).
using Generator = std::function<std::optional<Mutation>(Rng &)>;

/// Looks up positions by id in the original program (the mutants keep the
/// same positions: mutations only edit fields in place).
struct Index {
  explicit Index(const Program &p) : p(p) {
    for (size_t i = 0; i < p.instrs.size(); ++i)
      instr.emplace(p.instrs[i].id, i);
    for (size_t i = 0; i < p.buffers.size(); ++i)
      buffer.emplace(p.buffers[i].id, i);
    for (size_t i = 0; i < p.instrs.size(); ++i)
      for (int32_t b : p.instrs[i].writes)
        writers[b].push_back(i);
  }
  const Program &p;
  std::unordered_map<int32_t, size_t> instr, buffer;
  /// Buffer id -> positions of the instrs writing it.
  std::unordered_map<int32_t, std::vector<size_t>> writers;
};

std::string str(int64_t v) { return std::to_string(v); }

/// Every instr position with at least one dep whose result arrives after
/// cycle 0 (of `unit` only, when given).
Generator earlyStart(const Index &ix, std::optional<Unit> unit = {}) {
  std::vector<size_t> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    if (unit && ix.p.instrs[i].unit != *unit)
      continue;
    for (int32_t d : ix.p.instrs[i].deps)
      if (ix.p.instrs[ix.instr.at(d)].arrival() > 0) {
        cands.push_back(i);
        break;
      }
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    size_t i = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    int32_t d = in.deps[rng.below(in.deps.size())];
    const ProgramInstr &dep = ix.p.instrs[ix.instr.at(d)];
    if (dep.arrival() <= 0)
      return std::nullopt;
    // Strictly before the dep's result is there (its end, plus a chip
    // link's latency): mostly within the dep's own run and flight, now and
    // then anywhere down to cycle 0.
    int64_t span = std::max<int64_t>(1, dep.duration + dep.latency);
    if (rng.below(4) == 0)
      span = dep.arrival();
    int64_t start = std::max<int64_t>(
        0, dep.arrival() - 1 - int64_t(rng.below(uint64_t(span))));
    return Mutation{"instr " + str(in.id) + " start " + str(in.start) + " -> " +
                        str(start) + " (dep instr " + str(dep.id) +
                        " arrives at " + str(dep.arrival()) + ")",
                    ViolationKind::Dependency,
                    [i, start](Program &p) { p.instrs[i].start = start; }};
  };
}

Generator overlapBuffers(const Index &ix) {
  int64_t period = periodOf(ix.p);
  std::vector<size_t> cands;
  for (size_t i = 0; i < ix.p.buffers.size(); ++i)
    if (!bufferTime(ix.p.buffers[i], period).empty())
      cands.push_back(i);
  return [&ix, cands, period](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    size_t a = rng.pick(cands);
    const ProgramBuffer &A = ix.p.buffers[a];
    Pieces at = bufferTime(A, period);
    std::vector<size_t> partners;
    for (size_t b : cands)
      if (b != a && ix.p.buffers[b].tile == A.tile &&
          intersect(at, bufferTime(ix.p.buffers[b], period)))
        partners.push_back(b);
    if (partners.empty())
      return std::nullopt;
    size_t b = rng.pick(partners);
    const ProgramBuffer &B = ix.p.buffers[b];
    // B's bytes [offset, offset + footprint) are made to meet A's: the same
    // offset, B starting inside A, or B ending inside A.
    int64_t offset = A.offset;
    switch (rng.below(3)) {
    case 1:
      offset = A.offset + rng.between(0, A.footprint() - 1);
      break;
    case 2:
      offset = A.offset - rng.between(0, std::min(A.offset, B.footprint() - 1));
      break;
    default:
      break;
    }
    return Mutation{"buffer " + str(B.id) + " offset " + str(B.offset) +
                        " -> " + str(offset) + " (buffer " + str(A.id) +
                        " at [" + str(A.offset) + ", " +
                        str(A.offset + A.footprint()) + ") on tile " +
                        str(A.tile) + ", both live)",
                    ViolationKind::SramOverlap,
                    [b, offset](Program &p) { p.buffers[b].offset = offset; }};
  };
}

/// Which resources a double-booking targets.
enum class Resources { TileUnits, MeshLinks, ChipLinks };

bool isOf(Resources r, Unit unit) {
  switch (r) {
  case Resources::TileUnits:
    return !isLinkUnit(unit);
  case Resources::MeshLinks:
    return unit == Unit::MeshLink;
  case Resources::ChipLinks:
    return unit == Unit::ChipLink;
  }
  return false;
}

/// Two instrs of `resources` with positive durations on different resources
/// (tiles of one unit kind, mesh links or chip links) that overlap in time,
/// modulo the period: the second is moved onto the first's resource. When
/// the program has no such pair (`overlapping` false), the second is also
/// moved to start with the first, which may break its deps too.
Generator doubleBook(const Index &ix, Resources resources, bool overlapping) {
  int64_t period = periodOf(ix.p);
  std::vector<size_t> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    if (in.duration > 0 && isOf(resources, in.unit))
      cands.push_back(i);
  }
  bool links = resources != Resources::TileUnits;
  return [&ix, cands, period, links,
          overlapping](Rng &rng) -> std::optional<Mutation> {
    if (cands.size() < 2)
      return std::nullopt;
    size_t x = rng.pick(cands);
    const ProgramInstr &X = ix.p.instrs[x];
    Pieces xt = instrTime(X, period);
    std::vector<size_t> partners;
    for (size_t y : cands) {
      const ProgramInstr &Y = ix.p.instrs[y];
      if (y == x || Y.unit != X.unit)
        continue;
      if (!overlapping ||
          (Y.resource != X.resource && intersect(xt, instrTime(Y, period))))
        partners.push_back(y);
    }
    if (partners.empty())
      return std::nullopt;
    size_t y = rng.pick(partners);
    const ProgramInstr &Y = ix.p.instrs[y];
    int32_t resource = X.resource;
    std::string where = links ? std::string(X.unit == Unit::ChipLink
                                                ? "chip link "
                                                : "link ") +
                                    str(resource)
                              : std::string(unitName(X.unit)) +
                                    " unit of tile " + str(resource);
    if (overlapping)
      return Mutation{
          "instr " + str(Y.id) + " resource " + str(Y.resource) + " -> " +
              str(resource) + " (" + where + ", overlapping instr " +
              str(X.id) + ")",
          ViolationKind::ResourceConflict,
          [y, resource](Program &p) { p.instrs[y].resource = resource; }};
    int64_t start = X.start;
    return Mutation{
        "instr " + str(Y.id) + " resource " + str(Y.resource) + " -> " +
            str(resource) + ", start " + str(Y.start) + " -> " + str(start) +
            " (moved onto instr " + str(X.id) + " on " + where + ")",
        ViolationKind::ResourceConflict, [y, resource, start](Program &p) {
          p.instrs[y].resource = resource;
          p.instrs[y].start = start;
        }};
  };
}

/// (reader, writer) pairs where the reader reads a buffer the writer writes
/// and depends on it directly.
Generator dropDependency(const Index &ix) {
  std::vector<std::tuple<size_t, size_t, int32_t>> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    std::set<size_t> seen;
    for (int32_t b : in.reads) {
      auto w = ix.writers.find(b);
      if (w == ix.writers.end())
        continue;
      for (size_t wp : w->second) {
        const ProgramInstr &writer = ix.p.instrs[wp];
        if (wp != i && std::count(in.deps.begin(), in.deps.end(), writer.id) &&
            seen.insert(wp).second)
          cands.emplace_back(i, wp, b);
      }
    }
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [i, w, b] = rng.pick(cands);
    int32_t wid = ix.p.instrs[w].id;
    return Mutation{
        "instr " + str(ix.p.instrs[i].id) + " drops dep instr " + str(wid) +
            " (which writes buffer " + str(b) + " it reads)",
        ViolationKind::DataArrival, [i, wid](Program &p) {
          auto &deps = p.instrs[i].deps;
          deps.erase(std::remove(deps.begin(), deps.end(), wid), deps.end());
        }};
  };
}

Generator bufferPastSram(const Index &ix) {
  std::vector<size_t> cands;
  for (size_t i = 0; i < ix.p.buffers.size(); ++i)
    if (ix.p.buffers[i].size > 0)
      cands.push_back(i);
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    size_t b = rng.pick(cands);
    const ProgramBuffer &B = ix.p.buffers[b];
    int64_t offset =
        ix.p.sramBytesPerTile - B.footprint() + 1 + rng.between(0, B.size - 1);
    return Mutation{"buffer " + str(B.id) + " offset " + str(B.offset) +
                        " -> " + str(offset) + " (" + str(B.footprint()) +
                        " bytes, SRAM " + str(ix.p.sramBytesPerTile) + ")",
                    ViolationKind::SramBounds,
                    [b, offset](Program &p) { p.buffers[b].offset = offset; }};
  };
}

/// (reader, buffer) with the reader running a positive number of cycles on
/// a buffer with a lifetime (not a resident one of a pipelined program, which
/// is live always): the buffer is made to die at or before the read starts.
Generator shrinkLifetime(const Index &ix) {
  bool pipelined = ix.p.pipelined();
  std::vector<std::pair<size_t, size_t>> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    if (in.duration <= 0)
      continue;
    for (int32_t b : in.reads) {
      size_t bp = ix.buffer.at(b);
      if (!(ix.p.buffers[bp].resident && pipelined))
        cands.emplace_back(i, bp);
    }
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [i, b] = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    const ProgramBuffer &B = ix.p.buffers[b];
    // Mostly exactly at the read's start; now and then earlier.
    int64_t liveEnd = in.start;
    if (rng.below(2) && in.start > B.liveStart)
      liveEnd = rng.between(B.liveStart, in.start);
    return Mutation{
        "buffer " + str(B.id) + " live_end " + str(B.liveEnd) + " -> " +
            str(liveEnd) + " (read by instr " + str(in.id) + " over cycles " +
            str(in.start) + "-" + str(in.end()) + ")",
        ViolationKind::Liveness,
        [b, liveEnd](Program &p) { p.buffers[b].liveEnd = liveEnd; }};
  };
}

/// B depends on A through a chain of 1 to 4 deps; A is made to depend on B.
Generator cycle(const Index &ix) {
  std::vector<size_t> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i)
    if (!ix.p.instrs[i].deps.empty())
      cands.push_back(i);
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    size_t b = rng.pick(cands);
    size_t a = b;
    int64_t length = rng.between(1, 4), steps = 0;
    for (; steps < length && !ix.p.instrs[a].deps.empty(); ++steps) {
      const auto &deps = ix.p.instrs[a].deps;
      a = ix.instr.at(deps[rng.below(deps.size())]);
    }
    int32_t bid = ix.p.instrs[b].id;
    return Mutation{"instr " + str(ix.p.instrs[a].id) + " gets dep instr " +
                        str(bid) + " (which depends on it through " +
                        str(steps) + " dep" + (steps > 1 ? "s" : "") + ")",
                    ViolationKind::Deadlock,
                    [a, bid](Program &p) { p.instrs[a].deps.push_back(bid); }};
  };
}

/// Lowers the II to below what a resource or a rotating buffer needs: any
/// resource busy `load` cycles per input cannot fit in fewer (its intervals
/// modulo the II must overlap), and a buffer living `span` cycles in
/// `copies` slots needs copies * II >= span.
Generator shrinkII(const Index &ix) {
  const Program &p = ix.p;
  int64_t ii = p.initiationInterval;
  std::map<std::pair<int, int32_t>, int64_t> load;
  int64_t maxLoad = 0;
  for (const ProgramInstr &in : p.instrs)
    maxLoad =
        std::max(maxLoad, load[{int(in.unit), in.resource}] += in.duration);
  int64_t needCopies = 0; // the least II the buffers allow
  for (const ProgramBuffer &b : p.buffers)
    if (!b.resident && b.size > 0 && b.liveEnd > b.liveStart)
      needCopies = std::max(
          needCopies, (b.liveEnd - b.liveStart + b.copies - 1) / b.copies);
  int64_t limit = std::min(ii - 1, std::max(maxLoad, needCopies) - 1);
  bool pipelined = p.pipelined();
  return [ii, limit, maxLoad, pipelined,
          first = true](Rng &rng) mutable -> std::optional<Mutation> {
    if (!pipelined || limit < 1)
      return std::nullopt;
    int64_t newII = rng.between(1, limit);
    if (first && std::max<int64_t>(1, ii / 2) <= limit)
      newII = std::max<int64_t>(1, ii / 2);
    first = false;
    ViolationKind expected = newII < maxLoad ? ViolationKind::ResourceConflict
                                             : ViolationKind::BufferCopies;
    return Mutation{
        "initiation interval " + str(ii) + " -> " + str(newII) +
            " (a resource is busy " + str(maxLoad) + " cycles per input)",
        expected, [newII](Program &p) { p.initiationInterval = newII; }};
  };
}

/// A non-resident buffer gets fewer copies than its lifetime needs at the
/// II; when no buffer lives longer than the II, one with a lifetime instead
/// lives longer than its copies cover.
Generator tooFewCopies(const Index &ix, bool extend) {
  const Program &p = ix.p;
  int64_t ii = p.initiationInterval;
  std::vector<size_t> cands;
  for (size_t i = 0; i < p.buffers.size(); ++i) {
    const ProgramBuffer &b = p.buffers[i];
    if (!b.resident && b.size > 0 &&
        (extend ? b.liveEnd > b.liveStart : b.liveEnd - b.liveStart > ii))
      cands.push_back(i);
  }
  bool pipelined = p.pipelined();
  return [&ix, cands, ii, pipelined,
          extend](Rng &rng) -> std::optional<Mutation> {
    if (!pipelined || cands.empty())
      return std::nullopt;
    size_t b = rng.pick(cands);
    const ProgramBuffer &B = ix.p.buffers[b];
    int64_t span = B.liveEnd - B.liveStart;
    if (extend) {
      int64_t liveEnd =
          B.liveStart + int64_t(B.copies) * ii + 1 + rng.between(0, ii - 1);
      return Mutation{"buffer " + str(B.id) + " live_end " + str(B.liveEnd) +
                          " -> " + str(liveEnd) + " (" + str(B.copies) +
                          " copies at II " + str(ii) + ")",
                      ViolationKind::BufferCopies, [b, liveEnd](Program &p) {
                        p.buffers[b].liveEnd = liveEnd;
                      }};
    }
    // copies * II < span.
    int64_t copies = rng.between(1, (span - 1) / ii);
    return Mutation{"buffer " + str(B.id) + " copies " + str(B.copies) +
                        " -> " + str(copies) + " (lives " + str(span) +
                        " cycles at II " + str(ii) + ")",
                    ViolationKind::BufferCopies, [b, copies](Program &p) {
                      p.buffers[b].copies = int32_t(copies);
                    }};
  };
}

//===----------------------------------------------------------------------===//
// Faults an earlier verifier missed
//===----------------------------------------------------------------------===//

/// A reader of a kernel's output is moved before the kernel's matrix part
/// ends. An epilogue kernel's output is written (in the program) by its
/// vector part, which starts with the matrix part and ends long before it;
/// the matrix part writes nothing. The reader drops its deps on the matrix
/// parts and starts once its other deps end (and the buffers it writes are
/// made live from then), still after the declared writer.
Generator earlyRead(const Index &ix) {
  struct Cand {
    size_t reader;
    std::vector<int32_t> keep;
    int64_t ready, matrixEnd;
  };
  std::vector<Cand> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    std::set<int32_t> producers; // kernels whose output it reads
    for (int32_t b : in.reads)
      if (auto w = ix.writers.find(b); w != ix.writers.end())
        for (size_t wp : w->second)
          if (wp != i && ix.p.instrs[wp].kernel >= 0)
            producers.insert(ix.p.instrs[wp].kernel);
    Cand c{i, {}, 0, 0};
    for (int32_t d : in.deps) {
      const ProgramInstr &dep = ix.p.instrs[ix.instr.at(d)];
      if (dep.unit == Unit::Matrix && dep.writes.empty() &&
          producers.count(dep.kernel)) {
        c.matrixEnd = std::max(c.matrixEnd, dep.end());
      } else {
        c.keep.push_back(d);
        c.ready = std::max(c.ready, dep.end());
      }
    }
    if (c.ready < c.matrixEnd)
      cands.push_back(std::move(c));
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    const Cand &c = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[c.reader];
    int64_t start = rng.between(c.ready, c.matrixEnd - 1);
    std::vector<size_t> written;
    for (int32_t b : in.writes)
      written.push_back(ix.buffer.at(b));
    size_t i = c.reader;
    std::vector<int32_t> keep = c.keep;
    return Mutation{
        "instr " + str(in.id) + " start " + str(in.start) + " -> " +
            str(start) +
            ", before the matrix part of "
            "the kernel whose output it reads ends at " +
            str(c.matrixEnd) + " (its deps on it dropped)",
        ViolationKind::DataArrival, [i, keep, start, written](Program &p) {
          p.instrs[i].deps = keep;
          p.instrs[i].start = start;
          for (size_t b : written)
            p.buffers[b].liveStart = std::min(p.buffers[b].liveStart, start);
        }};
  };
}

/// A buffer a matrix or vector instr uses on its own tile is moved to
/// another tile (above every buffer there): the unit then reads or writes
/// another tile's SRAM.
Generator wrongTile(const Index &ix) {
  const Program &p = ix.p;
  std::vector<int64_t> top(static_cast<size_t>(p.numTiles()), 0);
  for (const ProgramBuffer &b : p.buffers)
    top[static_cast<size_t>(b.tile)] =
        std::max(top[static_cast<size_t>(b.tile)], b.offset + b.footprint());
  std::vector<std::pair<size_t, size_t>> cands;
  for (size_t i = 0; i < p.instrs.size(); ++i) {
    const ProgramInstr &in = p.instrs[i];
    if (in.unit != Unit::Matrix && in.unit != Unit::Vector)
      continue;
    for (const auto *list : {&in.reads, &in.writes})
      for (int32_t b : *list) {
        size_t bp = ix.buffer.at(b);
        if (p.buffers[bp].tile == in.resource && p.buffers[bp].size > 0)
          cands.emplace_back(i, bp);
      }
  }
  return [&ix, cands, top](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty() || ix.p.numTiles() < 2)
      return std::nullopt;
    auto [i, b] = rng.pick(cands);
    const ProgramBuffer &B = ix.p.buffers[b];
    int32_t tile = int32_t(
        (B.tile + 1 + int64_t(rng.below(uint64_t(ix.p.numTiles() - 1)))) %
        ix.p.numTiles());
    int64_t offset = top[static_cast<size_t>(tile)];
    if (offset + B.footprint() > ix.p.sramBytesPerTile)
      return std::nullopt;
    return Mutation{"buffer " + str(B.id) + " moved from tile " + str(B.tile) +
                        " to tile " + str(tile) + " at " + str(offset) +
                        " (used by " + unitName(ix.p.instrs[i].unit) +
                        " instr " + str(ix.p.instrs[i].id) + " on tile " +
                        str(B.tile) + ")",
                    ViolationKind::Locality, [b, tile, offset](Program &p) {
                      p.buffers[b].tile = tile;
                      p.buffers[b].offset = offset;
                    }};
  };
}

/// A link transfer (on a `unit` link) drops its deps and is moved before
/// the data it carries is produced (before its last dep ends). Link instrs
/// name no buffers, so nothing else ties them to that data.
Generator linkEarly(const Index &ix, Unit unit) {
  std::vector<std::pair<size_t, int64_t>> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    int64_t ready = 0;
    for (int32_t d : in.deps)
      ready = std::max(ready, ix.p.instrs[ix.instr.at(d)].end());
    if (in.unit == unit && ready > 0)
      cands.emplace_back(i, ready);
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [i, ready] = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    int64_t start = std::max<int64_t>(
        0, ready - 1 -
               int64_t(rng.below(uint64_t(std::max<int64_t>(1, in.duration)))));
    return Mutation{"link instr " + str(in.id) + " start " + str(in.start) +
                        " -> " + str(start) +
                        " with no deps (its data is "
                        "ready at " +
                        str(ready) + ")",
                    ViolationKind::DataArrival, [i, start](Program &p) {
                      p.instrs[i].deps.clear();
                      p.instrs[i].start = start;
                    }};
  };
}

/// A link instr is pointed at a link of the other kind: a chip-link instr
/// at a mesh link, or a mesh-link instr at a chip link.
Generator linkKind(const Index &ix) {
  std::vector<int32_t> meshLinks, chipLinks;
  for (const ProgramLink &l : ix.p.links)
    (l.chipLink ? chipLinks : meshLinks).push_back(l.id);
  // Chip-link instrs are few beside the mesh-link ones: each kind is drawn
  // half the time.
  std::vector<size_t> chipCands, meshCands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    Unit unit = ix.p.instrs[i].unit;
    if (unit == Unit::ChipLink)
      chipCands.push_back(i);
    else if (unit == Unit::MeshLink)
      meshCands.push_back(i);
  }
  return [&ix, chipCands, meshCands, meshLinks,
          chipLinks](Rng &rng) -> std::optional<Mutation> {
    if (chipLinks.empty())
      return std::nullopt;
    bool chip = rng.below(2) == 0;
    const auto &cands = chip ? chipCands : meshCands;
    if (cands.empty())
      return std::nullopt;
    size_t i = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    const auto &others = in.unit == Unit::ChipLink ? meshLinks : chipLinks;
    if (others.empty())
      return std::nullopt;
    int32_t link = rng.pick(others);
    return Mutation{std::string(unitName(in.unit)) + " instr " + str(in.id) +
                        " resource " + str(in.resource) + " -> " + str(link) +
                        " (a " +
                        (in.unit == Unit::ChipLink ? "mesh" : "chip") +
                        " link)",
                    ViolationKind::ResourceConflict,
                    [i, link](Program &p) { p.instrs[i].resource = link; }};
  };
}


//===----------------------------------------------------------------------===//
// Physics and data flow: the faults a schedule verifier of lists alone
// cannot see.
//===----------------------------------------------------------------------===//

/// An instr of the chosen class (`transfers`: a transfer's DMA or link
/// instr; else a kernel's instr) is given one cycle less than its timing
/// rule (docs/isa.md): work or bytes faster than the hardware moves them.
Generator tooFast(const Index &ix, bool transfers) {
  std::vector<std::pair<size_t, int64_t>> cands;
  std::vector<InstrTiming> rules = instrTimings(ix.p);
  for (size_t i = 0; i < ix.p.instrs.size(); ++i)
    if ((ix.p.instrs[i].kernel < 0) == transfers && rules[i].cycles > 1)
      cands.emplace_back(i, rules[i].cycles);
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [i, rule] = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    int64_t d = rule - 1;
    return Mutation{std::string(unitName(in.unit)) + " instr " + str(in.id) +
                        " duration " + str(in.duration) + " -> " + str(d) +
                        " (its rule gives " + str(rule) + ")",
                    ViolationKind::Timing,
                    [i, d](Program &p) { p.instrs[i].duration = d; }};
  };
}

/// A transfer's DMA instr says it carries fewer bytes than the overlap of
/// the buffer it reads with those it writes (its duration left alone).
Generator fewerBytes(const Index &ix) {
  std::vector<std::pair<size_t, int64_t>> cands;
  std::vector<InstrTiming> rules = instrTimings(ix.p);
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    if (in.kernel < 0 && in.unit == Unit::Dma && rules[i].bytes > 0 &&
        in.duration >= rules[i].cycles)
      cands.emplace_back(i, rules[i].bytes);
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [i, bytes] = rng.pick(cands);
    int64_t b = int64_t(rng.below(uint64_t(bytes)));
    return Mutation{"dma instr " + str(ix.p.instrs[i].id) + " bytes " +
                        str(ix.p.instrs[i].bytes) + " -> " + str(b) +
                        " (its buffers overlap by " + str(bytes) + ")",
                    ViolationKind::Timing,
                    [i, b](Program &p) { p.instrs[i].bytes = b; }};
  };
}

/// Row and column of a system-wide tile on its chip.
std::pair<int64_t, int64_t> rowCol(const Program &p, int64_t t) {
  int64_t local = t % p.tilesPerChip();
  return {local / p.tileCols, local % p.tileCols};
}

/// True if the XY route from tile `a` to tile `b` (one column step at a
/// time to b's column, then row steps) takes the step u -> v. Walks the
/// route cell by cell.
bool walksThrough(const Program &p, int64_t a, int64_t b, int64_t u,
                  int64_t v) {
  if (p.chipOf(a) != p.chipOf(b) || p.chipOf(a) != p.chipOf(u))
    return false;
  auto [r, c] = rowCol(p, a);
  auto [br, bc] = rowCol(p, b);
  auto [ur, uc] = rowCol(p, u);
  auto [vr, vc] = rowCol(p, v);
  while (c != bc || r != br) {
    int64_t nr = r, nc = c;
    if (c != bc)
      nc += bc > c ? 1 : -1;
    else
      nr += br > r ? 1 : -1;
    if (r == ur && c == uc && nr == vr && nc == vc)
      return true;
    r = nr;
    c = nc;
  }
  return false;
}

/// A mesh-link instr that carries bytes is moved to a link of its chip
/// that no route between the buffers it joins takes.
Generator wrongRoute(const Index &ix) {
  std::vector<size_t> cands;
  for (size_t i = 0; i < ix.p.instrs.size(); ++i)
    if (ix.p.instrs[i].unit == Unit::MeshLink && ix.p.instrs[i].bytes > 0)
      cands.push_back(i);
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    size_t i = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    const ProgramLink &l = ix.p.link(in.resource);
    const ProgramLink &to = rng.pick(ix.p.links);
    if (to.chipLink || to.id == l.id || ix.p.chipOf(to.fromTile) !=
                                            ix.p.chipOf(l.fromTile))
      return std::nullopt;
    for (int32_t r : in.reads)
      for (int32_t w : in.writes)
        if (walksThrough(ix.p, ix.p.buffers[ix.buffer.at(r)].tile,
                         ix.p.buffers[ix.buffer.at(w)].tile, to.fromTile,
                         to.toTile))
          return std::nullopt;
    int32_t link = to.id;
    return Mutation{"mesh-link instr " + str(in.id) + " link " +
                        str(in.resource) + " -> " + str(link) +
                        " (off every route it carries)",
                    ViolationKind::Timing,
                    [i, link](Program &p) { p.instrs[i].resource = link; }};
  };
}

/// A kernel's instr loses the read of its first op's first operand (a
/// kernel input: the matmul's A, the convolution's input, ...), while it
/// still writes a box of the kernel's results.
Generator missingOperand(const Index &ix) {
  std::vector<std::pair<size_t, size_t>> cands; // (instr, read position)
  for (size_t i = 0; i < ix.p.instrs.size(); ++i) {
    const ProgramInstr &in = ix.p.instrs[i];
    if (in.kernel < 0 || in.writes.empty())
      continue;
    const ProgramKernel &k = ix.p.kernel(in.kernel);
    if (k.ops.empty() || k.ops.front().inputs.empty())
      continue;
    int32_t first = k.ops.front().inputs.front();
    if (std::find(k.inputs.begin(), k.inputs.end(), first) == k.inputs.end())
      continue;
    for (size_t r = 0; r < in.reads.size(); ++r)
      if (ix.p.buffers[ix.buffer.at(in.reads[r])].tensor == first)
        cands.emplace_back(i, r);
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [i, r] = rng.pick(cands);
    const ProgramInstr &in = ix.p.instrs[i];
    return Mutation{"kernel instr " + str(in.id) + " drops its read of buffer " +
                        str(in.reads[r]),
                    ViolationKind::DataFlow, [i, r](Program &p) {
                      auto &reads = p.instrs[i].reads;
                      reads.erase(reads.begin() + static_cast<long>(r));
                    }};
  };
}

/// A convolution split by output rows holds one input row fewer than its
/// halo needs: the buffer of the conv's input it reads loses its last row,
/// where that row is the last one its output rows need (computed here from
/// the conv's strides, dilations, pads and kernel: a strided convolution
/// may hold a row it does not need, and cutting that is no fault).
Generator missingHalo(const Index &ix) {
  auto attr = [](const ProgramOp &op, const char *name, size_t i,
                 int64_t dflt) {
    auto it = op.attrs.find(name);
    return it != op.attrs.end() && it->second.ints.size() > i
               ? it->second.ints[i]
               : dflt;
  };
  std::vector<size_t> cands; // buffer positions
  for (const ProgramInstr &in : ix.p.instrs) {
    if (in.kernel < 0 || in.writes.empty())
      continue;
    const ProgramKernel &k = ix.p.kernel(in.kernel);
    if (k.decomposition != "conv.out_rows")
      continue;
    // The output rows this instr writes.
    const ProgramBuffer &out = ix.p.buffers[ix.buffer.at(in.writes.front())];
    if (out.boxHi.size() < 3 || out.boxHi[2] <= out.boxLo[2])
      continue;
    for (const ProgramOp &op : k.ops) {
      if (op.name != "conv" || op.inputs.size() < 2)
        continue;
      const Shape &x = ix.p.tensor(op.inputs[0]).shape;
      const Shape &w = ix.p.tensor(op.inputs[1]).shape;
      if (x.size() < 3 || w.size() < 3)
        continue;
      int64_t stride = attr(op, "strides", 0, 1);
      int64_t dilation = attr(op, "dilations", 0, 1);
      int64_t padTop = attr(op, "pads", 0, 0);
      int64_t lastNeeded = (out.boxHi[2] - 1) * stride - padTop +
                           (w[2] - 1) * dilation + 1;
      int64_t neededHi = std::min<int64_t>(x[2], lastNeeded);
      for (int32_t r : in.reads) {
        size_t bp = ix.buffer.at(r);
        const ProgramBuffer &b = ix.p.buffers[bp];
        if (b.tensor == op.inputs.front() && b.boxHi.size() > 2 &&
            b.boxHi[2] == neededHi && b.boxHi[2] - b.boxLo[2] >= 2)
          cands.push_back(bp);
      }
    }
  }
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    size_t bp = rng.pick(cands);
    const ProgramBuffer &b = ix.p.buffers[bp];
    return Mutation{"conv input buffer " + str(b.id) + " rows [" +
                        str(b.boxLo[2]) + ", " + str(b.boxHi[2]) + ") -> [" +
                        str(b.boxLo[2]) + ", " + str(b.boxHi[2] - 1) + ")",
                    ViolationKind::DataFlow,
                    [bp](Program &p) { p.buffers[bp].boxHi[2] -= 1; }};
  };
}

/// A buffer several transfer DMAs fill from disjoint sources (a K split's
/// partial sums arriving from every part, a gathered tensor) loses one of
/// them: that DMA no longer writes it.
Generator missingPart(const Index &ix) {
  auto boxOf = [&ix](const ProgramBuffer &b) {
    return b.boxLo.empty() ? Box::whole(ix.p.tensor(b.tensor).shape)
                           : Box{b.boxLo, b.boxHi};
  };
  std::vector<std::pair<int32_t, size_t>> cands; // (buffer id, writer)
  for (const auto &[buf, writers] : ix.writers) {
    std::vector<size_t> dmas;
    for (size_t w : writers)
      if (ix.p.instrs[w].kernel < 0 && ix.p.instrs[w].unit == Unit::Dma &&
          ix.p.instrs[w].reads.size() == 1)
        dmas.push_back(w);
    if (dmas.size() < 2 || dmas.size() != writers.size() -
                                              std::count_if(writers.begin(),
                                                            writers.end(),
                                                            [&](size_t w) {
                                                              return isLinkUnit(
                                                                  ix.p.instrs[w]
                                                                      .unit);
                                                            }))
      continue;
    const Box want = boxOf(ix.p.buffers[ix.buffer.at(buf)]);
    std::vector<Box> parts;
    for (size_t w : dmas)
      parts.push_back(
          boxOf(ix.p.buffers[ix.buffer.at(ix.p.instrs[w].reads.front())])
              .intersect(want));
    bool disjoint = true;
    for (size_t a = 0; a < parts.size() && disjoint; ++a)
      for (size_t b = a + 1; b < parts.size() && disjoint; ++b)
        disjoint = parts[a].intersect(parts[b]).empty();
    if (!disjoint)
      continue;
    for (size_t a = 0; a < dmas.size(); ++a)
      if (!parts[a].empty())
        cands.emplace_back(buf, dmas[a]);
  }
  std::sort(cands.begin(), cands.end());
  return [&ix, cands](Rng &rng) -> std::optional<Mutation> {
    if (cands.empty())
      return std::nullopt;
    auto [buf, w] = rng.pick(cands);
    return Mutation{"dma instr " + str(ix.p.instrs[w].id) +
                        " no longer writes buffer " + str(buf) +
                        " (one of the parts that fill it)",
                    ViolationKind::DataFlow, [w, buf](Program &p) {
                      auto &writes = p.instrs[w].writes;
                      writes.erase(
                          std::remove(writes.begin(), writes.end(), buf),
                          writes.end());
                    }};
  };
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

/// What a program must offer for a kind to apply; a program that lacks it
/// is not reported as having "no target".
enum class Needs { Nothing, Pipelined, ChipLinks };

struct Kind {
  const char *name;
  Needs needs;
};

const Kind kKinds[] = {
    {"early-start", Needs::Nothing},
    {"overlap-buffers", Needs::Nothing},
    {"double-book-link", Needs::Nothing},
    {"double-book-unit", Needs::Nothing},
    {"drop-dependency", Needs::Nothing},
    {"buffer-past-sram", Needs::Nothing},
    {"shrink-lifetime", Needs::Nothing},
    {"cycle", Needs::Nothing},
    {"shrink-ii", Needs::Pipelined},
    {"too-few-copies", Needs::Pipelined},
    // Gaps of an earlier verifier.
    {"early-read", Needs::Nothing},
    {"wrong-tile", Needs::Nothing},
    {"link-early", Needs::Nothing},
    // Multi-chip programs.
    {"double-book-chip-link", Needs::ChipLinks},
    {"chip-link-early-start", Needs::ChipLinks},
    {"chip-link-early", Needs::ChipLinks},
    {"chip-link-kind", Needs::ChipLinks},
    // Physics and data flow (docs/isa.md).
    {"work-too-fast", Needs::Nothing},
    {"bytes-too-fast", Needs::Nothing},
    {"fewer-bytes", Needs::Nothing},
    {"wrong-route", Needs::Nothing},
    {"missing-operand", Needs::Nothing},
    {"missing-halo", Needs::Nothing},
    {"missing-part", Needs::Nothing},
};
constexpr size_t kNumKinds = sizeof(kKinds) / sizeof(kKinds[0]);

/// Violations gathered per mutant, so that the expected kind shows even
/// when earlier checks report many others.
constexpr size_t kMaxViolations = 5000;

struct Tally {
  int64_t applied = 0, rejected = 0, expected = 0, programs = 0, skipped = 0,
          replayed = 0;
};

/// The hazards the simulator's replay finds in `p` (an error deriving the
/// timing rules stops the simulator too: one hazard).
size_t replayHazards(const Program &p) {
  try {
    std::vector<InstrTiming> rules;
    if (p.chip)
      rules = instrTimings(p);
    return replaySchedule(p, rules).hazards.size();
  } catch (const Error &) {
    return 1;
  }
}

/// Up to `n` distinct mutations from `gen` (deduplicated by description),
/// drawing at most 50 * n + 200 times.
std::vector<Mutation> draw(const Generator &gen, Rng &rng, int64_t n) {
  std::vector<Mutation> out;
  std::set<std::string> seen;
  for (int64_t tries = 0; tries < 50 * n + 200 && int64_t(out.size()) < n;
       ++tries)
    if (std::optional<Mutation> m = gen(rng))
      if (seen.insert(m->what).second)
        out.push_back(std::move(*m));
  return out;
}

std::vector<Mutation> mutationsOf(size_t kind, const Index &ix, Rng &rng,
                                  int64_t n, std::string &note) {
  switch (kind) {
  case 0:
    return draw(earlyStart(ix), rng, n);
  case 1:
    return draw(overlapBuffers(ix), rng, n);
  case 2:
  case 3:
  case 13: {
    Resources r = kind == 2    ? Resources::MeshLinks
                  : kind == 3 ? Resources::TileUnits
                              : Resources::ChipLinks;
    std::vector<Mutation> m = draw(doubleBook(ix, r, true), rng, n);
    if (m.empty()) {
      m = draw(doubleBook(ix, r, false), rng, n);
      if (!m.empty())
        note = "no two overlapping instrs: moved one onto another";
    }
    return m;
  }
  case 4:
    return draw(dropDependency(ix), rng, n);
  case 5:
    return draw(bufferPastSram(ix), rng, n);
  case 6:
    return draw(shrinkLifetime(ix), rng, n);
  case 7:
    return draw(cycle(ix), rng, n);
  case 8:
    return draw(shrinkII(ix), rng, n);
  case 9: {
    std::vector<Mutation> m = draw(tooFewCopies(ix, false), rng, n);
    if (m.empty()) {
      m = draw(tooFewCopies(ix, true), rng, n);
      if (!m.empty())
        note = "no buffer lives longer than the II: extended lifetimes";
    }
    return m;
  }
  case 10:
    return draw(earlyRead(ix), rng, n);
  case 11:
    return draw(wrongTile(ix), rng, n);
  case 12:
    return draw(linkEarly(ix, Unit::MeshLink), rng, n);
  case 14:
    return draw(earlyStart(ix, Unit::ChipLink), rng, n);
  case 15:
    return draw(linkEarly(ix, Unit::ChipLink), rng, n);
  case 16:
    return draw(linkKind(ix), rng, n);
  case 17:
    return draw(tooFast(ix, false), rng, n);
  case 18:
    return draw(tooFast(ix, true), rng, n);
  case 19:
    return draw(fewerBytes(ix), rng, n);
  case 20:
    return draw(wrongRoute(ix), rng, n);
  case 21:
    return draw(missingOperand(ix), rng, n);
  case 22:
    return draw(missingHalo(ix), rng, n);
  case 23:
    return draw(missingPart(ix), rng, n);
  }
  return {};
}

int usage() {
  std::cerr << "usage: loom-verify-mutations [--per-kind N] [--seed S] "
               "[--verbose] PROGRAM.loom...\n";
  return 2;
}

/// What the run found so far.
struct Results {
  Tally tally[kNumKinds];
  int64_t failures = 0, total = 0;
  std::string firstFailure;
  void fail(const std::string &msg) {
    std::cout << "  FAIL: " << msg << "\n";
    if (firstFailure.empty())
      firstFailure = msg;
    ++failures;
  }
};

/// Draws kind `k`'s mutations of `original` (program number `pi`, read
/// from `path`), applies each to a copy and checks the verifier rejects it.
void mutateKind(Results &r, const std::string &path, size_t pi, size_t k,
                const Program &original, const Index &ix, bool hasChipLinks,
                uint64_t seed, int64_t perKind, bool verbose) {
  // One stream per (seed, program, kind): a kind's mutations do not
  // depend on which kinds ran before it.
  std::seed_seq seq{seed, uint64_t(pi), uint64_t(k)};
  std::vector<uint64_t> s(1);
  seq.generate(s.begin(), s.end());
  Rng rng(s[0]);
  std::string note;
  std::vector<Mutation> muts = mutationsOf(k, ix, rng, perKind, note);
  if (muts.empty()) {
    Needs needs = kKinds[k].needs;
    if ((needs != Needs::Pipelined || original.pipelined()) &&
        (needs != Needs::ChipLinks || hasChipLinks)) {
      ++r.tally[k].skipped;
      std::cout << "  " << kKinds[k].name << ": no target in this program\n";
    }
    return;
  }
  ++r.tally[k].programs;
  if (!note.empty())
    std::cout << "  " << kKinds[k].name << ": " << note << "\n";
  for (const Mutation &m : muts) {
    Program mutant = original;
    m.apply(mutant);
    std::vector<Violation> v = verifySchedule(mutant, kMaxViolations);
    ++r.tally[k].applied;
    ++r.total;
    const bool hazard = replayHazards(mutant) > 0;
    r.tally[k].replayed += hazard;
    const std::string kindName = kKinds[k].name;
    if (!hazard &&
        (kindName == "work-too-fast" || kindName == "bytes-too-fast"))
      r.fail(path + ": " + kindName +
             " mutation has no hazard in the replay: " + m.what);
    bool expected = std::any_of(v.begin(), v.end(), [&](const Violation &x) {
      return x.kind == m.expected;
    });
    if (verbose)
      std::cout << "  " << kKinds[k].name << ": " << m.what << ": "
                << (v.empty() ? "ACCEPTED"
                              : std::string("rejected (") +
                                    violationKindName(v.front().kind) + ")")
                << "\n";
    if (v.empty()) {
      r.fail(path + ": " + kKinds[k].name +
             " mutation not rejected: " + m.what);
      continue;
    }
    ++r.tally[k].rejected;
    if (expected) {
      ++r.tally[k].expected;
    } else {
      std::cout << "  " << kKinds[k].name << ": " << m.what << ": rejected as "
                << violationKindName(v.front().kind) << ", not "
                << violationKindName(m.expected) << ": "
                << v.front().message.substr(0, 300) << "\n";
    }
  }
}

/// Prints the table of kinds; returns its totals.
Tally printTally(const Results &r) {
  std::printf("\n%-22s %9s %9s %9s %9s %9s %9s\n", "kind", "programs",
              "applied", "rejected", "expected", "skipped", "replay");
  Tally sum;
  for (size_t k = 0; k < kNumKinds; ++k) {
    const Tally &t = r.tally[k];
    std::printf("%-22s %9lld %9lld %9lld %9lld %9lld %9lld\n", kKinds[k].name,
                (long long)t.programs, (long long)t.applied,
                (long long)t.rejected, (long long)t.expected,
                (long long)t.skipped, (long long)t.replayed);
    sum.replayed += t.replayed;
    sum.applied += t.applied;
    sum.rejected += t.rejected;
    sum.expected += t.expected;
  }
  std::printf("%-22s %9s %9lld %9lld %9lld %9s %9lld\n\n", "total", "",
              (long long)sum.applied, (long long)sum.rejected,
              (long long)sum.expected, "", (long long)sum.replayed);
  return sum;
}

} // namespace

int main(int argc, char **argv) {
  int64_t perKind = 20;
  uint64_t seed = 1;
  bool verbose = false;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](const std::string &flag) -> std::optional<std::string> {
      if (a == flag && i + 1 < argc)
        return std::string(argv[++i]);
      if (a.rfind(flag + "=", 0) == 0)
        return a.substr(flag.size() + 1);
      return std::nullopt;
    };
    if (auto v = value("--per-kind"))
      perKind = std::strtoll(v->c_str(), nullptr, 10);
    else if (auto v = value("--seed"))
      seed = std::strtoull(v->c_str(), nullptr, 10);
    else if (a == "--verbose")
      verbose = true;
    else if (a == "-h" || a == "--help")
      return usage(), 0;
    else if (!a.empty() && a[0] == '-')
      return usage();
    else
      paths.push_back(a);
  }
  if (paths.empty() || perKind < 1)
    return usage();

  Results r;
  for (size_t pi = 0; pi < paths.size(); ++pi) {
    Program original;
    try {
      original = Program::load(paths[pi]);
    } catch (const std::exception &e) {
      std::cout << "loom-verify-mutations: " << e.what() << "\n";
      return 1;
    }
    bool hasChipLinks =
        std::any_of(original.links.begin(), original.links.end(),
                    [](const ProgramLink &l) { return l.chipLink; });
    std::cout << paths[pi] << ": " << original.mapping << ", "
              << (original.chips > 1
                      ? std::to_string(original.chips) + " chips, "
                      : std::string())
              << original.instrs.size() << " instrs, "
              << original.buffers.size() << " buffers, "
              << original.links.size() << " links, II "
              << original.initiationInterval << " of " << original.totalCycles
              << " cycles" << (original.pipelined() ? " (pipelined)" : "")
              << "\n";
    std::vector<Violation> clean = verifySchedule(original, 10);
    if (!clean.empty()) {
      for (const Violation &v : clean)
        std::cout << "  unmutated: " << violationKindName(v.kind) << ": "
                  << v.message << "\n";
      r.fail(paths[pi] + ": the unmutated program fails the verifier");
      continue;
    }
    if (size_t n = replayHazards(original)) {
      r.fail(paths[pi] + ": the unmutated program has " + std::to_string(n) +
             " hazards in the replay");
      continue;
    }
    Index ix(original);
    for (size_t k = 0; k < kNumKinds; ++k)
      mutateKind(r, paths[pi], pi, k, original, ix, hasChipLinks, seed, perKind,
                 verbose);
  }

  Tally sum = printTally(r);

  if (r.failures) {
    std::cout << "loom-verify-mutations: FAIL: " << r.failures
              << " failure(s); first: " << r.firstFailure << "\n";
    return 1;
  }
  std::cout << r.total << " mutations over " << paths.size()
            << " programs: all rejected";
  if (sum.expected != sum.rejected)
    std::cout << " (" << sum.rejected - sum.expected
              << " with another kind than expected)";
  std::cout << "\n";
  return 0;
}
