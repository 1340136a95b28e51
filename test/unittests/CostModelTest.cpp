//===- CostModelTest.cpp - The shared cost model, against hand sums -------===//
//
// Every expected value below is worked out by hand from the preset's numbers
// and the formulas in docs/targets.md; the comments show the sums.
//
// tiny: 4 x 4 tiles at 1 GHz; per tile fp16 1024 MACs/cycle, 16x16x16
// blocks, matrix latency 16, 64 vector lanes with latency 4, 256 B/cycle
// SRAM; mesh 64 B/cycle per link, 2 cycles per hop; 4 chips on a ring with
// 4 links of 10 GB/s and 1 us latency.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CostModel.h"
#include "loom/Target/ChipNetwork.h"

#include "TargetHelpers.h"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace loom;
using loom::testing::loadTarget;

namespace {

CostBreakdown estimateOrDie(const CostModel &model, const KernelDesc &kernel,
                            const Region &region) {
  std::string error;
  std::optional<CostBreakdown> cost = model.estimate(kernel, region, &error);
  if (!cost) {
    ADD_FAILURE() << error;
    std::abort();
  }
  return *cost;
}

Region tiles(int64_t rows, int64_t cols, int64_t chips = 1) {
  Region region;
  region.tileRows = rows;
  region.tileCols = cols;
  region.chips = chips;
  return region;
}

class TinyCostModel : public ::testing::Test {
protected:
  TinyCostModel() : model(loadTarget("tiny")) {}
  CostModel model;
};

} // namespace

// A 64x64x64 fp16 GEMM on one tile: 4 x 4 output blocks, 4 k-steps, and a
// 16x16x16 block takes 4096 / 1024 = 4 cycles: 16 * 4 * 4 = 256 cycles.
// SRAM: three 64x64 fp16 matrices = 24576 B / 256 B/cycle = 96 cycles.
// Fill/drain: the matrix latency, 16 cycles; no hops on a 1 x 1 region.
TEST_F(TinyCostModel, GemmThatFitsOneTile) {
  KernelDesc gemm = KernelDesc::matmul(64, 64, 64, NumericFormat::F16);
  EXPECT_EQ(gemm.sramBytesRead, 2 * 64 * 64 * 2);
  EXPECT_EQ(gemm.sramBytesWritten, 64 * 64 * 2);
  EXPECT_EQ(gemm.weightBytes, 64 * 64 * 2);
  CostBreakdown cost = estimateOrDie(model, gemm, tiles(1, 1));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 256);
  EXPECT_DOUBLE_EQ(cost.sramCycles, 96);
  EXPECT_DOUBLE_EQ(cost.meshCycles, 0);
  EXPECT_DOUBLE_EQ(cost.linkCycles, 0);
  EXPECT_DOUBLE_EQ(cost.fillDrainCycles, 16);
  EXPECT_DOUBLE_EQ(cost.totalCycles, 272);
  EXPECT_DOUBLE_EQ(cost.seconds, 272e-9);
  EXPECT_EQ(cost.bound, CostBound::Compute);
  EXPECT_DOUBLE_EQ(cost.matrixEfficiency, 1.0);
  EXPECT_FALSE(cost.usedVectorFallback);
}

// 17x17x17 pads to 32x32x32: 2 x 2 output blocks, 2 k-steps, 4 cycles each =
// 32 cycles for 4913 useful MACs out of 32 * 1024: efficiency 0.1499.
TEST_F(TinyCostModel, BlockQuantisationWaste) {
  KernelDesc gemm = KernelDesc::matmul(17, 17, 17, NumericFormat::F16);
  CostBreakdown cost = estimateOrDie(model, gemm, tiles(1, 1));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 32);
  EXPECT_DOUBLE_EQ(cost.matrixEfficiency, 4913.0 / (32.0 * 1024.0));
}

// A 256^3 fp16 GEMM on the whole 4 x 4 chip: 16 x 16 = 256 output blocks,
// 16 per tile, 16 k-steps of 4 cycles: 1024 cycles (one tile alone would take
// 16384). SRAM: 3 x 256 x 256 x 2 B = 393216 B over 16 tiles x 256 B/cycle
// = 96 cycles. Fill/drain: 16 + 2 cycles x (3 + 3) hops across the region.
TEST_F(TinyCostModel, GemmThatNeedsManyTiles) {
  KernelDesc gemm = KernelDesc::matmul(256, 256, 256, NumericFormat::F16);
  CostBreakdown oneTile = estimateOrDie(model, gemm, tiles(1, 1));
  EXPECT_DOUBLE_EQ(oneTile.computeCycles, 16384);
  CostBreakdown cost =
      estimateOrDie(model, gemm, Region::wholeChip(model.target()));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 1024);
  EXPECT_DOUBLE_EQ(cost.sramCycles, 96);
  EXPECT_DOUBLE_EQ(cost.fillDrainCycles, 28);
  EXPECT_DOUBLE_EQ(cost.totalCycles, 1052);
  EXPECT_EQ(cost.bound, CostBound::Compute);
  EXPECT_DOUBLE_EQ(cost.matrixEfficiency, 1.0);
}

