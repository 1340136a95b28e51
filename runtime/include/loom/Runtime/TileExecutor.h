//===- TileExecutor.h - Execute one kernel on one tile's blocks -*- C++ -*-===//
//
// A tile program computes only its own block of a kernel's outputs, from the
// blocks of the inputs held in that tile's SRAM. This component does that for
// one tile, independently of the compiler's placement: it re-derives from op
// semantics which box of every operand each result box needs (backward
// region-of-interest propagation), checks that the tile holds it, and then
// runs every needed op through executeOp on local blocks, with attributes
// adjusted to the block (convolution and pooling pads at the real input's
// edges only, the group count of a channel range, slice starts, pad amounts).
//
// Exact block rules (a result box needs only what its values depend on):
//  - elementwise unary/binary/select/cast and broadcast_to: the result box
//    projected onto each operand (numpy broadcasting; a broadcast dim of
//    size 1 needs [0, 1));
//  - matmul (1-D promotion, batch broadcasting): A's rows of the box and all
//    of K, B's columns of the box and all of K;
//  - conv: the window rows of the box (halo) clipped to the input, the input
//    channels of the groups the output-channel range touches;
//  - max_pool (also its indices result) and avg_pool (count_include_pad
//    exact: pads only where the real input edge is);
//  - reduce_*, arg_max/arg_min: reduced axes whole, kept axes projected;
//  - softmax, log_softmax, hardmax, cumsum: the axis whole;
//  - layer_norm (axes from `axis` whole), instance_norm (spatial axes whole),
//    batch_norm; their per-channel operands by the box's channel range;
//  - transpose, slice (any step sign), pad (constant mode);
//  - gather (its axis whole in the data, the indices by the box);
//  - concat (each operand's rows of the box along the axis, none for one
//    outside it); reshape, for a box that is one block of the input's rows (whole past the last
//    dimension it cuts, the shapes agreeing before it and that dimension
//    an integer part of the input's): otherwise the fallback.
// Every other op (gather_elements, gather_nd, scatter,
// resize, einsum, topk,
// conv_transpose, pad in another mode, the collectives, ...) falls back:
// every operand is needed whole, the op runs whole and its result is cropped.
// Correct, just not economical.
//
// With the reference kernels a block is bit-identical to the same box of the
// whole result: every result element sums the same terms in the same order.
// Fast mode (BLAS) may round differently for a different matrix shape. Int8
// input rounding scales per tensor, so on a tile it scales per block: the
// results then differ from a whole-tensor run by more than rounding.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TILEEXECUTOR_H
#define LOOM_RUNTIME_TILEEXECUTOR_H

#include "loom/Runtime/Isa.h"
#include "loom/Runtime/OpExecutor.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/Tensor.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace loom::rt {

/// A box of a tensor's elements: [lo[d], hi[d]) in each dimension. A box
/// with hi[d] <= lo[d] in some dimension is empty; a rank-0 box is a scalar
/// (one element).
struct Box {
  std::vector<int64_t> lo, hi;

  /// Every element of a tensor of `shape`.
  static Box whole(const Shape &shape);
  /// An empty box of `rank` dimensions ([0, 0) in each).
  static Box none(size_t rank);

  size_t rank() const { return lo.size(); }
  /// hi[d] - lo[d], or 0 if that is negative.
  int64_t extent(size_t d) const;
  /// The extent of every dimension: the shape of the box's values.
  Shape extents() const;
  bool empty() const;
  int64_t elements() const;
  /// True if every element of `other` is in this box (always for an empty
  /// `other` of the same rank).
  bool contains(const Box &other) const;
  /// The elements in both boxes.
  Box intersect(const Box &other) const;
  /// How many elements are in both boxes (intersect(other).elements(),
  /// without building it).
  int64_t overlap(const Box &other) const;
  /// The bounding box of both; an empty box adds nothing.
  Box unite(const Box &other) const;
  /// The elements of this box outside `other`: at most 2 x rank disjoint
  /// boxes (a slab below and one above `other` in each dimension, the rest
  /// cut down as it goes); empty when `other` contains this box.
  std::vector<Box> minus(const Box &other) const;
  /// "[0, 2) x [3, 9)"; "[]" for a scalar.
  std::string str() const;

  bool operator==(const Box &other) const = default;
};

/// A block of a tensor: the values of `box` (data.shape() == box.extents()).
struct Block {
  Box box;
  Tensor data;
};

