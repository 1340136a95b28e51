//===- Mapping.cpp - Choose how kernels share a chip's tiles --------------===//
#include "loom/Dialect/Spatial/Transforms/Mapping.h"

#include "loom/Dialect/Sched/Transforms/ReservationTable.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace loom::spatial {

const char *mappingModeName(MappingMode mode) {
  switch (mode) {
  case MappingMode::Sequential:
    return "sequential";
  case MappingMode::Pipelined:
    return "pipelined";
  case MappingMode::Hybrid:
    return "hybrid";
  }
  return "?";
}

const char *mappingObjectiveName(MappingObjective objective) {
  return objective == MappingObjective::Latency ? "latency" : "throughput";
}

MappingPlanner::MappingPlanner(const CostModel &model,
                               std::vector<MappingKernel> kernels)
    : model_(model), kernels_(std::move(kernels)),
      rows_(model.target().tileRows()), cols_(model.target().tileCols()) {
  cost_.assign(kernels_.size(),
               std::vector<double>(static_cast<size_t>(rows_ * cols_), -1));
}

double MappingPlanner::cost(size_t kernel, int64_t rows, int64_t cols) const {
  double &slot = cost_[kernel][(rows - 1) * cols_ + (cols - 1)];
  if (slot < 0) {
    Region region;
    region.tileRows = rows;
    region.tileCols = cols;
    std::optional<CostBreakdown> c =
        model_.estimate(kernels_[kernel].desc, region);
    // The caller has costed every kernel once already: a failure here is a
    // region the kernel cannot use, which is never the best.
    slot = c ? c->totalCycles : 1e30;
  }
  return slot;
}

bool MappingPlanner::better(const Mapping &a, const Mapping &b,
                            MappingObjective objective) {
  // For latency, a tie keeps the simpler mapping: a modulo schedule may
  // stretch one input's latency to pack the stream.
  if (objective == MappingObjective::Latency)
    return a.latency < b.latency &&
           (a.groups <= b.groups || a.latency < 0.99 * b.latency);
  return a.ii != b.ii ? a.ii < b.ii : a.latency < b.latency;
}

void MappingPlanner::estimate(Mapping &m) const {
  const TargetModel &target = model_.target();
  const double linkRate =
      target.hasMesh() ? target.desc().chip.mesh->linkBytesPerCycle : 0;
  const int64_t hopLatency =
      target.hasMesh() ? target.desc().chip.mesh->hopLatencyCycles : 0;
  sched::ListScheduler scheduler(3 * rows_ * cols_);
  std::vector<std::vector<sched::TaskPart>> all;
  std::vector<int64_t> taskOf(kernels_.size());
  auto onTiles = [&](const TileRegion &r, int unit, int64_t duration) {
    std::vector<sched::TaskPart> parts;
    for (int64_t i = 0; i < r.tiles(); ++i)
      parts.push_back({3 * r.tileIndex(i, cols_) + unit, duration});
    return parts;
  };
  for (size_t k = 0; k < kernels_.size(); ++k) {
    const MappingKernel &kernel = kernels_[k];
    const TileRegion &r = m.regions[k];
    std::vector<int64_t> deps;
    for (size_t d = 0; d < kernel.deps.size(); ++d) {
      size_t from = kernel.deps[d];
      if (m.regions[from] == r) {
        deps.push_back(taskOf[from]);
        continue;
      }
      // A transfer out of the producer's tiles over their mesh links.
      const TileRegion &src = m.regions[from];
      int64_t hops = std::llabs((src.row + src.rows / 2) - (r.row + r.rows / 2)) +
                     std::llabs((src.col + src.cols / 2) - (r.col + r.cols / 2));
      int64_t duration =
          linkRate > 0 ? static_cast<int64_t>(std::ceil(
                             double(kernel.depBytes[d]) /
                             double(src.tiles()) / linkRate)) +
                             hopLatency * std::max<int64_t>(1, hops)
                       : 0;
      std::vector<sched::TaskPart> parts = onTiles(src, 2, duration);
      all.push_back(parts);
      deps.push_back(scheduler.addTask(parts, {taskOf[from]}));
    }
    int64_t cycles = static_cast<int64_t>(std::ceil(m.cycles[k]));
    std::vector<sched::TaskPart> parts = onTiles(r, kernel.unit, cycles);
    if (kernel.epilogue) {
      std::vector<sched::TaskPart> vec = onTiles(
          r, 1,
          std::min(cycles, model_.epilogueCycles(kernel.desc, r.tiles())));
      parts.insert(parts.end(), vec.begin(), vec.end());
    }
    all.push_back(parts);
    taskOf[k] = scheduler.addTask(parts, deps);
  }
  m.latency = double(scheduler.makespan());
  m.ii = m.mode == MappingMode::Sequential
             ? m.latency
             : double(sched::resourceMinII(3 * rows_ * cols_, all));
}

