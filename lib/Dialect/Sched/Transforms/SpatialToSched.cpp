//===- SpatialToSched.cpp - List scheduling and SRAM allocation -----------===//
//
// Turns a spatial function into a static schedule: instructions with exact
// start cycles on every resource, and SRAM buffers with offsets and live
// ranges. See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//
#include "SchedPlan.h"

#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Sched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <map>

namespace loom::sched {
#define GEN_PASS_DEF_SPATIALTOSCHED
#include "loom/Dialect/Sched/Transforms/Passes.h.inc"

using namespace mlir;

namespace {

/// A box as the sched.buffer attribute stores it: lo then hi.
std::vector<int64_t> boxAttr(const spatial::ShardBox &box) {
  std::vector<int64_t> v = box.lo;
  v.insert(v.end(), box.hi.begin(), box.hi.end());
  return v;
}

struct SpatialToSchedPass : impl::SpatialToSchedBase<SpatialToSchedPass> {
  using Base::Base;
  void runOnOperation() override;
};

void SpatialToSchedPass::runOnOperation() {
  func::FuncOp func = getOperation();
  std::string error;
  std::optional<TargetModel> target = TargetModel::load(this->target, error);
  if (!target) {
    func.emitError() << "spatial-to-sched: " << error;
    return signalPassFailure();
  }
  CostModel model(*target);
  SystemLayout system(*target, func);
  const int64_t tiles = system.tiles;
  StringRef mapping = "sequential";
  if (auto m = func->getAttrOfType<StringAttr>(spatial::kMappingAttr))
    mapping = m.getValue();
  int64_t groups = 1;
  if (auto g = func->getAttrOfType<IntegerAttr>(spatial::kPipelineGroupsAttr))
    groups = std::max<int64_t>(1, g.getInt());
  const bool pipelined = mapping != "sequential";

  Block &entry = func.getBody().front();
  TaskGraph graph;
  if (failed(TaskBuilder(system, model, graph).build(func)))
    return signalPassFailure();
  BufferPlanner plan(func, system, graph, alignment);
  IntervalSearch search(graph, system.numResources, plan);
  // Not even one input at a time fits: diagnosed at the kernel whose
  // buffer pushed a tile over.
  if (!search.run(pipelined))
    return signalPassFailure();
  if (failed(
          checkMaxII(func, system, graph, plan.ii, maxII, search.sramFailedII)))
    return signalPassFailure();

  // Write the schedule into the IR.
  OpBuilder b(func.getContext());
  auto idsOn = [&](const std::vector<Value> &values,
                   const std::vector<int64_t> &onTiles) {
    std::vector<int64_t> ids;
    for (Value v : values)
      for (int64_t t : onTiles) {
        auto it = plan.bufferOf.find({v.getAsOpaquePointer(), t});
        if (it != plan.bufferOf.end() &&
            std::find(ids.begin(), ids.end(), it->second) == ids.end())
          ids.push_back(it->second);
      }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  std::map<void *, std::vector<int64_t>> buffersOf;
  for (const BufferRecord &r : plan.buffers)
    buffersOf[r.value.getAsOpaquePointer()].push_back(r.id);
  auto emitBuffers = [&](Value v) {
    auto found = buffersOf.find(v.getAsOpaquePointer());
    if (found == buffersOf.end())
      return;
    for (int64_t id : found->second)
      if (const BufferRecord &r = plan.buffers[id]; true)
        BufferOp::create(
            b, v.getLoc(), b.getI64IntegerAttr(r.id), v,
            b.getI64IntegerAttr(r.tile), b.getI64IntegerAttr(r.offset),
            b.getI64IntegerAttr(r.size), b.getI64IntegerAttr(r.start),
            b.getI64IntegerAttr(r.end), b.getI64IntegerAttr(r.copies),
            r.resident ? b.getUnitAttr() : UnitAttr(),
            r.box ? b.getDenseI64ArrayAttr(boxAttr(*r.box))
                  : DenseI64ArrayAttr());
  };
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : func.getArguments())
    emitBuffers(arg);
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (isa<InstrOp, BufferOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    b.setInsertionPointAfter(&op);
    auto it = graph.instrsOf.find(&op);
    if (it != graph.instrsOf.end()) {
      for (const InstrRecord &r : it->second) {
        std::vector<int64_t> deps;
        for (int64_t t : r.depTasks)
          for (int64_t k = 0; k < graph.numInstrs[t]; ++k)
            deps.push_back(graph.firstInstr[t] + k);
        std::vector<int64_t> readIds, writeIds;
        if (r.tile >= 0 || !r.readTiles.empty()) {
          readIds =
              idsOn(r.reads, r.readTiles.empty() ? std::vector<int64_t>{r.tile}
                                                 : r.readTiles);
          writeIds = idsOn(r.writes, r.writeTiles.empty()
                                         ? std::vector<int64_t>{r.tile}
                                         : r.writeTiles);
        }
        InstrOp::create(
            b, op.getLoc(), b.getI64IntegerAttr(r.id), b.getStringAttr(r.unit),
            b.getI64IntegerAttr(r.unit == std::string("link") ||
                                        r.unit == std::string("chip_link")
                                    ? r.resource - 3 * tiles
                                    : r.tile),
            b.getI64IntegerAttr(plan.times->start[r.task]),
            b.getI64IntegerAttr(r.duration), b.getI64IntegerAttr(r.kernel),
            b.getI64IntegerAttr(r.bytes), b.getDenseI64ArrayAttr(deps),
            b.getDenseI64ArrayAttr(readIds), b.getDenseI64ArrayAttr(writeIds),
            r.latency ? b.getI64IntegerAttr(r.latency) : IntegerAttr());
      }
    }
    for (Value r : op.getResults())
      emitBuffers(r);
  }
  RooflineBound roof = model.roofline(graph.descs, system.chips);
  b.setInsertionPoint(entry.getTerminator());
  SummaryOp::create(b, func.getLoc(), b.getI64IntegerAttr(plan.times->makespan),
                    b.getI64IntegerAttr(plan.peak),
                    b.getI64IntegerAttr(plan.lowerBound),
                    b.getDenseI64ArrayAttr(plan.peakPerTile),
                    b.getI64IntegerAttr(static_cast<int64_t>(
                        std::ceil(target->secondsToCycles(roof.seconds)))),
                    b.getStringAttr(mapping), b.getI64IntegerAttr(groups),
                    b.getI64IntegerAttr(plan.period ? plan.ii : 0));
}

} // namespace
} // namespace loom::sched
