//===- SchedPlan.h - What spatial-to-sched plans before the IR --*- C++ -*-===//
//
// Private to lib/Dialect/Sched/Transforms: the pieces of spatial-to-sched
// and what they hand each other. SchedBuild.cpp numbers the system's
// resources and turns kernels and transfers into tasks of instructions;
// IntervalSearch.cpp times the tasks (one input at a time, or modulo
// scheduled for a stream of inputs) and checks the max-ii limit;
// SchedBuffers.cpp gives the buffers of one timing their lifetimes and SRAM
// offsets; SpatialToSched.cpp runs them in turn and writes the schedule
// into the IR.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DIALECT_SCHED_TRANSFORMS_SCHEDPLAN_H
#define LOOM_LIB_DIALECT_SCHED_TRANSFORMS_SCHEDPLAN_H

#include "loom/Dialect/Sched/Transforms/ReservationTable.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Runtime/Program.h"
#include "loom/Target/ChipNetwork.h"
#include "loom/Target/CostModel.h"
#include "loom/Target/PassProgress.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace loom::sched {

/// The tiles, mesh links and chip links of a function's system, numbered
/// system-wide: chip c's tile t is c * tilesPerChip + t, its mesh link l is
/// c * meshLinks + l, and chip link k follows all the mesh links. The
/// resources the schedule reserves are each tile's matrix, vector and DMA
/// unit (rt::tileUnitSlot, the numbering the simulator and the verifier
/// share), then every chip's mesh links, then the chip links.
struct SystemLayout {
  SystemLayout(const TargetModel &target, mlir::func::FuncOp func);

  const TargetModel &target;
  int64_t gridCols = 0;
  int64_t tilesPerChip = 0;
  int64_t chips = 1;
  int64_t tiles = 0;
  spatial::Mesh mesh;
  int64_t meshLinks = 0;
  ChipNetwork net;
  int64_t numResources = 0;
  /// A mesh link's bytes per cycle (0: the target has no mesh).
  double linkRate = 0;

  int64_t globalTile(int64_t chip, int64_t local) const {
    return chip * tilesPerChip + local;
  }
  int64_t unitResource(int64_t tile, rt::Unit unit) const {
    return rt::tileUnitSlot(tile, unit);
  }
  /// The first resource after every tile unit.
  int64_t tileUnits() const { return rt::kTileUnits * tiles; }
  int64_t linkResource(int64_t chip, int64_t link) const {
    return tileUnits() + chip * meshLinks + link;
  }
  int64_t chipLinkResource(int64_t link) const {
    return tileUnits() + chips * meshLinks + link;
  }
  /// Resource `r` as the diagnostics name it: a unit of a tile, a mesh link
  /// (of a chip, across chips) or a chip link.
  std::string describeResource(int64_t r) const;
  /// Mesh link `link` of a chip as the diagnostics name it.
  std::string describeLink(int64_t link) const;
};

/// An instruction before it is written out as a sched.instr.
struct InstrRecord {
  int64_t id = 0;
  const char *unit = "matrix";
  int64_t resource = 0;
  int64_t kernel = -1;
  int64_t bytes = 0;
  int64_t duration = 0;
  /// Cycles after the resource is free until what it writes arrives.
  int64_t latency = 0;
  int64_t task = 0;
  std::vector<int64_t> depTasks;
  /// Values whose buffers on `tile` it reads / writes (tile -1: none).
  int64_t tile = -1;
  std::vector<mlir::Value> reads;
  std::vector<mlir::Value> writes;
  /// For a DMA instruction: the tiles it writes to; for a link instruction
  /// the tiles whose shards it carries from and to.
  std::vector<int64_t> writeTiles;
  std::vector<int64_t> readTiles;
};

/// The tasks of a function in program order: each kernel's or transfer's
/// instructions, which start together, and what the later pieces look up.
struct TaskGraph {
  /// Value (opaque pointer) -> the task that produces it.
  std::map<void *, int64_t> producerTask;
  /// Value (opaque pointer) -> the tasks that read it.
  std::map<void *, std::vector<int64_t>> readerTasks;
  /// Per task: its instructions' reservations, the tasks it waits for and
  /// its kernel or transfer.
  std::vector<std::vector<TaskPart>> parts;
  std::vector<std::vector<int64_t>> deps;
  std::vector<mlir::Operation *> ops;
  std::map<mlir::Operation *, std::vector<InstrRecord>> instrsOf;
  /// Per task: the id of its first instruction and how many it has.
  std::vector<int64_t> firstInstr;
  std::vector<int64_t> numInstrs;
  int64_t nextInstr = 0;
  /// Every kernel's description, for the roofline.
  std::vector<KernelDesc> descs;
};