// 80^3 on 16 tiles: 5 x 5 = 25 output blocks, so some tiles get 2 and the
// rest 1: 2 x 5 k-steps x 4 cycles = 40 cycles; 512000 useful MACs out of
// 16 x 1024 x 40.
TEST_F(TinyCostModel, UnevenSpreadOverTiles) {
  KernelDesc gemm = KernelDesc::matmul(80, 80, 80, NumericFormat::F16);
  CostBreakdown cost =
      estimateOrDie(model, gemm, Region::wholeChip(model.target()));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 40);
  EXPECT_DOUBLE_EQ(cost.matrixEfficiency, 512000.0 / (16.0 * 1024 * 40));
}

// The same GEMM split over 2 chips of 16 tiles: 256 output blocks over 32
// tiles = 8 each: 8 x 16 x 4 = 512 cycles.
TEST_F(TinyCostModel, GemmSplitOverChips) {
  KernelDesc gemm = KernelDesc::matmul(256, 256, 256, NumericFormat::F16);
  CostBreakdown cost = estimateOrDie(model, gemm, tiles(4, 4, 2));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 512);
  EXPECT_DOUBLE_EQ(cost.sramCycles, 48);
}

// A fused epilogue of 2 vector ops per output: 4096 outputs x 2 / 64 lanes =
// 128 cycles, hidden under the 256 matrix cycles; its pipeline adds the
// vector latency (4) to fill/drain.
TEST_F(TinyCostModel, EpilogueOverlapsTheMatrixUnit) {
  KernelDesc gemm = KernelDesc::matmul(64, 64, 64, NumericFormat::F16);
  gemm.epilogueOpsPerOutput = 2;
  CostBreakdown cost = estimateOrDie(model, gemm, tiles(1, 1));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 256);
  EXPECT_DOUBLE_EQ(cost.fillDrainCycles, 20);
  gemm.epilogueOpsPerOutput = 8; // 4096 x 8 / 64 = 512 > 256
  EXPECT_DOUBLE_EQ(estimateOrDie(model, gemm, tiles(1, 1)).computeCycles, 512);
}

// tiny's matrix unit has no tf32: a 64^3 tf32 GEMM runs on the 64 vector
// lanes, one MAC per lane per cycle: 4096 outputs x 64 MACs / 64 = 4096.
TEST_F(TinyCostModel, VectorFallbackForUnsupportedFormat) {
  KernelDesc gemm = KernelDesc::matmul(64, 64, 64, NumericFormat::TF32);
  CostBreakdown cost = estimateOrDie(model, gemm, tiles(1, 1));
  EXPECT_TRUE(cost.usedVectorFallback);
  EXPECT_DOUBLE_EQ(cost.computeCycles, 4096);
  EXPECT_DOUBLE_EQ(cost.fillDrainCycles, 4);
}

// With the contraction on the vector unit, the epilogue cannot overlap it:
// 4096 (the tf32 GEMM above) + 4096 outputs x 2 ops / 64 lanes = 4224.
TEST_F(TinyCostModel, VectorFallbackAddsTheEpilogue) {
  KernelDesc gemm = KernelDesc::matmul(64, 64, 64, NumericFormat::TF32);
  gemm.epilogueOpsPerOutput = 2;
  CostBreakdown cost = estimateOrDie(model, gemm, tiles(1, 1));
  EXPECT_TRUE(cost.usedVectorFallback);
  EXPECT_DOUBLE_EQ(cost.computeCycles, 4224);
}

// Adding two vectors of 2^20 fp32 on the whole chip: 2^20 ops over 16 tiles
// x 64 lanes = 1024 cycles, but it moves 12 MiB (8 read, 4 written) over
// 16 x 256 B/cycle = 3072 cycles: SRAM-bound. Fill/drain 4 + 2 x 6 = 16.
TEST_F(TinyCostModel, BandwidthBoundElementwise) {
  KernelDesc add =
      KernelDesc::elementwise(1 << 20, /*inputs=*/2, NumericFormat::F32);
  CostBreakdown cost =
      estimateOrDie(model, add, Region::wholeChip(model.target()));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 1024);
  EXPECT_DOUBLE_EQ(cost.sramCycles, 3072);
  EXPECT_DOUBLE_EQ(cost.fillDrainCycles, 16);
  EXPECT_DOUBLE_EQ(cost.totalCycles, 3088);
  EXPECT_EQ(cost.bound, CostBound::Sram);
}

