//===- GraphToSpatial.cpp - Place kernels on tile regions -----------------===//
//
// Layer-sequential mapping: kernels are placed one at a time, in program
// order, each on the smallest rectangle of tiles whose cost-model estimate
// is within a tolerance of the best rectangle's. See Passes.td.
//
// It is long (over 1,000 lines) because it is one pass whose steps (sizes
// and origins, split contractions, the mapping plan, placement, the chips'
// budgets) share its state: the cost model, the mesh, the chip network and
// the bytes resident on each tile.
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/Decompose.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Dialect/Spatial/Transforms/Mapping.h"
#include "loom/Dialect/Spatial/Transforms/Passes.h"
#include "SplitContraction.h"
#include "loom/Target/ChipNetwork.h"
#include "loom/Target/CostModel.h"
#include "loom/Target/PassProgress.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/ScopeExit.h"

#include <cmath>
#include <map>
#include <set>

namespace loom::spatial {
#define GEN_PASS_DEF_GRAPHTOSPATIAL
#include "loom/Dialect/Spatial/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

std::vector<int64_t> shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

/// Bytes per element of tensor value `v` as stored (a KV cache at its
/// storage format; weights: storedElementBytes).
int64_t elemBytesOf(Value v) { return storageElementBytes(v); }

/// The bytes of the largest (the first) of `v`'s shards over `tiles` tiles,
/// at `elemBytes` an element.
int64_t largestShardBytes(Value v, int64_t tiles, int64_t elemBytes) {
  std::vector<int64_t> shape = shapeOf(v);
  return shardBox(shape, chooseShardDim(shape, tiles), tiles, 0).elements() *
         elemBytes;
}

/// True if the function returns `v`.
bool isProgramOutput(Value v) {
  return llvm::any_of(v.getUsers(),
                      [](Operation *u) { return isa<func::ReturnOp>(u); });
}

DenseI64ArrayAttr regionAttr(Builder &b, const TileRegion &r) {
  return b.getDenseI64ArrayAttr({r.row, r.col, r.rows, r.cols});
}

using graph::chipOf;

/// The number of independent pieces of work a kernel has: a tile given
/// less than one does nothing useful.
int64_t workUnits(const KernelDesc &k, const TargetModel &target) {
  const auto &matrix = target.desc().chip.tile.matrix;
  auto ceilDiv = [](int64_t a, int64_t b) { return (a + b - 1) / b; };
  if ((k.kind == KernelKind::MatMul || k.kind == KernelKind::Conv) &&
      target.matrixSupports(k.format))
    return k.batch * ceilDiv(k.m, matrix.blockM) * ceilDiv(k.n, matrix.blockN);
  int64_t lanes = std::max<int64_t>(1, target.desc().chip.tile.vector.lanes);
  if (k.kind == KernelKind::MatMul || k.kind == KernelKind::Conv)
    return ceilDiv(k.batch * k.m * k.n, lanes);
  if (k.kind == KernelKind::DataMovement)
    return ceilDiv(std::max<int64_t>(1, k.sramBytesWritten), lanes);
  return ceilDiv(std::max<int64_t>(1, k.elements), lanes);
}

struct GraphToSpatialPass : impl::GraphToSpatialBase<GraphToSpatialPass> {
  using Base::Base;

  void runOnOperation() override;

private:
  /// The value `v` (already in spatial form) in placement `want`, inserting
  /// a transfer before `before` when it lives elsewhere.
  Value placed(Value v, const Placement &want, OpBuilder &b, Location loc);
  /// The size of a kernel's region in the sequential mapping: the fewest
  /// tiles within the tolerance of the best estimate (origin 0, 0).
  std::optional<TileRegion> chooseSize(const KernelDesc &desc,
                                       CostBreakdown &cost,
                                       std::string &error);
  /// `size`, or a larger region when the kernel's weights need more tiles'
  /// SRAM than `size` has (a large embedding table, say).
  std::optional<TileRegion> fitWeights(graph::KernelOp kernel,
                                       const KernelDesc &desc,
                                       const TileRegion &size,
                                       CostBreakdown &cost, std::string &error);
  /// Where a region of `size` goes in the sequential mapping.
  TileRegion chooseOrigin(graph::KernelOp kernel, const TileRegion &size);
  /// Splits the K dimension of matmul kernels whose outputs leave most of
  /// the chip's tiles idle, where the cost model finds the partial
  /// products plus their reduction faster (SplitContraction.h).
  void splitContractions(func::FuncOp func);
  /// Plans the mapping of the whole function (see Mapping.h); sets
  /// `plan_` for a packed mapping and the function's mapping attributes.
  LogicalResult planMapping(func::FuncOp func);
  /// planMapping across chips: each chip's kernels one at a time on its
  /// tiles, pipeline stages overlapping inputs when there are several.
  LogicalResult planAcrossChips(func::FuncOp func,
                                std::optional<MappingMode> forced);
  /// The planner's view of every kernel of `func`, and its region in the
  /// sequential mapping.
  LogicalResult mappingKernels(func::FuncOp func,
                               std::vector<MappingKernel> &kernels,
                               std::vector<TileRegion> &sequentialRegions);
  /// Places every kernel, weight and collective of `func` (the IR
  /// rewrite); sets `overfull_` when some kernel found no tile with room.
  LogicalResult placeAll(func::FuncOp func);
  /// The spatial.weight of constant `c` in placement `p`, made at its first
  /// use (in front of that kernel) and kept in `weights`.
  Value weightFor(OpBuilder &b, std::map<void *, Value> &weights,
                  graph::ConstantOp c, const Placement &p);
  /// The region of kernel number `nextId`: the plan's for a packed mapping,
  /// else sized and placed here; sets its `cost` and pipeline `group`.
  std::optional<TileRegion> kernelRegion(graph::KernelOp kernel,
                                         const std::optional<KernelDesc> &desc,
                                         int64_t nextId, CostBreakdown &cost,
                                         int64_t &group, std::string &error);
  /// How `kernel` splits over `region` of `chip`, within the weight room
  /// left; takes its own weights off `pendingWeights`.
  Decomposition decompose(graph::KernelOp kernel, const TileRegion &region,
                          int64_t chip, const std::map<void *, Value> &weights,
                          std::map<int64_t, int64_t> &pendingWeights);
  /// `kernel`'s inputs in the placements `dec` asks for.
  SmallVector<Value> placeInputs(func::FuncOp func, graph::KernelOp kernel,
                                 const Decomposition &dec,
                                 const TileRegion &region, int64_t chip,
                                 OpBuilder &b,
                                 std::map<void *, Value> &weights);
  /// Places what no kernel did: returned constants and unused arguments.
  void finishPlacement(func::FuncOp func, OpBuilder &b,
                       std::map<void *, Value> &weights);
  /// Marks `overfull_` the chips with a tile whose weights, program outputs
  /// and model inputs leave it less than weightRoom's share for the rest.
  void checkRoom(func::FuncOp func);
  /// The bytes of a tile of `chip` that weights and program outputs may
  /// take: the rest is left for activations and their copies in flight.
  int64_t weightRoom(int64_t chip) const;
  /// Sets `headroom_` and `balance_` for a mapping across chips.
  void chipBudgets(func::FuncOp func);
  /// Adds the bytes of `shape` sharded by `p` to per-tile counts `bytes`
  /// (the resident count when not given).
  void addResident(const std::vector<int64_t> &shape, int64_t elemBytes,
                   const Placement &p, std::vector<int64_t> *bytes = nullptr);

