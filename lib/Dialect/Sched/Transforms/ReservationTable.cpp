//===- ReservationTable.cpp - Busy intervals and list scheduling ----------===//
#include "loom/Dialect/Sched/Transforms/ReservationTable.h"

#include <algorithm>

namespace loom::sched {

bool ReservationTable::isFree(int64_t start, int64_t duration) const {
  if (duration <= 0)
    return true;
  int64_t end = start + duration;
  // The first interval starting at or after `end` cannot overlap; the one
  // before it is the only candidate (intervals are disjoint and sorted).
  auto it = busy_.lower_bound(end);
  if (it == busy_.begin())
    return true;
  --it;
  return it->second <= start;
}

int64_t ReservationTable::earliestFree(int64_t from, int64_t duration) const {
  if (duration <= 0)
    return from;
  int64_t t = from;
  // Start at the interval that may contain `from`, then walk the gaps.
  auto it = busy_.upper_bound(t);
  if (it != busy_.begin()) {
    auto prev = std::prev(it);
    if (prev->second > t)
      t = prev->second;
  }
  for (; it != busy_.end(); ++it) {
    if (t + duration <= it->first)
      return t;
    t = std::max(t, it->second);
  }
  return t;
}

bool ReservationTable::reserve(int64_t start, int64_t duration) {
  if (duration <= 0)
    return true;
  if (!isFree(start, duration))
    return false;
  int64_t end = start + duration;
  // Merge with touching neighbours to keep the map small.
  auto next = busy_.find(end);
  if (next != busy_.end()) {
    end = next->second;
    busy_.erase(next);
  }
  auto it = busy_.lower_bound(start);
  if (it != busy_.begin()) {
    auto prev = std::prev(it);
    if (prev->second == start) {
      prev->second = end;
      return true;
    }
  }
  busy_[start] = end;
  return true;
}

int64_t ReservationTable::busyCycles() const {
  int64_t total = 0;
  for (const auto &[s, e] : busy_)
    total += e - s;
  return total;
}

namespace {
/// Reserves every part of a task at `start` in `tables` and records the
/// task: shared by both schedulers.
template <typename Table>
int64_t placeTask(std::vector<Table> &tables, const std::vector<TaskPart> &parts,
                  int64_t start,
                  std::vector<std::pair<int64_t, int64_t>> &tasks,
                  int64_t &makespan) {
  int64_t end = start;
  for (const TaskPart &p : parts) {
    tables[p.resource].reserve(start, p.duration);
    end = std::max(end, start + p.duration + p.tail);
  }
  tasks.push_back({start, end});
  makespan = std::max(makespan, end);
  return static_cast<int64_t>(tasks.size()) - 1;
}
} // namespace

int64_t ListScheduler::addTask(const std::vector<TaskPart> &parts,
                               const std::vector<int64_t> &deps) {
  int64_t ready = 0;
  for (int64_t d : deps)
    ready = std::max(ready, tasks_[d].second);
  // Raise t until every part's resource is free at t; each round either
  // keeps t (done) or moves it past a busy interval, so this terminates.
  int64_t t = ready;
  bool moved = true;
  while (moved) {
    moved = false;
    for (const TaskPart &p : parts) {
      int64_t e = tables_[p.resource].earliestFree(t, p.duration);
      if (e > t) {
        t = e;
        moved = true;
      }
    }
  }
  return placeTask(tables_, parts, t, tasks_, makespan_);
}

ModuloReservationTable::Pieces
ModuloReservationTable::pieces(int64_t start, int64_t duration) const {
  int64_t lo = start % period_;
  if (lo < 0)
    lo += period_;
  int64_t hi = lo + duration;
  Pieces p;
  if (hi <= period_) {
    p.piece[p.count++] = {lo, hi};
    return p;
  }
  p.piece[p.count++] = {lo, period_};
  p.piece[p.count++] = {0, hi - period_};
  return p;
}

bool ModuloReservationTable::isFree(int64_t start, int64_t duration) const {
  if (duration <= 0)
    return true;
  if (duration > period_)
    return false;
  for (auto [lo, hi] : pieces(start, duration))
    if (!line_.isFree(lo, hi - lo))
      return false;
  return true;
}

std::optional<int64_t>
ModuloReservationTable::earliestFree(int64_t from, int64_t duration) const {
  if (duration <= 0)
    return from;
  if (duration > period_)
    return std::nullopt;
  // The earliest free start is `from` or lies where a busy interval ends
  // (one cycle earlier would collide with that interval): those ends, in
  // increasing distance from `from` around the circle. The intervals are
  // disjoint and sorted, so their ends increase: the ends at or past
  // from's position, then those before it, are in distance order (an end
  // at the period comes last of the first, as it should). No list to
  // sort: this is asked at every task of every interval tried.
  if (isFree(from, duration))
    return from;
  int64_t base = from % period_;
  if (base < 0)
    base += period_;
  for (int pass = 0; pass < 2; ++pass)
    for (const auto &[s, e] : line_.intervals()) {
      if ((pass == 0) != (e >= base))
        continue;
      // (An end at the period with base 0 gives from + period, as busy as
      // `from`.)
      int64_t t = from + e - base + (e >= base ? 0 : period_);
      if (t != from && isFree(t, duration))
        return t;
    }
  return std::nullopt;
}

int64_t ModuloReservationTable::gapBefore(int64_t start) const {
  const std::map<int64_t, int64_t> &busy = line_.intervals();
  if (busy.empty())
    return 0;
  int64_t pos = start % period_;
  if (pos < 0)
    pos += period_;
  // The ends increase with the starts. The nearest end at or before pos:
  // of the interval before the first that starts past pos, or, when pos
  // lies inside that one, of the one before it. None: the last end, around
  // the circle (an end at the period is then pos cycles back).
  auto it = busy.upper_bound(pos);
  while (it != busy.begin()) {
    --it;
    if (it->second <= pos)
      return pos - it->second;
  }
  return pos - std::prev(busy.end())->second + period_;
}

bool ModuloReservationTable::reserve(int64_t start, int64_t duration) {
  if (duration <= 0)
    return true;
  if (!isFree(start, duration))
    return false;
  for (auto [lo, hi] : pieces(start, duration))
    line_.reserve(lo, hi - lo);
  return true;
}

std::optional<int64_t>
ModuloScheduler::addTask(const std::vector<TaskPart> &parts,
                         const std::vector<int64_t> &deps) {
  int64_t ready = 0;
  for (int64_t d : deps)
    ready = std::max(ready, tasks_[d].second);
  auto fits = [&](int64_t t) {
    for (const TaskPart &p : parts)
      if (!tables_[p.resource].isFree(t, p.duration))
        return false;
    return true;
  };
  // The earliest start, as ListScheduler::addTask, on the circle; a whole
  // period without a fit means none exists.
  int64_t t = ready;
  bool moved = true;
  while (moved) {
    moved = false;
    for (const TaskPart &p : parts) {
      std::optional<int64_t> e =
          tables_[p.resource].earliestFree(t, p.duration);
      if (!e || *e >= ready + period())
        return std::nullopt;
      if (*e > t) {
        t = *e;
        moved = true;
      }
    }
  }
  // Among the starts that fit within a period, prefer one that leaves no
  // gap on the task's longest part's resource (it starts where a busy
  // interval ends), so that the busiest unit packs tightly; ties go to the
  // earliest. First fit alone leaves gaps too short for later tasks.
  const TaskPart *main = nullptr;
  for (const TaskPart &p : parts)
    if (!main || p.duration > main->duration)
      main = &p;
  const int64_t earliest = t;
  const int64_t latest =
      earliest + static_cast<int64_t>(slack_ * double(period()));
  if (slack_ > 0 && main && main->duration > 0) {
    const ModuloReservationTable &table = tables_[main->resource];
    auto gapBefore = [&](int64_t start) { return table.gapBefore(start); };
    int64_t bestStart = t, bestGap = gapBefore(t);
    int64_t base = ((ready % period()) + period()) % period();
    for (const auto &[s, e] : table.intervals()) {
      if (bestGap == 0)
        break;
      int64_t candidate = ready + ((e - base) % period() + period()) % period();
      if (candidate >= ready + period() || candidate < earliest ||
          candidate > latest || !fits(candidate))
        continue;
      int64_t gap = gapBefore(candidate);
      if (gap < bestGap || (gap == bestGap && candidate < bestStart)) {
        bestStart = candidate;
        bestGap = gap;
      }
    }
    t = bestStart;
  }
  return placeTask(tables_, parts, t, tasks_, makespan_);
}

int64_t resourceMinII(int64_t numResources,
                      const std::vector<std::vector<TaskPart>> &tasks) {
  std::vector<int64_t> load(static_cast<size_t>(numResources), 0);
  int64_t ii = 1;
  for (const auto &parts : tasks)
    for (const TaskPart &p : parts) {
      load[static_cast<size_t>(p.resource)] += p.duration;
      ii = std::max({ii, p.duration, load[static_cast<size_t>(p.resource)]});
    }
  return ii;
}

} // namespace loom::sched
