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
#include <deque>
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

std::optional<TaskTimes>
scheduleList(const std::vector<std::vector<TaskPart>> &parts,
             const std::vector<std::vector<int64_t>> &deps,
             int64_t numResources) {
  ListScheduler scheduler(numResources);
  TaskTimes t;
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t task = scheduler.addTask(parts[i], deps[i]);
    t.start.push_back(scheduler.start(task));
    t.end.push_back(scheduler.end(task));
  }
  t.makespan = scheduler.makespan();
  t.ii = std::max<int64_t>(1, t.makespan);
  return t;
}

/// Modulo scheduling from the resource bound (or `fromII`) up: each failed
/// attempt raises the interval by 1/32 (at least a cycle). std::nullopt once
/// the interval reaches `listII`, one input's list-scheduled latency: then
/// inputs need not overlap and the list schedule is the answer. `slack` is
/// ModuloScheduler's.
std::optional<TaskTimes>
scheduleModulo(const std::vector<std::vector<TaskPart>> &parts,
               const std::vector<std::vector<int64_t>> &deps,
               int64_t numResources, double slack, int64_t fromII,
               int64_t listII) {
  for (int64_t ii = std::max(fromII, resourceMinII(numResources, parts));
       ii < listII; ii += std::max<int64_t>(1, ii / 32)) {
    ModuloScheduler scheduler(numResources, ii, slack);
    TaskTimes t;
    bool ok = true;
    for (size_t i = 0; i < parts.size() && ok; ++i) {
      std::optional<int64_t> task = scheduler.addTask(parts[i], deps[i]);
      if (!task) {
        ok = false;
        break;
      }
      t.start.push_back(scheduler.start(*task));
      t.end.push_back(scheduler.end(*task));
    }
    if (!ok)
      continue;
    t.makespan = scheduler.makespan();
    t.ii = ii;
    return t;
  }
  return std::nullopt;
}