/// The values of `box` cut out of `block`. An empty box gives an empty tensor
/// of its extents without reading the block; otherwise `box` must lie inside
/// block.box (throws Error).
Tensor crop(const Block &block, const Box &box);

/// The box of each of an op's operands that computing `resultBoxes` (one per
/// result) needs: backward region-of-interest propagation for one op.
/// `operandShapes` are those of the operands passed to executeOp (an absent
/// optional operand in the middle has an empty shape and gets a rank-0 box).
/// Ops without a block rule need every operand whole; if every result box is
/// empty, so is every operand box (a rank-0 box is a scalar and never empty:
/// callers skip an op none of whose results is needed). Throws Error naming the
/// op on a missing attribute or inconsistent shapes.
std::vector<Box> operandRegions(const std::string &op, const AttrMap &attrs,
                                const std::vector<Shape> &operandShapes,
                                const std::vector<Shape> &resultShapes,
                                const std::vector<Box> &resultBoxes);

/// True if `op` with `attrs` has an exact block rule (false: the whole-operand
/// fallback).
bool hasBlockRule(const std::string &op, const AttrMap &attrs);

/// For one tile: computes the blocks `outputBoxes` (tensor id -> box) of a
/// kernel's values from `inputs` (tensor id -> the block the tile holds of a
/// kernel input, i.e. a value no op of `ops` produces). `tensorOf` gives
/// every value's shape, element type and storage format (results stored
/// narrow are rounded as they are written, as the simulator does).
///
/// A value no op needs and that is not an output is not computed. Before any
/// op runs, every kernel input box an op needs is checked against the tile's
/// block; throws Error naming the op and the tensor when it is not covered
/// (e.g. "conv: needs rows [3, 9) of dimension 2 of tensor 7 'x', the tile
/// holds [4, 9)"). Errors of executeOp are prefixed with the op's position.
std::map<int32_t, Block>
executeOnTile(const std::vector<ProgramOp> &ops,
              const std::function<const ProgramTensor &(int32_t)> &tensorOf,
              const std::map<int32_t, Block> &inputs,
              const std::map<int32_t, Box> &outputBoxes, ExecMode mode,
              const FastOptions &fast = {});

/// Checks, without values, that a tile holding the boxes `held` (tensor id
/// -> box) of a kernel's inputs can compute `outputBoxes`: the check
/// executeOnTile makes before it runs an op. Throws Error naming the op,
/// the tensor and the rows that are missing.
void checkTileOperands(
    const std::vector<ProgramOp> &ops,
    const std::function<const ProgramTensor &(int32_t)> &tensorOf,
    const std::map<int32_t, Box> &held,
    const std::map<int32_t, Box> &outputBoxes);

/// The work of computing `outputBoxes` (tensor id -> box) of a kernel's
/// values on one tile, for the ISA's timing rules (Isa.h): each op the
/// outputs need, by the backward propagation executeOnTile runs, costs
/// opCost over the result box it must produce (a contraction from that box,
/// a reduction or pooling over the box of its input it reads). An op
/// without a block rule runs whole in the simulator, but the tile's share
/// of its work is still the box it produces. `sramBytes` is left 0 (the
/// instruction's buffers give it). Throws Error as executeOnTile does.
TileWork tileWork(const std::vector<ProgramOp> &ops,
                  const std::function<const ProgramTensor &(int32_t)> &tensorOf,
                  const std::map<int32_t, Box> &outputBoxes);

/// tileWork and checkTileOperands for many instructions of one program,
/// each backward propagation derived once: a kernel repeated across layers
/// and chips (the same ops, attributes, shapes and formats over other tensor
/// ids) with the same output boxes shares one plan. The answers and the
/// errors are those of the two functions. The kernels' ops must outlive the
/// cache and not change while it is used (it knows a kernel by its ops'
/// address).
class TilePlanCache {
public:
  using TensorOf = std::function<const ProgramTensor &(int32_t)>;
  explicit TilePlanCache(TensorOf tensorOf);
  ~TilePlanCache();
  TilePlanCache(const TilePlanCache &) = delete;
  TilePlanCache &operator=(const TilePlanCache &) = delete;

  TileWork work(const std::vector<ProgramOp> &ops,
                const std::map<int32_t, Box> &outputBoxes);
  void checkOperands(const std::vector<ProgramOp> &ops,
                     const std::map<int32_t, Box> &held,
                     const std::map<int32_t, Box> &outputBoxes);
  /// How many backward propagations were run (distinct plans, and calls
  /// the cache could not serve).
  int64_t derivations() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_TILEEXECUTOR_H
