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
// It has three clients, each priced by functions of its own:
//  - graph-partition prices graph ops on one chip before any kernel exists
//    (CostModel::opSecondsOnChip, collectiveSecondsOnNetwork,
//    stageHopSeconds);
//  - the planner prices an LLM's decode step and prefill on a system from
//    peak rates with the target's efficiency factors (SystemCostModel);
//  - passes and reports price kernels on regions (CostModel::estimate,
//    roofline).
// Where two of them price the same thing their formulas differ on purpose
// (see "Why the collectives are priced twice" below): each is kept exactly
// as its client's outputs were fixed by, so programs and plans do not move.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_TARGET_COSTMODEL_H
#define LOOM_TARGET_COSTMODEL_H

#include "loom/Target/Collective.h"
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

/// The resource that bounds a kernel (or a graph, for the roofline): the
/// runtime's enum (loom/Runtime/KernelEnums.h).
using CostBound = rt::CostBound;
using rt::costBoundName;

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

//===----------------------------------------------------------------------===//
// The planner's prices: a system serving an LLM
//===----------------------------------------------------------------------===//

/// One kernel's compute and memory times; it takes the longer.
struct RooflineTime {
  double compute = 0, memory = 0;
  double time() const { return std::max(compute, memory); }
  /// Its time where that side bounds it, else 0.
  double computeBound() const { return compute >= memory ? compute : 0; }
  double memoryBound() const { return compute >= memory ? 0 : memory; }
};

/// What the planner (lib/Planner) prices a request's kernels by on one
/// system, a GPU or a spatial one: a chip's memory (SRAM on spatial chips,
/// else HBM) bandwidth, the rates the matrix unit multiplies the weights'
/// and the KV cache's formats at, the target's efficiency factors
/// (TargetModel::efficiency; docs/planner.md), and the times of the
/// collectives and stage hops over its chip links. It prices whole
/// layers' matmuls from peak rates, where CostModel::estimate prices one
/// kernel on a region from the tile's units: statically scheduled spatial
/// chips run near their peaks (the compiled layers then replace the
/// estimate), GPUs at the fractions of their peaks that published kernels
/// reach.
///
/// Why the collectives are priced twice: graph-partition
/// (collectiveSecondsOnNetwork) times a collective on the chip network the
/// compiler lowers it to (its algorithm, link shares and sync cycles,
/// exactly as the compiled program will), to choose a split; the planner
/// (allReduce, allToAll) uses the closed form of direct exchange over all
/// of a chip's links at the links' efficiency, with no sync cycles (it
/// adds system.links.sync_seconds per collective, syncSeconds), so that a
/// GPU system's NVLink switch and a spatial rack price alike; its compiled
/// layers then replace the estimate on spatial systems. Their stage hops
/// differ likewise: graph-partition charges a link latency
/// (CostModel::stageHopSeconds); the planner the pair's share of the links
/// (hop). Unifying them would move programs or plans, so each keeps its
/// formula under its own name.
class SystemCostModel {
public:
  /// A format the matrix unit runs the weights in: its share of the
  /// weights, the FLOP/s its matmuls reach as their rows grow (the
  /// format's peak times its efficiency) and its
  /// `efficiency.matrix_half_rows` (0: none).
  struct MatmulFormat {
    double share = 1, rate = 0, halfRows = 0;
  };
  /// A share of the weights in a format the matrix unit runs.
  struct WeightFormat {
    double share = 1;
    NumericFormat format = NumericFormat::BF16;
  };

  /// The rates of `target` for weights in `weights` (their shares and the
  /// formats the matrix unit runs them in; a format the chip has no rate
  /// for runs at bf16's) and a KV cache the attention's matmuls run in
  /// `kvFormat` (a format the chip does not compute in: at the weights'
  /// rate as the rows grow). It keeps a reference to `target`, which must
  /// outlive it (CostModel keeps a copy; the planner prices thousands of
  /// candidates against one target).
  SystemCostModel(const TargetModel &target,
                  const std::vector<WeightFormat> &weights,
                  NumericFormat kvFormat);

  const TargetModel &target() const { return t_; }
  const rt::EfficiencyDesc &efficiency() const { return eff_; }
  const std::vector<MatmulFormat> &weightFormats() const {
    return weightFormats_;
  }
  /// A chip's memory bandwidth (SRAM on spatial chips, else off-chip), at
  /// peak.
  double memoryBytesPerSecond() const { return memBw_; }
  /// The FLOP/s of attention's matmuls (q.k, p.v), which read the KV cache
  /// and run in its format (an fp8 cache beside fp4 weights: the fp8 rate).
  double attentionRate() const { return attnRate_; }

