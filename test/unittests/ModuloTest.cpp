//===- ModuloTest.cpp - Modulo reservation, scheduling and SRAM -----------===//
//
// The software-pipelining side of the scheduler's core: busy cycles on a
// circle of `period` cycles (ModuloReservationTable), tasks placed so that
// consecutive inputs never collide (ModuloScheduler), the resource-bound
// initiation interval (resourceMinII), and SRAM offsets, peaks and overflow
// with lifetimes taken modulo the period (SramAllocator.h).
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Sched/Transforms/ReservationTable.h"
#include "loom/Dialect/Sched/Transforms/SramAllocator.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

using namespace loom::sched;

namespace {

using Intervals = std::map<int64_t, int64_t>;

/// [start, start + duration) on the circle of `period` cycles, as cycles.
std::vector<bool> cyclesOf(int64_t start, int64_t duration, int64_t period) {
  std::vector<bool> busy(static_cast<size_t>(period), false);
  for (int64_t t = start; t < start + duration; ++t)
    busy[static_cast<size_t>(((t % period) + period) % period)] = true;
  return busy;
}

/// True if the two buffers hold bytes at a common cycle modulo `period` (a
/// resident one, or one living a whole period, holds them always).
bool liveTogether(const BufferLifetime &a, const BufferLifetime &b,
                  int64_t period) {
  auto live = [&](const BufferLifetime &x) {
    if (x.size <= 0)
      return std::vector<bool>(static_cast<size_t>(period), false);
    if (x.resident || x.end - x.start >= period)
      return std::vector<bool>(static_cast<size_t>(period), true);
    if (x.end <= x.start)
      return std::vector<bool>(static_cast<size_t>(period), false);
    return cyclesOf(x.start, x.end - x.start, period);
  };
  std::vector<bool> la = live(a), lb = live(b);
  for (size_t t = 0; t < la.size(); ++t)
    if (la[t] && lb[t])
      return true;
  return false;
}

} // namespace

//===----------------------------------------------------------------------===//
// ModuloReservationTable
//===----------------------------------------------------------------------===//

TEST(ModuloReservationTable, IntervalsWrapAroundThePeriod) {
  ModuloReservationTable t(10);
  ASSERT_TRUE(t.reserve(8, 4)); // [8, 12) = [8, 10) + [0, 2)
  EXPECT_EQ(t.intervals(), (Intervals{{0, 2}, {8, 10}}));
  EXPECT_EQ(t.busyCycles(), 4);
  EXPECT_FALSE(t.isFree(0, 1));
  EXPECT_FALSE(t.isFree(1, 1));
  EXPECT_FALSE(t.isFree(9, 1));
  EXPECT_FALSE(t.isFree(18, 1)); // 18 = 8 modulo 10
  EXPECT_FALSE(t.isFree(-2, 1)); // -2 = 8 modulo 10
  EXPECT_FALSE(t.isFree(7, 2));  // [7, 9) meets [8, 10)
  EXPECT_FALSE(t.isFree(2, 7));  // [2, 9) likewise
  EXPECT_TRUE(t.isFree(2, 6));   // [2, 8): the whole gap
  EXPECT_TRUE(t.isFree(12, 6));  // the same, one period later
  EXPECT_TRUE(t.isFree(5, 0));   // empty
  ASSERT_TRUE(t.reserve(22, 6)); // fills the gap: the circle is full
  EXPECT_EQ(t.intervals(), (Intervals{{0, 10}}));
  EXPECT_EQ(t.busyCycles(), 10);
}

