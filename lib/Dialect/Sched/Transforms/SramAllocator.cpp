//===- SramAllocator.cpp - Best-fit offsets over buffer lifetimes ---------===//
#include "loom/Dialect/Sched/Transforms/SramAllocator.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <tuple>

namespace loom::sched {

namespace {
/// Where a buffer's footprint is taken: at most two [lo, hi) pieces of the
/// line, or of the circle of `period` cycles when pipelined. Held inline:
/// the allocator compares every pair of a tile's buffers.
struct Occupancy {
  int count = 0;
  std::array<std::pair<int64_t, int64_t>, 2> piece{};
  void add(int64_t lo, int64_t hi) { piece[count++] = {lo, hi}; }
  const std::pair<int64_t, int64_t> *begin() const { return piece.data(); }
  const std::pair<int64_t, int64_t> *end() const {
    return piece.data() + count;
  }
  bool empty() const { return count == 0; }
};

Occupancy occupancy(const BufferLifetime &b, int64_t period) {
  Occupancy o;
  if (b.size <= 0)
    return o;
  if (period <= 0) {
    if (b.end > b.start)
      o.add(b.start, b.end);
    return o;
  }
  if (b.resident || b.end - b.start >= period) {
    o.add(0, period);
    return o;
  }
  if (b.end <= b.start)
    return o;
  int64_t lo = b.start % period;
  if (lo < 0)
    lo += period;
  int64_t hi = lo + (b.end - b.start);
  if (hi <= period) {
    o.add(lo, hi);
    return o;
  }
  o.add(lo, period);
  o.add(0, hi - period);
  return o;
}

bool overlapInTime(const Occupancy &a, const Occupancy &b) {
  for (auto [alo, ahi] : a)
    for (auto [blo, bhi] : b)
      if (alo < bhi && blo < ahi)
        return true;
  return false;
}

int64_t alignUp(int64_t v, int64_t alignment) {
  return (v + alignment - 1) / alignment * alignment;
}

/// Lifetime events: (cycle, 0 for an end / 1 for a start, buffer index).
std::vector<std::tuple<int64_t, int, size_t>>
events(const std::vector<BufferLifetime> &buffers, int64_t period) {
  std::vector<std::tuple<int64_t, int, size_t>> ev;
  for (size_t i = 0; i < buffers.size(); ++i) {
    for (auto [lo, hi] : occupancy(buffers[i], period)) {
      ev.emplace_back(lo, 1, i);
      ev.emplace_back(hi, 0, i);
    }
  }
  std::sort(ev.begin(), ev.end());
  return ev;
}
} // namespace

SramAllocation assignSramOffsets(const std::vector<BufferLifetime> &buffers,
                                 int64_t alignment, int64_t period) {
  alignment = std::max<int64_t>(alignment, 1);
  SramAllocation result;
  result.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].footprint() != buffers[b].footprint())
      return buffers[a].footprint() > buffers[b].footprint();
    return buffers[a].start < buffers[b].start;
  });

  std::vector<Occupancy> when(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i)
    when[i] = occupancy(buffers[i], period);
  std::vector<size_t> placed;
  std::vector<std::pair<int64_t, int64_t>> taken;
  for (size_t i : order) {
    const BufferLifetime &buf = buffers[i];
    if (when[i].empty())
      continue;
    // The address ranges taken, over this buffer's lifetime.
    taken.clear();
    for (size_t j : placed)
      if (overlapInTime(when[i], when[j]))
        taken.push_back(
            {result.offsets[j], result.offsets[j] + buffers[j].footprint()});
    std::sort(taken.begin(), taken.end());
    int64_t bestOffset = -1, bestGap = 0;
    int64_t cursor = 0;
    for (const auto &[lo, hi] : taken) {
      int64_t at = alignUp(cursor, alignment);
      if (lo - at >= buf.footprint() &&
          (bestOffset < 0 || lo - at < bestGap)) {
        bestOffset = at;
        bestGap = lo - at;
      }
      cursor = std::max(cursor, hi);
    }
    if (bestOffset < 0)
      bestOffset = alignUp(cursor, alignment);
    result.offsets[i] = bestOffset;
    result.peakBytes =
        std::max(result.peakBytes, bestOffset + buf.footprint());
    placed.push_back(i);
  }
  result.lowerBoundBytes = maxLiveBytes(buffers, period);
  return result;
}

int64_t maxLiveBytes(const std::vector<BufferLifetime> &buffers,
                     int64_t period) {
  int64_t live = 0, peak = 0;
  for (const auto &[cycle, isStart, i] : events(buffers, period)) {
    live += isStart ? buffers[i].footprint() : -buffers[i].footprint();
    peak = std::max(peak, live);
  }
  return peak;
}

std::optional<SramOverflow>
findFirstOverflow(const std::vector<BufferLifetime> &buffers,
                  int64_t capacity, int64_t period) {
  int64_t live = 0;
  for (const auto &[cycle, isStart, i] : events(buffers, period)) {
    live += isStart ? buffers[i].footprint() : -buffers[i].footprint();
    if (isStart && live > capacity)
      return SramOverflow{i, cycle, live};
  }
  return std::nullopt;
}

} // namespace loom::sched