// 64 KiB arriving over the mesh into a 2 x 2 region enters through its 2
// west-edge links: 65536 / (2 x 64) = 512 cycles; the producer 3 hops away
// adds (3 + 1 + 1) x 2 = 10 cycles of fill.
TEST_F(TinyCostModel, MeshIngress) {
  KernelDesc copy = KernelDesc::dataMovement(4096);
  copy.meshBytesIn = 65536;
  Region region = tiles(2, 2);
  region.sourceHops = 3;
  CostBreakdown cost = estimateOrDie(model, copy, region);
  EXPECT_DOUBLE_EQ(cost.meshCycles, 512);
  EXPECT_DOUBLE_EQ(cost.computeCycles, 0);
  EXPECT_DOUBLE_EQ(cost.sramCycles, 8192.0 / (4 * 256));
  EXPECT_DOUBLE_EQ(cost.fillDrainCycles, 10);
  EXPECT_EQ(cost.bound, CostBound::Mesh);
}

// Softmax and normalisation count 5 and 7 vector ops per element; a
// reduction one per input element.
TEST_F(TinyCostModel, VectorKernels) {
  Region chip = Region::wholeChip(model.target());
  // 65536 x 5 / (16 x 64) = 320 cycles.
  EXPECT_DOUBLE_EQ(
      estimateOrDie(model, KernelDesc::softmax(65536, NumericFormat::F32), chip)
          .computeCycles,
      320);
  // 65536 x 7 / 1024 = 448 cycles.
  EXPECT_DOUBLE_EQ(
      estimateOrDie(model, KernelDesc::normalization(65536, NumericFormat::F32),
                    chip)
          .computeCycles,
      448);
  // 65536 / 1024 = 64 cycles; reads 256 KiB, writes 1 KiB.
  KernelDesc sum = KernelDesc::reduction(65536, 256, NumericFormat::F32);
  EXPECT_EQ(sum.sramBytesWritten, 1024);
  EXPECT_DOUBLE_EQ(estimateOrDie(model, sum, chip).computeCycles, 64);
}

// All-reduce of 1 MiB fp32 over the 4-chip ring. Each chip sends
// 2 x (4-1)/4 x 1 MiB = 1572864 B over its 4 links x 10 GB/s = 40 GB/s:
// 39.3216 us = 39321.6 cycles. Latency: 2 x (4-1) = 6 steps x 1 us = 6000
// cycles, plus the vector latency (4) and the 2 x 6 hop fill of the 4 x 4
// region. Reduction adds: 3/4 x 262144 = 196608 over 16 x 64 lanes = 192.
TEST_F(TinyCostModel, AllReduceOnARing) {
  KernelDesc allReduce = KernelDesc::collectiveOp(CollectiveKind::AllReduce,
                                                  1 << 20, NumericFormat::F32);
  EXPECT_DOUBLE_EQ(
      CostModel::collectiveBytesPerChip(CollectiveKind::AllReduce, 4, 1 << 20),
      1572864);
  EXPECT_EQ(model.collectiveLatencySteps(CollectiveKind::AllReduce, 4), 6);
  CostBreakdown cost =
      estimateOrDie(model, allReduce, Region::wholeSystem(model.target()));
  EXPECT_NEAR(cost.linkCycles, 39321.6, 1e-6);
  EXPECT_DOUBLE_EQ(cost.computeCycles, 192);
  EXPECT_DOUBLE_EQ(cost.sramCycles, 2.0 * (1 << 20) / (16 * 256));
  EXPECT_NEAR(cost.fillDrainCycles, 6000 + 4 + 12, 1e-6);
  EXPECT_NEAR(cost.totalCycles, 39321.6 + 6016, 1e-6);
  EXPECT_EQ(cost.bound, CostBound::Link);
}

// The other collectives on the ring: (p-1)/p of the buffer and p-1 steps.
TEST_F(TinyCostModel, OtherCollectivesOnARing) {
  EXPECT_DOUBLE_EQ(
      CostModel::collectiveBytesPerChip(CollectiveKind::AllGather, 4, 4096),
      3072);
  EXPECT_DOUBLE_EQ(
      CostModel::collectiveBytesPerChip(CollectiveKind::ReduceScatter, 4, 4096),
      3072);
  EXPECT_DOUBLE_EQ(
      CostModel::collectiveBytesPerChip(CollectiveKind::SendRecv, 2, 4096),
      4096);
  EXPECT_DOUBLE_EQ(
      CostModel::collectiveBytesPerChip(CollectiveKind::AllReduce, 1, 4096), 0);
  EXPECT_EQ(model.collectiveLatencySteps(CollectiveKind::AllGather, 4), 3);
  EXPECT_EQ(model.collectiveLatencySteps(CollectiveKind::SendRecv, 2), 1);
  // Send 40 KB to a neighbour: 40000 / 40 GB/s = 1 us + 1 us latency.
  KernelDesc send = KernelDesc::collectiveOp(CollectiveKind::SendRecv, 40000,
                                             NumericFormat::F32);
  CostBreakdown cost = estimateOrDie(model, send, tiles(1, 1, 2));
  EXPECT_NEAR(cost.linkCycles, 1000, 1e-9);
  EXPECT_NEAR(cost.fillDrainCycles, 1000, 1e-9);
  EXPECT_DOUBLE_EQ(cost.computeCycles, 0);
}