TEST(ModuloReservationTable, EarliestFreeSearchesOnePeriod) {
  ModuloReservationTable t(10);
  ASSERT_TRUE(t.reserve(0, 7)); // the free cycles: [7, 10)
  EXPECT_EQ(t.earliestFree(0, 3), 7);
  EXPECT_EQ(t.earliestFree(7, 3), 7);
  EXPECT_EQ(t.earliestFree(9, 1), 9);
  EXPECT_EQ(t.earliestFree(12, 3), 17); // [12, 15) is busy; next gap at 17
  EXPECT_EQ(t.earliestFree(8, 3), 17);  // [8, 11) wraps into busy cycle 0
  EXPECT_EQ(t.earliestFree(5, 0), 5);
  // 4 cycles fit nowhere on the circle, at any start.
  EXPECT_EQ(t.earliestFree(0, 4), std::nullopt);
  EXPECT_EQ(t.earliestFree(123, 4), std::nullopt);
}

// earliestFree walks the busy intervals' ends around the circle from
// `from` without sorting them; against a scan of every start of one period,
// on random tables (an interval that ends at the period, from's position
// at, before and past each end, negative starts).
TEST(ModuloReservationTable, EarliestFreeIsTheFirstFreeStartOfAPeriod) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t period = 1 + int64_t(rng() % 24);
    ModuloReservationTable t(period);
    std::vector<bool> busy(static_cast<size_t>(period), false);
    for (int k = int(rng() % 6); k > 0; --k) {
      int64_t start = int64_t(rng() % (3 * period)) - period;
      int64_t duration = int64_t(rng() % (period / 2 + 1));
      if (t.reserve(start, duration)) {
        std::vector<bool> c = cyclesOf(start, duration, period);
        for (size_t i = 0; i < c.size(); ++i)
          busy[i] = busy[i] || c[i];
      }
    }
    for (int q = 0; q < 8; ++q) {
      int64_t from = int64_t(rng() % (4 * period)) - 2 * period;
      int64_t duration = int64_t(rng() % (period + 2));
      std::optional<int64_t> want;
      if (duration == 0)
        want = from;
      for (int64_t s = from; !want && duration <= period && s < from + period;
           ++s) {
        std::vector<bool> c = cyclesOf(s, duration, period);
        bool free = true;
        for (size_t i = 0; i < c.size(); ++i)
          free = free && !(c[i] && busy[i]);
        if (free)
          want = s;
      }
      EXPECT_EQ(t.earliestFree(from, duration), want)
          << "period " << period << ", from " << from << ", duration "
          << duration << ", trial " << trial;
    }
  }
}

// gapBefore against the distance back to every end, on random tables.
TEST(ModuloReservationTable, GapBeforeIsTheNearestEndBehind) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 2000; ++trial) {
    const int64_t period = 1 + int64_t(rng() % 24);
    ModuloReservationTable t(period);
    for (int k = int(rng() % 6); k > 0; --k)
      (void)t.reserve(int64_t(rng() % (3 * period)) - period,
                      int64_t(rng() % (period / 2 + 1)));
    for (int64_t start = -period; start < 2 * period; ++start) {
      int64_t pos = ((start % period) + period) % period, want = -1;
      for (const auto &[s, e] : t.intervals()) {
        int64_t gap = ((pos - e) % period + period) % period;
        if (want < 0 || gap < want)
          want = gap;
      }
      EXPECT_EQ(t.gapBefore(start), want < 0 ? 0 : want)
          << "period " << period << ", start " << start;
    }
  }
}

TEST(ModuloReservationTable, EarliestFreeFindsAGapAcrossTheWrap) {
  ModuloReservationTable t(10);
  ASSERT_TRUE(t.reserve(2, 6)); // free: [8, 10) + [0, 2), 4 cycles
  EXPECT_EQ(t.earliestFree(3, 4), 8);
  EXPECT_EQ(t.earliestFree(0, 2), 0);
  EXPECT_EQ(t.earliestFree(1, 2), 8);
  EXPECT_EQ(t.earliestFree(3, 5), std::nullopt);
}

