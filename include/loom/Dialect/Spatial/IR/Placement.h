//===- Placement.h - Tile regions, shards and mesh routes -------*- C++ -*-===//
//
// Plain C++ (no MLIR) so the passes, the emitter and unit tests share one
// definition of where a shard lives and which mesh links a route uses.
//
// A tensor placed on a region of T tiles with shard dimension d is cut into
// T blocks along d of ceil(size_d / T) elements each; block i (row-major in
// the region) lives on the region's i-th tile. d = -1 keeps the whole tensor
// on the region's first tile.
//
// A kernel's operands are often needed in a wider form than that plain
// shard: a convolution split by output rows reads its input's rows with a
// halo, a matmul split by output columns reads all of A on every tile. A
// placement therefore also carries a block size and a halo (block i holds
// [i * block - haloLo, (i + 1) * block + haloHi) along the shard dimension,
// clipped to the tensor), or is replicated (kReplicated: the whole tensor on
// every tile of the region, a multicast). Kernel results are always plain
// shards: every element has one owner.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_DIALECT_SPATIAL_IR_PLACEMENT_H
#define LOOM_DIALECT_SPATIAL_IR_PLACEMENT_H

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace loom::spatial {

/// A rectangle of tiles: top-left (row, col) and its size.
struct TileRegion {
  int64_t row = 0;
  int64_t col = 0;
  int64_t rows = 1;
  int64_t cols = 1;

  int64_t tiles() const { return rows * cols; }
  /// The chip-wide index (row * gridCols + col) of the region's i-th tile.
  int64_t tileIndex(int64_t i, int64_t gridCols) const {
    return (row + i / cols) * gridCols + (col + i % cols);
  }
  bool operator==(const TileRegion &o) const {
    return row == o.row && col == o.col && rows == o.rows && cols == o.cols;
  }
};

/// The shard dimension of a placement that holds the whole tensor on every
/// tile of its region.
inline constexpr int64_t kReplicated = -2;

/// Where a tensor lives: a region of one chip's tiles and the dimension it
/// is split along (-1: whole on the first tile; kReplicated: whole on every
/// tile), with the block size and halo of each tile's part (see above).
struct Placement {
  TileRegion region;
  int64_t shardDim = -1;
  int64_t chip = 0;
  /// Elements of each block along shardDim; 0 for ceil(size / tiles).
  int64_t block = 0;
  /// Elements each block reaches before and after its own (may be negative:
  /// a strided convolution's last input rows can be unneeded).
  int64_t haloLo = 0;
  int64_t haloHi = 0;

  /// True if every element lives on exactly one tile (a plain shard).
  bool plain() const {
    return shardDim != kReplicated && block == 0 && haloLo == 0 &&
           haloHi == 0;
  }
  /// The (block, haloLo, haloHi) triple as stored in IR; empty when plain.
  std::vector<int64_t> layout() const;
  bool operator==(const Placement &o) const {
    return region == o.region && shardDim == o.shardDim && chip == o.chip &&
           block == o.block && haloLo == o.haloLo && haloHi == o.haloHi;
  }
};

/// The default shard dimension of a tensor of `shape` over `tiles` tiles:
/// the outermost dimension divisible by `tiles`; else the outermost one at
/// least `tiles` long; else the longest one longer than 1; else -1.
int64_t chooseShardDim(const std::vector<int64_t> &shape, int64_t tiles);

/// A box of elements: [lo[d], hi[d]) in each dimension.
struct ShardBox {
  std::vector<int64_t> lo;
  std::vector<int64_t> hi;
  int64_t elements() const;
};

/// The block of a tensor of `shape` that the `index`-th of `tiles` tiles
/// holds when sharded along `shardDim`.
ShardBox shardBox(const std::vector<int64_t> &shape, int64_t shardDim,
                  int64_t tiles, int64_t index);
/// The block the `index`-th tile of placement `p` holds of a tensor of
/// `shape` (its halo included, clipped to the tensor).
ShardBox placementBox(const std::vector<int64_t> &shape, const Placement &p,
                      int64_t index);
/// The elements two boxes share.
int64_t overlapElements(const ShardBox &a, const ShardBox &b);

/// The directed links of a rows x cols mesh of tiles and XY routes on it.
/// Links are numbered by tile (row-major), then direction east, west,
/// south, north, skipping directions that leave the grid.
class Mesh {
public:
  Mesh(int64_t rows, int64_t cols);

  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t numLinks() const { return static_cast<int64_t>(ends_.size()); }
  /// The (from tile, to tile) of link `id`.
  std::pair<int64_t, int64_t> linkEnds(int64_t id) const { return ends_[id]; }
  /// The link from `from` to its neighbour `to`, or -1.
  int64_t linkId(int64_t from, int64_t to) const;
  /// Dimension-order route: along the row to the destination column, then
  /// along the column. Returns the link ids in order (empty if from == to).
  std::vector<int64_t> routeXY(int64_t from, int64_t to) const;
  /// Manhattan distance in hops.
  int64_t hops(int64_t from, int64_t to) const;

private:
  int64_t rows_;
  int64_t cols_;
  std::vector<std::pair<int64_t, int64_t>> ends_;
  std::map<std::pair<int64_t, int64_t>, int64_t> ids_;
};

/// One piece of a re-sharding: `elements` elements moved from tile `from`
/// to tile `to` (chip-wide indices; equal for a copy within a tile).
struct ShardFlow {
  int64_t from = 0;
  int64_t to = 0;
  int64_t elements = 0;
};

/// The flows that move a tensor of `shape` from placement `src` to `dst`,
/// in a fixed order (destination tile, then source tile). Each element a
/// destination tile needs comes from one source tile: its owner in a plain
/// `src`; the tile's own copy, else the first tile, in a replicated one; the
/// tile whose block (halo aside) holds it otherwise. So the flows are exact;
/// a flow with from == to is a copy within a tile.
std::vector<ShardFlow> reshardFlows(const std::vector<int64_t> &shape,
                                    const Placement &src, const Placement &dst,
                                    int64_t gridCols);

} // namespace loom::spatial

#endif // LOOM_DIALECT_SPATIAL_IR_PLACEMENT_H