  /// Turns a graph.all_reduce / all_gather into a spatial.collective.
  LogicalResult placeCollective(Operation *op, OpBuilder &b);

  std::optional<CostModel> model_;
  std::optional<Mesh> mesh_;
  /// The chips the function is partitioned over, and their network.
  int64_t chips_ = 1;
  std::optional<ChipNetwork> net_;
  /// Bytes resident on each tile so far: weights, and program outputs
  /// (kept until the input ends).
  std::vector<int64_t> resident_;
  /// Per chip, the bytes of each tile kept free of weights for the copies
  /// of its streaming state that a pipelined mapping keeps in flight (see
  /// chipBudgets); empty when inputs do not overlap.
  std::vector<int64_t> headroom_;
  /// Per chip, whether placement balances the tiles' resident loads before
  /// it minimises moves (see chipBudgets).
  std::vector<bool> balance_;
  /// Per chip, set by chooseOrigin when no position of a kernel's region
  /// there had room.
  std::vector<bool> overfull_;
  /// Transfers already made: (value, placement) -> transferred value.
  std::map<std::pair<void *, std::vector<int64_t>>, Value> transfers_;
  /// The first copy of a value on another chip, by (value, chip): later
  /// readers on that chip take it from there over the mesh, so a value
  /// crosses the chip network once per chip however many kernels read it.
  std::map<std::pair<void *, int64_t>, Value> chipCopies_;
  /// The packed mapping chosen, if not sequential.
  std::optional<Mapping> plan_;
};

void GraphToSpatialPass::addResident(const std::vector<int64_t> &shape,
                                     int64_t elemBytes, const Placement &p,
                                     std::vector<int64_t> *bytes) {
  std::vector<int64_t> &count = bytes ? *bytes : resident_;
  int64_t tiles = p.region.tiles();
  int64_t base = p.chip * model_->target().tilesPerChip();
  for (int64_t i = 0; i < tiles; ++i)
    count[base + p.region.tileIndex(i, mesh_->cols())] +=
        placementBox(shape, p, i).elements() * elemBytes;
}

std::optional<TileRegion>
GraphToSpatialPass::chooseSize(const KernelDesc &desc, CostBreakdown &cost,
                               std::string &error) {
  const TargetModel &target = model_->target();
  int64_t units = workUnits(desc, target);
  struct Candidate {
    int64_t rows, cols;
    CostBreakdown cost;
  };
  std::vector<Candidate> candidates;
  for (int64_t r = 1; r <= target.tileRows(); ++r) {
    for (int64_t c = 1; c <= target.tileCols(); ++c) {
      if (r * c > std::max<int64_t>(1, units))
        continue;
      Region region;
      region.tileRows = r;
      region.tileCols = c;
      std::optional<CostBreakdown> est = model_->estimate(desc, region, &error);
      if (!est)
        return std::nullopt;
      candidates.push_back({r, c, *est});
    }
  }
  double best = candidates.front().cost.totalCycles;
  for (const Candidate &c : candidates)
    best = std::min(best, c.cost.totalCycles);
  // The fewest tiles within the tolerance; then the cheaper; then the
  // flatter (rows of the grid are filled first).
  const Candidate *pick = nullptr;
  for (const Candidate &c : candidates) {
    if (c.cost.totalCycles > best * (1.0 + tolerance / 100.0))
      continue;
    if (!pick || c.rows * c.cols < pick->rows * pick->cols ||
        (c.rows * c.cols == pick->rows * pick->cols &&
         c.cost.totalCycles < pick->cost.totalCycles))
      pick = &c;
  }
  cost = pick->cost;
  return TileRegion{0, 0, pick->rows, pick->cols};
}

int64_t GraphToSpatialPass::weightRoom(int64_t chip) const {
  // A tenth of each tile is left for activations, or in a pipelined
  // mapping the room its inputs in flight need, if more.
  const int64_t capacity = model_->target().sramBytesPerTile();
  int64_t reserve = capacity / TargetModel::kPlacementReserveDivisor;
  if (!headroom_.empty() && chip >= 0 &&
      chip < static_cast<int64_t>(headroom_.size()))
    reserve = std::max(reserve, headroom_[chip]);
  return std::max<int64_t>(1, capacity - reserve);
}

std::optional<TileRegion>
GraphToSpatialPass::fitWeights(graph::KernelOp kernel, const KernelDesc &desc,
                               const TileRegion &size, CostBreakdown &cost,
                               std::string &error) {
  const TargetModel &target = model_->target();
  int64_t weights = 0;
  for (Value in : kernel.getInputs())
    if (in.getDefiningOp<graph::ConstantOp>())
      weights += cast<RankedTensorType>(in.getType()).getNumElements() *
                 storedElementBytes(in);
  int64_t room = weightRoom(chipOf(kernel));
  int64_t need = (weights + room - 1) / std::max<int64_t>(1, room);
  if (need <= size.tiles())
    return size;
  std::optional<TileRegion> best;
  for (int64_t r = 1; r <= target.tileRows(); ++r)
    for (int64_t c = 1; c <= target.tileCols(); ++c)
      if (r * c >= need && (!best || r * c < best->tiles()))
        best = TileRegion{0, 0, r, c};
  if (!best)
    best = TileRegion{0, 0, target.tileRows(), target.tileCols()};
  Region shape;
  shape.tileRows = best->rows;
  shape.tileCols = best->cols;
  std::optional<CostBreakdown> est = model_->estimate(desc, shape, &error);
  if (!est)
    return std::nullopt;
  cost = *est;
  return best;
}

void GraphToSpatialPass::chipBudgets(func::FuncOp func) {
  headroom_.clear();
  balance_.assign(chips_, false);
  overfull_.assign(chips_, false);
  if (chips_ <= 1)
    return;
  auto mode = func->getAttrOfType<StringAttr>(kMappingAttr);
  const bool pipelined = mode && mode.getValue() == "pipelined";
  // When inputs overlap, the tiles' resident loads are balanced before the
  // moves are minimised: spread kernels keep the busiest tile's units from
  // bounding the interval (gpt2_decode over 2 tsp-v1 chips, pipelined: a
  // step every 734 cycles balanced, 1,696 not). One input at a time the
  // moves decide, among the tiles with room (chooseOrigin): balancing
  // outputs a thousandth of a tile's size pulled gpt2_decode's kernels over
  // 3 chips away from their inputs (4,456 cycles a step against 3,192), and
  // the Llama-3-70B step over tp 8 x pp 32 took 647.2 us against 623.7.
  balance_.assign(chips_, pipelined);
  auto inFlight = func->getAttrOfType<IntegerAttr>(graph::kInFlightAttr);
  if (!pipelined || !inFlight)
    return;
  // Per chip: its weights, and its streaming state (the model inputs it
  // reads and the outputs it makes: a decode step's KV cache). A pipelined
  // mapping keeps each input's streaming state live while later inputs
  // enter, so about graph-partition's estimate of the inputs in flight
  // (graph.in_flight) copies of it share the chip's tiles with its weights.
  std::vector<int64_t> stream(chips_, 0), weights(chips_, 0);
  std::set<std::pair<void *, int64_t>> seen; // (value, chip)
  for (Operation &op : func.getBody().front()) {
    auto kernel = dyn_cast<graph::KernelOp>(op);
    if (!kernel)
      continue;
    const int64_t chip = chipOf(kernel);
    if (chip < 0 || chip >= chips_)
      continue;
    for (Value in : kernel.getInputs()) {
      if (!seen.insert({in.getAsOpaquePointer(), chip}).second)
        continue;
      int64_t n = cast<RankedTensorType>(in.getType()).getNumElements();
      if (in.getDefiningOp<graph::ConstantOp>())
        weights[chip] += n * storedElementBytes(in);
      else if (isa<BlockArgument>(in))
        stream[chip] += n * elemBytesOf(in);
    }
    for (Value r : kernel.getResults())
      if (isProgramOutput(r))
        stream[chip] += cast<RankedTensorType>(r.getType()).getNumElements() *
                        elemBytesOf(r);
  }
  // The room fitWeights leaves on each tile: the copies' share of it, at
  // most what the chip's weights leave, so a kernel's weights can still
  // take their even share of a tile. (At a tenth only, a large embedding
  // table filled one tile and left no room for a second copy of the cache
  // shards beside it: no interval fitted.)
  const TargetModel &target = model_->target();
  const int64_t tiles = target.tilesPerChip();
  const int64_t copies = std::max<int64_t>(1, inFlight.getInt());
  headroom_.assign(chips_, 0);
  for (int64_t c = 0; c < chips_; ++c) {
    int64_t left =
        std::max<int64_t>(0, target.sramBytesPerTile() * tiles - weights[c]);
    headroom_[c] = std::min(copies * stream[c], left) / tiles;
  }
}

TileRegion GraphToSpatialPass::chooseOrigin(graph::KernelOp kernel,
                                            const TileRegion &size) {
  const TargetModel &target = model_->target();
  // The origin: where the inputs cost the fewest bytes x hops to bring in,
  // among those whose tiles still have room for the kernel's weights and
  // program outputs (beside what weightRoom leaves for activations); ties
  // go to the tiles holding the fewest resident bytes, then the first.
  TileRegion region = size;
  struct Score {
    bool fits;
    int64_t moved, load;
  };
  std::optional<Score> bestOrigin;
  const int64_t chip = chipOf(kernel);
  const int64_t room = weightRoom(chip);
  const int64_t base = chip * target.tilesPerChip();
  for (int64_t r = 0; r + size.rows <= target.tileRows(); ++r) {
    for (int64_t c = 0; c + size.cols <= target.tileCols(); ++c) {
      TileRegion at{r, c, size.rows, size.cols};
      int64_t load = 0, weightBytes = 0, moved = 0;
      for (int64_t i = 0; i < at.tiles(); ++i)
        load = std::max(load,
                        resident_[base + at.tileIndex(i, target.tileCols())]);
      for (Value in : kernel.getInputs()) {
        if (in.getDefiningOp<graph::ConstantOp>()) {
          weightBytes +=
              largestShardBytes(in, at.tiles(), storedElementBytes(in));
          continue;
        }
        std::vector<int64_t> shape = shapeOf(in);
        Placement want{at, chooseShardDim(shape, at.tiles()), chip};
        std::optional<Placement> have = placementOf(in);
        if (!have || have->chip != chip)
          continue;
        for (const ShardFlow &f :
             reshardFlows(shape, *have, want, target.tileCols()))
          moved += f.elements * elemBytesOf(in) * mesh_->hops(f.from, f.to);
      }
      // A program output stays where it is made until the input ends.
      for (Value r : kernel.getResults())
        if (isProgramOutput(r))
          weightBytes += largestShardBytes(r, at.tiles(), elemBytesOf(r));
      Score score{load + weightBytes <= room, moved, load};
      // When inputs overlap the tiles' resident loads are balanced first,
      // then the moves minimised (see chipBudgets).
      const bool balance = balance_[chip];
      bool better =
          !bestOrigin ||
          (score.fits != bestOrigin->fits ? score.fits
           : balance && score.load != bestOrigin->load
               ? score.load < bestOrigin->load
           : score.moved != bestOrigin->moved ? score.moved < bestOrigin->moved
                                              : score.load < bestOrigin->load);
      if (better) {
        bestOrigin = score;
        region = at;
      }
    }
  }
  if (bestOrigin && !bestOrigin->fits)
    overfull_[chip] = true;
  return region;
}

LogicalResult
GraphToSpatialPass::planAcrossChips(func::FuncOp func,
                                    std::optional<MappingMode> forced) {
  Builder b(func.getContext());
  // Across chips: each chip's kernels take turns on its tiles, and the
  // pipeline stages (on different chips) overlap successive inputs.
  int64_t pp = 1, tp = 1;
  if (auto a = func->getAttrOfType<IntegerAttr>(graph::kPipelineParallelAttr))
    pp = a.getInt();
  if (auto a = func->getAttrOfType<IntegerAttr>(graph::kTensorParallelAttr))
    tp = a.getInt();
  // Sequential: one input at a time (list scheduled, the least latency);
  // pipelined: the stages overlap successive inputs (modulo scheduled).
  if (forced == MappingMode::Hybrid)
    return func.emitError()
           << "graph-to-spatial: no hybrid mapping across " << chips_
           << " chips: each chip's kernels are placed one at a time on "
              "its tiles";
  if (forced == MappingMode::Pipelined && pp == 1)
    return func.emitError()
           << "graph-to-spatial: no pipelined mapping across " << chips_
           << " chips with one pipeline stage (pp 1): every chip works on "
              "every input";
  bool pipelineStages =
      forced ? *forced == MappingMode::Pipelined : pp > 1;
  func->setAttr(kMappingAttr, b.getStringAttr(pipelineStages ? "pipelined"
                                                             : "sequential"));
  func->setAttr(kPipelineGroupsAttr, b.getI64IntegerAttr(1));
  func->setAttr(kChipsAttr, b.getI64IntegerAttr(chips_));
  if (net_->systemChips() > chips_)
    func->setAttr(kSystemChipsAttr, b.getI64IntegerAttr(net_->systemChips()));
  func->setAttr(kTensorParallelAttr, b.getI64IntegerAttr(tp));
  func->setAttr(kPipelineParallelAttr, b.getI64IntegerAttr(pp));
  std::string report = "across " + std::to_string(chips_) + " chips (tp " +
                       std::to_string(tp) + " x pp " + std::to_string(pp) +
                       ", " + net_->topologyName() +
                       " network): each chip's kernels one at a time on "
                       "its tiles" +
                       (pipelineStages
                            ? ", pipeline stages overlapping inputs"
                            : ", one input at a time");
  if (auto r = func->getAttrOfType<StringAttr>(graph::kPartitionReportAttr))
    report += "; partition: " + r.getValue().str();
  func->setAttr("spatial.mapping_report", b.getStringAttr(report));
  return success();
}

LogicalResult GraphToSpatialPass::mappingKernels(
    func::FuncOp func, std::vector<MappingKernel> &kernels,
    std::vector<TileRegion> &sequentialRegions) {
  std::map<void *, size_t> indexOf;
  std::string error;
  for (Operation &op : func.getBody().front()) {
    auto kernel = dyn_cast<graph::KernelOp>(op);
    if (!kernel)
      continue;
    std::optional<KernelDesc> desc = describeKernel(
        kernel.getKind(), kernel.getPrecision(), kernel.getBody(), error,
        kernel.getStorage());
    CostBreakdown cost;
    std::optional<TileRegion> size;
    if (desc)
      size = chooseSize(*desc, cost, error);
    if (!size)
      return kernel.emitError() << "graph-to-spatial: " << error;
    MappingKernel mk;
    mk.desc = *desc;
    KernelUnit placedOn = kernelUnit(kernel.getKind(), *desc, *model_,
                                     size->rows, size->cols);
    mk.unit = placedOn.unit;
    mk.epilogue = placedOn.epilogue;
    for (Value in : kernel.getInputs()) {
      auto type = cast<RankedTensorType>(in.getType());
      int64_t bytes = type.getNumElements() * elemBytesOf(in);
      if (in.getDefiningOp<graph::ConstantOp>()) {
        mk.weightBytes += type.getNumElements() * storedElementBytes(in);
        continue;
      }
      if (auto producer = in.getDefiningOp<graph::KernelOp>()) {
        mk.deps.push_back(indexOf.at(producer.getOperation()));
        mk.depBytes.push_back(bytes);
      }
    }
    indexOf[kernel.getOperation()] = kernels.size();
    kernels.push_back(std::move(mk));
    sequentialRegions.push_back(*size);
  }
  return success();
}

LogicalResult GraphToSpatialPass::planMapping(func::FuncOp func) {
  plan_.reset();
  std::optional<MappingMode> forced;
  if (mapping == "sequential")
    forced = MappingMode::Sequential;
  else if (mapping == "pipelined")
    forced = MappingMode::Pipelined;
  else if (mapping == "hybrid")
    forced = MappingMode::Hybrid;
  else if (mapping != "auto")
    return func.emitError() << "graph-to-spatial: mapping '" << mapping
                            << "' is not auto, sequential, pipelined or "
                               "hybrid";
  if (objective != "latency" && objective != "throughput")
    return func.emitError() << "graph-to-spatial: objective '" << objective
                            << "' is not latency or throughput";
  MappingObjective goal = objective == "latency"
                              ? MappingObjective::Latency
                              : MappingObjective::Throughput;
  Builder b(func.getContext());
  auto record = [&](const Mapping &m, const std::string &report) {
    func->setAttr(kMappingAttr, b.getStringAttr(mappingModeName(m.mode)));
    func->setAttr(kPipelineGroupsAttr, b.getI64IntegerAttr(m.groups));
    func->setAttr("spatial.mapping_report", b.getStringAttr(report));
  };

  if (chips_ > 1)
    return planAcrossChips(func, forced);
  // The planner's view of every kernel, and its sequential region.
  std::vector<MappingKernel> kernels;
  std::vector<TileRegion> sequentialRegions;
  if (failed(mappingKernels(func, kernels, sequentialRegions)))
    return failure();
  MappingPlanner planner(*model_, std::move(kernels));
  Mapping sequential = planner.sequential(sequentialRegions);
  auto describe = [](const Mapping &m) {
    char buf[160];
    if (m.mode == MappingMode::Sequential)
      std::snprintf(buf, sizeof buf, "sequential: latency %.0f = II",
                    m.latency);
    else
      std::snprintf(buf, sizeof buf,
                    "%s: %lld group%s of %lld-row bands, latency %.0f, II "
                    "%.0f",
                    mappingModeName(m.mode), (long long)m.groups,
                    m.groups == 1 ? "" : "s", (long long)m.bandRows,
                    m.latency, m.ii);
    return std::string(buf);
  };
  // Candidates: sequential, the best pipelined and the best hybrid.
  std::vector<Mapping> candidates = {sequential};
  std::string report = "estimated cycles per input: " + describe(sequential);
  for (MappingMode mode : {MappingMode::Pipelined, MappingMode::Hybrid}) {
    if (forced && *forced != mode)
      continue;
    std::string why;
    std::optional<Mapping> m = planner.packed(mode, goal, why);
    if (!m) {
      if (forced)
        return func.emitError()
               << "graph-to-spatial: no " << mappingModeName(mode)
               << " mapping on " << model_->target().tileRows() << " x "
               << model_->target().tileCols() << " tiles: " << why;
      report += std::string("; ") + mappingModeName(mode) + ": none (" +
                why + ")";
      continue;
    }
    report += "; " + describe(*m);
    candidates.push_back(std::move(*m));
  }
  const Mapping *chosen = nullptr;
  for (const Mapping &m : candidates) {
    if (forced && m.mode != *forced)
      continue;
    if (!chosen || MappingPlanner::better(m, *chosen, goal))
      chosen = &m;
  }
  report = std::string(mappingModeName(chosen->mode)) +
           (forced ? " (as asked)" : std::string(" (objective ") +
                                         mappingObjectiveName(goal) + ")") +
           "; " + report;
  record(*chosen, report);
  if (chosen->mode != MappingMode::Sequential)
    plan_ = *chosen;
  return success();
}

namespace {
/// True if the matmul kernel `kernel` ([M, K] x [K, N], described by
/// `desc`) fits no tile of a `tiles`-tile chip split by its rows (all of B
/// on every tile) or by its columns (all of A on every tile), but fits
/// split into `parts` K chunks (a chunk of A and of B, and a whole [M, N]
/// of partial sums, on each tile): then the K split is the only way the
/// kernel runs, whatever its speed. Bytes as stored (a weight at its
/// narrow policy's format, an input at its type's), the result at its
/// type's, as decomposeKernel counts them; the bounds are the best any row
/// or column split can do, so a kernel that fits one is never split here.
bool onlyKSplitFits(graph::KernelOp kernel, const KernelDesc &desc,
                    int64_t parts, int64_t tiles, int64_t room) {
  auto bytesOf = [](Value v) {
    return v.getDefiningOp<graph::ConstantOp>() ? storedElementBytes(v)
                                                : elemBytesOf(v);
  };
  const int64_t a = bytesOf(kernel.getInputs()[0]);
  const int64_t b = bytesOf(kernel.getInputs()[1]);
  Type elem =
      cast<RankedTensorType>(kernel.getResultTypes()[0]).getElementType();
  const int64_t c = std::max<int64_t>(1, elem.getIntOrFloatBitWidth() / 8);
  const int64_t m = desc.m, n = desc.n, k = desc.k;
  auto ceilDiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
  const int64_t rows =
      ceilDiv(m, tiles) * k * a + k * n * b + ceilDiv(m, tiles) * n * c;
  const int64_t cols =
      m * k * a + k * ceilDiv(n, tiles) * b + m * ceilDiv(n, tiles) * c;
  const int64_t split = m * (k / parts) * a + (k / parts) * n * b + m * n * c;
  return std::min(rows, cols) > room && split <= room;
}
} // namespace

void GraphToSpatialPass::splitContractions(func::FuncOp func) {
  const TargetModel &target = model_->target();
  const auto &matrix = target.desc().chip.tile.matrix;
  const int64_t tiles = target.tilesPerChip();
  if (tiles < 2)
    return;
  SmallVector<graph::KernelOp> kernels;
  for (Operation &op : func.getBody().front())
    if (auto k = dyn_cast<graph::KernelOp>(op);
        k && k.getKind() == KernelKind::MatMul)
      kernels.push_back(k);
  std::string error;
  for (graph::KernelOp kernel : kernels) {
    std::optional<KernelDesc> desc = describeKernel(
        kernel.getKind(), kernel.getPrecision(), kernel.getBody(), error,
        kernel.getStorage());
    if (!desc || desc->kind != KernelKind::MatMul || desc->batch != 1)
      continue;
    // Chunks of at least one native block of K.
    std::optional<int64_t> parts =
        kSplitParts(kernel, tiles, std::max<int64_t>(1, matrix.blockK));
    if (!parts)
      continue;
    CostBreakdown whole, partial, reduce;
    KernelDesc p = *desc;
    p.batch = *parts;
    p.k = desc->k / *parts;
    p.epilogueOpsPerOutput = 0;
    p.sramBytesWritten = desc->sramBytesWritten * *parts;
    KernelDesc r = KernelDesc::reduction(*parts * desc->m * desc->n,
                                         desc->m * desc->n, desc->format);
    r.opsPerElement += desc->epilogueOpsPerOutput;
    if (!chooseSize(*desc, whole, error) || !chooseSize(p, partial, error) ||
        !chooseSize(r, reduce, error))
      continue;
    // The partial sums cross the mesh once, spread over the parts' links.
    const auto &mesh = target.desc().chip.mesh;
    const double link = mesh ? mesh->linkBytesPerCycle : 0;
    const double moved =
        link > 0 ? static_cast<double>(p.sramBytesWritten) /
                       (link * static_cast<double>(*parts))
                 : 0;
    if (partial.totalCycles + reduce.totalCycles + moved <
            0.8 * whole.totalCycles ||
        onlyKSplitFits(kernel, *desc, *parts, tiles,
                       target.sramBytesPerTile()))
      splitK(kernel, *parts);
  }
}

Value GraphToSpatialPass::placed(Value v, const Placement &want, OpBuilder &b,
                                 Location loc) {
  std::optional<Placement> have = placementOf(v);
  if (!have || *have == want)
    return v;
  std::vector<int64_t> key = {want.region.row, want.region.col,
                              want.region.rows, want.region.cols,
                              want.shardDim, want.chip,
                              want.block,    want.haloLo,
                              want.haloHi};
  auto cached = transfers_.find({v.getAsOpaquePointer(), key});
  if (cached != transfers_.end())
    return cached->second;
  if (have->chip != want.chip) {
    auto copy = chipCopies_.find({v.getAsOpaquePointer(), want.chip});
    if (copy != chipCopies_.end())
      return placed(copy->second, want, b, loc);
    // Across the chip network, from the source shards to the destination
    // shards (the on-chip legs to and from the ports are not modelled).
    auto type = cast<RankedTensorType>(v.getType());
    int64_t bytes = type.getNumElements() * elemBytesOf(v);
    std::vector<int64_t> route = net_->route(have->chip, want.chip);
    auto t = TransferOp::create(
        b, loc, v.getType(), v, regionAttr(b, have->region),
        b.getI64IntegerAttr(have->shardDim), regionAttr(b, want.region),
        b.getI64IntegerAttr(want.shardDim), b.getI64IntegerAttr(bytes),
        b.getI64IntegerAttr(static_cast<int64_t>(route.size())),
        b.getDenseI64ArrayAttr({}), b.getI64IntegerAttr(have->chip),
        b.getI64IntegerAttr(want.chip), b.getDenseI64ArrayAttr(route));
    transfers_[{v.getAsOpaquePointer(), key}] = t;
    chipCopies_[{v.getAsOpaquePointer(), want.chip}] = t;
    return t;
  }

  std::vector<int64_t> shape = shapeOf(v);
  const int64_t elemBytes = elemBytesOf(v);
  int64_t bytes = 0, hops = 0;
  std::set<int64_t> links;
  for (const ShardFlow &f : reshardFlows(shape, *have, want, mesh_->cols())) {
    bytes += f.elements * elemBytes;
    hops = std::max(hops, mesh_->hops(f.from, f.to));
    for (int64_t l : mesh_->routeXY(f.from, f.to))
      links.insert(l);
  }
  auto t = TransferOp::create(
      b, loc, v.getType(), v, regionAttr(b, have->region),
      b.getI64IntegerAttr(have->shardDim), regionAttr(b, want.region),
      b.getI64IntegerAttr(want.shardDim), b.getI64IntegerAttr(bytes),
      b.getI64IntegerAttr(hops),
      b.getDenseI64ArrayAttr(std::vector<int64_t>(links.begin(), links.end())),
      b.getI64IntegerAttr(want.chip), b.getI64IntegerAttr(want.chip),
      b.getDenseI64ArrayAttr({}), b.getDenseI64ArrayAttr(have->layout()),
      b.getDenseI64ArrayAttr(want.layout()));
  transfers_[{v.getAsOpaquePointer(), key}] = t;
  return t;
}

LogicalResult GraphToSpatialPass::placeCollective(Operation *op, OpBuilder &b) {
  ArrayRef<int64_t> chips;
  CollectiveKind kind;
  int64_t axis = -1;
  if (auto ar = dyn_cast<graph::AllReduceOp>(op)) {
    chips = ar.getChips();
    kind = CollectiveKind::AllReduce;
  } else {
    auto ag = cast<graph::AllGatherOp>(op);
    chips = ag.getChips();
    kind = CollectiveKind::AllGather;
    axis = ag.getAxis();
  }
  for (int64_t c : chips)
    if (c >= chips_)
      return op->emitError() << "graph-to-spatial: chip " << c
                             << " is outside the " << chips_
                             << " chips of the function (graph.chips)";
  b.setInsertionPoint(op);
  SmallVector<Value> inputs;
  for (auto [v, chip] : llvm::zip(op->getOperands(), chips))
    inputs.push_back(placed(v, Placement{TileRegion{}, -1, chip}, b,
                            op->getLoc()));
  std::vector<int64_t> group(chips.begin(), chips.end());
  std::sort(group.begin(), group.end());
  // At the inputs' storage format where they share one (graph-precision-
  // policy's wire format), as spatial-lower-collectives carries them.
  auto type = cast<RankedTensorType>(op->getOperand(0).getType());
  int64_t bytes =
      type.getNumElements() *
      (commonStorageFormat(inputs) ? storageElementBytes(inputs[0])
                                   : elementBytes(type.getElementType()));
  auto c = CollectiveOp::create(b, op->getLoc(), op->getResultTypes(), inputs,
                                kind, axis, chips,
                                net_->collectiveAlgorithm(group), bytes);
  op->replaceAllUsesWith(c->getResults());
  op->erase();
  return success();
}

void GraphToSpatialPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::string error;
  std::optional<TargetModel> target = TargetModel::load(this->target, error);
  if (!target) {
    func.emitError() << "graph-to-spatial: " << error;
    return signalPassFailure();
  }
  model_.emplace(*target);
  mesh_.emplace(target->tileRows(), target->tileCols());
  chips_ = 1;
  if (auto a = func->getAttrOfType<IntegerAttr>(graph::kChipsAttr))
    chips_ = std::max<int64_t>(1, a.getInt());
  int64_t systemChips = 0;
  if (auto a = func->getAttrOfType<IntegerAttr>(graph::kSystemChipsAttr))
    systemChips = a.getInt();
  int64_t tp = 0;
  if (auto a = func->getAttrOfType<IntegerAttr>(graph::kTensorParallelAttr))
    tp = a.getInt();
  net_.emplace(*target, chips_, systemChips, tp);
  if (chips_ > 1 && !net_->connected()) {
    func.emitError() << "graph-to-spatial: " << target->desc().name
                     << " has no chip-to-chip links (system.links), so it "
                        "cannot run a program across "
                     << chips_ << " chips";
    return signalPassFailure();
  }
  resident_.assign(chips_ * target->tilesPerChip(), 0);
  transfers_.clear();
  chipCopies_.clear();

