//===- SchedBuild.cpp - spatial-to-sched's tasks and instructions ---------===//
//
// The first piece of spatial-to-sched (SchedPlan.h): numbers the tiles,
// mesh links and chip links of the function's system, and turns every
// kernel and transfer into a task of instructions, each timed for its own
// tile's part by the ISA's timing rules.
//
//===----------------------------------------------------------------------===//
#include "SchedPlan.h"

#include "loom/Dialect/Spatial/Transforms/Decompose.h"
#include "loom/Runtime/Isa.h"
#include "loom/Target/PassProgress.h"

namespace loom::sched {

using namespace mlir;
using spatial::Placement;

namespace {

/// Bytes of `v` (as stored) that chip-local tile `local` holds under its
/// placement: the box of the tile's part, 0 off its region.
int64_t bytesOnTile(Value v, int64_t local, int64_t gridCols) {
  std::optional<Placement> p = spatial::placementOf(v);
  if (!p)
    return 0;
  const spatial::TileRegion &r = p->region;
  int64_t row = local / gridCols, col = local % gridCols;
  if (row < r.row || row >= r.row + r.rows || col < r.col ||
      col >= r.col + r.cols)
    return 0;
  int64_t index = (row - r.row) * r.cols + (col - r.col);
  // As the buffer is sized: a weight at the format its readers store it in.
  return spatial::placementBox(shapeOf(v), *p, index).elements() *
         (v.getDefiningOp<spatial::WeightOp>() ? spatial::storedElementBytes(v)
                                               : elemBytesOf(v));
}

std::string describeUnit(int64_t resource, int64_t gridCols) {
  int64_t tile = resource / rt::kTileUnits;
  rt::Unit unit = static_cast<rt::Unit>(resource % rt::kTileUnits);
  return std::string(rt::unitName(unit)) + " unit of tile " +
         std::to_string(tile) + " (" + std::to_string(tile / gridCols) + "," +
         std::to_string(tile % gridCols) + ")";
}

int64_t chipsOf(func::FuncOp func) {
  int64_t chips = 1;
  if (auto a = func->getAttrOfType<IntegerAttr>(spatial::kChipsAttr))
    chips = std::max<int64_t>(1, a.getInt());
  return chips;
}

} // namespace

SystemLayout::SystemLayout(const TargetModel &target, func::FuncOp func)
    : target(target), gridCols(target.tileCols()),
      tilesPerChip(target.tilesPerChip()), chips(chipsOf(func)),
      tiles(chips * tilesPerChip), mesh(target.tileRows(), gridCols),
      meshLinks(mesh.numLinks()),
      net(target, chips, spatial::systemChipsOf(func),
          spatial::tensorParallelOf(func)),
      numResources(rt::kTileUnits * tiles + chips * meshLinks +
                   net.numLinks()),
      linkRate(target.hasMesh() ? target.desc().chip.mesh->linkBytesPerCycle
                                : 0) {}

std::string SystemLayout::describeLink(int64_t link) const {
  auto [from, to] = mesh.linkEnds(link);
  return "mesh link " + std::to_string(link) + " (tile " +
         std::to_string(from) + " -> tile " + std::to_string(to) + ")";
}

std::string SystemLayout::describeResource(int64_t r) const {
  if (r >= tileUnits() + chips * meshLinks) {
    const ChipNetwork::Link &l = net.link(r - tileUnits() - chips * meshLinks);
    return "chip link " + std::to_string(l.id) + " (chip " +
           std::to_string(l.from) + " -> chip " + std::to_string(l.to) + ")";
  }
  if (r >= tileUnits()) {
    int64_t m = r - tileUnits();
    return (chips > 1 ? "chip " + std::to_string(m / meshLinks) + " "
                      : std::string()) +
           describeLink(m % meshLinks);
  }
  return describeUnit(r, gridCols);
}

std::string taskName(Operation *op) {
  auto nameOf = [](Value v) -> std::string {
    if (auto k = v.getDefiningOp<spatial::KernelOp>())
      return "'" + k.getKernelName().str() + "'";
    if (v.getDefiningOp<spatial::WeightOp>())
      return "a weight";
    return "a model input";
  };
  if (auto k = dyn_cast<spatial::KernelOp>(op))
    return "'" + k.getKernelName().str() + "'";
  auto t = cast<spatial::TransferOp>(op);
  std::string users;
  for (Operation *u : t.getResult().getUsers())
    if (auto k = dyn_cast<spatial::KernelOp>(u)) {
      users = "'" + k.getKernelName().str() + "'";
      break;
    }
  return nameOf(t.getSource()) + " -> " + (users.empty() ? "?" : users);
}

LogicalResult TaskBuilder::build(func::FuncOp func) {
  // The kernels and transfers built into tasks, in steps of at most 5%.
  int64_t work = 0;
  for (Operation &op : func.getBody().front())
    work += isa<spatial::KernelOp, spatial::TransferOp>(op) ? 1 : 0;
  PassSteps steps(work, "kernels and transfers built");
  for (Operation &op : func.getBody().front()) {
    if (auto kernel = dyn_cast<spatial::KernelOp>(op)) {
      if (failed(addKernel(kernel)))
        return failure();
      steps.advance();
      continue;
    }
    if (auto transfer = dyn_cast<spatial::TransferOp>(op)) {
      if (failed(addTransfer(transfer)))
        return failure();
      steps.advance();
      continue;
    }
    if (isa<func::ReturnOp>(op))
      continue;
    if (!isa<spatial::WeightOp>(op)) {
      op.emitError() << "spatial-to-sched: unexpected '" << op.getName()
                     << "' (expected spatial.weight, spatial.kernel, "
                        "spatial.transfer or func.return)";
      return failure();
    }
  }
  return success();
}

std::vector<int64_t> TaskBuilder::depsOf(ValueRange values) const {
  std::vector<int64_t> deps;
  for (Value v : values) {
    auto it = graph.producerTask.find(v.getAsOpaquePointer());
    if (it != graph.producerTask.end() &&
        std::find(deps.begin(), deps.end(), it->second) == deps.end())
      deps.push_back(it->second);
  }
  return deps;
}

namespace {

/// The longest instruction a schedule holds: 2^40 cycles (about 18 minutes
/// at 1 GHz). Past it a target's rate is too slow for the work or the
/// bytes the model gives it, and the schedule's sums of cycles (starts,
/// the makespan, the interval search) could leave 64 bits.
constexpr int64_t kMaxInstrCycles = int64_t(1) << 40;

/// The target field whose rate sets an instruction's cycles on `unit`.
const char *rateFieldOf(llvm::StringRef unit, bool kernel) {
  if (unit == "matrix")
    return "chip.tile.matrix.macs_per_cycle";
  if (unit == "vector")
    return "chip.tile.vector.lanes";
  if (unit == "dma")
    return kernel ? "chip.tile.sram.bytes_per_cycle"
                  : "chip.mesh.link_bytes_per_cycle (or "
                    "chip.tile.sram.bytes_per_cycle without a mesh)";
  if (unit == "link")
    return "chip.mesh.link_bytes_per_cycle";
  return "system.links.bytes_per_second";
}

} // namespace

LogicalResult TaskBuilder::addTask(Operation *op,
                                   std::vector<InstrRecord> instrs,
                                   const std::vector<int64_t> &deps) {
  for (const InstrRecord &r : instrs)
    if (r.duration > kMaxInstrCycles)
      return op->emitError()
             << "spatial-to-sched: " << taskName(op) << ": its " << r.unit
             << " instruction would take " << r.duration
             << " cycles, more than the 2^40 a schedule holds: "
             << rateFieldOf(r.unit, r.kernel >= 0)
             << " is too slow for its "
             << (r.bytes > 0 ? std::to_string(r.bytes) + " bytes"
                             : std::string("work"));
  std::vector<TaskPart> parts;
  for (const InstrRecord &r : instrs)
    parts.push_back({r.resource, r.duration, r.latency});
  int64_t task = static_cast<int64_t>(graph.parts.size());
  graph.parts.push_back(std::move(parts));
  graph.deps.push_back(deps);
  graph.ops.push_back(op);
  graph.firstInstr.push_back(graph.nextInstr);
  graph.numInstrs.push_back(static_cast<int64_t>(instrs.size()));
  for (InstrRecord &r : instrs) {
    r.id = graph.nextInstr++;
    r.task = task;
    r.depTasks = deps;
  }
  for (Value in : op->getOperands())
    graph.readerTasks[in.getAsOpaquePointer()].push_back(task);
  for (Value out : op->getResults())
    graph.producerTask[out.getAsOpaquePointer()] = task;
  graph.instrsOf[op] = std::move(instrs);
  return success();
}

LogicalResult TaskBuilder::addKernel(spatial::KernelOp kernel) {
  std::string error;
  std::optional<KernelDesc> desc =
      spatial::describeKernel(kernel.getKind(), kernel.getPrecision(),
                              kernel.getBody(), error, kernel.getStorage());
  if (!desc) {
    kernel.emitError() << "spatial-to-sched: " << error;
    return failure();
  }
  graph.descs.push_back(*desc);
  const int64_t gridCols = system.gridCols;
  spatial::TileRegion region = spatial::regionFromAttr(kernel.getRegion());
  spatial::KernelUnit placedOn = spatial::kernelUnit(
      kernel.getKind(), *desc, model, region.rows, region.cols);
  bool epilogue = placedOn.epilogue;
  // The spatial placement's unit, 0 to 2, is rt::Unit's numbering.
  int unitIndex = placedOn.unit;
  assert(unitIndex >= 0 && unitIndex < rt::kTileUnits && "not a tile unit");
  const rt::Unit tileUnit = static_cast<rt::Unit>(unitIndex);
  const char *unit = rt::unitName(tileUnit);
  // Every tile's instrs last what the ISA's timing rules give for the
  // part of the kernel it computes (rt::tileWorkOf: its result boxes
  // propagated through the body); the epilogue streams through the
  // vector unit beside the matrix unit (reserved from its start).
  std::vector<Placement> resultPlacements;
  for (Value v : kernel.getResults())
    resultPlacements.push_back(
        spatial::placementOf(v).value_or(Placement{region, -1, 0}));
  rt::NumericFormat format = kernel.getPrecision();
  std::vector<InstrRecord> instrs;
  for (int64_t i = 0; i < region.tiles(); ++i) {
    const int64_t local = region.tileIndex(i, gridCols);
    int64_t tile = system.globalTile(kernel.getChip(), local);
    rt::TileWork work = spatial::tileWorkOf(kernel.getBody().front(),
                                            resultPlacements, region, i);
    // A data-movement kernel reads each element it writes once; the
    // others read their operands and write their results (rule sram).
    if (unitIndex != 2)
      for (Value v : kernel.getInputs())
        work.sramBytes += bytesOnTile(v, local, gridCols);
    for (Value v : kernel.getResults())
      work.sramBytes +=
          bytesOnTile(v, local, gridCols) * (unitIndex == 2 ? 2 : 1);
    const rt::TileDesc &tileDesc = system.target.desc().chip.tile;
    InstrRecord r;
    r.unit = unit;
    r.resource = system.unitResource(tile, tileUnit);
    r.kernel = kernel.getId();
    r.duration = unitIndex == 0 ? rt::matrixInstrCycles(tileDesc, format, work)
                 : unitIndex == 2 ? rt::dmaKernelInstrCycles(tileDesc, work)
                                  : rt::vectorInstrCycles(tileDesc, work);
    r.tile = tile;
    r.reads.assign(kernel.getInputs().begin(), kernel.getInputs().end());
    // The matrix unit produces the results (an epilogue's vector instr
    // finishes them too): every reader waits for both.
    r.writes.assign(kernel.getResults().begin(), kernel.getResults().end());
    instrs.push_back(r);
    if (epilogue) {
      InstrRecord v = r;
      v.unit = "vector";
      v.resource = system.unitResource(tile, rt::Unit::Vector);
      v.duration = rt::epilogueInstrCycles(tileDesc, work);
      v.reads.clear();
      v.writes.assign(kernel.getResults().begin(), kernel.getResults().end());
      instrs.push_back(v);
    }
  }
  return addTask(kernel, std::move(instrs), depsOf(kernel.getInputs()));
}

LogicalResult TaskBuilder::addTransfer(spatial::TransferOp transfer) {
  Placement from =
      spatial::withLayout({spatial::regionFromAttr(transfer.getFromRegion()),
                           transfer.getFromShardDim()},
                          transfer.getFromLayout());
  Placement to =
      spatial::withLayout({spatial::regionFromAttr(transfer.getToRegion()),
                           transfer.getToShardDim()},
                          transfer.getToLayout());
  const int64_t fromChip = transfer.getFromChip();
  const int64_t toChip = transfer.getToChip();
  if (fromChip >= system.chips || toChip >= system.chips) {
    transfer.emitError() << "spatial-to-sched: the transfer names chip "
                         << std::max(fromChip, toChip) << " but the "
                         << "function spans " << system.chips << " chips";
    return failure();
  }
  if (fromChip != toChip)
    return addChipTransfer(transfer, from, to);
  return addMeshTransfer(transfer, from, to);
}

LogicalResult TaskBuilder::addChipTransfer(spatial::TransferOp transfer,
                                           const Placement &from,
                                           const Placement &to) {
  // Across the chip network: each source tile's DMA unit injects its
  // shard at its own rate (into the mesh towards the chip's links),
  // and every link of the route is busy for the message's bytes at
  // the route's slowest rate; the message arrives the route's latency
  // later (serdes, switching, flight), while the links already carry
  // other messages, so readers wait for the arrival and not the
  // links. The DMA is not held while a slower link drains: it
  // interleaves the messages it has in flight, so a tile feeds
  // routes to several chips at once (a gather across nodes sends to
  // every other node together, each at its link's rate).
  const int64_t elemBytes = elemBytesOf(transfer.getResult());
  const int64_t fromChip = transfer.getFromChip();
  const int64_t toChip = transfer.getToChip();
  const ChipNetwork &net = system.net;
  std::map<int64_t, int64_t> sent;                 // tile -> bytes
  std::map<int64_t, std::vector<int64_t>> destsOf; // tile -> dest tiles
  std::vector<int64_t> srcTiles, dstTiles;
  for (const spatial::ShardFlow &f : spatial::reshardFlows(
           shapeOf(transfer.getResult()), from, to, system.gridCols)) {
    int64_t a = system.globalTile(fromChip, f.from),
            d = system.globalTile(toChip, f.to);
    sent[a] += f.elements * elemBytes;
    destsOf[a].push_back(d);
    srcTiles.push_back(a);
    dstTiles.push_back(d);
  }
  ArrayRef<int64_t> route = transfer.getChipLinks();
  for (int64_t l : route) {
    if (l < 0 || l >= net.numLinks()) {
      transfer.emitError() << "spatial-to-sched: chip link " << l
                           << " does not exist (the " << system.chips
                           << "-chip network has " << net.numLinks() << ")";
      return failure();
    }
  }
  int64_t total = 0;
  for (auto &[tile, bytes] : sent)
    total += bytes;
  // The route's rate and latency: minimal, or adaptive routing's
  // non-minimal alternative when that delivers these bytes first.
  const ChipNetwork::Timing timing = net.timing(route, total);
  const double rate = timing.bytesPerCycle;
  // A collective's first exchange also waits the chips' synchronisation
  // (system.links.sync_seconds; lower-collectives marks it).
  const int64_t latency =
      timing.latencyCycles +
      (transfer->hasAttr(kCollectiveSyncAttr) ? net.syncCycles() : 0);
  // Each tile injects at its mesh link's rate (its SRAM's without a
  // mesh: rule transfer.chip); a slower route holds its links, not
  // the DMA.
  std::vector<InstrRecord> instrs;
  for (const auto &[tile, bytes] : sent) {
    InstrRecord r;
    r.unit = "dma";
    r.resource = system.unitResource(tile, rt::Unit::Dma);
    r.bytes = bytes;
    r.duration = rt::chipInjectCycles(system.target.desc().chip, bytes);
    r.tile = tile;
    r.reads = {transfer.getSource()};
    r.writes = {transfer.getResult()};
    r.writeTiles = destsOf[tile];
    instrs.push_back(r);
  }
  for (int64_t l : route) {
    InstrRecord r;
    r.unit = "chip_link";
    r.resource = system.chipLinkResource(l);
    r.bytes = total;
    r.duration = rt::chipLinkCycles(rate, total);
    r.latency = latency;
    r.reads = {transfer.getSource()};
    r.writes = {transfer.getResult()};
    r.readTiles = srcTiles;
    r.writeTiles = dstTiles;
    instrs.push_back(r);
  }
  return addTask(transfer, std::move(instrs), depsOf(transfer.getSource()));
}

LogicalResult TaskBuilder::addMeshTransfer(spatial::TransferOp transfer,
                                           const Placement &from,
                                           const Placement &to) {
  const int64_t elemBytes = elemBytesOf(transfer.getResult());
  const int64_t fromChip = transfer.getFromChip();
  const int64_t toChip = transfer.getToChip();
  std::map<int64_t, int64_t> sent, linkBytes;      // tile/link -> bytes
  std::map<int64_t, std::vector<int64_t>> destsOf; // tile -> dest tiles
  // link -> the tiles whose shards cross it (from, to)
  std::map<int64_t, std::pair<std::vector<int64_t>, std::vector<int64_t>>>
      linkEnds;
  std::map<int64_t, bool> remote;
  for (const spatial::ShardFlow &f : spatial::reshardFlows(
           shapeOf(transfer.getResult()), from, to, system.gridCols)) {
    int64_t a = system.globalTile(fromChip, f.from),
            d = system.globalTile(toChip, f.to);
    sent[a] += f.elements * elemBytes;
    destsOf[a].push_back(d);
    remote[a] = remote[a] || f.from != f.to;
    for (int64_t l : system.mesh.routeXY(f.from, f.to)) {
      linkBytes[l] += f.elements * elemBytes;
      linkEnds[l].first.push_back(a);
      linkEnds[l].second.push_back(d);
    }
  }
  if (system.linkRate <= 0 && !linkBytes.empty()) {
    transfer.emitError() << "spatial-to-sched: no route for the transfer "
                         << taskName(transfer)
                         << ": the target has no on-chip mesh "
                         << "(chip.mesh), but " << linkBytes.begin()->second
                         << " bytes must cross "
                         << system.describeLink(linkBytes.begin()->first);
    return failure();
  }
  std::vector<InstrRecord> instrs;
  for (const auto &[tile, bytes] : sent) {
    InstrRecord r;
    r.unit = "dma";
    r.resource = system.unitResource(tile, rt::Unit::Dma);
    r.bytes = bytes;
    r.duration = rt::meshTransferCycles(system.target.desc().chip, bytes,
                                        transfer.getHops(), remote[tile]);
    r.tile = tile;
    r.reads = {transfer.getSource()};
    r.writes = {transfer.getResult()};
    r.writeTiles = destsOf[tile];
    instrs.push_back(r);
  }
  for (const auto &[link, bytes] : linkBytes) {
    InstrRecord r;
    r.unit = "link";
    r.resource = system.linkResource(fromChip, link);
    r.bytes = bytes;
    r.duration = rt::meshLinkCycles(system.target.desc().chip, bytes,
                                    transfer.getHops());
    // What it carries: the source shards it reads from, the result
    // shards it delivers to, so its timing is tied to the data.
    r.reads = {transfer.getSource()};
    r.writes = {transfer.getResult()};
    r.readTiles = linkEnds[link].first;
    r.writeTiles = linkEnds[link].second;
    instrs.push_back(r);
  }
  return addTask(transfer, std::move(instrs), depsOf(transfer.getSource()));
}

} // namespace loom::sched
