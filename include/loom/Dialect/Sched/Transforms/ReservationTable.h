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

} // namespace loom::sched

#endif // LOOM_DIALECT_SCHED_TRANSFORMS_RESERVATIONTABLE_H