  // Check the input form before changing anything.
  Block &entry = func.getBody().front();
  for (Operation &op : entry) {
    if (isa<graph::KernelOp, graph::ConstantOp, func::ReturnOp,
            graph::AllReduceOp, graph::AllGatherOp>(op))
      continue;
    op.emitError() << "graph-to-spatial: '" << op.getName()
                   << "' is not inside a graph.kernel (run graph-form-kernels "
                      "first)";
    return signalPassFailure();
  }

  splitContractions(func);
  if (failed(planMapping(func)))
    return signalPassFailure();
  chipBudgets(func);

  // One input at a time across chips the moves decide (chipBudgets); when
  // that leaves some kernel no tile with room for its weights on a chip (a
  // greedy packing that filled a tile), the placement is redone from a copy
  // of the function taken before, balancing that chip's tiles' resident
  // loads first. (Chips are placed independently: a kernel's moves count
  // only inputs on its own chip.)
  const bool movesFirst =
      chips_ > 1 && llvm::count(balance_, false) > 0;
  func::FuncOp before = movesFirst ? func.clone() : nullptr;
  llvm::scope_exit dropBefore([&] {
    if (before)
      before.erase();
  });
  if (failed(placeAll(func)))
    return signalPassFailure();
  if (before)
    checkRoom(func);
  bool retry = false;
  for (int64_t c = 0; c < chips_ && before; ++c)
    if (overfull_[c] && !balance_[c])
      balance_[c] = retry = true;
  if (retry) {
    func.getBody().takeBody(before.getBody());
    func.setArgAttrsAttr(before.getArgAttrsAttr());
    resident_.assign(resident_.size(), 0);
    transfers_.clear();
    chipCopies_.clear();
    if (failed(placeAll(func)))
      return signalPassFailure();
  }
}