// The roofline of a GEMM plus an element-wise add on one chip:
// matrix 2 x 256^3 / 32.768 TFLOP/s = 1.024 us; vector 2^20 / 1.024 Top/s =
// 1.024 us; the units overlap so compute is 1.024 us. SRAM: 393216 +
// 12582912 B / 4.096 TB/s = 3.168 us, the bound.
TEST_F(TinyCostModel, RooflineOfAGraph) {
  std::vector<KernelDesc> graph = {
      KernelDesc::matmul(256, 256, 256, NumericFormat::F16),
      KernelDesc::elementwise(1 << 20, 2, NumericFormat::F32)};
  RooflineBound bound = model.roofline(graph);
  EXPECT_DOUBLE_EQ(bound.matrixFlops, 2.0 * 256 * 256 * 256);
  EXPECT_DOUBLE_EQ(bound.vectorOps, 1 << 20);
  EXPECT_NEAR(bound.computeSeconds, 1.024e-6, 1e-15);
  EXPECT_NEAR(bound.sramSeconds, 3.168e-6, 1e-15);
  EXPECT_NEAR(bound.seconds, 3.168e-6, 1e-15);
  EXPECT_EQ(bound.bound, CostBound::Sram);

  // On all 4 chips with an all-reduce of 1 MiB: compute and SRAM shrink 4x,
  // the all-reduce sends 1572864 B per chip at 40 GB/s = 39.3 us.
  graph.push_back(KernelDesc::collectiveOp(CollectiveKind::AllReduce, 1 << 20,
                                           NumericFormat::F32));
  RooflineBound system = model.roofline(graph, 4);
  EXPECT_NEAR(system.linkSeconds, 39.3216e-6, 1e-12);
  EXPECT_EQ(system.bound, CostBound::Link);

  // Every kernel's own estimate is at least its roofline.
  for (const KernelDesc &kernel : graph) {
    CostBreakdown cost =
        estimateOrDie(model, kernel, Region::wholeSystem(model.target()));
    EXPECT_GE(cost.seconds * (1 + 1e-12), model.roofline({kernel}, 4).seconds)
        << kernelKindName(kernel.kind);
  }
}

TEST_F(TinyCostModel, RejectsRegionsAndKernelsThatDoNotFit) {
  KernelDesc gemm = KernelDesc::matmul(64, 64, 64, NumericFormat::F16);
  std::string error;
  EXPECT_FALSE(model.estimate(gemm, tiles(5, 1), &error));
  EXPECT_EQ(error, "matmul on tiny: a 5 x 1 region does not fit the chip's "
                   "4 x 4 tiles");
  EXPECT_FALSE(model.estimate(gemm, tiles(1, 1, 5), &error));
  EXPECT_EQ(error, "matmul on tiny: 5 chips requested but the system has 4");
  gemm.offChipBytes = 1;
  EXPECT_FALSE(model.estimate(gemm, tiles(1, 1), &error));
  EXPECT_EQ(error, "matmul on tiny: the kernel moves off-chip bytes but the "
                   "target has no off-chip memory");
  gemm.offChipBytes = 0;
  gemm.m = -1;
  EXPECT_FALSE(model.estimate(gemm, tiles(1, 1), &error));
  EXPECT_FALSE(model.estimate(gemm, tiles(0, 1)));
}

// Byte counts saturate at kMaxKernelBytes (2^60) and such a kernel is
// refused: 2^59 elements x 2 inputs at fp32 (2^62 bytes read) was cast from
// a double past int64 and came out negative ("kernel sizes must not be
// negative"), and read + written wrapped.
TEST_F(TinyCostModel, RefusesKernelsPast2To60Bytes) {
  const int64_t huge = int64_t(1) << 59;
  KernelDesc add = KernelDesc::elementwise(huge, 2, NumericFormat::F32);
  EXPECT_EQ(add.sramBytesRead, kMaxKernelBytes);
  EXPECT_EQ(add.sramBytesWritten, kMaxKernelBytes);
  std::string error;
  EXPECT_FALSE(model.estimate(add, tiles(1, 1), &error));
  EXPECT_EQ(error, "elementwise on tiny: the kernel moves 2^60 bytes (1 EiB) "
                   "or more, past every chip's memory");
  KernelDesc mm = KernelDesc::matmul(huge, 4, 4, NumericFormat::F32);
  EXPECT_EQ(mm.sramBytesRead, kMaxKernelBytes);
  EXPECT_FALSE(model.estimate(mm, tiles(1, 1)));
  // Just under the bound: estimated.
  KernelDesc under =
      KernelDesc::elementwise(kMaxKernelBytes / 8 - 1, 1, NumericFormat::F32);
  EXPECT_LT(under.sramBytesRead, kMaxKernelBytes);
  EXPECT_TRUE(model.estimate(under, tiles(1, 1), &error)) << error;
}

