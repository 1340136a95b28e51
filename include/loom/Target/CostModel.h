//===- CostModel.h - The shared kernel cost model and roofline --*- C++ -*-===//
//
// One cost model for passes, the planner, the runtime and the reports. A
// kernel is described by plain numbers (kind, M/N/K or element counts, bytes,
// numeric format); a region is a rectangle of tiles on each of a number of
// chips. The model returns the cycles each resource needs (compute with the
// matrix unit's block quantisation, SRAM, mesh ingress, chip-to-chip links,
// off-chip memory) and the fill/drain latency, and the roofline lower bound of
// a list of kernels. Every hardware number comes from the TargetModel. The
// formulas, with a worked example, are in docs/targets.md.
//
// graph-partition prices graph ops on one chip before any kernel exists,
// at a coarser grain than a kernel on a region; its prices live here too,
// under their own names (CostModel::opSecondsOnChip,
// collectiveSecondsOnNetwork, stageHopSeconds).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_COSTMODEL_H
#define LOOM_TARGET_COSTMODEL_H

#include "loom/Target/KernelKind.h"
#include "loom/Target/TargetModel.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom {

class ChipNetwork;

enum class CollectiveKind {
  AllReduce,
  AllGather,
  ReduceScatter,
  AllToAll,
  Broadcast,
  SendRecv,
};

/// The resource that bounds a kernel (or a graph, for the roofline).
enum class CostBound { Compute, Sram, Mesh, Link, OffChip, FillDrain };

const char *collectiveKindName(CollectiveKind kind);
const char *costBoundName(CostBound bound);

/// A convolution's shape (NCHW terms; the layout does not change the cost).
struct ConvShape {
  int64_t batch = 1;
  int64_t inChannels = 1;
  int64_t inHeight = 1;
  int64_t inWidth = 1;
  int64_t outChannels = 1;
  int64_t outHeight = 1;
  int64_t outWidth = 1;
  int64_t kernelHeight = 1;
  int64_t kernelWidth = 1;
  int64_t groups = 1;
};

/// The most bytes a kernel's one byte count may be: 2^60 (1 EiB), past
/// every target's memory. The factories saturate their counts here, and
/// CostModel::estimate refuses a kernel that reaches it, so that the sums
/// of a few counts (read + written, activations + weights) stay within
/// int64.
inline constexpr int64_t kMaxKernelBytes = int64_t(1) << 60;

/// What a kernel does, in plain numbers. Build one with the factories below
/// (they fill in the default byte counts) and adjust fields as needed.
struct KernelDesc {
  KernelKind kind = KernelKind::Elementwise;
  /// The format the arithmetic runs in (picks the matrix unit's rate).
  NumericFormat format = NumericFormat::F32;

  /// MatMul/Conv: `batch` independent (M x K) * (K x N) products. A
  /// convolution is the implicit GEMM M = N*OH*OW, N = OC/g, K = IC/g*KH*KW,
  /// batch = g (groups).
  int64_t batch = 1;
  int64_t m = 0;
  int64_t n = 0;
  int64_t k = 0;
  /// Vector operations per output element fused after the matmul (bias,
  /// activation, residual add, ...).
  int64_t epilogueOpsPerOutput = 0;

  /// Vector kinds: elements processed (the inputs, for a reduction), and
  /// vector operations per element.
  int64_t elements = 0;
  int64_t opsPerElement = 1;

  /// Bytes read from and written to the region's SRAM.
  int64_t sramBytesRead = 0;
  int64_t sramBytesWritten = 0;
  /// Bytes of the stationary operand (weights); informational, so a planner
  /// can move them off chip (`offChipBytes = weightBytes`).
  int64_t weightBytes = 0;
  /// Bytes entering the region over the on-chip mesh (from a producer
  /// `Region::sourceHops` hops away).
  int64_t meshBytesIn = 0;
  /// Bytes moved between off-chip memory and the chip(s), in total.
  int64_t offChipBytes = 0;