void GraphToSpatialPass::checkRoom(func::FuncOp func) {
  // The model inputs join the resident bytes here: a decode step's past KV
  // cache, read where its first reader is, lives from the input's start.
  std::vector<int64_t> bytes = resident_;
  for (BlockArgument arg : func.getArguments()) {
    std::optional<Placement> p = placementOf(arg);
    if (p && p->chip >= 0 && p->chip < chips_)
      addResident(shapeOf(arg), elemBytesOf(arg), *p, &bytes);
  }
  const int64_t perChip = model_->target().tilesPerChip();
  for (size_t t = 0; t < bytes.size(); ++t)
    if (bytes[t] > weightRoom(static_cast<int64_t>(t) / perChip))
      overfull_[t / perChip] = true;
}

/// Per chip, the stored bytes of the weights the kernels of `entry` use.
static std::map<int64_t, int64_t> pendingWeightsOf(Block &entry) {
  std::map<int64_t, int64_t> pendingWeights;
  std::set<Operation *> counted;
  for (Operation &op : entry)
    if (auto k = dyn_cast<graph::KernelOp>(op))
      for (Value in : k.getInputs())
        if (auto c = in.getDefiningOp<graph::ConstantOp>())
          if (counted.insert(c.getOperation()).second)
            pendingWeights[chipOf(k)] +=
                cast<ShapedType>(in.getType()).getNumElements() * storedElementBytes(in);
  return pendingWeights;
}

