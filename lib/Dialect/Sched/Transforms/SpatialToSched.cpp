//===- SpatialToSched.cpp - List scheduling and SRAM allocation -----------===//
//
// Turns a spatial function into a static schedule: instructions with exact
// start cycles on every resource, and SRAM buffers with offsets and live
// ranges. See Passes.td for the rules.
//
//===----------------------------------------------------------------------===//
#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Sched/Transforms/Passes.h"
#include "loom/Dialect/Sched/Transforms/ReservationTable.h"
#include "loom/Dialect/Sched/Transforms/SramAllocator.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Target/CostModel.h"

#include "mlir/IR/Builders.h"

#include <cmath>
#include <map>

namespace loom::sched {
#define GEN_PASS_DEF_SPATIALTOSCHED
#include "loom/Dialect/Sched/Transforms/Passes.h.inc"

using namespace mlir;
using spatial::Placement;

namespace {

/// An instruction before it is written out as a sched.instr.
struct InstrRecord {
  int64_t id = 0;
  const char *unit = "matrix";
  int64_t resource = 0;
  int64_t kernel = -1;
  int64_t bytes = 0;
  int64_t duration = 0;
  int64_t task = 0;
  std::vector<int64_t> depTasks;
  /// Values whose buffers on `tile` it reads / writes (tile -1: none).
  int64_t tile = -1;
  std::vector<Value> reads;
  std::vector<Value> writes;
  /// For a DMA instruction: the tiles it writes to.
  std::vector<int64_t> writeTiles;
};

/// One shard of a value on one tile.
struct BufferRecord {
  int64_t id = 0;
  Value value;
  int64_t tile = 0;
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t offset = 0;
};

std::vector<int64_t> shapeOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

int64_t elemBytesOf(Value v) {
  return spatial::elementBytes(
      cast<RankedTensorType>(v.getType()).getElementType());
}

int64_t ceilDiv(int64_t a, double rate) {
  return rate > 0 ? static_cast<int64_t>(std::ceil(double(a) / rate)) : 0;
}

/// The kernel a value's SRAM is charged to: its producer, or for weights,
/// inputs and transfers the first kernel that uses it.
spatial::KernelOp ownerKernel(Value v) {
  if (auto k = v.getDefiningOp<spatial::KernelOp>())
    return k;
  spatial::KernelOp first;
  for (Operation *user : v.getUsers()) {
    spatial::KernelOp k = dyn_cast<spatial::KernelOp>(user);
    if (auto t = dyn_cast<spatial::TransferOp>(user))
      k = ownerKernel(t.getResult());
    if (k && (!first || k->isBeforeInBlock(first)))
      first = k;
  }
  return first;
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
  const int64_t gridCols = target->tileCols();
  const int64_t tiles = target->tilesPerChip();
  spatial::Mesh mesh(target->tileRows(), gridCols);
  const double linkRate =
      target->hasMesh() ? target->desc().chip.mesh->linkBytesPerCycle : 0;
  const int64_t hopLatency =
      target->hasMesh() ? target->desc().chip.mesh->hopLatencyCycles : 0;
  const double sramRate = target->desc().chip.tile.sram.bytesPerCycle;
  auto unitResource = [&](int64_t tile, int unit) { return 3 * tile + unit; };
  auto linkResource = [&](int64_t link) { return 3 * tiles + link; };
  ListScheduler scheduler(3 * tiles + mesh.numLinks());

  Block &entry = func.getBody().front();
  std::map<void *, int64_t> producerTask; // value -> task
  std::map<void *, int64_t> lastReadEnd;  // value -> end of last reader task
  std::map<Operation *, std::vector<InstrRecord>> instrsOf;
  std::vector<int64_t> firstInstrOfTask; // task -> first instr id
  std::vector<int64_t> numInstrsOfTask;
  int64_t nextInstr = 0;
  std::vector<KernelDesc> descs;

  auto depsOf = [&](ValueRange values) {
    std::vector<int64_t> deps;
    for (Value v : values) {
      auto it = producerTask.find(v.getAsOpaquePointer());
      if (it != producerTask.end() &&
          std::find(deps.begin(), deps.end(), it->second) == deps.end())
        deps.push_back(it->second);
    }
    return deps;
  };
  auto schedule = [&](Operation *op, std::vector<InstrRecord> instrs,
                      const std::vector<int64_t> &deps) {
    std::vector<TaskPart> parts;
    for (const InstrRecord &r : instrs)
      parts.push_back({r.resource, r.duration});
    int64_t task = scheduler.addTask(parts, deps);
    firstInstrOfTask.push_back(nextInstr);
    numInstrsOfTask.push_back(static_cast<int64_t>(instrs.size()));
    for (InstrRecord &r : instrs) {
      r.id = nextInstr++;
      r.task = task;
      r.depTasks = deps;
    }
    for (Value in : op->getOperands()) {
      int64_t &end = lastReadEnd[in.getAsOpaquePointer()];
      end = std::max(end, scheduler.end(task));
    }
    for (Value out : op->getResults())
      producerTask[out.getAsOpaquePointer()] = task;
    instrsOf[op] = std::move(instrs);
  };

  for (Operation &op : entry) {
    if (auto kernel = dyn_cast<spatial::KernelOp>(op)) {
      std::optional<KernelDesc> desc = spatial::describeKernel(
          kernel.getKind(), kernel.getPrecision(), kernel.getBody(), error);
      if (!desc) {
        kernel.emitError() << "spatial-to-sched: " << error;
        return signalPassFailure();
      }
      descs.push_back(*desc);
      spatial::TileRegion region = spatial::regionFromAttr(kernel.getRegion());
      StringRef kind = kernel.getKind();
      bool matrix =
          (kind == "matmul" || kind == "conv") &&
          (desc->kind == KernelKind::MatMul || desc->kind == KernelKind::Conv);
      bool epilogue = matrix && desc->epilogueOpsPerOutput > 0;
      const char *unit = matrix                    ? "matrix"
                         : kind == "data_movement" ? "dma"
                                                   : "vector";
      int unitIndex = matrix ? 0 : kind == "data_movement" ? 2 : 1;
      std::vector<InstrRecord> instrs;
      for (int64_t i = 0; i < region.tiles(); ++i) {
        int64_t tile = region.tileIndex(i, gridCols);
        InstrRecord r;
        r.unit = unit;
        r.resource = unitResource(tile, unitIndex);
        r.kernel = kernel.getId();
        r.duration = kernel.getCycles();
        r.tile = tile;
        r.reads.assign(kernel.getInputs().begin(), kernel.getInputs().end());
        if (!epilogue)
          r.writes.assign(kernel.getResults().begin(),
                          kernel.getResults().end());
        instrs.push_back(r);
        if (epilogue) {
          InstrRecord v = r;
          v.unit = "vector";
          v.resource = unitResource(tile, 1);
          v.reads.clear();
          v.writes.assign(kernel.getResults().begin(),
                          kernel.getResults().end());
          instrs.push_back(v);
        }
      }
      schedule(kernel, std::move(instrs), depsOf(kernel.getInputs()));
      continue;
    }
    if (auto transfer = dyn_cast<spatial::TransferOp>(op)) {
      Placement from{spatial::regionFromAttr(transfer.getFromRegion()),
                     transfer.getFromShardDim()};
      Placement to{spatial::regionFromAttr(transfer.getToRegion()),
                   transfer.getToShardDim()};
      int64_t elemBytes = elemBytesOf(transfer.getResult());
      std::map<int64_t, int64_t> sent, linkBytes;      // tile/link -> bytes
      std::map<int64_t, std::vector<int64_t>> destsOf; // tile -> dest tiles
      std::map<int64_t, bool> remote;
      for (const spatial::ShardFlow &f : spatial::reshardFlows(
               shapeOf(transfer.getResult()), from, to, gridCols)) {
        sent[f.from] += f.elements * elemBytes;
        destsOf[f.from].push_back(f.to);
        remote[f.from] = remote[f.from] || f.from != f.to;
        for (int64_t l : mesh.routeXY(f.from, f.to))
          linkBytes[l] += f.elements * elemBytes;
      }
      int64_t latency = hopLatency * transfer.getHops();
      std::vector<InstrRecord> instrs;
      for (const auto &[tile, bytes] : sent) {
        InstrRecord r;
        r.unit = "dma";
        r.resource = unitResource(tile, 2);
        r.bytes = bytes;
        r.duration =
            ceilDiv(bytes, remote[tile] ? linkRate : sramRate) + latency;
        r.tile = tile;
        r.reads = {transfer.getSource()};
        r.writes = {transfer.getResult()};
        r.writeTiles = destsOf[tile];
        instrs.push_back(r);
      }
      for (const auto &[link, bytes] : linkBytes) {
        InstrRecord r;
        r.unit = "link";
        r.resource = linkResource(link);
        r.bytes = bytes;
        r.duration = ceilDiv(bytes, linkRate) + latency;
        instrs.push_back(r);
      }
      schedule(transfer, std::move(instrs), depsOf(transfer.getSource()));
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      continue;
    }
    if (!isa<spatial::WeightOp>(op)) {
      op.emitError() << "spatial-to-sched: unexpected '" << op.getName()
                     << "' (expected spatial.weight, spatial.kernel, "
                        "spatial.transfer or func.return)";
      return signalPassFailure();
    }
  }
  const int64_t makespan = std::max<int64_t>(1, scheduler.makespan());

  // Buffers: every shard of every placed value.
  std::vector<BufferRecord> buffers;
  std::map<std::pair<void *, int64_t>, int64_t> bufferOf; // (value, tile)
  std::set<void *> returned;
  for (Value v : entry.getTerminator()->getOperands())
    returned.insert(v.getAsOpaquePointer());
  auto addBuffers = [&](Value v) {
    std::optional<Placement> p = spatial::placementOf(v);
    if (!p)
      return;
    void *key = v.getAsOpaquePointer();
    int64_t start = 0, end;
    auto prod = producerTask.find(key);
    if (prod != producerTask.end())
      start = scheduler.start(prod->second);
    if (v.getDefiningOp<spatial::WeightOp>() || returned.count(key)) {
      end = makespan;
    } else {
      auto read = lastReadEnd.find(key);
      end = read != lastReadEnd.end()    ? read->second
            : prod != producerTask.end() ? scheduler.end(prod->second)
                                         : start;
    }
    std::vector<int64_t> shape = shapeOf(v);
    int64_t n = p->region.tiles();
    for (int64_t i = 0; i < n; ++i) {
      int64_t elems = spatial::shardBox(shape, p->shardDim, n, i).elements();
      if (elems == 0)
        continue;
      BufferRecord b;
      b.id = static_cast<int64_t>(buffers.size());
      b.value = v;
      b.tile = p->region.tileIndex(i, gridCols);
      b.size = elems * elemBytesOf(v);
      b.start = start;
      b.end = std::max(end, start);
      bufferOf[{key, b.tile}] = b.id;
      buffers.push_back(b);
    }
  };
  for (BlockArgument arg : func.getArguments())
    addBuffers(arg);
  for (Operation &op : entry)
    for (Value r : op.getResults())
      addBuffers(r);

  // SRAM: per tile, check the live bytes fit, then assign offsets.
  const int64_t capacity = target->sramBytesPerTile();
  std::vector<int64_t> peakPerTile(tiles, 0);
  int64_t peak = 0, lowerBound = 0;
  for (int64_t tile = 0; tile < tiles; ++tile) {
    std::vector<int64_t> ids;
    std::vector<BufferLifetime> lifetimes;
    for (const BufferRecord &b : buffers) {
      if (b.tile != tile)
        continue;
      ids.push_back(b.id);
      lifetimes.push_back({b.size, b.start, b.end});
    }
    auto report = [&](size_t index, int64_t needed, StringRef what) {
      Value v = buffers[ids[index]].value;
      spatial::KernelOp owner = ownerKernel(v);
      InFlightDiagnostic diag = owner ? owner.emitError() : func.emitError();
      diag << "kernel '" << (owner ? owner.getKernelName() : StringRef("?"))
           << "' does not fit in SRAM: tile " << tile << " needs " << needed
           << " bytes " << what << " but has " << capacity << " bytes";
      signalPassFailure();
    };
    if (std::optional<SramOverflow> over =
            findFirstOverflow(lifetimes, capacity)) {
      report(over->buffer, maxLiveBytes(lifetimes), "live at once");
      return;
    }
    SramAllocation alloc = assignSramOffsets(lifetimes, alignment);
    for (size_t i = 0; i < ids.size(); ++i) {
      buffers[ids[i]].offset = alloc.offsets[i];
      if (alloc.offsets[i] + lifetimes[i].size > capacity) {
        report(i, alloc.peakBytes, "after allocation");
        return;
      }
    }
    peakPerTile[tile] = alloc.peakBytes;
    peak = std::max(peak, alloc.peakBytes);
    lowerBound = std::max(lowerBound, alloc.lowerBoundBytes);
  }

  // Write the schedule into the IR.
  OpBuilder b(func.getContext());
  auto idsOn = [&](const std::vector<Value> &values,
                   const std::vector<int64_t> &onTiles) {
    std::vector<int64_t> ids;
    for (Value v : values)
      for (int64_t t : onTiles) {
        auto it = bufferOf.find({v.getAsOpaquePointer(), t});
        if (it != bufferOf.end() &&
            std::find(ids.begin(), ids.end(), it->second) == ids.end())
          ids.push_back(it->second);
      }
    std::sort(ids.begin(), ids.end());
    return ids;
  };
  auto emitBuffers = [&](Value v) {
    for (const BufferRecord &r : buffers)
      if (r.value == v)
        BufferOp::create(
            b, v.getLoc(), b.getI64IntegerAttr(r.id), v,
            b.getI64IntegerAttr(r.tile), b.getI64IntegerAttr(r.offset),
            b.getI64IntegerAttr(r.size), b.getI64IntegerAttr(r.start),
            b.getI64IntegerAttr(r.end));
  };
  b.setInsertionPointToStart(&entry);
  for (BlockArgument arg : func.getArguments())
    emitBuffers(arg);
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (isa<InstrOp, BufferOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    b.setInsertionPointAfter(&op);
    auto it = instrsOf.find(&op);
    if (it != instrsOf.end()) {
      for (const InstrRecord &r : it->second) {
        std::vector<int64_t> deps;
        for (int64_t t : r.depTasks)
          for (int64_t k = 0; k < numInstrsOfTask[t]; ++k)
            deps.push_back(firstInstrOfTask[t] + k);
        std::vector<int64_t> readIds, writeIds;
        if (r.tile >= 0) {
          readIds = idsOn(r.reads, {r.tile});
          writeIds = idsOn(r.writes, r.writeTiles.empty()
                                         ? std::vector<int64_t>{r.tile}
                                         : r.writeTiles);
        }
        InstrOp::create(
            b, op.getLoc(), b.getI64IntegerAttr(r.id), b.getStringAttr(r.unit),
            b.getI64IntegerAttr(r.unit == std::string("link")
                                    ? r.resource - 3 * tiles
                                    : r.tile),
            b.getI64IntegerAttr(scheduler.start(r.task)),
            b.getI64IntegerAttr(r.duration), b.getI64IntegerAttr(r.kernel),
            b.getI64IntegerAttr(r.bytes), b.getDenseI64ArrayAttr(deps),
            b.getDenseI64ArrayAttr(readIds), b.getDenseI64ArrayAttr(writeIds));
      }
    }
    for (Value r : op.getResults())
      emitBuffers(r);
  }
  RooflineBound roof = model.roofline(descs, 1);
  b.setInsertionPoint(entry.getTerminator());
  SummaryOp::create(b, func.getLoc(), b.getI64IntegerAttr(scheduler.makespan()),
                    b.getI64IntegerAttr(peak), b.getI64IntegerAttr(lowerBound),
                    b.getDenseI64ArrayAttr(peakPerTile),
                    b.getI64IntegerAttr(static_cast<int64_t>(
                        std::ceil(target->secondsToCycles(roof.seconds)))));
}

} // namespace
} // namespace loom::sched
