//===- SramAllocatorTest.cpp - Best-fit offsets over lifetimes ------------===//
#include "loom/Dialect/Sched/Transforms/SramAllocator.h"

#include <gtest/gtest.h>

#include <random>

using namespace loom::sched;

namespace {
/// True if no two buffers live at the same time share a byte.
bool noOverlap(const std::vector<BufferLifetime> &b,
               const std::vector<int64_t> &offsets) {
  for (size_t i = 0; i < b.size(); ++i)
    for (size_t j = i + 1; j < b.size(); ++j) {
      bool time = b[i].start < b[j].end && b[j].start < b[i].end;
      bool space = offsets[i] < offsets[j] + b[j].size &&
                   offsets[j] < offsets[i] + b[i].size;
      if (time && space && b[i].size > 0 && b[j].size > 0)
        return false;
    }
  return true;
}
} // namespace

TEST(SramAllocator, DisjointLifetimesShareAddresses) {
  std::vector<BufferLifetime> b = {{100, 0, 10}, {100, 10, 20}, {100, 20, 30}};
  SramAllocation a = assignSramOffsets(b);
  EXPECT_EQ(a.offsets, (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(a.peakBytes, 100);
  EXPECT_EQ(a.lowerBoundBytes, 100);
}

TEST(SramAllocator, OverlappingLifetimesGetDisjointRanges) {
  std::vector<BufferLifetime> b = {{100, 0, 10}, {50, 5, 15}};
  SramAllocation a = assignSramOffsets(b);
  EXPECT_TRUE(noOverlap(b, a.offsets));
  EXPECT_EQ(a.peakBytes, 150);
  EXPECT_EQ(a.lowerBoundBytes, 150);
}

TEST(SramAllocator, BestFitPicksTheSmallestGapThatFits) {
  // Largest first: A at 0, B at 100, C at 190, D at 270, E at 330. B and D
  // die at 10, leaving holes of 90 bytes at 100 and 60 bytes at 270 while A,
  // C and E live on. F (40 bytes, later) goes in the 60-byte hole, the
  // smallest that fits; first fit would have taken the 90-byte one.
  std::vector<BufferLifetime> b = {
      {100, 0, 100}, // A
      {90, 0, 10},   // B
      {80, 0, 100},  // C
      {60, 0, 10},   // D
      {50, 0, 100},  // E
      {40, 20, 30},  // F
  };
  SramAllocation a = assignSramOffsets(b);
  EXPECT_EQ(a.offsets, (std::vector<int64_t>{0, 100, 190, 270, 330, 270}));
  EXPECT_TRUE(noOverlap(b, a.offsets));
  EXPECT_EQ(a.peakBytes, 380);
  EXPECT_EQ(a.lowerBoundBytes, 380);
}

TEST(SramAllocator, AlignmentRoundsOffsetsUp) {
  std::vector<BufferLifetime> b = {{10, 0, 10}, {10, 0, 10}, {10, 0, 10}};
  SramAllocation a = assignSramOffsets(b, 64);
  for (int64_t off : a.offsets)
    EXPECT_EQ(off % 64, 0);
  EXPECT_TRUE(noOverlap(b, a.offsets));
  EXPECT_EQ(a.peakBytes, 128 + 10);
}

TEST(SramAllocator, LowerBoundIsHalfOpen) {
  // One ends at 10 and the other starts at 10: never live together.
  std::vector<BufferLifetime> b = {{100, 0, 10}, {100, 10, 20}};
  EXPECT_EQ(maxLiveBytes(b), 100);
}

TEST(SramAllocator, RandomBuffersNeverOverlapAndPeakIsAtLeastTheBound) {
  std::mt19937 rng(1234);
  for (int round = 0; round < 50; ++round) {
    std::vector<BufferLifetime> b;
    for (int i = 0; i < 40; ++i) {
      int64_t start = rng() % 100;
      b.push_back(
          {1 + int64_t(rng() % 500), start, start + 1 + int64_t(rng() % 50)});
    }
    SramAllocation a = assignSramOffsets(b, 8);
    ASSERT_TRUE(noOverlap(b, a.offsets)) << "round " << round;
    EXPECT_GE(a.peakBytes, a.lowerBoundBytes);
    for (size_t i = 0; i < b.size(); ++i)
      EXPECT_LE(a.offsets[i] + b[i].size, a.peakBytes);
  }
}

TEST(SramAllocator, FirstOverflowNamesTheBufferThatCrossesCapacity) {
  std::vector<BufferLifetime> b = {
      {60, 0, 100}, // fits
      {30, 0, 100}, // 90: fits
      {20, 50, 60}, // 110 at cycle 50: over a capacity of 100
      {50, 70, 80}, // 140, but later
  };
  std::optional<SramOverflow> over = findFirstOverflow(b, 100);
  ASSERT_TRUE(over.has_value());
  EXPECT_EQ(over->buffer, 2u);
  EXPECT_EQ(over->cycle, 50);
  EXPECT_EQ(over->liveBytes, 110);
  EXPECT_FALSE(findFirstOverflow(b, 140).has_value());
}