TEST(CostModelKernels, ConvIsAnImplicitGemm) {
  // 1 x 16 x 8 x 8 -> 32 channels, 3 x 3, padding 1: M = 64, N = 32,
  // K = 16 x 9 = 144.
  ConvShape shape;
  shape.batch = 1;
  shape.inChannels = 16;
  shape.inHeight = shape.inWidth = 8;
  shape.outChannels = 32;
  shape.outHeight = shape.outWidth = 8;
  shape.kernelHeight = shape.kernelWidth = 3;
  KernelDesc conv = KernelDesc::conv(shape, NumericFormat::BF16);
  EXPECT_EQ(conv.batch, 1);
  EXPECT_EQ(conv.m, 64);
  EXPECT_EQ(conv.n, 32);
  EXPECT_EQ(conv.k, 144);
  EXPECT_EQ(conv.weightBytes, 32 * 16 * 9 * 2);
  EXPECT_EQ(conv.sramBytesRead, 16 * 64 * 2 + 32 * 16 * 9 * 2);
  EXPECT_EQ(conv.sramBytesWritten, 32 * 64 * 2);
  // Depthwise: groups = channels, one output channel per group.
  shape.outChannels = 16;
  shape.groups = 16;
  KernelDesc depthwise = KernelDesc::conv(shape, NumericFormat::BF16);
  EXPECT_EQ(depthwise.batch, 16);
  EXPECT_EQ(depthwise.n, 1);
  EXPECT_EQ(depthwise.k, 9);
}

// The TSP's 1 x 320 x 320 block: a 320-wide int8 GEMV takes one cycle per
// row; one more output column doubles the blocks.
TEST(CostModelPresets, TspBlockQuantisation) {
  CostModel model(loadTarget("tsp-v1"));
  KernelDesc gemv = KernelDesc::matmul(1, 320, 320, NumericFormat::I8);
  EXPECT_DOUBLE_EQ(estimateOrDie(model, gemv, tiles(1, 1)).computeCycles, 1);
  gemv.n = 321;
  CostBreakdown cost = estimateOrDie(model, gemv, tiles(1, 1));
  EXPECT_DOUBLE_EQ(cost.computeCycles, 2);
  EXPECT_DOUBLE_EQ(cost.matrixEfficiency, 321.0 * 320 / (2 * 102400.0));
  // fp16 runs at a quarter of the int8 rate.
  gemv.n = 320;
  gemv.format = NumericFormat::F16;
  EXPECT_DOUBLE_EQ(estimateOrDie(model, gemv, tiles(1, 1)).computeCycles, 4);
}

// A large GEMM on one H100 runs at the published peak; a decode GEMV with
// its weights in HBM is bound by HBM: 8192 x 8192 x 2 B / 3.35 TB/s.
TEST(CostModelPresets, GpuComputeAndHbmBounds) {
  CostModel model(loadTarget("h100"));
  Region gpu = Region::wholeChip(model.target());
  KernelDesc gemm = KernelDesc::matmul(8192, 8192, 8192, NumericFormat::BF16);
  CostBreakdown big = estimateOrDie(model, gemm, gpu);
  double ideal = 2.0 * 8192 * 8192 * 8192 / 989.4e12;
  EXPECT_NEAR(big.seconds, ideal, 0.01 * ideal);
  EXPECT_EQ(big.bound, CostBound::Compute);

  KernelDesc gemv = KernelDesc::matmul(1, 8192, 8192, NumericFormat::BF16);
  gemv.offChipBytes = gemv.weightBytes;
  CostBreakdown decode = estimateOrDie(model, gemv, gpu);
  EXPECT_EQ(decode.bound, CostBound::OffChip);
  EXPECT_NEAR(decode.offChipCycles, 134217728.0 / 3.35e12 * 1.83e9, 1e-3);
}

