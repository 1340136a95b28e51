//===- Mapping.h - Choose how kernels share a chip's tiles ------*- C++ -*-===//
//
// Plain C++ (no MLIR): the mapping planner of graph-to-spatial, unit-tested
// on its own. Given the kernels of a graph in program order (cost-model
// descriptions, which kernels feed which, resident weight bytes), it builds
// candidate mappings and estimates each one's latency (one input) and
// initiation interval (II, cycles between inputs of a stream):
//
//  - sequential: each kernel on the region the caller chose for it alone
//    (layer-sequential); inputs do not overlap, so II = latency;
//  - pipelined: every kernel on its own rectangle of tiles, all resident at
//    once; II is the busiest unit's cycles per input;
//  - hybrid: the kernels, in order, cut into groups; each group pipelined
//    over the whole chip, the groups sharing the tiles.
//
// Packing: the grid is cut into bands of `h` rows, visited as a snake (band
// 0 left to right, band 1 right to left, ...), so consecutive kernels are
// neighbours. For a stage-time target tau, each kernel takes the narrowest
// h x w rectangle whose estimate is within tau (the fastest one if none
// is), in order along the snake; when the grid is full, a new group starts
// at its beginning. Every band height that divides the rows and a
// geometric ladder of targets (ratio 1.2) are tried; a packing whose
// resident weights exceed 3/4 of a tile's SRAM is rejected (the rest is
// left for activations). Estimates list-schedule the kernels, and the
// transfers between regions (bytes over the mesh links out of the sending
// tiles), on each tile's matrix, vector and DMA unit.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_SPATIAL_TRANSFORMS_MAPPING_H
#define LOOM_DIALECT_SPATIAL_TRANSFORMS_MAPPING_H

#include "loom/Dialect/Spatial/IR/Placement.h"
#include "loom/Target/CostModel.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom::spatial {

enum class MappingMode { Sequential, Pipelined, Hybrid };
enum class MappingObjective { Latency, Throughput };
const char *mappingModeName(MappingMode mode);
const char *mappingObjectiveName(MappingObjective objective);

/// One kernel, as the planner sees it.
struct MappingKernel {
  KernelDesc desc;
  /// 0 matrix, 1 vector, 2 DMA: the unit its instructions occupy.
  int unit = 1;
  /// A matmul/conv epilogue also occupies the vector unit.
  bool epilogue = false;
  /// Producing kernels (indices of earlier kernels) and the bytes of each
  /// input they feed (the same length).
  std::vector<size_t> deps;
  std::vector<int64_t> depBytes;
  /// Weight bytes resident on its region (split evenly over the tiles).
  int64_t weightBytes = 0;
};

/// One candidate mapping with its estimates.
struct Mapping {
  MappingMode mode = MappingMode::Sequential;
  int64_t groups = 1;
  /// The band height of a packed mapping (0 for sequential).
  int64_t bandRows = 0;
  std::vector<TileRegion> regions;
  /// Pipeline group of each kernel.
  std::vector<int64_t> group;
  /// Estimated cycles of each kernel on its region.
  std::vector<double> cycles;
  double latency = 0;
  double ii = 0;
};

class MappingPlanner {
public:
  MappingPlanner(const CostModel &model, std::vector<MappingKernel> kernels);

  /// The sequential mapping on the given regions (one per kernel).
  Mapping sequential(const std::vector<TileRegion> &regions) const;
  /// The best packed mapping for `objective` with exactly one group
  /// (pipelined) or at least two (hybrid); std::nullopt, with `why` set,
  /// when there is none (more kernels than tiles, weights too large).
  std::optional<Mapping> packed(MappingMode mode, MappingObjective objective,
                                std::string &why) const;

  /// True if `a` is better than `b` for `objective` (latency: lower
  /// latency, and by 1% if it has more groups, so ties keep the simpler
  /// mapping; throughput: lower II, then latency).
  static bool better(const Mapping &a, const Mapping &b,
                     MappingObjective objective);

private:
  double cost(size_t kernel, int64_t rows, int64_t cols) const;
  /// Packs at band height `h` and stage target `tau`; std::nullopt if the
  /// resident weights do not fit.
  std::optional<Mapping> pack(int64_t h, double tau) const;
  /// Fills in `m.latency` and `m.ii` from its regions.
  void estimate(Mapping &m) const;

  const CostModel &model_;
  std::vector<MappingKernel> kernels_;
  int64_t rows_, cols_;
  /// cost_[k][(r - 1) * cols + (c - 1)]: kernel k on an r x c region.
  mutable std::vector<std::vector<double>> cost_;
};

} // namespace loom::spatial

#endif // LOOM_DIALECT_SPATIAL_TRANSFORMS_MAPPING_H