/// The error for an initiation interval above the --max-ii limit: the
/// busiest resource and the kernels or transfers that load it.
void reportOversubscribed(func::FuncOp func,
                          const std::vector<std::vector<TaskPart>> &parts,
                          const std::vector<Operation *> &ops,
                          int64_t numResources, int64_t ii, int64_t maxII,
                          llvm::function_ref<std::string(int64_t)> name) {
  std::vector<int64_t> load(static_cast<size_t>(numResources), 0);
  for (const auto &task : parts)
    for (const TaskPart &p : task)
      load[static_cast<size_t>(p.resource)] += p.duration;
  // Ties go to the later resource: a mesh link over the DMA unit feeding it.
  int64_t worst = 0;
  for (int64_t r = 0; r < numResources; ++r)
    if (load[static_cast<size_t>(r)] >= load[static_cast<size_t>(worst)])
      worst = r;
  std::vector<std::string> users;
  for (size_t i = 0; i < parts.size(); ++i)
    for (const TaskPart &p : parts[i])
      if (p.resource == worst) {
        std::string n = taskName(ops[i]);
        if (std::find(users.begin(), users.end(), n) == users.end())
          users.push_back(n);
      }
  std::string list;
  for (size_t i = 0; i < users.size() && i < 4; ++i)
    list += (i ? ", " : "") + users[i];
  if (users.size() > 4)
    list += " and " + std::to_string(users.size() - 4) + " more";
  InFlightDiagnostic diag = ops.empty() ? func.emitError() : [&] {
    for (size_t i = 0; i < parts.size(); ++i)
      for (const TaskPart &p : parts[i])
        if (p.resource == worst)
          return ops[i]->emitError();
    return func.emitError();
  }();
  int64_t need = load[static_cast<size_t>(worst)];
  diag << "spatial-to-sched: ";
  if (need > maxII)
    diag << name(worst) << " is oversubscribed: it is busy " << need
         << " cycles per input for " << list
         << ", more than the initiation interval limit of " << maxII
         << " cycles (max-ii)";
  else
    diag << "the best initiation interval found is " << ii
         << " cycles, above the limit of " << maxII
         << " cycles (max-ii); the busiest resource is " << name(worst)
         << ", busy " << need << " cycles per input for " << list;
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
  // Timing: a list schedule for one input at a time, or a modulo schedule
  // at the smallest initiation interval found for a pipelined mapping.
  // Candidates in order of preference: for a pipelined mapping, modulo
  // schedules packed ever less tightly (shorter lifetimes, less SRAM) down
  // to first fit, then one input at a time; the first whose buffers fit in
  // SRAM is kept.
  // Kept stable: `plan.times` points into it.
  std::deque<TaskTimes> attempts;
  BufferPlanner plan(func, system, graph, alignment);
  // One input at a time: the fallback, and the bound on any interval worth
  // modulo scheduling.
  const TaskTimes list =
      *scheduleList(graph.parts, graph.deps, system.numResources);
  bool allocated = false;
  // The shortest interval a modulo schedule reached whose buffers did not
  // fit in SRAM (0: none), for the max-ii diagnostic.
  int64_t sramFailedII = 0;
  if (pipelined) {
    // The tightest packing first, then ever looser ones (shorter
    // lifetimes, less SRAM). Each at its own interval; while its rotating
    // copies overflow SRAM, at longer intervals (a longer interval needs
    // fewer copies): doubling until one fits, then halving the gap between
    // the longest that overflowed and the shortest that fit, down to 1/32
    // of it. A packing whose excess over SRAM (the fullest tile's need
    // less a tile's bytes) does not shrink by a tenth as its interval
    // doubles (lifetimes that grow with the interval) is given up.
    std::optional<size_t> best;
    for (double slack : {1.0, 0.5, 0.25, 0.0}) {
      int64_t from = 0, overflowed = 0, lastExcess = 0;
      std::optional<size_t> fit;
      // Only an interval below the best so far is worth searching for.
      const int64_t cap = best ? attempts[*best].ii : list.ii;
      for (int k = 0; k < 16; ++k) {
        std::optional<TaskTimes> t = scheduleModulo(
            graph.parts, graph.deps, system.numResources, slack, from, list.ii);
        if (!t || t->ii >= cap)
          break;
        attempts.push_back(std::move(*t));
        const int64_t got = attempts.back().ii;
        if (plan.plan(attempts.back(), false)) {
          if (!fit || got < attempts[*fit].ii)
            fit = attempts.size() - 1;
        } else {
          overflowed = std::max(overflowed, got);
          sramFailedII = sramFailedII ? std::min(sramFailedII, got) : got;
          // What is over a tile's SRAM must shrink by a tenth: the need
          // alone can be mostly resident bytes, which no interval frees.
          const int64_t excess =
              std::max<int64_t>(1, plan.overflowBytes - plan.capacity);
          if (!fit && lastExcess && excess * 10 >= lastExcess * 9)
            break;
          lastExcess = excess;
        }
        if (fit && attempts[*fit].ii - overflowed <=
                       std::max<int64_t>(1, overflowed / 32))
          break;
        // Below the best so far (at first, one input at a time), or it is
        // not worth it.
        int64_t next = fit ? overflowed + (attempts[*fit].ii - overflowed) / 2
                           : std::min(2 * got, cap - 1);
        if (next <= (fit ? overflowed : got))
          break;
        from = next;
      }
      if (fit && (!best || attempts[*fit].ii < attempts[*best].ii))
        best = fit;
    }
    if (best)
      allocated = plan.plan(attempts[*best], false);
  }
  if (!allocated) {
    attempts.push_back(list);
    allocated = plan.plan(attempts.back(), true);
  }
  // Not even one input at a time fits: diagnosed at the kernel whose
  // buffer pushed a tile over.
  if (!allocated)
    return signalPassFailure();
  if (maxII > 0 && plan.ii > maxII && sramFailedII && sramFailedII <= maxII) {
    func.emitError() << "spatial-to-sched: a new input every " << sramFailedII
                     << " cycles fits every unit and mesh link, but the "
                        "rotating copies of its buffers overflow SRAM; the "
                        "best interval whose buffers fit is "
                     << plan.ii << " cycles, above the limit of "
                     << static_cast<int64_t>(maxII) << " cycles (max-ii)";
    return signalPassFailure();
  }
  if (maxII > 0 && plan.ii > maxII) {
    reportOversubscribed(func, graph.parts, graph.ops, system.numResources,
                         plan.ii, maxII,
                         [&](int64_t r) { return system.describeResource(r); });
    return signalPassFailure();
  }

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