// NVSwitch: one step each way for an all-reduce; all 18 links carry it, and
// beyond the 8-GPU NVLink domain the 50 GB/s NIC is the limit.
TEST(CostModelPresets, SwitchedCollectives) {
  CostModel model(loadTarget("h100"));
  EXPECT_EQ(model.collectiveLatencySteps(CollectiveKind::AllReduce, 8), 2);
  EXPECT_DOUBLE_EQ(model.collectiveBytesPerSecondPerChip(8), 450e9);
  EXPECT_DOUBLE_EQ(model.collectiveBytesPerSecondPerChip(16), 50e9);
  KernelDesc allReduce = KernelDesc::collectiveOp(
      CollectiveKind::AllReduce, int64_t(1) << 30, NumericFormat::BF16);
  CostBreakdown cost =
      estimateOrDie(model, allReduce, Region::wholeSystem(model.target()));
  double seconds = 2.0 * 7 / 8 * double(int64_t(1) << 30) / 450e9;
  EXPECT_NEAR(cost.linkCycles, seconds * 1.83e9, 1e-3);
}

// With a weight-load rate of 64 B/cycle (a 16-wide fp16 row, 32 bytes, takes
// half a cycle), a 4 x 256 x 256 fp16 product on one tile loads 16 column
// blocks x 256 rows = 4096 rows: 2048 cycles, where its 256 blocks compute
// in 1024 (the vector unit would take 4 x 256 x 256 / 64 = 4096). A 64-row
// product computes 4 row blocks on every stationary block (4096 cycles),
// which hides the same load. One row: the vector unit's 1024 cycles beat
// the load, and the estimate takes it.
TEST(CostModelWeightLoad, FewRowsWaitForTheWeights) {
  TargetModel tiny = loadTarget("tiny");
  rt::TargetDesc desc = tiny.desc();
  desc.chip.tile.matrix.weightLoadBytesPerCycle = 64;
  std::string error;
  std::optional<TargetModel> loaded = TargetModel::fromDesc(desc, error);
  ASSERT_TRUE(loaded) << error;
  CostModel model(*loaded);
  auto compute = [&](const CostModel &cm, int64_t rows) {
    return estimateOrDie(cm, KernelDesc::matmul(rows, 256, 256,
                                                NumericFormat::F16),
                         tiles(1, 1));
  };
  EXPECT_DOUBLE_EQ(compute(model, 4).computeCycles, 2048);
  EXPECT_FALSE(compute(model, 4).usedVectorFallback);
  EXPECT_DOUBLE_EQ(compute(model, 64).computeCycles, 4096);
  EXPECT_DOUBLE_EQ(compute(model, 1).computeCycles, 1024);
  EXPECT_TRUE(compute(model, 1).usedVectorFallback);
  CostModel without(tiny);
  EXPECT_DOUBLE_EQ(compute(without, 4).computeCycles, 1024);
}

//===----------------------------------------------------------------------===//
// graph-partition's prices: ops on one chip, collectives on the network
//===----------------------------------------------------------------------===//
//
// tiny per chip: 16 tiles x 1024 fp16 MACs x 2 x 1 GHz = 3.2768e13 FLOP/s on
// the matrix unit, 16 x 64 lanes x 1 GHz = 1.024e12 op/s on the vector
// unit, 16 x 256 B x 1 GHz = 4.096e12 B/s of SRAM; the fixed cost of an op
// is the longer unit latency, 16 cycles = 16 ns.

// A 64x64x64 fp16 matmul: 524288 FLOPs / 3.2768e13 = 16 ns against its
// 24576 B / 4.096e12 = 6 ns, plus 16 ns.
TEST_F(TinyCostModel, OpOnChipMatmulIsComputeBound) {
  ChipOpWork op;
  op.flops = 2.0 * 64 * 64 * 64;
  op.matmul = true;
  op.format = NumericFormat::F16;
  op.bytes = 24576;
  EXPECT_DOUBLE_EQ(model.opSecondsOnChip(op), 32e-9);
  // Divided over 2 ranks: 8 ns, still above the 6 ns of bytes.
  op.split = 2;
  EXPECT_DOUBLE_EQ(model.opSecondsOnChip(op), 24e-9);
  // Over 4: 4 ns, below them; the bytes bound it.
  op.split = 4;
  EXPECT_DOUBLE_EQ(model.opSecondsOnChip(op), 22e-9);
}

// fp4 has no matrix rate on tiny: the matmul runs at the vector unit's
// 1.024e12 op/s, 524288 / 1.024e12 = 512 ns, plus 16 ns.
TEST_F(TinyCostModel, OpOnChipMatmulInAFormatTheMatrixUnitLacks) {
  ChipOpWork op;
  op.flops = 2.0 * 64 * 64 * 64;
  op.matmul = true;
  op.format = NumericFormat::F4;
  op.bytes = 24576;
  EXPECT_DOUBLE_EQ(model.opSecondsOnChip(op), 528e-9);
}

