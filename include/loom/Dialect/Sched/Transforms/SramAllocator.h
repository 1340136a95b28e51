//===- SramAllocator.h - Best-fit offsets over buffer lifetimes -*- C++ -*-===//
//
// Plain C++ (no MLIR): assigns each buffer of one tile an SRAM offset so that
// no two buffers whose lifetimes overlap share a byte. Buffers are placed
// largest first (then earliest, then in order given); each goes into the
// smallest gap between the buffers already placed that overlap it in time
// and still fits it (best fit), or above them all when no gap does. The
// result's peak is compared with the lower bound, the most bytes live at
// once, which no allocator can beat.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_SCHED_TRANSFORMS_SRAMALLOCATOR_H
#define LOOM_DIALECT_SCHED_TRANSFORMS_SRAMALLOCATOR_H

#include <cstdint>
#include <optional>
#include <vector>

namespace loom::sched {

/// A buffer of `size` bytes live over cycles [start, end).
///
/// In a software-pipelined schedule (a `period` > 0 given to the functions
/// below: a new input every `period` cycles) a buffer holds `copies` slots
/// of `size` bytes, used by the iterations in turn, and its footprint
/// (copies * size bytes) is taken over [start, end) modulo the period:
/// always, if that spans a whole period, or if the buffer is `resident` (a
/// weight, shared by every iteration).
struct BufferLifetime {
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t copies = 1;
  bool resident = false;

  int64_t footprint() const { return size * copies; }
};

struct SramAllocation {
  /// One offset per buffer, in the order given.
  std::vector<int64_t> offsets;
  /// The highest byte used: max(offset + size).
  int64_t peakBytes = 0;
  /// The most bytes live at once (a lower bound on any allocation's peak).
  int64_t lowerBoundBytes = 0;
};

/// Assigns best-fit offsets, each a multiple of `alignment`.
SramAllocation assignSramOffsets(const std::vector<BufferLifetime> &buffers,
                                 int64_t alignment = 1, int64_t period = 0);

/// The most bytes live at once. Lifetimes are half-open: a buffer that ends
/// at cycle t and one that starts at t are never live together.
int64_t maxLiveBytes(const std::vector<BufferLifetime> &buffers,
                     int64_t period = 0);

/// Where the live bytes first exceed `capacity`: the buffer whose start
/// pushed them over, the cycle, and the bytes live just after it started.
struct SramOverflow {
  size_t buffer = 0;
  int64_t cycle = 0;
  int64_t liveBytes = 0;
};
/// Scans the lifetimes in time order (at equal times, ends before starts,
/// then starts in the order given). std::nullopt if the live bytes never
/// exceed `capacity`.
std::optional<SramOverflow>
findFirstOverflow(const std::vector<BufferLifetime> &buffers, int64_t capacity,
                  int64_t period = 0);

} // namespace loom::sched

#endif // LOOM_DIALECT_SCHED_TRANSFORMS_SRAMALLOCATOR_H
