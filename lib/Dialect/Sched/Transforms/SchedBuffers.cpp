//===- SchedBuffers.cpp - spatial-to-sched's buffers and SRAM -------------===//
//
// The buffer planning of spatial-to-sched (SchedPlan.h): for one timing of
// the tasks, every shard of every placed value becomes a buffer on its
// tile, live from its producer's start to its last reader's end (rotating
// over copies when inputs overlap), and each tile's buffers are checked to
// fit in its SRAM and given offsets (SramAllocator.h).
//
//===----------------------------------------------------------------------===//
#include "SchedPlan.h"

#include "loom/Dialect/Sched/Transforms/SramAllocator.h"

namespace loom::sched {

using namespace mlir;
using spatial::Placement;

namespace {

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

} // namespace

BufferPlanner::BufferPlanner(func::FuncOp func, const SystemLayout &system,
                             const TaskGraph &graph, int64_t alignment)
    : peakPerTile(system.tiles, 0), capacity(system.target.sramBytesPerTile()),
      func(func), system(system), graph(graph), alignment(alignment) {
  for (Value v : func.getBody().front().getTerminator()->getOperands())
    returned.insert(v.getAsOpaquePointer());
}

bool BufferPlanner::plan(const TaskTimes &t, bool report) {
  times = &t;
  makespan = std::max<int64_t>(1, times->makespan);
  ii = std::max<int64_t>(1, times->ii);
  // Buffers overlap across inputs only when the interval is below the
  // latency; otherwise the program runs one input at a time.
  period = ii < makespan ? ii : 0;
  peakPerTile.assign(system.tiles, 0);
  peak = lowerBound = 0;
  if (!collected)
    collectShards();
  collectBuffers();
  return fitInSram(report);
}

void BufferPlanner::collectShards() {
  collected = true;
  for (BlockArgument arg : func.getArguments())
    addShards(arg);
  for (Operation &op : func.getBody().front())
    for (Value r : op.getResults())
      addShards(r);
  onTile.assign(system.tiles, {});
  for (const BufferRecord &b : shards)
    onTile[b.tile].push_back(b.id);
}

void BufferPlanner::addShards(Value v) {
  std::optional<Placement> p = spatial::placementOf(v);
  if (!p)
    return;
  void *key = v.getAsOpaquePointer();
  ValueShards vs;
  vs.first = shards.size();
  if (auto prod = graph.producerTask.find(key);
      prod != graph.producerTask.end())
    vs.producer = prod->second;
  const bool weight = v.getDefiningOp<spatial::WeightOp>() != nullptr;
  vs.toEnd = weight || returned.count(key);
  if (auto read = graph.readerTasks.find(key);
      read != graph.readerTasks.end())
    vs.readers = &read->second;
  std::vector<int64_t> shape = shapeOf(v);
  int64_t n = p->region.tiles();
  for (int64_t i = 0; i < n; ++i) {
    spatial::ShardBox box = spatial::placementBox(shape, *p, i);
    int64_t elems = box.elements();
    if (elems == 0)
      continue;
    BufferRecord b;
    // The box is recorded unless it is the whole tensor.
    if (box.hi != shape || llvm::any_of(box.lo, [](int64_t l) { return l; }))
      b.box = box;
    b.id = static_cast<int64_t>(shards.size());
    b.value = v;
    b.tile =
        system.globalTile(p->chip, p->region.tileIndex(i, system.gridCols));
    b.size = elems * (weight ? spatial::storedElementBytes(v) : elemBytesOf(v));
    b.resident = weight;
    bufferOf[{key, b.tile}] = b.id;
    shards.push_back(std::move(b));
  }
  vs.count = shards.size() - vs.first;
  if (vs.count)
    values.push_back(vs);
}

void BufferPlanner::collectBuffers() {
  // Each value's shards live from its producer's start to its last
  // reader's end (a weight or a returned value to the end of the input;
  // a value no task reads to its producer's end).
  buffers = shards;
  for (const ValueShards &vs : values) {
    int64_t start = vs.producer >= 0 ? times->start[vs.producer] : 0, end;
    if (vs.toEnd) {
      end = makespan;
    } else if (vs.readers && !vs.readers->empty()) {
      end = 0;
      for (int64_t t : *vs.readers)
        end = std::max(end, times->end[t]);
    } else {
      end = vs.producer >= 0 ? times->end[vs.producer] : start;
    }
    for (size_t i = vs.first; i < vs.first + vs.count; ++i) {
      BufferRecord &b = buffers[i];
      b.start = start;
      b.end = std::max(end, start);
      if (period && !b.resident)
        b.copies =
            std::max<int64_t>(1, (b.end - b.start + period - 1) / period);
    }
  }
}

bool BufferPlanner::fitInSram(bool report) {
  // Per tile, check the live bytes fit, then assign offsets. With
  // `report`, the first tile that overflows is the diagnostic; without, the
  // tiles after it are measured by their live bytes only (no allocation),
  // for the largest need.
  overflowBytes = 0;
  bool fits = true;
  for (int64_t tile = 0; tile < system.tiles; ++tile) {
    const std::vector<int64_t> &ids = onTile[tile];
    std::vector<BufferLifetime> lifetimes;
    for (int64_t id : ids) {
      const BufferRecord &b = buffers[id];
      lifetimes.push_back({b.size, b.start, b.end, b.copies, b.resident});
    }
    if (!fits) {
      // It does not fit: only the largest need is wanted now.
      overflowBytes = std::max(overflowBytes, maxLiveBytes(lifetimes, period));
      continue;
    }
    auto fail = [&](size_t index, int64_t needed, StringRef what) {
      if (!report)
        return;
      Value v = buffers[ids[index]].value;
      spatial::KernelOp owner = ownerKernel(v);
      InFlightDiagnostic diag = owner ? owner.emitError() : func.emitError();
      diag << "kernel '" << (owner ? owner.getKernelName() : StringRef("?"))
           << "' does not fit in SRAM: tile " << tile << " needs " << needed
           << " bytes " << what << " but has " << capacity << " bytes";
    };
    if (std::optional<SramOverflow> over =
            findFirstOverflow(lifetimes, capacity, period)) {
      int64_t need = maxLiveBytes(lifetimes, period);
      overflowBytes = std::max(overflowBytes, need);
      fits = false;
      fail(over->buffer, need, "live at once");
      if (report)
        return false;
      continue;
    }
    SramAllocation alloc = assignSramOffsets(lifetimes, alignment, period);
    for (size_t i = 0; i < ids.size() && fits; ++i) {
      buffers[ids[i]].offset = alloc.offsets[i];
      const int64_t end = alloc.offsets[i] + lifetimes[i].footprint();
      if (end > capacity) {
        // At least the end of the buffer that does not fit (a buffer no
        // one reads has no lifetime and counts in no peak).
        int64_t need = std::max(alloc.peakBytes, end);
        overflowBytes = std::max(overflowBytes, need);
        fits = false;
        fail(i, need, "after allocation");
        if (report)
          return false;
      }
    }
    if (!fits)
      continue;
    peakPerTile[tile] = alloc.peakBytes;
    peak = std::max(peak, alloc.peakBytes);
    lowerBound = std::max(lowerBound, alloc.lowerBoundBytes);
  }
  return fits;
}

} // namespace loom::sched
