//===- ReservationTable.h - Busy intervals and list scheduling --*- C++ -*-===//
//
// Plain C++ (no MLIR): the scheduler's core, unit-tested on its own.
//
// A ReservationTable holds the busy cycles of one resource as a sorted set of
// disjoint half-open intervals. The ListScheduler places tasks, in the order
// they are added (a topological order), each at the earliest cycle at or
// after the end of all its dependencies where every resource it needs is
// free for its duration; a later task may fill a gap an earlier one left.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_SCHED_TRANSFORMS_RESERVATIONTABLE_H
#define LOOM_DIALECT_SCHED_TRANSFORMS_RESERVATIONTABLE_H

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace loom::sched {

/// The busy cycles of one resource.
class ReservationTable {
public:
  /// True if [start, start + duration) overlaps no busy interval. An empty
  /// interval (duration 0) is always free.
  bool isFree(int64_t start, int64_t duration) const;
  /// The earliest t >= from with [t, t + duration) free.
  int64_t earliestFree(int64_t from, int64_t duration) const;
  /// Marks [start, start + duration) busy. Returns false, and changes
  /// nothing, if it overlaps a busy interval.
  bool reserve(int64_t start, int64_t duration);
  /// The busy intervals, start -> end, sorted and disjoint.
  const std::map<int64_t, int64_t> &intervals() const { return busy_; }
  /// Total busy cycles.
  int64_t busyCycles() const;

private:
  std::map<int64_t, int64_t> busy_;
};

/// One part of a task: `duration` cycles on resource `resource`.
struct TaskPart {
  int64_t resource = 0;
  int64_t duration = 0;
  /// Cycles after the resource is free before the part's result is ready
  /// (a chip link's latency: the link carries other messages meanwhile).
  /// The task ends when its last part's result is ready.
  int64_t tail = 0;
};

/// Places tasks on resources. A task's parts start together (a kernel's
/// instructions on every tile of its region, a transfer's DMA and link
/// instructions); it ends when its longest part ends.
class ListScheduler {
public:
  explicit ListScheduler(int64_t numResources) : tables_(numResources) {}

  /// Schedules a task after every task in `deps` (ids returned earlier) and
  /// returns its id. Its start is the earliest cycle >= all deps' ends at
  /// which every part's resource is free for the part's duration.
  int64_t addTask(const std::vector<TaskPart> &parts,
                  const std::vector<int64_t> &deps);

  int64_t start(int64_t task) const { return tasks_[task].first; }
  int64_t end(int64_t task) const { return tasks_[task].second; }
  /// The end of the last task (0 when there is none).
  int64_t makespan() const { return makespan_; }
  const ReservationTable &table(int64_t resource) const {
    return tables_[resource];
  }

private:
  std::vector<ReservationTable> tables_;
  std::vector<std::pair<int64_t, int64_t>> tasks_;
  int64_t makespan_ = 0;
};

/// The busy cycles of one resource in a software-pipelined schedule: a new
/// input starts every `period` cycles, so an interval [s, s + d) occupies
/// the resource at s + d cycles modulo the period in every iteration. The
/// table holds those positions on a circle of `period` cycles.
class ModuloReservationTable {
public:
  explicit ModuloReservationTable(int64_t period) : period_(period) {}

  int64_t period() const { return period_; }
  /// True if [start, start + duration) is free modulo the period. An
  /// interval longer than the period never is; an empty one always is.
  bool isFree(int64_t start, int64_t duration) const;
  /// The earliest t in [from, from + period) with [t, t + duration) free
  /// modulo the period; std::nullopt if there is none (then there is none
  /// at all: the table repeats every period).
  std::optional<int64_t> earliestFree(int64_t from, int64_t duration) const;
  /// Marks [start, start + duration) busy modulo the period. Returns false,
  /// and changes nothing, if it is not free.
  bool reserve(int64_t start, int64_t duration);
  /// The cycles from the nearest end of a busy interval at or before
  /// `start`'s position back to it, around the circle (0 when `start` is
  /// where one ends, or the table is empty).
  int64_t gapBefore(int64_t start) const;
  /// Busy cycles per period.
  int64_t busyCycles() const { return line_.busyCycles(); }
  /// The busy intervals on [0, period), start -> end.
  const std::map<int64_t, int64_t> &intervals() const {
    return line_.intervals();
  }

private:
  /// The one or two pieces of [start, start + duration) on [0, period),
  /// held inline (the schedulers ask for them at every probe).
  struct Pieces {
    int count = 0;
    std::pair<int64_t, int64_t> piece[2];
    const std::pair<int64_t, int64_t> *begin() const { return piece; }
    const std::pair<int64_t, int64_t> *end() const { return piece + count; }
  };
  Pieces pieces(int64_t start, int64_t duration) const;
  int64_t period_;
  ReservationTable line_;
};

/// Modulo scheduling for a stream of inputs at initiation interval `period`:
/// tasks (in a topological order) are placed after their deps where every
/// part's resource is free modulo the period, so that iteration k, run
/// k * period cycles later, never collides with another. Of the starts that
/// fit within `slack` periods after the earliest one, the one that leaves
/// the smallest gap before it on the resource of the task's longest part
/// wins (then the earliest), which packs the busiest unit tightly at some
/// cost in latency.
/// Fill and drain need no extra rule: the first iteration starts alone and
/// the last ends alone.
class ModuloScheduler {
public:
  /// `slack`: how far past its earliest start, as a fraction of the period,
  /// a task may be delayed to leave a smaller gap (below); 0 takes the
  /// earliest start that fits. Longer delays pack tighter but lengthen
  /// buffer lifetimes (more SRAM).
  ModuloScheduler(int64_t numResources, int64_t period, double slack = 1.0)
      : tables_(numResources, ModuloReservationTable(period)), slack_(slack) {}

  /// The task's id, or std::nullopt if no start in a whole period after its
  /// deps fits (the period is too short for it; nothing is reserved).
  std::optional<int64_t> addTask(const std::vector<TaskPart> &parts,
                                 const std::vector<int64_t> &deps);

  int64_t start(int64_t task) const { return tasks_[task].first; }
  int64_t end(int64_t task) const { return tasks_[task].second; }
  /// The end of the last task: one input's latency.
  int64_t makespan() const { return makespan_; }
  int64_t period() const {
    return tables_.empty() ? 0 : tables_.front().period();
  }

private:
  std::vector<ModuloReservationTable> tables_;
  std::vector<std::pair<int64_t, int64_t>> tasks_;
  int64_t makespan_ = 0;
  double slack_ = 1.0;
};

/// The resource-bound lower limit of the initiation interval: the most
/// cycles any one resource is busy per input (and at least the longest
/// part, and 1).
int64_t resourceMinII(int64_t numResources,
                      const std::vector<std::vector<TaskPart>> &tasks);

} // namespace loom::sched

#endif // LOOM_DIALECT_SCHED_TRANSFORMS_RESERVATIONTABLE_H
