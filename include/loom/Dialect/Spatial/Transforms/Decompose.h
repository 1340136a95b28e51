//===- Decompose.h - A kernel's work split over its tiles -------*- C++ -*-===//
//
// A kernel placed on a region of tiles is not mapped until each tile knows
// which block of the kernel's results it computes and which bytes of each
// operand that takes. The decomposition follows the anchor op's semantics:
// a matmul split by output rows (B multicast) or columns (A multicast); a
// convolution by output channels (weights sharded, input multicast) or by
// output rows or columns (the input's rows with their halo of
// (kernel - 1) x dilation, weights multicast); elementwise ops, reductions,
// softmax and normalisations over the dimensions they keep. What an operand
// needs is found by walking the kernel's body backwards from its results,
// one rule per op family (DecomposeContraction.cpp, DecomposeVector.cpp);
// an op without a rule needs its operands whole on every tile, which is
// correct and costs bytes, never a wrong answer.
//
// A contraction's K dimension is split before this, by rewriting the
// kernel into partial products and their reduction (SplitContraction.h),
// so the rules here see a batched matmul and a reduce_sum. Not yet built
// (partial): two-dimensional splits (rows and columns at once).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_SPATIAL_TRANSFORMS_DECOMPOSE_H
#define LOOM_DIALECT_SPATIAL_TRANSFORMS_DECOMPOSE_H

#include "loom/Dialect/Spatial/IR/Placement.h"
#include "loom/Runtime/Isa.h"

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom::spatial {

/// How the tiles of a region hold one value: a block of `block` elements
/// along `dim` per tile, widened by the halos (see Placement), the whole
/// value on every tile (dim == kReplicated), or not needed at all.
struct TileSplit {
  static constexpr int64_t kUnneeded = -3;
  int64_t dim = kUnneeded;
  int64_t block = 0;
  int64_t haloLo = 0;
  int64_t haloHi = 0;

  static TileSplit whole() { return {kReplicated, 0, 0, 0}; }
  static TileSplit along(int64_t dim, int64_t block, int64_t lo = 0,
                         int64_t hi = 0) {
    return {dim, block, lo, hi};
  }
  bool needed() const { return dim != kUnneeded; }
  bool operator==(const TileSplit &o) const {
    return dim == o.dim && block == o.block && haloLo == o.haloLo &&
           haloHi == o.haloHi;
  }
};

/// Merges what two readers of one value need: the same split with the
/// wider halos, else the whole value.
TileSplit mergeSplits(const TileSplit &a, const TileSplit &b);

/// What each operand of `op` needs for its results split as `results`
/// (an unneeded result asks nothing). One rule per op family; an op without
/// one needs every operand whole.
std::vector<TileSplit> operandSplits(mlir::Operation *op,
                                     const std::vector<TileSplit> &results);

/// A kernel's decomposition over `tiles` tiles.
struct Decomposition {
  /// How the work is split: "<family>.<dimension role>", e.g.
  /// "conv.out_rows", "matmul.cols", "elementwise.dim0", "single_tile".
  std::string name;
  /// The shard dimension of each result (plain shards: one owner each).
  std::vector<int64_t> resultDims;
  /// What each tile needs of each body argument (the kernel's inputs).
  std::vector<TileSplit> inputs;
  /// Elements the inputs bring to the tiles (a multicast counted once per
  /// tile; of a placed input only those that change tiles): the choice's
  /// cost.
  int64_t inputElements = 0;
  /// The most result elements one tile computes.
  int64_t maxTileElements = 0;
  /// The most matrix-unit cycles one tile's contractions take by the ISA's
  /// rule matrix.block (decomposeKernel with a MatrixTiming; 0 without).
  int64_t maxTileMatrixCycles = 0;
};

/// The matrix unit a kernel's contractions run on, in the format they run
/// in: decomposeKernel then balances the tiles by rule matrix.block's
/// cycles (whole native blocks), not by result elements, so a split that
/// leaves each tile a sliver of a block (16 of a 320-wide block's columns)
/// loses to one that does not.
struct MatrixTiming {
  const rt::TileDesc *tile = nullptr;
  rt::NumericFormat format = rt::NumericFormat::F32;
};

/// The input splits and costs of `body` with result `r` split along
/// `resultDims[r]` over `tiles` tiles (-1: on the first tile only).
Decomposition propagateSplits(mlir::Block &body,
                              const std::vector<int64_t> &resultDims,
                              int64_t tiles);

/// What the choice needs to know of a kernel's input.
struct KernelInputInfo {
  /// Bytes of an element as stored in SRAM.
  int64_t elementBytes = 4;
  /// A weight: resident for the whole program.
  bool constant = false;
  /// Where the input lives now on the kernel's chip (a producer's
  /// result), if placed there: then only the elements that change tiles
  /// cost.
  std::optional<Placement> current;
};

/// Chooses the decomposition of the kernel `body` on `region` (of a grid
/// `gridCols` tiles wide): every dimension of its largest result is tried.
/// Among the splits whose busiest tile holds its inputs and results within
/// `tileRoom` bytes and its weights within `constantRoom` (either 0:
/// unlimited), or all of them if none does, the one that balances the
/// tiles' work best (within 5 %: the busiest tile's matrix-unit cycles
/// where `timing` gives the unit and the kernel has contractions it runs,
/// else its result elements), then moves the fewest elements (within
/// 5 %, the default shard dimension), wins: an input's elements that change
/// tiles from where it lives, every element delivered of one that is not
/// placed yet (a weight's copies among them).
Decomposition decomposeKernel(mlir::Block &body, const TileRegion &region,
                              int64_t gridCols,
                              const std::vector<KernelInputInfo> &inputs,
                              int64_t constantRoom = 0, int64_t tileRoom = 0,
                              const MatrixTiming &timing = {});

/// The placement a value split as `s` has on `region` of `chip` (a plain
/// shard when the split is the default block without halo).
Placement placementFor(const TileSplit &s, const std::vector<int64_t> &shape,
                       const TileRegion &region, int64_t chip);

/// What tile `index` of `region` computes of the kernel `body` whose
/// results are placed as `results`, for the ISA's timing rules
/// (runtime/include/loom/Runtime/Isa.h): the splits are propagated back
/// from the results' placements, and every needed op costs rt::opCost on
/// the box of its result the tile produces (a contraction from that box, a
/// reduction or pooling over its operand's box). An unsharded result is
/// computed on the region's first tile; a replicated one on every tile.
/// `sramBytes` is left 0.
rt::TileWork tileWorkOf(mlir::Block &body,
                        const std::vector<Placement> &results,
                        const TileRegion &region, int64_t index);

} // namespace loom::spatial

#endif // LOOM_DIALECT_SPATIAL_TRANSFORMS_DECOMPOSE_H