TEST(ModuloReservationTable, ReserveRefusesOverlaps) {
  ModuloReservationTable t(10);
  ASSERT_TRUE(t.reserve(0, 5));
  EXPECT_FALSE(t.reserve(13, 3)); // [3, 6) modulo 10
  EXPECT_FALSE(t.reserve(9, 2));  // [9, 10) + [0, 1)
  EXPECT_EQ(t.intervals(), (Intervals{{0, 5}}));
  EXPECT_EQ(t.busyCycles(), 5);
  EXPECT_TRUE(t.reserve(15, 5)); // [5, 10): touches, merges
  EXPECT_EQ(t.intervals(), (Intervals{{0, 10}}));
  for (int64_t c = 0; c < 10; ++c)
    EXPECT_FALSE(t.isFree(c, 1)) << "cycle " << c;
  EXPECT_TRUE(t.reserve(27, 0)); // an empty interval always fits
  EXPECT_EQ(t.busyCycles(), 10);
}

TEST(ModuloReservationTable, DurationsLongerThanThePeriod) {
  ModuloReservationTable t(10);
  // Longer than the period: it would overlap itself in the next input.
  EXPECT_FALSE(t.isFree(0, 11));
  EXPECT_FALSE(t.reserve(0, 11));
  EXPECT_EQ(t.busyCycles(), 0);
  EXPECT_EQ(t.earliestFree(0, 11), std::nullopt);
  // Exactly the period fits an empty table, from any start, and fills it.
  EXPECT_TRUE(t.isFree(3, 10));
  ASSERT_TRUE(t.reserve(3, 10));
  EXPECT_EQ(t.intervals(), (Intervals{{0, 10}}));
  EXPECT_EQ(t.busyCycles(), 10);
  EXPECT_FALSE(t.isFree(7, 1));
}

//===----------------------------------------------------------------------===//
// ModuloScheduler
//===----------------------------------------------------------------------===//

TEST(ModuloScheduler, ChainOnOneResourcePacksAtThePeriod) {
  // 4 + 3 + 3 cycles on one resource at period 10: exactly full.
  ModuloScheduler s(1, 10);
  EXPECT_EQ(s.period(), 10);
  std::optional<int64_t> a = s.addTask({{0, 4}}, {});
  ASSERT_TRUE(a);
  std::optional<int64_t> b = s.addTask({{0, 3}}, {*a});
  ASSERT_TRUE(b);
  std::optional<int64_t> c = s.addTask({{0, 3}}, {*b});
  ASSERT_TRUE(c);
  EXPECT_EQ(s.start(*a), 0);
  EXPECT_EQ(s.start(*b), 4);
  EXPECT_EQ(s.start(*c), 7);
  EXPECT_EQ(s.end(*c), 10);
  EXPECT_EQ(s.makespan(), 10);
  // Nothing more fits, however short.
  EXPECT_EQ(s.addTask({{0, 1}}, {}), std::nullopt);
  EXPECT_EQ(s.makespan(), 10);
  // One cycle less and the chain does not fit: resourceMinII is 10.
  EXPECT_EQ(resourceMinII(1, {{{0, 4}}, {{0, 3}}, {{0, 3}}}), 10);
  ModuloScheduler tight(1, 9);
  ASSERT_TRUE(tight.addTask({{0, 4}}, {}));
  ASSERT_TRUE(tight.addTask({{0, 3}}, {0}));
  EXPECT_EQ(tight.addTask({{0, 3}}, {1}), std::nullopt);
}

TEST(ModuloScheduler, TasksWrapAroundThePeriod) {
  ModuloScheduler s(2, 10);
  std::optional<int64_t> a = s.addTask({{0, 6}}, {});
  ASSERT_TRUE(a);
  // After a: [6, 14) on resource 1, i.e. [6, 10) + [0, 4) modulo 10.
  std::optional<int64_t> b = s.addTask({{1, 8}}, {*a});
  ASSERT_TRUE(b);
  EXPECT_EQ(s.start(*b), 6);
  EXPECT_EQ(s.end(*b), 14);
  EXPECT_EQ(s.makespan(), 14);
  // An independent 2-cycle task on resource 1 goes in the gap [4, 6).
  std::optional<int64_t> c = s.addTask({{1, 2}}, {});
  ASSERT_TRUE(c);
  EXPECT_EQ(s.start(*c), 4);
  // Resource 1 is now full.
  EXPECT_EQ(s.addTask({{1, 1}}, {}), std::nullopt);
  // Resource 0 still has [6, 10).
  std::optional<int64_t> d = s.addTask({{0, 4}}, {});
  ASSERT_TRUE(d);
  EXPECT_EQ(s.start(*d), 6);
}