// Weight placement is decided at first use: the constant's own place is
// in front of that kernel.
Value GraphToSpatialPass::weightFor(OpBuilder &b,
                                    std::map<void *, Value> &weights,
                                    graph::ConstantOp c, const Placement &p) {
  auto it = weights.find(c.getOperation());
  if (it != weights.end())
    return it->second;
  auto w = WeightOp::create(b, c.getLoc(), c.getType(), c.getValue(),
                            regionAttr(b, p.region),
                            b.getI64IntegerAttr(p.shardDim),
                            b.getI64IntegerAttr(p.chip),
                            b.getDenseI64ArrayAttr(p.layout()));
  addResident(shapeOf(w), storedElementBytes(c), p);
  weights[c.getOperation()] = w;
  return w;
}

std::optional<TileRegion> GraphToSpatialPass::kernelRegion(
    graph::KernelOp kernel, const std::optional<KernelDesc> &desc,
    int64_t nextId, CostBreakdown &cost, int64_t &group, std::string &error) {
  std::optional<TileRegion> region;
  if (desc && plan_) {
    size_t index = static_cast<size_t>(nextId);
    region = plan_->regions[index];
    group = plan_->group[index];
    Region shape;
    shape.tileRows = region->rows;
    shape.tileCols = region->cols;
    if (std::optional<CostBreakdown> est =
            model_->estimate(*desc, shape, &error))
      cost = *est;
    else
      region.reset();
  } else if (desc) {
    region = chooseSize(*desc, cost, error);
    if (region)
      region = fitWeights(kernel, *desc, *region, cost, error);
    if (region)
      region = chooseOrigin(kernel, *region);
  }
  return region;
}

