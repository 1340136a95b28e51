//===- IsaTest.cpp - One test per timing rule of docs/isa.md --------------===//
//
// Each rule on a chip whose fields make the arithmetic visible, with the
// expected cycles worked out by hand from the rule's statement in
// docs/isa.md (not from the code), including the block padding, the
// rounding up and the bounds that take over.
//
//===----------------------------------------------------------------------===//
#include "loom/Runtime/Isa.h"

#include <gtest/gtest.h>

#include <limits>

namespace loom::rt {
namespace {

/// 16x16x16 blocks at 256 fp32 / 1024 bf16 MACs a cycle, latency 16; 64
/// vector lanes, latency 4; SRAM 256 B/cycle; mesh 64 B/cycle, 2 cycles a
/// hop (the `tiny` preset's figures).
ChipDesc chip() {
  ChipDesc c;
  c.tileRows = c.tileCols = 4;
  MatrixUnitDesc &m = c.tile.matrix;
  m.macsPerCycle[static_cast<size_t>(NumericFormat::F32)] = 256;
  m.macsPerCycle[static_cast<size_t>(NumericFormat::BF16)] = 1024;
  m.blockM = m.blockN = m.blockK = 16;
  m.latencyCycles = 16;
  c.tile.vector.lanes = 64;
  c.tile.vector.latencyCycles = 4;
  c.tile.sram.bytes = 262144;
  c.tile.sram.bytesPerCycle = 256;
  c.mesh = MeshDesc{64, 2};
  return c;
}

TEST(Isa, MatrixBlockPadsEveryDimensionToWholeBlocks) {
  const TileDesc t = chip().tile;
  // 17 x 16 x 16: M needs two blocks; each block of 4096 MACs takes 16
  // cycles at 256 a cycle.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {1, 17, 16, 16}), 32);
  // bf16 runs 4x the MACs: 4 cycles a block; batch 3 of 1x1x1 products
  // still occupy a whole block each.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::BF16, {3, 1, 1, 1}), 12);
  // 64 x 64 x 147: 4 x 4 x ceil(147/16) = 10 blocks deep = 160 blocks.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {1, 64, 64, 147}),
            160 * 16);
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {1, 0, 16, 16}), 0);
  // A format the unit does not run has no matrix timing.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F8, {1, 16, 16, 16}),
            std::numeric_limits<int64_t>::max());
}

TEST(Isa, WeightLoadIsWholeRowsAtTheUnitsRate) {
  TileDesc t = chip().tile;
  // Not modelled: no cycles.
  EXPECT_EQ(weightLoadCycles(t, NumericFormat::F32, 16), 0);
  // A row is 16 fp32 (64 bytes) whatever the block's columns hold; at 32
  // bytes a cycle 16 rows take 32 cycles, 8 rows 16, and bf16 halves it.
  t.matrix.weightLoadBytesPerCycle = 32;
  EXPECT_EQ(weightLoadCycles(t, NumericFormat::F32, 16), 32);
  EXPECT_EQ(weightLoadCycles(t, NumericFormat::F32, 8), 16);
  EXPECT_EQ(weightLoadCycles(t, NumericFormat::BF16, 16), 16);
  // 1 row past a whole byte count rounds up.
  t.matrix.weightLoadBytesPerCycle = 48;
  EXPECT_EQ(weightLoadCycles(t, NumericFormat::F32, 1), 2);
}

TEST(Isa, MatrixBlockWaitsForEachStationaryBlocksWeights) {
  TileDesc t = chip().tile;
  t.matrix.weightLoadBytesPerCycle = 32;
  // 1 x 40 x 32: two column blocks, each two full K blocks (32 cycles to
  // load, more than the 16 a row block computes) and one of 8 rows (16 to
  // load, as long as its compute): 2 x (32 + 32 + 16) = 160 cycles,
  // where the blocks alone take 2 x 3 x 16 = 96.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {1, 1, 32, 40}), 160);
  // Three row blocks of A compute 48 cycles on every stationary block,
  // which hides its load: the blocks' 288 cycles.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {1, 48, 32, 40}), 288);
  // A batch repeats it all.
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {3, 1, 32, 40}), 480);
  t.matrix.weightLoadBytesPerCycle = 0;
  EXPECT_EQ(matrixBlockCycles(t, NumericFormat::F32, {1, 1, 32, 40}), 96);
}

