//===- SpatialToSched.cpp - List scheduling and SRAM allocation -----------===//
//
// Turns a spatial function into a static schedule: instructions with exact
// start cycles on every resource, and SRAM buffers with offsets and live
// ranges. See Passes.td for the rules. The pass runs the pieces declared in
// SchedPlan.h in turn (tasks, interval search with buffer planning, the
// max-ii limit), then writes the schedule into the IR (ScheduleWriter,
// here).
//
//===----------------------------------------------------------------------===//
#include "SchedPlan.h"

#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Sched/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <cmath>

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

/// Writes a planned schedule into its function: each value's sched.buffer
/// ops after its definition (the arguments' at the start), each kernel's or
/// transfer's sched.instr ops after it, and the sched.summary before the
/// return.
class ScheduleWriter {
public:
  ScheduleWriter(func::FuncOp func, const SystemLayout &system,
                 const TaskGraph &graph, const BufferPlanner &plan)
      : func(func), system(system), graph(graph), plan(plan),
        b(func.getContext()) {
    for (const BufferRecord &r : plan.buffers)
      buffersOf[r.value.getAsOpaquePointer()].push_back(r.id);
  }

  /// Writes the buffers and instrs, then the summary of `mapping` (in
  /// `groups` pipeline groups) with the roofline of the kernels.
  void write(const CostModel &model, StringRef mapping, int64_t groups);

private:
  /// The ids of the buffers of `values` on `onTiles`, each once, sorted.
  std::vector<int64_t> idsOn(const std::vector<Value> &values,
                             const std::vector<int64_t> &onTiles) const;
  void writeBuffers(Value v);
  void writeInstr(Operation &op, const InstrRecord &r);

  func::FuncOp func;
  const SystemLayout &system;
  const TaskGraph &graph;
  const BufferPlanner &plan;
  OpBuilder b;
  /// Value (opaque pointer) -> its buffers' ids.
  std::map<void *, std::vector<int64_t>> buffersOf;
};

std::vector<int64_t>
ScheduleWriter::idsOn(const std::vector<Value> &values,
                      const std::vector<int64_t> &onTiles) const {
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
}

void ScheduleWriter::writeBuffers(Value v) {
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
}

void ScheduleWriter::writeInstr(Operation &op, const InstrRecord &r) {
  std::vector<int64_t> deps;
  for (int64_t t : r.depTasks)
    for (int64_t k = 0; k < graph.numInstrs[t]; ++k)
      deps.push_back(graph.firstInstr[t] + k);
  std::vector<int64_t> readIds, writeIds;
  if (r.tile >= 0 || !r.readTiles.empty()) {
    readIds = idsOn(r.reads, r.readTiles.empty() ? std::vector<int64_t>{r.tile}
                                                 : r.readTiles);
    writeIds =
        idsOn(r.writes, r.writeTiles.empty() ? std::vector<int64_t>{r.tile}
                                             : r.writeTiles);
  }
  InstrOp::create(
      b, op.getLoc(), b.getI64IntegerAttr(r.id), b.getStringAttr(r.unit),
      b.getI64IntegerAttr(r.unit == std::string("link") ||
                                  r.unit == std::string("chip_link")
                              ? r.resource - system.tileUnits()
                              : r.tile),
      b.getI64IntegerAttr(plan.times->start[r.task]),
      b.getI64IntegerAttr(r.duration), b.getI64IntegerAttr(r.kernel),
      b.getI64IntegerAttr(r.bytes), b.getDenseI64ArrayAttr(deps),
      b.getDenseI64ArrayAttr(readIds), b.getDenseI64ArrayAttr(writeIds),
      r.latency ? b.getI64IntegerAttr(r.latency) : IntegerAttr());
}
/// Where a kernel's format is one the matrix unit does not run (fp32 on a
/// TSP), the summary's roofline is the vector unit's; the summary then
/// also carries the roofline at the unit's fastest format
/// (`matrix_roofline_cycles`, `matrix_roofline_format`), so the user sees
/// both.
static void noteMatrixRoofline(SummaryOp summary, const CostModel &model,
                               std::vector<KernelDesc> descs,
                               const SystemLayout &system) {
  const TargetModel &target = model.target();
  std::optional<NumericFormat> fastest;
  for (NumericFormat f : rt::kAllNumericFormats)
    if (target.matrixSupports(f) &&
        (!fastest || target.desc().chip.tile.matrix.macs(f) >
                         target.desc().chip.tile.matrix.macs(*fastest)))
      fastest = f;
  bool offUnit = false;
  for (KernelDesc &d : descs)
    if ((d.kind == KernelKind::MatMul || d.kind == KernelKind::Conv) &&
        !target.matrixSupports(d.format)) {
      offUnit = true;
      if (fastest)
        d.format = *fastest;
    }
  if (!offUnit || !fastest)
    return;
  RooflineBound roof = model.roofline(descs, system.chips);
  Builder b(summary.getContext());
  summary->setAttr("matrix_roofline_cycles",
                   b.getI64IntegerAttr(static_cast<int64_t>(std::ceil(
                       system.target.secondsToCycles(roof.seconds)))));
  summary->setAttr("matrix_roofline_format",
                   b.getStringAttr(rt::numericFormatName(*fastest)));
}


void ScheduleWriter::write(const CostModel &model, StringRef mapping,
                           int64_t groups) {
  Block &entry = func.getBody().front();
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : func.getArguments())
    writeBuffers(arg);
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (isa<InstrOp, BufferOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    b.setInsertionPointAfter(&op);
    auto it = graph.instrsOf.find(&op);
    if (it != graph.instrsOf.end())
      for (const InstrRecord &r : it->second)
        writeInstr(op, r);
    for (Value r : op.getResults())
      writeBuffers(r);
  }
  RooflineBound roof = model.roofline(graph.descs, system.chips);
  b.setInsertionPoint(entry.getTerminator());
  auto summary = SummaryOp::create(
      b, func.getLoc(), b.getI64IntegerAttr(plan.times->makespan),
                    b.getI64IntegerAttr(plan.peak),
                    b.getI64IntegerAttr(plan.lowerBound),
                    b.getDenseI64ArrayAttr(plan.peakPerTile),
                    b.getI64IntegerAttr(static_cast<int64_t>(std::ceil(
                        system.target.secondsToCycles(roof.seconds)))),
                    b.getStringAttr(mapping), b.getI64IntegerAttr(groups),
                    b.getI64IntegerAttr(plan.period ? plan.ii : 0));
  noteMatrixRoofline(summary, model, graph.descs, system);
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
  StringRef mapping = "sequential";
  if (auto m = func->getAttrOfType<StringAttr>(spatial::kMappingAttr))
    mapping = m.getValue();
  int64_t groups = 1;
  if (auto g = func->getAttrOfType<IntegerAttr>(spatial::kPipelineGroupsAttr))
    groups = std::max<int64_t>(1, g.getInt());
  const bool pipelined = mapping != "sequential";

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
  ScheduleWriter(func, system, graph, plan).write(model, mapping, groups);
}

} // namespace
} // namespace loom::sched
