//===- SchedulerTest.cpp - Reservation tables and the list scheduler ------===//
#include "loom/Dialect/Sched/Transforms/ReservationTable.h"

#include <gtest/gtest.h>

using namespace loom::sched;

TEST(ReservationTable, EmptyTableIsFreeEverywhere) {
  ReservationTable t;
  EXPECT_TRUE(t.isFree(0, 100));
  EXPECT_EQ(t.earliestFree(7, 100), 7);
}

TEST(ReservationTable, ReserveRejectsOverlapAndKeepsHalfOpenIntervals) {
  ReservationTable t;
  ASSERT_TRUE(t.reserve(10, 10)); // [10, 20)
  EXPECT_FALSE(t.isFree(15, 1));
  EXPECT_FALSE(t.isFree(5, 6)); // [5, 11) touches 10
  EXPECT_TRUE(t.isFree(5, 5));  // [5, 10) ends where the busy one starts
  EXPECT_TRUE(t.isFree(20, 5)); // starts where it ends
  EXPECT_FALSE(t.reserve(19, 2));
  EXPECT_EQ(t.intervals().size(), 1u);
  EXPECT_EQ(t.busyCycles(), 10);
}

TEST(ReservationTable, EarliestFreeFindsTheFirstGapThatFits) {
  ReservationTable t;
  ASSERT_TRUE(t.reserve(0, 10));        // [0, 10)
  ASSERT_TRUE(t.reserve(15, 5));        // [15, 20)
  ASSERT_TRUE(t.reserve(30, 10));       // [30, 40)
  EXPECT_EQ(t.earliestFree(0, 5), 10);  // the gap [10, 15) fits 5
  EXPECT_EQ(t.earliestFree(0, 6), 20);  // too small; [20, 30) fits
  EXPECT_EQ(t.earliestFree(0, 11), 40); // nothing before the end fits
  EXPECT_EQ(t.earliestFree(12, 3), 12); // inside a gap
  EXPECT_EQ(t.earliestFree(16, 1), 20); // inside a busy interval
}

TEST(ReservationTable, ZeroDurationNeverConflicts) {
  ReservationTable t;
  ASSERT_TRUE(t.reserve(0, 10));
  EXPECT_TRUE(t.isFree(5, 0));
  EXPECT_EQ(t.earliestFree(5, 0), 5);
  EXPECT_TRUE(t.reserve(5, 0));
  EXPECT_EQ(t.busyCycles(), 10);
}

TEST(ReservationTable, TouchingIntervalsMerge) {
  ReservationTable t;
  ASSERT_TRUE(t.reserve(0, 10));
  ASSERT_TRUE(t.reserve(20, 10));
  ASSERT_TRUE(t.reserve(10, 10));
  ASSERT_EQ(t.intervals().size(), 1u);
  EXPECT_EQ(t.intervals().begin()->second, 30);
}

TEST(ListScheduler, ChainRunsBackToBack) {
  ListScheduler s(1);
  int64_t a = s.addTask({{0, 10}}, {});
  int64_t b = s.addTask({{0, 5}}, {a});
  EXPECT_EQ(s.start(a), 0);
  EXPECT_EQ(s.start(b), 10);
  EXPECT_EQ(s.makespan(), 15);
}

TEST(ListScheduler, IndependentTasksOnDifferentResourcesOverlap) {
  ListScheduler s(2);
  int64_t a = s.addTask({{0, 10}}, {});
  int64_t b = s.addTask({{1, 10}}, {});
  EXPECT_EQ(s.start(a), 0);
  EXPECT_EQ(s.start(b), 0);
  EXPECT_EQ(s.makespan(), 10);
}

TEST(ListScheduler, SharedResourceSerialises) {
  ListScheduler s(1);
  int64_t a = s.addTask({{0, 10}}, {});
  int64_t b = s.addTask({{0, 10}}, {});
  EXPECT_EQ(s.start(b), s.end(a));
}

TEST(ListScheduler, GangStartsWhenEveryResourceIsFree) {
  // Resource 0 busy [0, 10), resource 1 busy [0, 20): a task needing both
  // starts at 20, and ends at its longest part.
  ListScheduler s(2);
  s.addTask({{0, 10}}, {});
  s.addTask({{1, 20}}, {});
  int64_t g = s.addTask({{0, 5}, {1, 7}}, {});
  EXPECT_EQ(s.start(g), 20);
  EXPECT_EQ(s.end(g), 27);
  EXPECT_FALSE(s.table(0).isFree(20, 5));
  EXPECT_FALSE(s.table(1).isFree(20, 7));
}

TEST(ListScheduler, LaterTaskBackfillsAGap) {
  // a on r0 [0, 10); b depends on a, on r1 [10, 20); c on r1 fits in
  // [0, 10) before b because it has no dependencies.
  ListScheduler s(2);
  int64_t a = s.addTask({{0, 10}}, {});
  int64_t b = s.addTask({{1, 10}}, {a});
  int64_t c = s.addTask({{1, 10}}, {});
  EXPECT_EQ(s.start(b), 10);
  EXPECT_EQ(s.start(c), 0);
  EXPECT_EQ(s.makespan(), 20);
}

// A part with a tail (a chip link's latency) frees its resource after its
// duration, but its task's result is ready only after the tail: the next
// message takes the link at once, a reader waits for the arrival.
TEST(ListScheduler, TailDelaysTheResultButNotTheResource) {
  ListScheduler s(2);
  int64_t a = s.addTask({{0, 4, 100}}, {});
  int64_t b = s.addTask({{0, 4, 100}}, {});
  int64_t reader = s.addTask({{1, 1}}, {a});
  EXPECT_EQ(s.start(b), 4);
  EXPECT_EQ(s.start(reader), 104);
  EXPECT_EQ(s.makespan(), 108);
}

TEST(ListScheduler, StartsAfterTheLatestDependency) {
  ListScheduler s(3);
  int64_t a = s.addTask({{0, 10}}, {});
  int64_t b = s.addTask({{1, 30}}, {});
  int64_t c = s.addTask({{2, 1}}, {a, b});
  EXPECT_EQ(s.start(c), 30);
}