TEST(Isa, SramRoundsUpAndHasNoRateWithoutSram) {
  TileDesc t = chip().tile;
  EXPECT_EQ(sramCycles(t, 0), 0);
  EXPECT_EQ(sramCycles(t, 257), 2);
  t.sram.bytesPerCycle = 0;
  EXPECT_EQ(sramCycles(t, 1), std::numeric_limits<int64_t>::max());
}

TEST(Isa, KernelMatrixAddsLatencyAndIsBoundBySram) {
  const TileDesc t = chip().tile;
  TileWork w;
  w.contractions = {{1, 16, 16, 16}, {1, 16, 32, 16}};
  w.sramBytes = 1024;
  // (16 + 32) cycles of blocks + 16 latency; the SRAM needs 4.
  EXPECT_EQ(matrixInstrCycles(t, NumericFormat::F32, w), 64);
  // 64 KiB of operands take 256 cycles through the SRAM: that bounds it.
  w.sramBytes = 65536;
  EXPECT_EQ(matrixInstrCycles(t, NumericFormat::F32, w), 256);
  // No work at all still takes a cycle.
  EXPECT_EQ(matrixInstrCycles(t, NumericFormat::F32, TileWork{}), 1);
}

TEST(Isa, KernelEpilogueIsWholeLanesWithoutLatency) {
  const TileDesc t = chip().tile;
  TileWork w;
  w.vectorOps = 65; // two passes of 64 lanes
  w.sramBytes = 1 << 20; // streams beside the matrix unit: not its bound
  EXPECT_EQ(epilogueInstrCycles(t, w), 2);
  EXPECT_EQ(epilogueInstrCycles(t, TileWork{}), 1);
}

TEST(Isa, KernelVectorCountsContractionsAsLaneMacs) {
  const TileDesc t = chip().tile;
  TileWork w;
  w.contractions = {{2, 3, 3, 3}}; // 54 MACs
  w.vectorOps = 10;                // 64 in all: one pass
  EXPECT_EQ(vectorInstrCycles(t, w), 1 + 4);
  w.vectorOps = 1000; // 1054 ops: 17 passes
  w.sramBytes = 256;
  EXPECT_EQ(vectorInstrCycles(t, w), 17 + 4);
  w.sramBytes = 256 * 100; // the SRAM's 100 cycles bound it
  EXPECT_EQ(vectorInstrCycles(t, w), 100);
}

TEST(Isa, RulesSaturateInsteadOfOverflowing) {
  // Work at the end of the int64 range gives its true count, or the
  // range's end, never a wrapped one (a ceiling division must not add its
  // divisor first; the sanitizer build also checks the way there).
  const TileDesc t = chip().tile;
  TileWork w;
  w.vectorOps = std::numeric_limits<int64_t>::max();
  // ceil((2^63 - 1) / 64 lanes) = 2^57 passes, and the 4 of latency.
  EXPECT_EQ(vectorInstrCycles(t, w), (int64_t(1) << 57) + 4);
  w.contractions = {{1, std::numeric_limits<int64_t>::max(), 16, 16}};
  EXPECT_EQ(matrixInstrCycles(t, NumericFormat::F32, w),
            std::numeric_limits<int64_t>::max());
}

TEST(Isa, KernelDmaIsItsSramBytes) {
  const TileDesc t = chip().tile;
  TileWork w;
  w.sramBytes = 513;
  EXPECT_EQ(dmaKernelInstrCycles(t, w), 3);
  EXPECT_EQ(dmaKernelInstrCycles(t, TileWork{}), 1);
}