  /// Collective: which one, and the per-chip buffer size in bytes (the full
  /// reduced tensor for AllReduce, the full gathered output for AllGather,
  /// the full input for ReduceScatter/AllToAll, the message for
  /// Broadcast/SendRecv).
  CollectiveKind collective = CollectiveKind::AllReduce;
  int64_t collectiveBytes = 0;

  static KernelDesc matmul(int64_t m, int64_t n, int64_t k,
                           NumericFormat format, int64_t batch = 1);
  static KernelDesc conv(const ConvShape &shape, NumericFormat format);
  static KernelDesc elementwise(int64_t elements, int64_t inputs,
                                NumericFormat format,
                                int64_t opsPerElement = 1);
  static KernelDesc reduction(int64_t inElements, int64_t outElements,
                              NumericFormat format);
  static KernelDesc softmax(int64_t elements, NumericFormat format);
  static KernelDesc normalization(int64_t elements, NumericFormat format);
  static KernelDesc dataMovement(int64_t bytes);
  static KernelDesc collectiveOp(CollectiveKind collective, int64_t bytes,
                                 NumericFormat format);

  /// Useful matrix FLOPs: 2 * batch * M * N * K for MatMul/Conv, else 0.
  double matrixFlops() const;
  /// Useful vector operations (epilogues, element-wise work, reductions of
  /// collectives on `participants` chips).
  double vectorOps(int64_t participants = 1) const;
};

/// Where a kernel runs: a tileRows x tileCols rectangle of tiles on each of
/// `chips` chips; work is split evenly over all of them.
struct Region {
  int64_t tileRows = 1;
  int64_t tileCols = 1;
  int64_t chips = 1;
  /// Mesh hops from the producer of `meshBytesIn` to the region's edge.
  int64_t sourceHops = 0;

  int64_t tilesPerChip() const { return tileRows * tileCols; }
  /// Every tile of one chip.
  static Region wholeChip(const TargetModel &target);
  /// Every tile of every chip of the system.
  static Region wholeSystem(const TargetModel &target);
};

/// The cost of one kernel on one region, per resource, in cycles of the
/// target's clock. Resources overlap, so
///   totalCycles = max(compute, sram, mesh, link, offChip) + fillDrain.
struct CostBreakdown {
  double computeCycles = 0;
  double sramCycles = 0;
  double meshCycles = 0;
  double linkCycles = 0;
  double offChipCycles = 0;
  double fillDrainCycles = 0;
  double totalCycles = 0;
  double seconds = 0;
  /// The largest term (fill/drain included).
  CostBound bound = CostBound::Compute;
  /// Useful matrix MACs over the MACs the matrix unit is occupied for
  /// (block padding and uneven spread over tiles); 1 when no matrix work.
  double matrixEfficiency = 1;
  /// True if a MatMul/Conv runs on the vector unit: the matrix unit does
  /// not run its format, or the vector unit is faster (many tiny products,
  /// a depthwise convolution's, would mostly pad the matrix unit's blocks).
  bool usedVectorFallback = false;
};

/// The roofline lower bound of a list of kernels on a number of chips:
/// every unit busy all the time, nothing padded, everything overlapped.
struct RooflineBound {
  double matrixFlops = 0;
  double vectorOps = 0;
  double sramBytes = 0;
  double offChipBytes = 0;
  /// Chip-to-chip bytes sent per chip.
  double linkBytesPerChip = 0;
  double computeSeconds = 0;
  double sramSeconds = 0;
  double offChipSeconds = 0;
  double linkSeconds = 0;
  double seconds = 0;
  CostBound bound = CostBound::Compute;
};