// An add of two 4096-element fp32 tensors: 4096 / 1.024e12 = 4 ns of vector
// work against 3 x 16384 B / 4.096e12 = 12 ns of SRAM, plus 16 ns. The
// format is the matrix unit's and does not matter to a non-matmul.
TEST_F(TinyCostModel, OpOnChipElementwiseIsBandwidthBound) {
  ChipOpWork op;
  op.flops = 4096;
  op.format = NumericFormat::F16;
  op.bytes = 3 * 4096 * 4;
  EXPECT_DOUBLE_EQ(model.opSecondsOnChip(op), 28e-9);
}

// The ring of 4: each neighbour gets 2 of the 4 links, 2 x 10 GB/s / 1 GHz
// = 20 B/cycle, after 1000 cycles of latency. An all-reduce of 4000 B: 1000
// B chunks, a step 1000 + 1000 / 20 = 1050 cycles, 3 steps a phase, 2
// phases: 6300 cycles = 6.3 us. Without the reduction one phase: 3.15 us.
TEST_F(TinyCostModel, CollectiveOnTheRingNetwork) {
  ChipNetwork net(model.target(), 4);
  EXPECT_DOUBLE_EQ(model.collectiveSecondsOnNetwork(net, 4, 4000, true),
                   6300e-9);
  EXPECT_DOUBLE_EQ(model.collectiveSecondsOnNetwork(net, 4, 4000, false),
                   3150e-9);
}

// Two chips of a ring are linked by all 4 links, 40 B/cycle, and exchange
// directly: one step of a 2000 B chunk, 1000 + 2000 / 40 = 1050 cycles; a
// reduction's two phases 2100. sync_seconds of 0.5 us adds 500 cycles once.
TEST_F(TinyCostModel, CollectiveOfTwoChipsAndItsSync) {
  ChipNetwork pair(model.target(), 2);
  EXPECT_DOUBLE_EQ(model.collectiveSecondsOnNetwork(pair, 2, 4000, false),
                   1050e-9);
  EXPECT_DOUBLE_EQ(model.collectiveSecondsOnNetwork(pair, 2, 4000, true),
                   2100e-9);
  rt::TargetDesc desc = model.target().desc();
  desc.system.links.syncSeconds = 0.5e-6;
  std::string error;
  CostModel synced(
      loom::testing::requireTarget(TargetModel::fromDesc(desc, error), error));
  ChipNetwork syncedPair(synced.target(), 2);
  EXPECT_DOUBLE_EQ(synced.collectiveSecondsOnNetwork(syncedPair, 2, 4000, true),
                   2600e-9);
}

// graph-partition's hop between stages: the link latency, 1 us.
TEST_F(TinyCostModel, StageHopIsOneLinkLatency) {
  EXPECT_DOUBLE_EQ(model.stageHopSeconds(), 1e-6);
}

//===----------------------------------------------------------------------===//
// The planner's prices: SystemCostModel
//===----------------------------------------------------------------------===//
//
// tiny with efficiency factors of one half everywhere, fp16 matmuls at half
// their rate at 64 rows, and 1 us of sync: per chip fp16 3.2768e13 FLOP/s x
// 0.5 = 1.6384e13, fp8 6.5536e13 x 0.5 = 3.2768e13, SRAM (tiny has no
// off-chip memory) 4.096e12 B/s x 0.5 = 2.048e12, links 4 x 10 GB/s x 0.5
// = 2e10 B/s, 1 us latency.

namespace {

TargetModel tinyAtHalf() {
  rt::TargetDesc desc = loadTarget("tiny").desc();
  rt::EfficiencyDesc eff;
  for (NumericFormat format :
       {NumericFormat::F32, NumericFormat::BF16, NumericFormat::F16,
        NumericFormat::F8, NumericFormat::I8})
    eff.matrix[static_cast<size_t>(format)] = 0.5;
  eff.matrixHalfRows[static_cast<size_t>(NumericFormat::F16)] = 64;
  eff.memory = 0.5;
  eff.links = 0.5;
  desc.efficiency = eff;
  desc.system.links.syncSeconds = 1e-6;
  std::string error;
  return loom::testing::requireTarget(TargetModel::fromDesc(desc, error),
                                      error);
}

using WeightFormat = SystemCostModel::WeightFormat;

} // namespace

// The half-rows law: 192 rows reach 192 / (192 + 64) of 1.6384e13; below 64
// rows the rate is half of it; as the rows grow, all of it.
TEST(SystemCostModel, MatmulRateFollowsTheHalfRowsLaw) {
  TargetModel target = tinyAtHalf();
  SystemCostModel cost(target, {WeightFormat{1.0, NumericFormat::F16}},
                       NumericFormat::F16);
  EXPECT_DOUBLE_EQ(cost.matmulRateAt(192), 1.2288e13);
  EXPECT_DOUBLE_EQ(cost.matmulRateAt(16), 8.192e12);
  EXPECT_DOUBLE_EQ(cost.matmulRateAt(16, /*asRowsGrow=*/true), 1.6384e13);
}