TEST(Isa, TransferMeshUsesTheLinkRateLeavingAndTheSramWithin) {
  const ChipDesc c = chip();
  // 1024 bytes over 3 hops: 16 cycles at 64 B/cycle + 3 x 2.
  EXPECT_EQ(meshTransferCycles(c, 1024, 3, true), 22);
  // A copy within the tile: 4 cycles at 256 B/cycle.
  EXPECT_EQ(meshTransferCycles(c, 1024, 0, false), 4);
  EXPECT_EQ(meshTransferCycles(c, 0, 0, false), 1);
}

TEST(Isa, LinkMeshIsTheBytesItCarriesPlusTheRoute) {
  const ChipDesc c = chip();
  EXPECT_EQ(meshLinkCycles(c, 65, 4), 2 + 8);
  // A chip without a mesh moves nothing between tiles.
  ChipDesc single = c;
  single.mesh.reset();
  EXPECT_EQ(meshLinkCycles(single, 64, 1),
            std::numeric_limits<int64_t>::max());
}

TEST(Isa, TransferChipInjectsAtTheMeshRate) {
  ChipDesc c = chip();
  EXPECT_EQ(chipInjectCycles(c, 640), 10);
  // Without a mesh, at the SRAM's rate.
  c.mesh.reset();
  EXPECT_EQ(chipInjectCycles(c, 640), 3);
}

TEST(Isa, LinkChipIsTheBytesAtTheLinksRate) {
  EXPECT_EQ(chipLinkCycles(10.0, 1024), 103);
  EXPECT_EQ(chipLinkCycles(10.0, 0), 1);
  EXPECT_EQ(chipLinkCycles(0.0, 1), std::numeric_limits<int64_t>::max());
}

TEST(Isa, ContractionsFromResultBoxes) {
  // A [2,5,8] x [8,6] matmul; the box takes rows 1..4 of batch 1 and all
  // 6 columns: batch 1, m 3, n 6, k 8.
  EXPECT_EQ(matmulContraction({2, 5, 8}, {8, 6}, {1, 1, 0}, {2, 4, 6}),
            (Contraction{1, 3, 6, 8}));
  // A 1-D B: the result has no column dimension.
  EXPECT_EQ(matmulContraction({4, 8}, {8}, {0}, {4}), (Contraction{1, 4, 1, 8}));
  // A grouped convolution, 4 groups of 8 output channels, weights
  // [32, 3, 3, 3]: channels [6, 18) touch groups 0, 1 and 2, 8 channels of
  // one group at most; 2 x 5 x 5 outputs; k = 3 x 3 x 3.
  EXPECT_EQ(convContraction({32, 3, 3, 3}, 4, {0, 6, 0, 0}, {2, 18, 5, 5}),
            (Contraction{3, 50, 8, 27}));
}

TEST(Isa, OpCostClasses) {
  EXPECT_EQ(opCost("matmul", {}, {}).kind, OpCost::Contraction);
  EXPECT_EQ(opCost("reduce_sum", {}, {}).kind, OpCost::PerInput);
  EXPECT_EQ(opCost("softmax", {}, {}).ops, 5);
  EXPECT_EQ(opCost("layer_norm", {}, {}).ops, 7);
  EXPECT_EQ(opCost("transpose", {}, {}).kind, OpCost::DataMovement);
  EXPECT_EQ(opCost("add", {}, {}).ops, 1);
  // conv_transpose: weights [4, 6, 3, 3] for 6 output channels: 4 x 9 taps
  // of each output's channel.
  EXPECT_EQ(opCost("conv_transpose", {{1, 4, 5, 5}, {4, 6, 3, 3}}, {1, 6, 7, 7})
                .ops,
            36);
  EXPECT_EQ(opCost("all_reduce", {{8}, {8}, {8}}, {8}).ops, 2);
}

} // namespace
} // namespace loom::rt
