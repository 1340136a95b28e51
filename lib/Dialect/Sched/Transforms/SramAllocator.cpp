//===- SramAllocator.cpp - Best-fit offsets over buffer lifetimes ---------===//
#include "loom/Dialect/Sched/Transforms/SramAllocator.h"

#include <algorithm>
#include <numeric>
#include <tuple>

namespace loom::sched {

namespace {
bool overlapInTime(const BufferLifetime &a, const BufferLifetime &b) {
  return a.start < b.end && b.start < a.end;
}

int64_t alignUp(int64_t v, int64_t alignment) {
  return (v + alignment - 1) / alignment * alignment;
}

/// Lifetime events: (cycle, 0 for an end / 1 for a start, buffer index).
std::vector<std::tuple<int64_t, int, size_t>>
events(const std::vector<BufferLifetime> &buffers) {
  std::vector<std::tuple<int64_t, int, size_t>> ev;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i].size <= 0 || buffers[i].end <= buffers[i].start)
      continue;
    ev.emplace_back(buffers[i].start, 1, i);
    ev.emplace_back(buffers[i].end, 0, i);
  }
  std::sort(ev.begin(), ev.end());
  return ev;
}
} // namespace

SramAllocation assignSramOffsets(const std::vector<BufferLifetime> &buffers,
                                 int64_t alignment) {
  alignment = std::max<int64_t>(alignment, 1);
  SramAllocation result;
  result.offsets.assign(buffers.size(), 0);
  std::vector<size_t> order(buffers.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (buffers[a].size != buffers[b].size)
      return buffers[a].size > buffers[b].size;
    return buffers[a].start < buffers[b].start;
  });

  std::vector<size_t> placed;
  for (size_t i : order) {
    const BufferLifetime &buf = buffers[i];
    if (buf.size <= 0 || buf.end <= buf.start)
      continue;
    // The address ranges taken, over this buffer's lifetime.
    std::vector<std::pair<int64_t, int64_t>> taken;
    for (size_t j : placed)
      if (overlapInTime(buf, buffers[j]))
        taken.push_back(
            {result.offsets[j], result.offsets[j] + buffers[j].size});
    std::sort(taken.begin(), taken.end());
    int64_t bestOffset = -1, bestGap = 0;
    int64_t cursor = 0;
    for (const auto &[lo, hi] : taken) {
      int64_t at = alignUp(cursor, alignment);
      if (lo - at >= buf.size && (bestOffset < 0 || lo - at < bestGap)) {
        bestOffset = at;
        bestGap = lo - at;
      }
      cursor = std::max(cursor, hi);
    }
    if (bestOffset < 0)
      bestOffset = alignUp(cursor, alignment);
    result.offsets[i] = bestOffset;
    result.peakBytes = std::max(result.peakBytes, bestOffset + buf.size);
    placed.push_back(i);
  }
  result.lowerBoundBytes = maxLiveBytes(buffers);
  return result;
}

int64_t maxLiveBytes(const std::vector<BufferLifetime> &buffers) {
  int64_t live = 0, peak = 0;
  for (const auto &[cycle, isStart, i] : events(buffers)) {
    live += isStart ? buffers[i].size : -buffers[i].size;
    peak = std::max(peak, live);
  }
  return peak;
}

std::optional<SramOverflow>
findFirstOverflow(const std::vector<BufferLifetime> &buffers,
                  int64_t capacity) {
  int64_t live = 0;
  for (const auto &[cycle, isStart, i] : events(buffers)) {
    live += isStart ? buffers[i].size : -buffers[i].size;
    if (isStart && live > capacity)
      return SramOverflow{i, cycle, live};
  }
  return std::nullopt;
}

} // namespace loom::sched