Mapping MappingPlanner::sequential(const std::vector<TileRegion> &regions) const {
  Mapping m;
  m.mode = MappingMode::Sequential;
  m.regions = regions;
  m.group.assign(kernels_.size(), 0);
  for (size_t k = 0; k < kernels_.size(); ++k)
    m.cycles.push_back(cost(k, regions[k].rows, regions[k].cols));
  estimate(m);
  return m;
}

std::optional<Mapping> MappingPlanner::pack(int64_t h, double tau) const {
  const int64_t bands = rows_ / h;
  const double capacity = TargetModel::kMappingSramShare *
                          double(model_.target().sramBytesPerTile());
  std::vector<double> resident(static_cast<size_t>(rows_ * cols_), 0);
  Mapping m;
  m.bandRows = h;
  int64_t band = 0, col = 0, group = 0;
  for (size_t k = 0; k < kernels_.size(); ++k) {
    // The narrowest width within the target, else the fastest.
    int64_t width = 0, fastest = 1;
    for (int64_t w = 1; w <= cols_; ++w) {
      if (cost(k, h, w) < cost(k, h, fastest))
        fastest = w;
      if (!width && cost(k, h, w) <= tau)
        width = w;
    }
    if (!width)
      width = fastest;
    if (col + width > cols_) {
      col = 0;
      if (++band == bands) {
        band = 0;
        ++group;
      }
    }
    int64_t c0 = band % 2 == 0 ? col : cols_ - col - width;
    TileRegion r{band * h, c0, h, width};
    col += width;
    double share = double(kernels_[k].weightBytes) / double(r.tiles());
    for (int64_t i = 0; i < r.tiles(); ++i) {
      double &bytes = resident[static_cast<size_t>(r.tileIndex(i, cols_))];
      bytes += share;
      if (bytes > capacity)
        return std::nullopt;
    }
    m.regions.push_back(r);
    m.group.push_back(group);
    m.cycles.push_back(cost(k, h, width));
  }
  m.groups = group + 1;
  m.mode = m.groups == 1 ? MappingMode::Pipelined : MappingMode::Hybrid;
  estimate(m);
  return m;
}

std::optional<Mapping> MappingPlanner::packed(MappingMode mode,
                                              MappingObjective objective,
                                              std::string &why) const {
  std::optional<Mapping> best;
  bool weightsFit = false;
  for (int64_t h = 1; h <= rows_; ++h) {
    if (rows_ % h)
      continue;
    double lo = 1e30, hi = 0;
    for (size_t k = 0; k < kernels_.size(); ++k) {
      lo = std::min(lo, cost(k, h, cols_));
      hi = std::max(hi, cost(k, h, 1));
    }
    std::vector<double> ladder;
    for (double tau = std::max(lo, 1.0); tau < hi; tau *= 1.2)
      ladder.push_back(tau);
    ladder.push_back(hi);
    for (double tau : ladder) {
      std::optional<Mapping> m = pack(h, tau);
      if (!m)
        continue;
      weightsFit = true;
      if (m->mode != mode)
        continue;
      if (!best || better(*m, *best, objective))
        best = std::move(m);
    }
  }
  if (!best) {
    int64_t tiles = rows_ * cols_;
    if (!weightsFit)
      why = "the resident weights do not fit in 3/4 of the tiles' SRAM";
    else if (mode == MappingMode::Pipelined)
      why = std::to_string(kernels_.size()) + " kernels " +
            (int64_t(kernels_.size()) > tiles ? "do not fit"
                                              : "with their weights need more "
                                                "than") +
            (int64_t(kernels_.size()) > tiles ? " on " : " the ") +
            std::to_string(tiles) + " tiles at once";
    else
      why = "every packing fits in one group";
  }
  return best;
}

} // namespace loom::spatial
