//===- Placement.cpp - Tile regions, shards and mesh routes ---------------===//
#include "loom/Dialect/Spatial/IR/Placement.h"

#include <algorithm>
#include <cstdlib>

namespace loom::spatial {

/// Manhattan distance between two tiles of a grid `cols` wide.
static int64_t gridHops(int64_t from, int64_t to, int64_t cols) {
  return std::llabs(from / cols - to / cols) +
         std::llabs(from % cols - to % cols);
}

int64_t chooseShardDim(const std::vector<int64_t> &shape, int64_t tiles) {
  if (tiles <= 1)
    return -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] >= tiles && shape[d] % tiles == 0)
      return static_cast<int64_t>(d);
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] >= tiles)
      return static_cast<int64_t>(d);
  int64_t best = -1;
  for (size_t d = 0; d < shape.size(); ++d)
    if (shape[d] > 1 && (best < 0 || shape[d] > shape[best]))
      best = static_cast<int64_t>(d);
  return best;
}

int64_t ShardBox::elements() const {
  int64_t n = 1;
  for (size_t d = 0; d < lo.size(); ++d)
    n *= std::max<int64_t>(0, hi[d] - lo[d]);
  return n;
}

ShardBox shardBox(const std::vector<int64_t> &shape, int64_t shardDim,
                  int64_t tiles, int64_t index) {
  ShardBox box;
  box.lo.assign(shape.size(), 0);
  box.hi = shape;
  if (shardDim < 0) {
    // The whole tensor on the first tile, nothing elsewhere. A scalar's box
    // has no dimension to empty, so its empty box gets one extra, empty
    // dimension (overlapElements treats boxes of different rank as
    // disjoint).
    if (index != 0) {
      if (shape.empty()) {
        box.lo.push_back(0);
        box.hi.push_back(0);
      } else {
        box.hi[0] = box.lo[0];
      }
    }
    return box;
  }
  int64_t size = shape[shardDim];
  int64_t chunk = (size + tiles - 1) / tiles;
  box.lo[shardDim] = std::min(index * chunk, size);
  box.hi[shardDim] = std::min(box.lo[shardDim] + chunk, size);
  return box;
}

std::vector<int64_t> Placement::layout() const {
  if (block == 0 && haloLo == 0 && haloHi == 0)
    return {};
  return {block, haloLo, haloHi};
}

ShardBox placementBox(const std::vector<int64_t> &shape, const Placement &p,
                      int64_t index) {
  const int64_t tiles = p.region.tiles();
  if (p.shardDim == kReplicated) {
    ShardBox box;
    box.lo.assign(shape.size(), 0);
    box.hi = shape;
    return box;
  }
  if (p.shardDim < 0 || (p.block == 0 && p.haloLo == 0 && p.haloHi == 0))
    return shardBox(shape, p.shardDim, tiles, index);
  ShardBox box;
  box.lo.assign(shape.size(), 0);
  box.hi = shape;
  const int64_t size = shape[p.shardDim];
  const int64_t block = p.block > 0 ? p.block : (size + tiles - 1) / tiles;
  int64_t lo = index * block - p.haloLo;
  int64_t hi = (index + 1) * block + p.haloHi;
  // The last tile takes whatever a short block leaves (a strided
  // convolution's input rows past the last full block).
  if (index == tiles - 1)
    hi = std::max(hi, size);
  box.lo[p.shardDim] = std::clamp<int64_t>(lo, 0, size);
  box.hi[p.shardDim] = std::clamp<int64_t>(hi, box.lo[p.shardDim], size);
  return box;
}

int64_t overlapElements(const ShardBox &a, const ShardBox &b) {
  if (a.lo.size() != b.lo.size())
    return 0;
  int64_t n = 1;
  for (size_t d = 0; d < a.lo.size(); ++d)
    n *= std::max<int64_t>(0, std::min(a.hi[d], b.hi[d]) -
                                  std::max(a.lo[d], b.lo[d]));
  return n;
}

Mesh::Mesh(int64_t rows, int64_t cols) : rows_(rows), cols_(cols) {
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      int64_t from = r * cols + c;
      const int64_t dr[] = {0, 0, 1, -1};
      const int64_t dc[] = {1, -1, 0, 0};
      for (int k = 0; k < 4; ++k) {
        int64_t nr = r + dr[k], nc = c + dc[k];
        if (nr < 0 || nr >= rows || nc < 0 || nc >= cols)
          continue;
        int64_t to = nr * cols + nc;
        ids_[{from, to}] = static_cast<int64_t>(ends_.size());
        ends_.push_back({from, to});
      }
    }
  }
}

int64_t Mesh::linkId(int64_t from, int64_t to) const {
  auto it = ids_.find({from, to});
  return it == ids_.end() ? -1 : it->second;
}

std::vector<int64_t> Mesh::routeXY(int64_t from, int64_t to) const {
  std::vector<int64_t> links;
  int64_t r = from / cols_, c = from % cols_;
  int64_t tr = to / cols_, tc = to % cols_;
  while (c != tc) {
    int64_t nc = c + (tc > c ? 1 : -1);
    links.push_back(linkId(r * cols_ + c, r * cols_ + nc));
    c = nc;
  }
  while (r != tr) {
    int64_t nr = r + (tr > r ? 1 : -1);
    links.push_back(linkId(r * cols_ + c, nr * cols_ + c));
    r = nr;
  }
  return links;
}

int64_t Mesh::hops(int64_t from, int64_t to) const {
  return gridHops(from, to, cols_);
}

std::vector<ShardFlow> reshardFlows(const std::vector<int64_t> &shape,
                                    const Placement &src, const Placement &dst,
                                    int64_t gridCols) {
  std::vector<ShardFlow> flows;
  int64_t srcTiles = src.region.tiles(), dstTiles = dst.region.tiles();
  // The part of the tensor each source tile is the sender of: its block
  // without the halo (a replicated source: see below).
  Placement owners = src;
  owners.haloLo = owners.haloHi = 0;
  for (int64_t j = 0; j < dstTiles; ++j) {
    ShardBox want = placementBox(shape, dst, j);
    if (want.elements() == 0)
      continue;
    const int64_t to = dst.region.tileIndex(j, gridCols);
    if (src.shardDim == kReplicated) {
      // Every source tile holds it all: the nearest sends (the tile's own
      // copy if it has one; across chips, the first tile).
      int64_t from = src.region.tileIndex(0, gridCols);
      for (int64_t i = 0; i < srcTiles && src.chip == dst.chip; ++i)
        if (int64_t t = src.region.tileIndex(i, gridCols);
            gridHops(t, to, gridCols) < gridHops(from, to, gridCols))
          from = t;
      flows.push_back({from, to, want.elements()});
      continue;
    }
    for (int64_t i = 0; i < srcTiles; ++i) {
      int64_t n = overlapElements(want, placementBox(shape, owners, i));
      if (n > 0)
        flows.push_back({src.region.tileIndex(i, gridCols), to, n});
    }
  }
  return flows;
}

} // namespace loom::spatial