TEST(ModuloScheduler, PartsStartTogetherAndPackTheMainResource) {
  ModuloScheduler s(2, 10);
  ASSERT_TRUE(s.addTask({{0, 5}}, {}));
  // Both parts wait for resource 0: start 5 on both.
  std::optional<int64_t> b = s.addTask({{0, 3}, {1, 3}}, {});
  ASSERT_TRUE(b);
  EXPECT_EQ(s.start(*b), 5);
  EXPECT_EQ(s.end(*b), 8);
  // Resource 1 is free at 0, but that leaves a 2-cycle gap before it
  // (after [5, 8)); within the slack of a period the scheduler takes 8,
  // which leaves none.
  std::optional<int64_t> c = s.addTask({{1, 3}}, {});
  ASSERT_TRUE(c);
  EXPECT_EQ(s.start(*c), 8);
  // Without slack it takes the earliest start.
  ModuloScheduler first(2, 10, /*slack=*/0.0);
  ASSERT_TRUE(first.addTask({{0, 5}}, {}));
  ASSERT_TRUE(first.addTask({{0, 3}, {1, 3}}, {}));
  std::optional<int64_t> e = first.addTask({{1, 3}}, {});
  ASSERT_TRUE(e);
  EXPECT_EQ(first.start(*e), 0);
}

TEST(ModuloScheduler, PeriodTooSmall) {
  ModuloScheduler s(1, 5);
  EXPECT_EQ(s.addTask({{0, 6}}, {}), std::nullopt);
  // Nothing was reserved: a task of the whole period still fits.
  std::optional<int64_t> a = s.addTask({{0, 5}}, {});
  ASSERT_TRUE(a);
  EXPECT_EQ(s.start(*a), 0);
  ModuloScheduler t(1, 10);
  ASSERT_TRUE(t.addTask({{0, 6}}, {}));
  EXPECT_EQ(t.addTask({{0, 5}}, {}), std::nullopt);
  std::optional<int64_t> c = t.addTask({{0, 4}}, {});
  ASSERT_TRUE(c);
  EXPECT_EQ(t.start(*c), 6);
}

TEST(ModuloScheduler, RandomTasksNeverCollideModuloThePeriod) {
  std::mt19937 rng(7);
  for (int round = 0; round < 50; ++round) {
    const int64_t period = 8 + rng() % 25, numResources = 3;
    ModuloScheduler s(numResources, period);
    // (task, part) placed, per resource.
    std::vector<std::vector<std::pair<int64_t, int64_t>>> placed(numResources);
    std::vector<std::vector<int64_t>> depsOf;
    int64_t added = 0;
    for (int i = 0; i < 12; ++i) {
      std::vector<TaskPart> parts;
      for (int64_t r = 0; r < numResources; ++r)
        if (rng() % 2)
          parts.push_back({r, int64_t(1 + rng() % (period / 2))});
      std::vector<int64_t> deps;
      for (int64_t d = 0; d < added; ++d)
        if (rng() % 4 == 0)
          deps.push_back(d);
      std::optional<int64_t> id = s.addTask(parts, deps);
      if (!id)
        continue;
      ASSERT_EQ(*id, added);
      ++added;
      for (int64_t d : deps)
        EXPECT_GE(s.start(*id), s.end(d)) << "round " << round;
      int64_t longest = 0;
      for (const TaskPart &p : parts) {
        placed[p.resource].push_back({s.start(*id), p.duration});
        longest = std::max(longest, p.duration);
      }
      EXPECT_EQ(s.end(*id), s.start(*id) + longest);
    }
    EXPECT_GT(added, 0);
    for (int64_t r = 0; r < numResources; ++r) {
      std::vector<int> users(static_cast<size_t>(period), 0);
      for (auto [start, duration] : placed[r]) {
        std::vector<bool> c = cyclesOf(start, duration, period);
        for (int64_t t = 0; t < period; ++t)
          users[t] += c[t];
      }
      for (int64_t t = 0; t < period; ++t)
        EXPECT_LE(users[t], 1) << "round " << round << ", resource " << r
                               << ", cycle " << t << " modulo " << period;
    }
  }
}