/// Turns the body of a spatial function into a TaskGraph: one instruction
/// per tile of a kernel's region (and an epilogue's beside it), one DMA
/// instruction per sending tile of a transfer and one per mesh or chip link
/// it crosses, each lasting what the ISA's timing rules give.
class TaskBuilder {
public:
  TaskBuilder(const SystemLayout &system, const CostModel &model,
              TaskGraph &graph)
      : system(system), model(model), graph(graph) {}

  /// Every kernel and transfer of `func` as a task; failure, with a
  /// diagnostic, at an op it cannot schedule.
  mlir::LogicalResult build(mlir::func::FuncOp func);

private:
  mlir::LogicalResult addKernel(spatial::KernelOp kernel);
  mlir::LogicalResult addTransfer(spatial::TransferOp transfer);
  /// A transfer between two chips: over the chip network.
  mlir::LogicalResult addChipTransfer(spatial::TransferOp transfer,
                                      const spatial::Placement &from,
                                      const spatial::Placement &to);
  /// A transfer within one chip: over its mesh.
  mlir::LogicalResult addMeshTransfer(spatial::TransferOp transfer,
                                      const spatial::Placement &from,
                                      const spatial::Placement &to);
  /// The tasks that produce `values`, each once, in order of first use.
  std::vector<int64_t> depsOf(mlir::ValueRange values) const;
  /// Appends `op`'s task of `instrs`, which waits for `deps`; fails
  /// (naming the op and the target field) on an instruction longer than a
  /// schedule holds.
  mlir::LogicalResult addTask(mlir::Operation *op,
                              std::vector<InstrRecord> instrs,
                              const std::vector<int64_t> &deps);

  const SystemLayout &system;
  const CostModel &model;
  TaskGraph &graph;
};

/// When each task starts and ends, the latency of one input, and the
/// initiation interval (the latency when inputs do not overlap).
struct TaskTimes {
  std::vector<int64_t> start, end;
  int64_t makespan = 0;
  int64_t ii = 0;
};

/// One shard of a value on one tile.
struct BufferRecord {
  int64_t id = 0;
  mlir::Value value;
  int64_t tile = 0;
  int64_t size = 0;
  int64_t start = 0;
  int64_t end = 0;
  int64_t offset = 0;
  int64_t copies = 1;
  bool resident = false;
  /// The elements of the value it holds, when not all of them.
  std::optional<spatial::ShardBox> box;
};

/// The buffers of one timing of a TaskGraph: every shard of every placed
/// value on its tile, live from its producer's start to its last reader's
/// end, at an SRAM offset. Planning again replaces the last plan.
class BufferPlanner {
public:
  BufferPlanner(mlir::func::FuncOp func, const SystemLayout &system,
                const TaskGraph &graph, int64_t alignment);

  /// Lifetimes and SRAM offsets of the buffers under timing `t`, which
  /// must outlive the plan (`times` points to it). False if they do not
  /// fit, with a diagnostic at the kernel that pushed a tile over when
  /// `report`.
  bool plan(const TaskTimes &t, bool report);