/// One graph op's work on one chip, as graph-partition counts it before any
/// kernel is formed (PartitionCost.cpp): its arithmetic and the bytes the
/// chip reads and writes of its share of each value.
struct ChipOpWork {
  /// A matmul's FLOPs (2 x outputs x K), else one vector operation per
  /// result element.
  double flops = 0;
  /// A matmul: it runs on the matrix unit when the unit has `format`, else
  /// on the vector unit.
  bool matmul = false;
  NumericFormat format = NumericFormat::F32;
  /// Bytes read and written by the chip.
  double bytes = 0;
  /// The ranks the op's arithmetic is divided over (1: not divided).
  double split = 1;
};

class CostModel {
public:
  explicit CostModel(TargetModel target) : target_(std::move(target)) {}

  const TargetModel &target() const { return target_; }

  /// The cost of `kernel` on `region`. Returns std::nullopt (and sets
  /// `*error` when given) if the region does not fit the target or the
  /// kernel is malformed (negative sizes, off-chip bytes on a target without
  /// off-chip memory).
  std::optional<CostBreakdown> estimate(const KernelDesc &kernel,
                                        const Region &region,
                                        std::string *error = nullptr) const;

  /// Cycles the vector unit of each of `tiles` tiles needs for the
  /// epilogue of a matmul or conv (its vector ops in whole lanes); the
  /// epilogue streams beside the matrix unit, which takes longer.
  int64_t epilogueCycles(const KernelDesc &kernel, int64_t tiles) const;

  /// The roofline lower bound of `kernels` run on `chips` chips.
  RooflineBound roofline(const std::vector<KernelDesc> &kernels,
                         int64_t chips = 1) const;

  /// Bytes each chip sends for a collective of `bytes` over `participants`
  /// chips (ring-optimal algorithms; see docs/targets.md).
  static double collectiveBytesPerChip(CollectiveKind collective,
                                       int64_t participants, int64_t bytes);
  /// Number of link latencies a collective over `participants` chips pays
  /// in sequence on this target's topology, within one link domain.
  int64_t collectiveLatencySteps(CollectiveKind collective,
                                 int64_t participants) const;
  /// The latency a collective pays: steps times the link latency, plus the
  /// scale-out latency when it leaves the link domain.
  double collectiveLatencySeconds(CollectiveKind collective,
                                  int64_t participants) const;
  /// Bytes per second one chip can send over the links a collective over
  /// `participants` chips uses (the scale-out network once it leaves the
  /// link domain).
  double collectiveBytesPerSecondPerChip(int64_t participants) const;

  //===--------------------------------------------------------------------===//
  // graph-partition's prices: ops on one chip, before kernels exist
  //===--------------------------------------------------------------------===//

  /// Seconds of `op` on one chip: a roofline of its arithmetic (divided
  /// over `op.split` ranks) against the chip's matrix peak at its format
  /// (a matmul the matrix unit runs) or its vector peak, and of its bytes
  /// against the chip's SRAM bandwidth, plus a fixed cost, the longest unit
  /// pipeline latency of the tile (a kernel's fill and drain), which keeps
  /// many tiny ops from looking free.
  double opSecondsOnChip(const ChipOpWork &op) const;
  /// Seconds of a collective of `bytes` (per rank, at the format they
  /// cross in) over ranks 0..ranks-1 of `net`, which stand for every group
  /// of consecutive ranks: the chips synchronise (ChipNetwork::syncCycles,
  /// as the tile program waits), then one or two phases (`reduce`: a
  /// reduce-scatter and an all-gather) of the algorithm `net` picks, each
  /// step every rank sending a 1/ranks chunk: ring, ranks - 1 steps to a
  /// neighbour; direct, one step to every rank at once; hierarchical, two
  /// steps at the pace of the farthest pair.
  double collectiveSecondsOnNetwork(const ChipNetwork &net, int64_t ranks,
                                    int64_t bytes, bool reduce) const;
  /// graph-partition's hop between pipeline stages: the activations
  /// crossing it (small for decode) cost about one link latency.
  double stageHopSeconds() const { return target_.chipLinkLatencySeconds(); }

private:
  TargetModel target_;
};

} // namespace loom

#endif // LOOM_TARGET_COSTMODEL_H
