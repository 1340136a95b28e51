//===- SplitContraction.h - K splits of matmul kernels ----------*- C++ -*-===//
//
// Internal to graph-to-spatial. A matmul whose output has fewer blocks
// than its region has tiles leaves tiles idle however its rows or columns
// are split; splitting its contraction (K) instead gives every tile a
// share of the work, at the price of reducing the partial sums across
// tiles. The split is written with the ops the decomposition already
// knows: the kernel becomes a batched matmul of the K chunks (A's columns
// and B's rows reshaped into [parts, ...], one part per tile) and a
// reduction kernel that sums the parts and runs the epilogue. The partial
// sums move to the tiles that reduce them as an ordinary transfer. The
// split is taken when the cost model finds it faster, or when it is the
// only way the kernel fits its tiles' SRAM (a row split keeps all of B on
// every tile, a column split all of A: [800, 32576] x [32576, 8192] on 8
// TSPs).
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_LIB_DIALECT_SPATIAL_TRANSFORMS_SPLITCONTRACTION_H
#define LOOM_LIB_DIALECT_SPATIAL_TRANSFORMS_SPLITCONTRACTION_H

#include "loom/Dialect/Graph/IR/Graph.h"

#include <cstdint>
#include <optional>
#include <utility>

namespace loom::spatial {

/// The number of K parts for `kernel` on up to `tiles` tiles: the largest
/// divisor of K in [2, tiles] with chunks of at least `minChunk`, if the
/// kernel is a 2-D matmul of its first two inputs followed only by an
/// elementwise epilogue that reads neither; std::nullopt otherwise.
std::optional<int64_t> kSplitParts(graph::KernelOp kernel, int64_t tiles,
                                   int64_t minChunk);

/// Rewrites `kernel` into its K split of `parts` parts: a matmul kernel of
/// the partial products ([parts, M, N]) and a reduction kernel that sums
/// them and runs the epilogue, which takes the kernel's place (its results
/// and location). Returns the two new kernels.
std::pair<graph::KernelOp, graph::KernelOp> splitK(graph::KernelOp kernel,
                                                   int64_t parts);

} // namespace loom::spatial

#endif // LOOM_LIB_DIALECT_SPATIAL_TRANSFORMS_SPLITCONTRACTION_H