  /// The timing planned for, its latency and interval (at least 1), and
  /// the period buffers rotate over (0: one input at a time).
  const TaskTimes *times = nullptr;
  int64_t makespan = 1, ii = 1, period = 0;
  std::vector<BufferRecord> buffers;
  /// (value, tile) -> buffer id.
  std::map<std::pair<void *, int64_t>, int64_t> bufferOf;
  std::vector<int64_t> peakPerTile;
  int64_t peak = 0, lowerBound = 0;
  /// The bytes the last timing that did not fit needed on its fullest tile:
  /// every tile is measured (the first that overflows as allocated, the
  /// rest by their live bytes), so the interval search compares the fullest
  /// tile from one interval to the next, whichever tile overflows first.
  int64_t overflowBytes = 0;
  /// A tile's SRAM bytes.
  int64_t capacity = 0;

private:
  /// What does not depend on the timing, gathered once (the interval
  /// search plans tens of timings of one graph): every shard of every
  /// placed value as a buffer without its lifetime (`shards`, in the order
  /// of `buffers`, and `bufferOf`), each value's tasks, and each tile's
  /// buffers.
  void collectShards();
  /// The shards of placed value `v` into `shards`.
  void addShards(mlir::Value v);
  /// `shards` with their lifetimes under `times` into `buffers`.
  void collectBuffers();
  /// Per tile, checks the live bytes fit, then assigns offsets.
  bool fitInSram(bool report);

  /// A placed value's shards (`shards[first, first + count)`) and what
  /// their lifetime is taken from.
  struct ValueShards {
    size_t first = 0, count = 0;
    /// Its producer task, or -1.
    int64_t producer = -1;
    /// Live to the end of the input: a weight or a returned value.
    bool toEnd = false;
    /// Its reader tasks (TaskGraph::readerTasks), if any.
    const std::vector<int64_t> *readers = nullptr;
  };
  bool collected = false;
  std::vector<BufferRecord> shards;
  std::vector<ValueShards> values;
  std::vector<std::vector<int64_t>> onTile;

  mlir::func::FuncOp func;
  const SystemLayout &system;
  const TaskGraph &graph;
  int64_t alignment;
  /// The function's results (opaque pointers): live until the end.
  std::set<void *> returned;
};

/// Chooses the timing of a TaskGraph whose buffers fit in SRAM and leaves
/// the BufferPlanner planned for it: for a pipelined mapping, modulo
/// schedules packed ever less tightly, each at the shortest interval found
/// to fit; failing those (or for a sequential mapping), one input at a
/// time.
class IntervalSearch {
public:
  IntervalSearch(const TaskGraph &graph, int64_t numResources,
                 BufferPlanner &buffers)
      : graph(graph), numResources(numResources), buffers(buffers) {}

  /// False, with a diagnostic, if not even one input at a time fits.
  bool run(bool pipelined);

  /// The shortest interval a modulo schedule reached whose buffers did not
  /// fit in SRAM (0: none), for the max-ii diagnostic.
  int64_t sramFailedII = 0;

private:
  /// The most rounds (a modulo schedule, then its buffers) one packing's
  /// search takes.
  static constexpr int kRoundsPerPacking = 16;

  /// The modulo schedules of one packing (`slack`) below `cap`, at ever
  /// longer intervals while their buffers overflow SRAM: the index in
  /// `attempts` of the shortest that fits, if any. Each round advances
  /// `steps`.
  std::optional<size_t> searchPacking(double slack, int64_t cap, int64_t listII,
                                      PassSteps &steps);

  const TaskGraph &graph;
  int64_t numResources;
  BufferPlanner &buffers;
  /// Every timing tried. Kept stable: `buffers.times` points into it.
  std::deque<TaskTimes> attempts;
};

/// With `maxII` > 0, fails with a diagnostic when the interval `ii` found
/// is above it: the SRAM the rotating copies overflowed at a shorter one
/// (`sramFailedII`), or the busiest resource and what loads it.
mlir::LogicalResult checkMaxII(mlir::func::FuncOp func,
                               const SystemLayout &system,
                               const TaskGraph &graph, int64_t ii,
                               int64_t maxII, int64_t sramFailedII);

/// The name of what a task does: a kernel's name, or "A -> B" for a
/// transfer from kernel (or input) A to the kernels that read it.
std::string taskName(mlir::Operation *op);

inline std::vector<int64_t> shapeOf(mlir::Value v) {
  auto t = mlir::cast<mlir::RankedTensorType>(v.getType());
  return std::vector<int64_t>(t.getShape().begin(), t.getShape().end());
}

/// Bytes per element of `v` as stored (spatial::storageElementBytes).
inline int64_t elemBytesOf(mlir::Value v) {
  return spatial::storageElementBytes(v);
}

} // namespace loom::sched

#endif // LOOM_LIB_DIALECT_SCHED_TRANSFORMS_SCHEDPLAN_H