  /// Seconds to move `bytes` through a chip's memory, at its efficiency.
  double memorySeconds(double bytes) const {
    return bytes / (memBw_ * eff_.memory);
  }
  /// Seconds of attention's `flops` at attentionRate().
  double attentionSeconds(double flops) const { return flops / attnRate_; }

  /// The synchronisation a layer of `tp` x `ep` chips waits beyond its
  /// collectives' transfers: system.links.sync_seconds at each collective
  /// in series, the two all-reduces of tensor parallelism (after
  /// attention, after the MLP or experts), the all-gathers of the heads
  /// where tp exceeds the KV heads (`gathersHeads`: k and v, or q, k and
  /// v, gathered at once: one wait, as the compiled layer's run side by
  /// side) and the two all-to-alls of expert parallelism (the tokens to
  /// their experts and back).
  double syncSeconds(int64_t tp, int64_t ep, bool gathersHeads) const {
    return sync_ *
           (2.0 * double(tp > 1) + double(gathersHeads) + 2.0 * double(ep > 1));
  }

  /// The FLOP/s of a weight matmul of `rows` rows (the tokens it
  /// multiplies), its FLOPs split over the weights' formats in their
  /// shares: each format's rate x rows / (rows + its half rows), and half
  /// its rate below its half rows (the law is fitted on large GEMMs; a
  /// matmul of a few rows runs a different kernel, memory bound, which
  /// the law's fixed cost of half rows rows would wrongly make compute
  /// bound). `asRowsGrow`: each format's rate without the law.
  double matmulRateAt(double rows, bool asRowsGrow = false) const;

  /// The LM head of `params` weights of `bytesEach` each split over `tp`
  /// chips, for `tokens` tokens: its own roofline (its weights read,
  /// compute bound at large batches).
  double lmHead(double params, double tokens, int64_t tp,
                double bytesEach) const;
  /// An all-reduce of `bytes` over `n` chips: two steps of direct
  /// exchange (reduce-scatter, all-gather), each a link latency plus the
  /// chip's share of the bytes over all its links.
  double allReduce(double bytes, int64_t n) const {
    if (n <= 1)
      return 0;
    return 2 * latency_ +
           2.0 * bytes * double(n - 1) / double(n) / (linkBw_ * eff_.links);
  }
  /// An all-to-all (expert dispatch or combine) of `bytes` per chip.
  double allToAll(double bytes, int64_t n) const {
    if (n <= 1)
      return 0;
    return latency_ +
           bytes * double(n - 1) / double(n) / (linkBw_ * eff_.links);
  }
  /// A hop's route's latency and its transfer time (bytes over the
  /// route's rate): the time the link is busy, which a message sent behind
  /// another waits for, where the latency overlaps.
  struct Hop {
    double latency = 0, transfer = 0;
  };
  /// One hop between pipeline stages of a system of `chips`: over the link
  /// between a chip and its counterpart in the next stage, whose bandwidth
  /// is that pair's share of the chip's links (loom::ChipNetwork's rules,
  /// which PlannerTest checks this against): a ring's neighbour gets half;
  /// a dragonfly's local peer half / (chips per node - 1), all of them /
  /// (n - 1) in a single node, its global peer half / (nodes - 1) once
  /// stages span nodes (after a local hop, at the slower link's rate, when
  /// a stage is not whole nodes); fully connected and switch 1 / (n - 1).
  /// Under adaptive routing a dragonfly's stages of whole nodes may also
  /// send over the two-hop routes through every other node, each node to
  /// its one counterpart: (nodes - 1) / 2 times the global share, at two
  /// link latencies, where that delivers the bytes first.
  Hop hopParts(double bytes, int64_t chips, int64_t stageChips) const;
  double hop(double bytes, int64_t chips, int64_t stageChips) const {
    Hop h = hopParts(bytes, chips, stageChips);
    return h.latency + h.transfer;
  }

  /// Seconds to move `bytes` off `target`'s system (a request's KV cache
  /// from prefill chips to decode chips), `chips` chips each sending its
  /// share over the scale-out network (or, without one, its chip links):
  /// one latency, then the bytes at every chip's rate.
  static double moveOutSeconds(const TargetModel &target, double bytes,
                               int64_t chips);

private:
  const TargetModel &t_;
  rt::EfficiencyDesc eff_;
  double memBw_ = 0, linkBw_ = 0, latency_ = 0;
  /// system.links.sync_seconds: what a layer's chips wait at each of its
  /// collectives (syncSeconds()).
  double sync_ = 0;
  double attnRate_ = 0;
  std::vector<MatmulFormat> weightFormats_;
};

} // namespace loom

#endif // LOOM_TARGET_COSTMODEL_H