// Half the weights in fp16, half in fp8 (no law): a FLOP takes 0.5 /
// 1.6384e13 + 0.5 / 3.2768e13 = 4.57763671875e-14 s, 2.184533e13 FLOP/s.
// An fp4 cache the matrix unit lacks runs on the vector unit, 2 x 1.024e12
// FLOP/s, at the best efficiency of the formats (0.5): 1.024e12.
TEST(SystemCostModel, MixedWeightsAndAttention) {
  TargetModel target = tinyAtHalf();
  SystemCostModel mixed(target,
                        {WeightFormat{0.5, NumericFormat::F16},
                         WeightFormat{0.5, NumericFormat::F8}},
                        NumericFormat::F4);
  EXPECT_NEAR(mixed.matmulRateAt(1e6, true), 1 / 4.57763671875e-14, 1e3);
  EXPECT_DOUBLE_EQ(mixed.attentionRate(), 1.024e12);
  EXPECT_DOUBLE_EQ(mixed.attentionSeconds(2.048e12), 2.0);
}

// Memory at 2.048e12 B/s; the LM head of 1e6 fp16 weights over 2 chips for
// 16 tokens: 16 x 2 x 1e6 / 2 = 1.6e7 FLOPs at 8.192e12 (16 rows) =
// 1.953125 us, against 1e6 B / 2.048e12 = 0.48828125 us of weights.
TEST(SystemCostModel, MemoryAndLmHead) {
  TargetModel target = tinyAtHalf();
  SystemCostModel cost(target, {WeightFormat{1.0, NumericFormat::F16}},
                       NumericFormat::F16);
  EXPECT_DOUBLE_EQ(cost.memoryBytesPerSecond(), 4.096e12);
  EXPECT_DOUBLE_EQ(cost.memorySeconds(2.048e12), 1.0);
  EXPECT_DOUBLE_EQ(cost.lmHead(1e6, 16, 2, 2.0), 1.953125e-6);
  RooflineTime kernel{3.0, 2.0};
  EXPECT_DOUBLE_EQ(kernel.time(), 3.0);
  EXPECT_DOUBLE_EQ(kernel.computeBound(), 3.0);
  EXPECT_DOUBLE_EQ(kernel.memoryBound(), 0.0);
}

// An all-reduce of 1 MB over 4 chips: 2 latencies + 2 x 1e6 x 3/4 / 2e10 =
// 2 us + 75 us; an all-to-all one latency + 37.5 us; nothing on one chip.
// The sync: 1 us at each of tp's two all-reduces and the heads' gather,
// and at ep's two all-to-alls.
TEST(SystemCostModel, CollectivesAndSync) {
  TargetModel target = tinyAtHalf();
  SystemCostModel cost(target, {WeightFormat{1.0, NumericFormat::F16}},
                       NumericFormat::F16);
  EXPECT_DOUBLE_EQ(cost.allReduce(1e6, 4), 77e-6);
  EXPECT_DOUBLE_EQ(cost.allToAll(1e6, 4), 38.5e-6);
  EXPECT_DOUBLE_EQ(cost.allReduce(1e6, 1), 0.0);
  EXPECT_DOUBLE_EQ(cost.allToAll(1e6, 1), 0.0);
  EXPECT_DOUBLE_EQ(cost.syncSeconds(2, 1, true), 3e-6);
  EXPECT_DOUBLE_EQ(cost.syncSeconds(1, 4, false), 2e-6);
  EXPECT_DOUBLE_EQ(cost.syncSeconds(1, 1, false), 0.0);
}

// A stage hop on the ring of 4: the neighbour's 2 links x 1e10 x 0.5 =
// 1e10 B/s, 1 MB in 100 us after 1 us. Of 2 chips, all 4 links: 50 us.
// Moving 1 MB off the system (no scale-out: the chip links at their peak,
// 4e10 B/s each) from 2 chips: 1 us + 12.5 us.
TEST(SystemCostModel, StageHopsAndMovingOut) {
  TargetModel target = tinyAtHalf();
  SystemCostModel cost(target, {WeightFormat{1.0, NumericFormat::F16}},
                       NumericFormat::F16);
  SystemCostModel::Hop ring = cost.hopParts(1e6, 4, 1);
  EXPECT_DOUBLE_EQ(ring.latency, 1e-6);
  EXPECT_DOUBLE_EQ(ring.transfer, 100e-6);
  EXPECT_DOUBLE_EQ(cost.hop(1e6, 4, 1), 101e-6);
  EXPECT_DOUBLE_EQ(cost.hop(1e6, 2, 1), 51e-6);
  EXPECT_DOUBLE_EQ(SystemCostModel::moveOutSeconds(target, 1e6, 2), 13.5e-6);
}