Decomposition GraphToSpatialPass::decompose(
    graph::KernelOp kernel, const TileRegion &region, int64_t chip,
    const std::map<void *, Value> &weights,
    std::map<int64_t, int64_t> &pendingWeights) {
  // What each tile computes and which bytes of each input that takes.
  Block &body = kernel.getBody().front();
  std::vector<KernelInputInfo> infos;
  for (Value in : kernel.getInputs()) {
    bool constant = static_cast<bool>(in.getDefiningOp<graph::ConstantOp>());
    KernelInputInfo info{constant ? storedElementBytes(in) : elemBytesOf(in),
                         constant, std::nullopt};
    if (std::optional<Placement> have = placementOf(in);
        have && have->chip == chip)
      info.current = have;
    infos.push_back(info);
  }
  // Balanced by the matrix unit's timing rule where it runs the kernel's
  // format (its contractions in whole native blocks).
  MatrixTiming timing;
  timing.tile = &model_->target().desc().chip.tile;
  timing.format = kernel.getPrecision();
  // The weights may take what the region's fullest tile has left of its
  // weight room (a split that copies weights to every tile must still
  // fit beside the weights placed before it).
  int64_t placedBefore = 0;
  if (!resident_.empty())
    for (int64_t i = 0; i < region.tiles(); ++i)
      placedBefore = std::max(
          placedBefore,
          resident_[chip * model_->target().tilesPerChip() +
                    region.tileIndex(i, mesh_->cols())]);
  int64_t own = 0;
  for (Value in : kernel.getInputs())
    if (auto c = in.getDefiningOp<graph::ConstantOp>())
      if (!weights.count(c.getOperation()))
        own += cast<ShapedType>(in.getType()).getNumElements() * storedElementBytes(in);
  const int64_t toCome =
      std::max<int64_t>(0, pendingWeights[chip] - own) /
      std::max<int64_t>(1, model_->target().tilesPerChip());
  Decomposition dec = decomposeKernel(
      body, region, mesh_->cols(), infos,
      std::max<int64_t>(1, weightRoom(chip) - placedBefore - toCome),
      model_->target().sramBytesPerTile(), timing);
  pendingWeights[chip] -= own;
  return dec;
}

