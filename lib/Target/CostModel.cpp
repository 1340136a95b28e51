//===- CostModel.cpp - The shared kernel cost model and roofline ----------===//
//
// Formulas are documented, with a worked example, in docs/targets.md; keep
// the two in step.
//
//===----------------------------------------------------------------------===//

#include "loom/Target/CostModel.h"

#include "loom/Target/ChipNetwork.h"

#include <algorithm>
#include <cmath>

namespace loom {

namespace {

int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/// Bytes of `elements` values in `format`, rounded up to whole bytes, at
/// most kMaxKernelBytes (estimate() refuses a kernel that reaches it; a
/// double past int64 would not convert).
int64_t bytesOf(double elements, NumericFormat format) {
  double bytes = std::ceil(elements * rt::numericFormatBytes(format));
  return bytes >= double(kMaxKernelBytes) ? kMaxKernelBytes
                                          : static_cast<int64_t>(bytes);
}

/// a + b, at most kMaxKernelBytes.
int64_t addBytes(int64_t a, int64_t b) {
  return std::min(a + b, kMaxKernelBytes);
}

bool isMatrixKind(KernelKind kind) {
  return kind == KernelKind::MatMul || kind == KernelKind::Conv;
}

bool isReducingCollective(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ||
         kind == CollectiveKind::ReduceScatter;
}

} // namespace

//===----------------------------------------------------------------------===//
// KernelDesc
//===----------------------------------------------------------------------===//

KernelDesc KernelDesc::matmul(int64_t m, int64_t n, int64_t k,
                              NumericFormat format, int64_t batch) {
  KernelDesc kernel;
  kernel.kind = KernelKind::MatMul;
  kernel.format = format;
  kernel.batch = batch;
  kernel.m = m;
  kernel.n = n;
  kernel.k = k;
  double b = double(batch);
  kernel.weightBytes = bytesOf(b * double(k) * double(n), format);
  kernel.sramBytesRead =
      addBytes(bytesOf(b * double(m) * double(k), format), kernel.weightBytes);
  kernel.sramBytesWritten = bytesOf(b * double(m) * double(n), format);
  return kernel;
}

KernelDesc KernelDesc::conv(const ConvShape &shape, NumericFormat format) {
  KernelDesc kernel;
  kernel.kind = KernelKind::Conv;
  kernel.format = format;
  int64_t groups = std::max<int64_t>(shape.groups, 1);
  kernel.batch = groups;
  kernel.m = shape.batch * shape.outHeight * shape.outWidth;
  kernel.n = shape.outChannels / groups;
  kernel.k = shape.inChannels / groups * shape.kernelHeight * shape.kernelWidth;
  kernel.weightBytes =
      bytesOf(double(shape.outChannels) * double(shape.inChannels / groups) *
                  double(shape.kernelHeight) * double(shape.kernelWidth),
              format);
  kernel.sramBytesRead =
      addBytes(bytesOf(double(shape.batch) * double(shape.inChannels) *
                           double(shape.inHeight) * double(shape.inWidth),
                       format),
               kernel.weightBytes);
  kernel.sramBytesWritten =
      bytesOf(double(shape.batch) * double(shape.outChannels) *
                  double(shape.outHeight) * double(shape.outWidth),
              format);
  return kernel;
}

KernelDesc KernelDesc::elementwise(int64_t elements, int64_t inputs,
                                   NumericFormat format,
                                   int64_t opsPerElement) {
  KernelDesc kernel;
  kernel.kind = KernelKind::Elementwise;
  kernel.format = format;
  kernel.elements = elements;
  kernel.opsPerElement = opsPerElement;
  kernel.sramBytesRead = bytesOf(double(elements) * double(inputs), format);
  kernel.sramBytesWritten = bytesOf(double(elements), format);
  return kernel;
}

KernelDesc KernelDesc::reduction(int64_t inElements, int64_t outElements,
                                 NumericFormat format) {
  KernelDesc kernel;
  kernel.kind = KernelKind::Reduction;
  kernel.format = format;
  kernel.elements = inElements;
  kernel.opsPerElement = 1;
  kernel.sramBytesRead = bytesOf(double(inElements), format);
  kernel.sramBytesWritten = bytesOf(double(outElements), format);
  return kernel;
}

KernelDesc KernelDesc::softmax(int64_t elements, NumericFormat format) {
  KernelDesc kernel = elementwise(elements, 1, format, /*opsPerElement=*/5);
  kernel.kind = KernelKind::Softmax;
  return kernel;
}

KernelDesc KernelDesc::normalization(int64_t elements, NumericFormat format) {
  KernelDesc kernel = elementwise(elements, 1, format, /*opsPerElement=*/7);
  kernel.kind = KernelKind::Normalization;
  return kernel;
}

KernelDesc KernelDesc::dataMovement(int64_t bytes) {
  KernelDesc kernel;
  kernel.kind = KernelKind::DataMovement;
  kernel.elements = 0;
  kernel.opsPerElement = 0;
  kernel.sramBytesRead = bytes;
  kernel.sramBytesWritten = bytes;
  return kernel;
}

KernelDesc KernelDesc::collectiveOp(CollectiveKind collective, int64_t bytes,
                                    NumericFormat format) {
  KernelDesc kernel;
  kernel.kind = KernelKind::Collective;
  kernel.format = format;
  kernel.collective = collective;
  kernel.collectiveBytes = bytes;
  kernel.sramBytesRead = bytes;
  kernel.sramBytesWritten = bytes;
  return kernel;
}

double KernelDesc::matrixFlops() const {
  if (!isMatrixKind(kind)) {
    return 0;
  }
  return 2.0 * double(batch) * double(m) * double(n) * double(k);
}

double KernelDesc::vectorOps(int64_t participants) const {
  switch (kind) {
  case KernelKind::MatMul:
  case KernelKind::Conv:
    return double(batch) * double(m) * double(n) * double(epilogueOpsPerOutput);
  case KernelKind::Collective: {
    if (!isReducingCollective(collective) || participants < 2) {
      return 0;
    }
    // One add per element received: (p-1)/p of the buffer.
    double elementsPerChip =
        double(collectiveBytes) / rt::numericFormatBytes(format);
    return elementsPerChip * double(participants - 1) / double(participants);
  }
  default:
    return double(elements) * double(opsPerElement);
  }
}

//===----------------------------------------------------------------------===//
// Region
//===----------------------------------------------------------------------===//

Region Region::wholeChip(const TargetModel &target) {
  Region region;
  region.tileRows = target.tileRows();
  region.tileCols = target.tileCols();
  return region;
}

Region Region::wholeSystem(const TargetModel &target) {
  Region region = wholeChip(target);
  region.chips = target.chips();
  return region;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

double CostModel::collectiveBytesPerChip(CollectiveKind collective,
                                         int64_t participants, int64_t bytes) {
  if (participants < 2) {
    return 0;
  }
  double p = double(participants);
  double size = double(bytes);
  switch (collective) {
  case CollectiveKind::AllReduce:
    return 2.0 * (p - 1.0) / p * size;
  case CollectiveKind::AllGather:
  case CollectiveKind::ReduceScatter:
  case CollectiveKind::AllToAll:
    return (p - 1.0) / p * size;
  case CollectiveKind::Broadcast:
  case CollectiveKind::SendRecv:
    return size;
  }
  return 0;
}

int64_t CostModel::collectiveLatencySteps(CollectiveKind collective,
                                          int64_t participants) const {
  if (participants < 2) {
    return 0;
  }
  bool isAllReduce = collective == CollectiveKind::AllReduce;
  if (collective == CollectiveKind::SendRecv) {
    return 1;
  }
  // Only the chips inside one link domain count here; the scale-out hop is
  // added by collectiveLatencySeconds.
  int64_t p = std::min(participants, target_.linkDomainChips());
  int64_t phase = 0;
  switch (target_.topology()) {
  case Topology::None:
    return 0;
  case Topology::Ring:
    phase = p - 1;
    break;
  case Topology::Torus2D: {
    auto side = static_cast<int64_t>(std::ceil(std::sqrt(double(p))));
    phase = std::max<int64_t>(2 * (side - 1), 1);
    break;
  }
  case Topology::FullyConnected:
  case Topology::Switch:
    phase = 1;
    break;
  case Topology::Dragonfly:
    // Local, global, local; one local hop inside a fully connected node.
    phase = p <= target_.chipsPerNode() ? 1 : 3;
    break;
  }
  // An all-reduce is a reduce-scatter followed by an all-gather.
  return isAllReduce ? 2 * phase : phase;
}

double CostModel::collectiveLatencySeconds(CollectiveKind collective,
                                           int64_t participants) const {
  double seconds = double(collectiveLatencySteps(collective, participants)) *
                   target_.chipLinkLatencySeconds();
  const rt::SystemDesc &system = target_.desc().system;
  if (participants > target_.linkDomainChips() && system.scaleOut) {
    int64_t outerSteps = collective == CollectiveKind::AllReduce ? 2 : 1;
    seconds += double(outerSteps) * system.scaleOut->latencySeconds;
  }
  return seconds;
}

double CostModel::collectiveBytesPerSecondPerChip(int64_t participants) const {
  double links = target_.chipLinkBytesPerSecondPerChip();
  const rt::SystemDesc &system = target_.desc().system;
  if (participants > target_.linkDomainChips() && system.scaleOut) {
    return std::min(links, system.scaleOut->bytesPerSecond);
  }
  return links;
}

//===----------------------------------------------------------------------===//
// Kernel cost
//===----------------------------------------------------------------------===//

/// Why `kernel` cannot be costed on `region` of `target`, or nothing.
static std::optional<std::string> kernelProblem(const TargetModel &target,
                                                const KernelDesc &kernel,
                                                const Region &region) {
  const std::string where =
      std::string(kernelKindName(kernel.kind)) + " on " + target.name() + ": ";
  if (region.tileRows < 1 || region.tileCols < 1 || region.chips < 1 ||
      region.sourceHops < 0) {
    return where + "region sizes must be positive";
  }
  if (region.tileRows > target.tileRows() ||
      region.tileCols > target.tileCols()) {
    return where + "a " + std::to_string(region.tileRows) + " x " +
           std::to_string(region.tileCols) +
           " region does not fit the chip's " +
           std::to_string(target.tileRows()) + " x " +
           std::to_string(target.tileCols()) + " tiles";
  }
  if (region.chips > target.chips()) {
    return where + std::to_string(region.chips) +
           " chips requested but the system has " +
           std::to_string(target.chips());
  }
  if (kernel.batch < 0 || kernel.m < 0 || kernel.n < 0 || kernel.k < 0 ||
      kernel.elements < 0 || kernel.opsPerElement < 0 ||
      kernel.epilogueOpsPerOutput < 0 || kernel.sramBytesRead < 0 ||
      kernel.sramBytesWritten < 0 || kernel.meshBytesIn < 0 ||
      kernel.offChipBytes < 0 || kernel.collectiveBytes < 0) {
    return where + "kernel sizes must not be negative";
  }
  for (int64_t bytes :
       {kernel.weightBytes, kernel.sramBytesRead, kernel.sramBytesWritten,
        kernel.meshBytesIn, kernel.offChipBytes, kernel.collectiveBytes})
    if (bytes >= kMaxKernelBytes)
      return where + "the kernel moves 2^60 bytes (1 EiB) or more, " +
             "past every chip's memory";
  if (kernel.offChipBytes > 0 && !target.hasOffChipMemory()) {
    return where + "the kernel moves off-chip bytes but the target "
                   "has no off-chip memory";
  }
  return std::nullopt;
}

/// The compute cycles of `kernel` on `tiles` tiles (with its matrix
/// efficiency and vector fallback) into `cost`; the compute unit's latency.
static int64_t computeCost(const TargetModel &target, const KernelDesc &kernel,
                           const Region &region, int64_t tiles,
                           CostBreakdown &cost) {
  const rt::ChipDesc &chip = target.desc().chip;
  const rt::MatrixUnitDesc &matrix = chip.tile.matrix;
  const int64_t lanes = chip.tile.vector.lanes;
  int64_t unitLatency = 0;

  // Compute: the matrix unit in whole blocks, the vector unit in whole lanes.
  auto vectorCycles = [&](double ops) -> double {
    if (ops <= 0) {
      return 0;
    }
    return std::ceil(std::ceil(ops / double(tiles)) / double(lanes));
  };
  if (isMatrixKind(kernel.kind)) {
    double usefulMacs = double(kernel.batch) * double(kernel.m) *
                        double(kernel.n) * double(kernel.k);
    double matrixCycles = 0;
    // The contraction on the vector unit: one multiply-accumulate per lane
    // per cycle.
    double outputs = double(kernel.batch) * double(kernel.m) * double(kernel.n);
    double laneCycles =
        std::ceil(std::ceil(outputs / double(tiles)) * double(kernel.k) /
                  double(lanes));
    double epilogueOnly = vectorCycles(kernel.vectorOps());
    if (usefulMacs > 0 && target.matrixSupports(kernel.format)) {
      int64_t macs = matrix.macs(kernel.format);
      int64_t outputBlocks = kernel.batch * ceilDiv(kernel.m, matrix.blockM) *
                             ceilDiv(kernel.n, matrix.blockN);
      int64_t kSteps = ceilDiv(kernel.k, matrix.blockK);
      int64_t blocksPerTile = ceilDiv(outputBlocks, tiles);
      double blockMacs =
          double(matrix.blockM) * double(matrix.blockN) * double(matrix.blockK);
      matrixCycles =
          double(blocksPerTile) * double(kSteps) * blockMacs / double(macs);
      // The stationary blocks' rows enter at the unit's weight-load rate
      // (rule weight.load), each block serving every row block of A: with
      // few rows (a decode step's matrix-vector products) that binds.
      double weightRows = double(kernel.batch) *
                          double(ceilDiv(kernel.n, matrix.blockN)) *
                          double(kernel.k) / double(tiles);
      if (matrix.weightLoadBytesPerCycle > 0) {
        matrixCycles = std::max(
            matrixCycles, weightRows * double(matrix.blockN) *
                              rt::numericFormatBytes(kernel.format) /
                              matrix.weightLoadBytesPerCycle);
      }
      cost.matrixEfficiency =
          usefulMacs / (double(tiles) * double(macs) * matrixCycles);
      unitLatency = matrix.latencyCycles;
      // Many tiny products (a depthwise convolution's) pad the matrix
      // unit's blocks so badly that the vector unit is faster: use it.
      if (laneCycles + epilogueOnly < std::max(matrixCycles, epilogueOnly)) {
        cost.usedVectorFallback = true;
        matrixCycles = laneCycles;
        cost.matrixEfficiency =
            usefulMacs / (double(tiles) * double(lanes) * matrixCycles);
        unitLatency = chip.tile.vector.latencyCycles;
      }
    } else if (usefulMacs > 0) {
      cost.usedVectorFallback = true;
      matrixCycles = laneCycles;
      cost.matrixEfficiency =
          usefulMacs / (double(tiles) * double(lanes) * matrixCycles);
      unitLatency = chip.tile.vector.latencyCycles;
    }
    double epilogueCycles = vectorCycles(kernel.vectorOps());
    if (epilogueCycles > 0 && !cost.usedVectorFallback) {
      unitLatency += chip.tile.vector.latencyCycles;
    }
    // The epilogue runs on the vector unit while the matrix unit works; when
    // the contraction itself fell back to the vector unit, the two share it.
    cost.computeCycles = cost.usedVectorFallback
                             ? matrixCycles + epilogueCycles
                             : std::max(matrixCycles, epilogueCycles);
  } else {
    double ops = kernel.vectorOps(region.chips);
    cost.computeCycles = vectorCycles(ops);
    if (ops > 0) {
      unitLatency = chip.tile.vector.latencyCycles;
    }
  }
  return unitLatency;
}

std::optional<CostBreakdown> CostModel::estimate(const KernelDesc &kernel,
                                                 const Region &region,
                                                 std::string *error) const {
  auto reject = [error](std::string message) -> std::optional<CostBreakdown> {
    if (error) {
      *error = std::move(message);
    }
    return std::nullopt;
  };
  if (std::optional<std::string> problem =
          kernelProblem(target_, kernel, region)) {
    return reject(*problem);
  }

  const rt::ChipDesc &chip = target_.desc().chip;
  const int64_t tilesPerChip = region.tilesPerChip();
  const bool isCollective = kernel.kind == KernelKind::Collective;
  // A collective's work and bytes are per chip; every other kernel's are
  // totals spread evenly over all tiles of all chips of the region.
  const int64_t tiles =
      isCollective ? tilesPerChip : tilesPerChip * region.chips;
  const double chipsSharing = isCollective ? 1.0 : double(region.chips);

  CostBreakdown cost;
  int64_t unitLatency = computeCost(target_, kernel, region, tiles, cost);

  // SRAM: every byte read or written once, spread over the region's tiles.
  double sramBytes =
      double(kernel.sramBytesRead) + double(kernel.sramBytesWritten);
  cost.sramCycles = sramBytes / (chip.tile.sram.bytesPerCycle * double(tiles));

  // Mesh ingress: bytes enter through the region's west edge, one link per
  // row of the region.
  int64_t hops = 0;
  if (chip.mesh) {
    double meshBytesPerChip = double(kernel.meshBytesIn) / chipsSharing;
    cost.meshCycles = meshBytesPerChip /
                      (chip.mesh->linkBytesPerCycle * double(region.tileRows));
    hops = region.sourceHops + (region.tileRows - 1) + (region.tileCols - 1);
  }

  // Off-chip memory: each chip streams its share.
  if (kernel.offChipBytes > 0) {
    double bytesPerCycle =
        target_.offChipBytesPerSecondPerChip() / target_.clockHz();
    cost.offChipCycles =
        double(kernel.offChipBytes) / (double(region.chips) * bytesPerCycle);
  }

  // Chip-to-chip links.
  double linkLatencySeconds = 0;
  if (isCollective && region.chips > 1) {
    double bytesPerChip = collectiveBytesPerChip(
        kernel.collective, region.chips, kernel.collectiveBytes);
    cost.linkCycles = target_.secondsToCycles(
        bytesPerChip / collectiveBytesPerSecondPerChip(region.chips));
    linkLatencySeconds =
        collectiveLatencySeconds(kernel.collective, region.chips);
  }

  int64_t hopLatency = chip.mesh ? chip.mesh->hopLatencyCycles : 0;
  cost.fillDrainCycles = double(unitLatency) + double(hopLatency * hops) +
                         target_.secondsToCycles(linkLatencySeconds);

  // Resources overlap; fill and drain do not.
  struct Term {
    double cycles;
    CostBound bound;
  };
  const Term terms[] = {{cost.computeCycles, CostBound::Compute},
                        {cost.sramCycles, CostBound::Sram},
                        {cost.meshCycles, CostBound::Mesh},
                        {cost.linkCycles, CostBound::Link},
                        {cost.offChipCycles, CostBound::OffChip}};
  double steady = 0;
  cost.bound = CostBound::Compute;
  for (const Term &term : terms) {
    if (term.cycles > steady) {
      steady = term.cycles;
      cost.bound = term.bound;
    }
  }
  if (cost.fillDrainCycles > steady) {
    cost.bound = CostBound::FillDrain;
  }
  cost.totalCycles = steady + cost.fillDrainCycles;
  cost.seconds = target_.cyclesToSeconds(cost.totalCycles);
  return cost;
}

//===----------------------------------------------------------------------===//
// Roofline
//===----------------------------------------------------------------------===//

RooflineBound CostModel::roofline(const std::vector<KernelDesc> &kernels,
                                  int64_t chips) const {
  RooflineBound bound;
  chips = std::max<int64_t>(chips, 1);
  double count = double(chips);
  double matrixSeconds = 0;
  double vectorSeconds = 0;
  double vectorOpsPerSecond = target_.peakVectorOpsPerChip();
  double sramPerSecond = target_.sramBytesPerSecondPerChip();
  double offChipPerSecond = target_.offChipBytesPerSecondPerChip();
  for (const KernelDesc &kernel : kernels) {
    bool isCollective = kernel.kind == KernelKind::Collective;
    // Collective figures are per chip; everything else is a total.
    double sharing = isCollective ? 1.0 : count;

    double flops = kernel.matrixFlops();
    if (flops > 0) {
      bound.matrixFlops += flops;
      if (target_.matrixSupports(kernel.format)) {
        matrixSeconds +=
            flops / (target_.peakMatrixFlopsPerChip(kernel.format) * count);
      } else {
        // The vector fallback: one MAC (two FLOPs) per lane per cycle.
        vectorSeconds += flops / 2.0 / (vectorOpsPerSecond * count);
      }
    }
    double ops = kernel.vectorOps(chips);
    bound.vectorOps += ops * (isCollective ? count : 1.0);
    vectorSeconds += ops / (vectorOpsPerSecond * sharing);

    double sramBytes =
        double(kernel.sramBytesRead) + double(kernel.sramBytesWritten);
    bound.sramBytes += sramBytes * (isCollective ? count : 1.0);
    bound.sramSeconds += sramBytes / (sramPerSecond * sharing);

    if (kernel.offChipBytes > 0 && offChipPerSecond > 0) {
      bound.offChipBytes += double(kernel.offChipBytes);
      bound.offChipSeconds +=
          double(kernel.offChipBytes) / (offChipPerSecond * count);
    }

    if (isCollective && chips > 1) {
      double bytes = collectiveBytesPerChip(kernel.collective, chips,
                                            kernel.collectiveBytes);
      bound.linkBytesPerChip += bytes;
      bound.linkSeconds += bytes / collectiveBytesPerSecondPerChip(chips);
    }
  }
  // The matrix and vector units work at the same time.
  bound.computeSeconds = std::max(matrixSeconds, vectorSeconds);

  struct Term {
    double seconds;
    CostBound bound;
  };
  const Term terms[] = {{bound.computeSeconds, CostBound::Compute},
                        {bound.sramSeconds, CostBound::Sram},
                        {bound.offChipSeconds, CostBound::OffChip},
                        {bound.linkSeconds, CostBound::Link}};
  for (const Term &term : terms) {
    if (term.seconds > bound.seconds) {
      bound.seconds = term.seconds;
      bound.bound = term.bound;
    }
  }
  return bound;
}

int64_t CostModel::epilogueCycles(const KernelDesc &kernel,
                                  int64_t tiles) const {
  double lanes =
      double(std::max<int64_t>(1, target_.desc().chip.tile.vector.lanes));
  double perTile = std::ceil(kernel.vectorOps() /
                             double(std::max<int64_t>(1, tiles)));
  return static_cast<int64_t>(std::ceil(perTile / lanes));
}

//===----------------------------------------------------------------------===//
// graph-partition's prices
//===----------------------------------------------------------------------===//

double CostModel::opSecondsOnChip(const ChipOpWork &op) const {
  const bool matrix = op.matmul && target_.matrixSupports(op.format);
  double peak = matrix ? target_.peakMatrixFlopsPerChip(op.format)
                       : target_.peakVectorOpsPerChip();
  double bw = target_.sramBytesPerSecondPerChip();
  const rt::TileDesc &tile = target_.desc().chip.tile;
  double fixed =
      double(std::max(tile.matrix.latencyCycles, tile.vector.latencyCycles)) /
      target_.clockHz();
  return std::max(op.flops / op.split / std::max(peak, 1.0), op.bytes / bw) +
         fixed;
}

double CostModel::collectiveSecondsOnNetwork(const ChipNetwork &net,
                                             int64_t ranks, int64_t bytes,
                                             bool reduce) const {
  const int64_t n = ranks;
  std::vector<int64_t> group;
  for (int64_t i = 0; i < n; ++i)
    group.push_back(i);
  CollectiveAlgorithm alg = net.collectiveAlgorithm(group);
  int64_t chunk = (bytes + n - 1) / n;
  // One step: every rank sends a chunk to a neighbour (ring) or to every
  // other rank at once (direct); the slowest pair sets the pace.
  double step = net.transferCycles(0, 1 % n, chunk);
  double steps = 1.0;
  switch (alg) {
  case CollectiveAlgorithm::Ring:
    steps = double(n - 1);
    break;
  case CollectiveAlgorithm::Direct:
    steps = 1.0;
    break;
  case CollectiveAlgorithm::Hierarchical:
    steps = 2.0;
    step = net.transferCycles(0, n - 1, chunk);
    break;
  }
  double phases = reduce ? 2.0 : 1.0;
  return (phases * steps * step + double(net.syncCycles())) / target_.clockHz();
}

//===----------------------------------------------------------------------===//
// The planner's prices: SystemCostModel
//===----------------------------------------------------------------------===//

SystemCostModel::SystemCostModel(const TargetModel &target,
                                 const std::vector<WeightFormat> &weights,
                                 NumericFormat kvFormat)
    : t_(target), eff_(target.efficiency()) {
  memBw_ = !target.hasOffChipMemory() ? target.sramBytesPerSecondPerChip()
                                      : target.offChipBytesPerSecondPerChip();
  for (const WeightFormat &w : weights) {
    NumericFormat wF = w.format;
    double peak = target.peakFlopsPerChip(wF);
    if (peak <= 0) {
      wF = NumericFormat::BF16;
      peak = target.peakFlopsPerChip(wF);
    }
    weightFormats_.push_back(MatmulFormat{w.share,
                                          peak * target.matrixEfficiency(wF),
                                          double(target.matrixHalfRows(wF))});
  }
  // A cache format the chip does not compute in runs at the weights'
  // rate as the rows grow (their formats' rates in their shares).
  double attnPeak = target.peakFlopsPerChip(kvFormat);
  attnRate_ = attnPeak > 0 ? attnPeak * target.matrixEfficiency(kvFormat)
                           : matmulRateAt(0, /*asRowsGrow=*/true);
  linkBw_ = target.chipLinkBytesPerSecondPerChip();
  latency_ = target.chipLinkLatencySeconds();
  sync_ = target.desc().system.links.syncSeconds;
}

double SystemCostModel::matmulRateAt(double rows, bool asRowsGrow) const {
  double secondsPerFlop = 0;
  for (const MatmulFormat &f : weightFormats_) {
    double rate = f.rate;
    if (f.halfRows > 0 && !asRowsGrow) {
      const double m = std::max(rows, f.halfRows);
      rate *= m / (m + f.halfRows);
    }
    secondsPerFlop += f.share / rate;
  }
  return 1.0 / secondsPerFlop;
}

double SystemCostModel::lmHead(double params, double tokens, int64_t tp,
                               double bytesEach) const {
  return RooflineTime{tokens * 2.0 * params / double(tp) / matmulRateAt(tokens),
                      params / double(tp) * bytesEach / (memBw_ * eff_.memory)}
      .time();
}

SystemCostModel::Hop SystemCostModel::hopParts(double bytes, int64_t chips,
                                               int64_t stageChips) const {
  const auto &l = t_.desc().system.links;
  double perLink = l.bytesPerSecond * eff_.links;
  double share = double(l.perChip);
  int64_t n = std::max<int64_t>(2, chips);
  double valiant = 0;
  int hops = 1;
  switch (l.topology) {
  case Topology::Ring:
    share = n == 2 ? share : share / 2;
    break;
  case Topology::Torus2D:
    share = share / 4;
    break;
  case Topology::Dragonfly: {
    int64_t cpn = std::max<int64_t>(1, t_.chipsPerNode());
    int64_t nodes = (n + cpn - 1) / cpn;
    bool crossNode = stageChips >= cpn && nodes > 1;
    if (nodes == 1)
      share = share / double(std::min(n, cpn) - 1);
    else if (!crossNode)
      share = share / 2 / double(cpn - 1);
    else if (stageChips % cpn != 0) {
      // The counterpart has another index: a local hop to this node's
      // chip of that index, then the global one, at the slower's rate.
      share = share / 2 / double(std::max(cpn - 1, nodes - 1));
      hops = 2;
    } else {
      share = share / 2 / double(nodes - 1);
      if (l.adaptiveRouting)
        valiant = share * double(nodes - 1) / 2;
    }
    break;
  }
  default:
    share = share / double(n - 1);
    break;
  }
  Hop minimal{double(hops) * latency_, bytes / (share * perLink)};
  if (valiant > share) {
    Hop twoHop{2 * latency_, bytes / (valiant * perLink)};
    if (twoHop.latency + twoHop.transfer < minimal.latency + minimal.transfer)
      return twoHop;
  }
  return minimal;
}

double SystemCostModel::moveOutSeconds(const TargetModel &target, double bytes,
                                       int64_t chips) {
  const auto &so = target.desc().system.scaleOut;
  double bw = so ? so->bytesPerSecond : target.chipLinkBytesPerSecondPerChip();
  double lat = so ? so->latencySeconds : target.chipLinkLatencySeconds();
  return lat + bytes / (bw * double(chips));
}

} // namespace loom
