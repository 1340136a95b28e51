//===- IntervalSearch.cpp - spatial-to-sched's timing of the tasks --------===//
//
// The interval search of spatial-to-sched (SchedPlan.h): times the tasks
// one input at a time (a list schedule) or, for a pipelined mapping, as
// modulo schedules at the shortest initiation interval whose buffers fit in
// SRAM, and reports an interval above the max-ii limit.
//
//===----------------------------------------------------------------------===//
#include "SchedPlan.h"

#include <iterator>

namespace loom::sched {

using namespace mlir;

namespace {

std::optional<TaskTimes>
scheduleList(const std::vector<std::vector<TaskPart>> &parts,
             const std::vector<std::vector<int64_t>> &deps,
             int64_t numResources) {
  ListScheduler scheduler(numResources);
  TaskTimes t;
  // In steps of at most 5% (the driver's bar shows them).
  PassSteps steps(int64_t(parts.size()), "tasks list-scheduled");
  for (size_t i = 0; i < parts.size(); ++i) {
    int64_t task = scheduler.addTask(parts[i], deps[i]);
    t.start.push_back(scheduler.start(task));
    t.end.push_back(scheduler.end(task));
    steps.advance();
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
void reportOversubscribed(func::FuncOp func, const SystemLayout &system,
                          const std::vector<std::vector<TaskPart>> &parts,
                          const std::vector<Operation *> &ops,
                          int64_t numResources, int64_t ii, int64_t maxII) {
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
    diag << system.describeResource(worst) << " is oversubscribed: it is busy "
         << need << " cycles per input for " << list
         << ", more than the initiation interval limit of " << maxII
         << " cycles (max-ii)";
  else
    diag << "the best initiation interval found is " << ii
         << " cycles, above the limit of " << maxII
         << " cycles (max-ii); the busiest resource is "
         << system.describeResource(worst) << ", busy " << need
         << " cycles per input for " << list;
}

} // namespace

bool IntervalSearch::run(bool pipelined) {
  // Timing: a list schedule for one input at a time, or a modulo schedule
  // at the smallest initiation interval found for a pipelined mapping.
  // Candidates in order of preference: for a pipelined mapping, modulo
  // schedules packed ever less tightly (shorter lifetimes, less SRAM) down
  // to first fit, then one input at a time; the first whose buffers fit in
  // SRAM is kept.
  //
  // One input at a time: the fallback, and the bound on any interval worth
  // modulo scheduling.
  const TaskTimes list = *scheduleList(graph.parts, graph.deps, numResources);
  bool allocated = false;
  if (pipelined) {
    // The tightest packing first, then ever looser ones (shorter
    // lifetimes, less SRAM), each at its own interval (searchPacking).
    const double slacks[] = {1.0, 0.5, 0.25, 0.0};
    // Its rounds (a modulo schedule at one interval, and its buffers), in
    // steps of at most 5% of the most it may take.
    PassSteps steps = PassSteps::upTo(
        int64_t(std::size(slacks)) * kRoundsPerPacking, "interval rounds");
    std::optional<size_t> best;
    for (double slack : slacks) {
      // Only an interval below the best so far is worth searching for.
      const int64_t cap = best ? attempts[*best].ii : list.ii;
      std::optional<size_t> fit = searchPacking(slack, cap, list.ii, steps);
      if (fit && (!best || attempts[*fit].ii < attempts[*best].ii))
        best = fit;
    }
    steps.finish();
    if (best)
      allocated = buffers.plan(attempts[*best], false);
  }
  if (!allocated) {
    attempts.push_back(list);
    allocated = buffers.plan(attempts.back(), true);
  }
  return allocated;
}

std::optional<size_t> IntervalSearch::searchPacking(double slack, int64_t cap,
                                                    int64_t listII,
                                                    PassSteps &steps) {
  // While its rotating copies overflow SRAM, at longer intervals (a longer
  // interval needs fewer copies): doubling until one fits, then halving
  // the gap between the longest that overflowed and the shortest that fit,
  // down to 1/32 of it. A packing whose excess over SRAM (the fullest
  // tile's need less a tile's bytes) does not shrink by a tenth as its
  // interval doubles (lifetimes that grow with the interval) is given up.
  int64_t from = 0, overflowed = 0, lastExcess = 0;
  std::optional<size_t> fit;
  for (int k = 0; k < kRoundsPerPacking; ++k) {
    std::optional<TaskTimes> t = scheduleModulo(
        graph.parts, graph.deps, numResources, slack, from, listII);
    steps.advance();
    if (!t || t->ii >= cap)
      break;
    attempts.push_back(std::move(*t));
    const int64_t got = attempts.back().ii;
    if (buffers.plan(attempts.back(), false)) {
      if (!fit || got < attempts[*fit].ii)
        fit = attempts.size() - 1;
    } else {
      overflowed = std::max(overflowed, got);
      sramFailedII = sramFailedII ? std::min(sramFailedII, got) : got;
      // What is over a tile's SRAM must shrink by a tenth: the need
      // alone can be mostly resident bytes, which no interval frees.
      const int64_t excess =
          std::max<int64_t>(1, buffers.overflowBytes - buffers.capacity);
      if (!fit && lastExcess && excess * 10 >= lastExcess * 9)
        break;
      lastExcess = excess;
    }
    if (fit &&
        attempts[*fit].ii - overflowed <= std::max<int64_t>(1, overflowed / 32))
      break;
    // Below the best so far (at first, one input at a time), or it is
    // not worth it.
    int64_t next = fit ? overflowed + (attempts[*fit].ii - overflowed) / 2
                       : std::min(2 * got, cap - 1);
    if (next <= (fit ? overflowed : got))
      break;
    from = next;
  }
  return fit;
}

LogicalResult checkMaxII(func::FuncOp func, const SystemLayout &system,
                         const TaskGraph &graph, int64_t ii, int64_t maxII,
                         int64_t sramFailedII) {
  if (maxII > 0 && ii > maxII && sramFailedII && sramFailedII <= maxII) {
    func.emitError() << "spatial-to-sched: a new input every " << sramFailedII
                     << " cycles fits every unit and mesh link, but the "
                        "rotating copies of its buffers overflow SRAM; the "
                        "best interval whose buffers fit is "
                     << ii << " cycles, above the limit of " << maxII
                     << " cycles (max-ii)";
    return failure();
  }
  if (maxII > 0 && ii > maxII) {
    reportOversubscribed(func, system, graph.parts, graph.ops,
                         system.numResources, ii, maxII);
    return failure();
  }
  return success();
}

} // namespace loom::sched