SmallVector<Value> GraphToSpatialPass::placeInputs(
    func::FuncOp func, graph::KernelOp kernel, const Decomposition &dec,
    const TileRegion &region, int64_t chip, OpBuilder &b,
    std::map<void *, Value> &weights) {
  SmallVector<Value> inputs;
  for (auto [i, in] : llvm::enumerate(kernel.getInputs())) {
    Placement want = placementFor(dec.inputs[i], shapeOf(in), region, chip);
    if (auto c = in.getDefiningOp<graph::ConstantOp>()) {
      inputs.push_back(
          placed(weightFor(b, weights, c, want), want, b, kernel.getLoc()));
      continue;
    }
    if (auto arg = dyn_cast<BlockArgument>(in)) {
      if (!func.getArgAttr(arg.getArgNumber(), kArgRegionAttr)) {
        func.setArgAttr(arg.getArgNumber(), kArgRegionAttr,
                        regionAttr(b, want.region));
        func.setArgAttr(arg.getArgNumber(), kArgShardDimAttr,
                        b.getI64IntegerAttr(want.shardDim));
        if (!want.plain() && want.shardDim >= 0)
          func.setArgAttr(arg.getArgNumber(), kArgLayoutAttr,
                          b.getDenseI64ArrayAttr(want.layout()));
        if (chips_ > 1)
          func.setArgAttr(arg.getArgNumber(), kArgChipAttr,
                          b.getI64IntegerAttr(chip));
      }
    }
    inputs.push_back(placed(in, want, b, kernel.getLoc()));
  }
  return inputs;
}