TEST(ModuloScheduler, ResourceMinII) {
  // Resource 0 is busy 3 + 4 cycles per input, resource 1 2 + 1.
  EXPECT_EQ(resourceMinII(2, {{{0, 3}, {1, 2}}, {{0, 4}}, {{1, 1}}}), 7);
  // A single long part bounds it too.
  EXPECT_EQ(resourceMinII(2, {{{1, 9}}, {{0, 2}}}), 9);
  // Spread over resources: the busiest one.
  EXPECT_EQ(resourceMinII(3, {{{0, 2}}, {{1, 2}}, {{2, 2}}, {{2, 1}}}), 3);
  // At least 1.
  EXPECT_EQ(resourceMinII(1, {}), 1);
  EXPECT_EQ(resourceMinII(1, {{{0, 0}}}), 1);
}

//===----------------------------------------------------------------------===//
// SRAM allocation with a period
//===----------------------------------------------------------------------===//

TEST(ModuloSram, DisjointLinearlyButOverlappingModuloThePeriod) {
  // [0, 6) and [12, 18): disjoint in one input, but [12, 18) is [2, 8)
  // modulo 10, and the next input's first buffer is live then.
  std::vector<BufferLifetime> b = {{100, 0, 6}, {100, 12, 18}};
  SramAllocation linear = assignSramOffsets(b);
  EXPECT_EQ(linear.offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(linear.peakBytes, 100);
  SramAllocation modulo = assignSramOffsets(b, 1, 10);
  EXPECT_EQ(modulo.offsets, (std::vector<int64_t>{0, 100}));
  EXPECT_EQ(modulo.peakBytes, 200);
  EXPECT_EQ(modulo.lowerBoundBytes, 200);
  EXPECT_EQ(maxLiveBytes(b), 100);
  EXPECT_EQ(maxLiveBytes(b, 10), 200);
  // [0, 5) and [15, 20) = [5, 10) modulo 10: disjoint either way.
  std::vector<BufferLifetime> c = {{100, 0, 5}, {100, 15, 20}};
  EXPECT_EQ(assignSramOffsets(c, 1, 10).offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(maxLiveBytes(c, 10), 100);
}

TEST(ModuloSram, LifetimesWrapAroundThePeriod) {
  // A lives [8, 13) = [8, 10) + [0, 3) modulo 10: it meets B ([1, 2)) but
  // not C ([4, 7)). Placed by start (equal sizes): B, C, then A.
  std::vector<BufferLifetime> b = {{100, 8, 13}, {100, 1, 2}, {100, 4, 7}};
  SramAllocation a = assignSramOffsets(b, 1, 10);
  EXPECT_EQ(a.offsets, (std::vector<int64_t>{100, 0, 0}));
  EXPECT_EQ(a.peakBytes, 200);
  EXPECT_EQ(a.lowerBoundBytes, 200);
  // A lifetime of a whole period (or more) is live always.
  std::vector<BufferLifetime> c = {{10, 0, 10}, {10, 10, 12}};
  EXPECT_EQ(assignSramOffsets(c).offsets, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(assignSramOffsets(c, 1, 10).offsets, (std::vector<int64_t>{0, 10}));
}

TEST(ModuloSram, ResidentBuffersConflictWithEverything) {
  // A weight live [0, 1) and a buffer live [5, 6): disjoint, but a resident
  // buffer is shared by every input and live always.
  std::vector<BufferLifetime> b = {{50, 0, 1, 1, true}, {50, 5, 6}};
  SramAllocation a = assignSramOffsets(b, 1, 10);
  EXPECT_EQ(a.offsets, (std::vector<int64_t>{0, 50}));
  EXPECT_EQ(a.peakBytes, 100);
  EXPECT_EQ(maxLiveBytes(b, 10), 100);
  // Not resident: they share.
  b[0].resident = false;
  EXPECT_EQ(assignSramOffsets(b, 1, 10).offsets, (std::vector<int64_t>{0, 0}));
  // Without a period (not pipelined), residency is not special.
  b[0].resident = true;
  EXPECT_EQ(assignSramOffsets(b).offsets, (std::vector<int64_t>{0, 0}));
}

TEST(ModuloSram, CopiesMultiplyTheFootprint) {
  // A rotates over 2 copies of 100 bytes (it lives 15 cycles at period 10).
  std::vector<BufferLifetime> b = {{100, 0, 15, 2}, {50, 0, 5}};
  EXPECT_EQ(b[0].footprint(), 200);
  SramAllocation a = assignSramOffsets(b, 1, 10);
  EXPECT_EQ(a.offsets, (std::vector<int64_t>{0, 200}));
  EXPECT_EQ(a.peakBytes, 250);
  EXPECT_EQ(a.lowerBoundBytes, 250);
  // Aligned to 64 bytes: B goes to 256.
  SramAllocation aligned = assignSramOffsets(b, 64, 10);
  EXPECT_EQ(aligned.offsets, (std::vector<int64_t>{0, 256}));
  EXPECT_EQ(aligned.peakBytes, 306);
}

TEST(ModuloSram, FirstOverflowModuloThePeriod) {
  std::vector<BufferLifetime> b = {{100, 0, 6}, {100, 12, 18}};
  EXPECT_EQ(findFirstOverflow(b, 150), std::nullopt);
  std::optional<SramOverflow> o = findFirstOverflow(b, 150, 10);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->buffer, 1u);
  EXPECT_EQ(o->cycle, 2); // 12 modulo 10
  EXPECT_EQ(o->liveBytes, 200);
  EXPECT_EQ(findFirstOverflow(b, 200, 10), std::nullopt);
  // Copies count: 2 x 100 bytes and 50 more exceed 249.
  std::vector<BufferLifetime> c = {{100, 0, 15, 2}, {50, 0, 5}};
  o = findFirstOverflow(c, 249, 10);
  ASSERT_TRUE(o);
  EXPECT_EQ(o->buffer, 1u);
  EXPECT_EQ(o->cycle, 0);
  EXPECT_EQ(o->liveBytes, 250);
  EXPECT_EQ(findFirstOverflow(c, 250, 10), std::nullopt);
}

TEST(ModuloSram, RandomAllocationsNeverShareBytesWhileLive) {
  std::mt19937 rng(11);
  for (int round = 0; round < 100; ++round) {
    const int64_t period = 5 + rng() % 20;
    std::vector<BufferLifetime> b;
    for (int i = 0; i < 12; ++i) {
      BufferLifetime x;
      x.size = 1 + rng() % 64;
      x.start = rng() % (3 * period);
      x.end = x.start + 1 + rng() % (2 * period);
      x.copies = 1 + rng() % 3;
      x.resident = rng() % 8 == 0;
      b.push_back(x);
    }
    SramAllocation a = assignSramOffsets(b, 1 + rng() % 16, period);
    ASSERT_EQ(a.offsets.size(), b.size());
    for (size_t i = 0; i < b.size(); ++i)
      for (size_t j = i + 1; j < b.size(); ++j) {
        bool space = a.offsets[i] < a.offsets[j] + b[j].footprint() &&
                     a.offsets[j] < a.offsets[i] + b[i].footprint();
        EXPECT_FALSE(space && liveTogether(b[i], b[j], period))
            << "round " << round << ": buffers " << i << " and " << j;
      }
    EXPECT_LE(a.lowerBoundBytes, a.peakBytes);
    EXPECT_EQ(a.lowerBoundBytes, maxLiveBytes(b, period));
  }
}