void GraphToSpatialPass::finishPlacement(func::FuncOp func, OpBuilder &b,
                                         std::map<void *, Value> &weights) {
  Block &entry = func.getBody().front();
  // Values returned without passing through a kernel stay where they are;
  // a constant returned directly becomes a weight on the first tile.
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  b.setInsertionPoint(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    if (auto c = operand.get().getDefiningOp<graph::ConstantOp>())
      operand.set(weightFor(b, weights, c, Placement{TileRegion{}, -1}));
  }
  for (BlockArgument arg : func.getArguments()) {
    if (func.getArgAttr(arg.getArgNumber(), kArgRegionAttr))
      continue;
    func.setArgAttr(arg.getArgNumber(), kArgRegionAttr,
                    regionAttr(b, TileRegion{}));
    func.setArgAttr(arg.getArgNumber(), kArgShardDimAttr,
                    b.getI64IntegerAttr(-1));
  }
  for (Operation &op : llvm::make_early_inc_range(entry))
    if (isa<graph::ConstantOp>(op) && op.use_empty())
      op.erase();
}

LogicalResult GraphToSpatialPass::placeAll(func::FuncOp func) {
  Block &entry = func.getBody().front();
  std::string error;
  OpBuilder b(func.getContext());
  std::map<void *, Value> weights; // graph.constant -> spatial.weight
  int64_t nextId = 0;

  // The kernels placed, in steps of at most 5% (the driver's bar shows
  // them).
  int64_t kernelCount = 0;
  for (Operation &op : entry)
    kernelCount += isa<graph::KernelOp>(op) ? 1 : 0;
  PassSteps steps(kernelCount, "kernels placed");
  // Per chip, the stored bytes of the weights not placed yet: a kernel's
  // split may copy its weights to every tile only while each tile keeps
  // its even share of these (the weights still to come) free.
  std::map<int64_t, int64_t> pendingWeights = pendingWeightsOf(entry);
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (isa<graph::AllReduceOp, graph::AllGatherOp>(op)) {
      if (failed(placeCollective(&op, b)))
        return failure();
      continue;
    }
    auto kernel = dyn_cast<graph::KernelOp>(op);
    if (!kernel)
      continue;
    llvm::scope_exit kernelPlaced([&] { steps.advance(); });
    const int64_t chip = chipOf(kernel);
    std::optional<KernelDesc> desc = describeKernel(
        kernel.getKind(), kernel.getPrecision(), kernel.getBody(), error,
        kernel.getStorage());
    CostBreakdown cost;
    int64_t group = 0;
    std::optional<TileRegion> region =
        kernelRegion(kernel, desc, nextId, cost, group, error);
    if (!region)
      return kernel.emitError() << "graph-to-spatial: " << error;
    b.setInsertionPoint(kernel);
    Decomposition dec =
        decompose(kernel, *region, chip, weights, pendingWeights);
    SmallVector<Value> inputs =
        placeInputs(func, kernel, dec, *region, chip, b, weights);
    SmallVector<int64_t> shardDims(dec.resultDims.begin(),
                                   dec.resultDims.end());
    std::string name = onnxNodeName(kernel.getLoc());
    if (name.empty())
      name = "kernel" + std::to_string(nextId);
    auto sk = KernelOp::create(
        b, kernel.getLoc(), kernel.getResultTypes(), inputs,
        b.getI64IntegerAttr(nextId++), b.getStringAttr(name),
        kernel.getKindAttr(), kernel.getPrecisionAttr(), kernel.getBlockAttr(),
        regionAttr(b, *region), b.getDenseI64ArrayAttr(shardDims),
        b.getI64IntegerAttr(static_cast<int64_t>(std::ceil(cost.totalCycles))),
        graph::CostBoundAttr::get(b.getContext(), cost.bound),
        b.getI64IntegerAttr(static_cast<int64_t>(desc->matrixFlops())),
        b.getI64IntegerAttr(desc->sramBytesRead + desc->sramBytesWritten),
        b.getI64IntegerAttr(group), b.getI64IntegerAttr(chip),
        kernel.getStorageAttr(), b.getStringAttr(dec.name));
    sk.getBody().takeBody(kernel.getBody());
    Operation *yield = sk.getBody().front().getTerminator();
    b.setInsertionPoint(yield);
    YieldOp::create(b, yield->getLoc(), yield->getOperands());
    yield->erase();
    // Program outputs (a decode step's updated KV cache) stay to the end of
    // each input, a copy per input in flight: they count with the weights
    // in the load that placement balances.
    for (auto [i, r] : llvm::enumerate(kernel.getResults()))
      if (isProgramOutput(r))
        addResident(shapeOf(r), elemBytesOf(r),
                    Placement{*region, shardDims[i], chip});
    kernel.replaceAllUsesWith(sk.getResults());
    kernel.erase();
  }

  finishPlacement(func, b, weights);
  return success();
}

} // namespace
} // namespace loom::spatial
