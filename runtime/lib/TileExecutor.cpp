//===- TileExecutor.cpp - Execute one kernel on one tile's blocks ---------===//
//
// Each op family has a block rule: `regions` maps the result boxes to the
// operand boxes they need, `execute` computes exactly the result boxes from
// operands cut to those boxes (running executeOp with attributes adjusted to
// the block). Ops without a rule use the whole-operand fallback.
//
// It is long (over 1,000 lines) because it holds one block rule per op
// family, each a pair of small functions beside its family's geometry; they
// share the box helpers at the top.
//
//===----------------------------------------------------------------------===//
#include "loom/Runtime/TileExecutor.h"

#include "TilePlan.h"

#include <algorithm>
#include <limits>
#include <cstring>
#include <optional>
#include <unordered_map>

namespace loom::rt {

//===----------------------------------------------------------------------===//
// Box and crop
//===----------------------------------------------------------------------===//

Box Box::whole(const Shape &shape) {
  return Box{std::vector<int64_t>(shape.size(), 0), shape};
}

Box Box::none(size_t rank) {
  return Box{std::vector<int64_t>(rank, 0), std::vector<int64_t>(rank, 0)};
}

int64_t Box::extent(size_t d) const {
  return std::max<int64_t>(0, hi[d] - lo[d]);
}

Shape Box::extents() const {
  Shape s(rank());
  for (size_t d = 0; d < rank(); ++d)
    s[d] = extent(d);
  return s;
}

bool Box::empty() const {
  for (size_t d = 0; d < rank(); ++d)
    if (hi[d] <= lo[d])
      return true;
  return false;
}

int64_t Box::elements() const { return numElementsOf(extents()); }

bool Box::contains(const Box &other) const {
  if (other.rank() != rank())
    return false;
  if (other.empty())
    return true;
  for (size_t d = 0; d < rank(); ++d)
    if (other.lo[d] < lo[d] || other.hi[d] > hi[d])
      return false;
  return true;
}

int64_t Box::overlap(const Box &other) const {
  if (other.rank() != rank())
    return intersect(other).elements();
  int64_t n = 1;
  for (size_t d = 0; d < rank(); ++d) {
    int64_t e = std::min(hi[d], other.hi[d]) - std::max(lo[d], other.lo[d]);
    if (e <= 0)
      return 0;
    if (__builtin_mul_overflow(n, e, &n))
      return std::numeric_limits<int64_t>::max();
  }
  return n;
}

Box Box::intersect(const Box &other) const {
  Box b = *this;
  for (size_t d = 0; d < rank() && d < other.rank(); ++d) {
    b.lo[d] = std::max(lo[d], other.lo[d]);
    b.hi[d] = std::max(b.lo[d], std::min(hi[d], other.hi[d]));
  }
  return b;
}

Box Box::unite(const Box &other) const {
  if (other.empty())
    return *this;
  if (empty())
    return other;
  Box b = *this;
  for (size_t d = 0; d < rank() && d < other.rank(); ++d) {
    b.lo[d] = std::min(lo[d], other.lo[d]);
    b.hi[d] = std::max(hi[d], other.hi[d]);
  }
  return b;
}

std::vector<Box> Box::minus(const Box &b) const {
  const Box &a = *this;
  if (a.empty())
    return {};
  Box cut = a.intersect(b);
  if (cut.empty())
    return {a};
  std::vector<Box> out;
  Box rest = a;
  for (size_t d = 0; d < a.rank(); ++d) {
    if (rest.lo[d] < cut.lo[d]) {
      Box below = rest;
      below.hi[d] = cut.lo[d];
      out.push_back(below);
    }
    if (cut.hi[d] < rest.hi[d]) {
      Box above = rest;
      above.lo[d] = cut.hi[d];
      out.push_back(above);
    }
    rest.lo[d] = cut.lo[d];
    rest.hi[d] = cut.hi[d];
  }
  return out;
}

std::string Box::str() const {
  if (rank() == 0)
    return "[]";
  std::string s;
  for (size_t d = 0; d < rank(); ++d) {
    if (d)
      s += " x ";
    s += "[" + std::to_string(lo[d]) + ", " + std::to_string(hi[d]) + ")";
  }
  return s;
}

/// `box` of `block` as a view of the block's memory when its elements are
/// one contiguous run there (a block of whole rows), without copying.
static std::optional<Tensor> contiguousView(const Block &block,
                                            const Box &box) {
  const size_t rank = box.rank();
  // k: the first dimension the box does not take one index of; every
  // dimension after it must be whole.
  size_t k = 0;
  while (k < rank && box.extent(k) == 1 && block.box.extent(k) > 1)
    ++k;
  for (size_t d = k + 1; d < rank; ++d)
    if (box.lo[d] != block.box.lo[d] || box.hi[d] != block.box.hi[d])
      return std::nullopt;
  std::vector<int64_t> strides = stridesOf(block.data.shape());
  int64_t offset = 0;
  for (size_t d = 0; d < rank; ++d)
    offset += (box.lo[d] - block.box.lo[d]) * strides[d];
  auto owner = std::make_shared<Tensor>(block.data);
  const char *base = static_cast<const char *>(block.data.raw());
  return Tensor::view(block.data.dtype(), box.extents(),
                      base + offset * dtypeSize(block.data.dtype()),
                      std::shared_ptr<const void>(owner, owner->raw()));
}

Tensor crop(const Block &block, const Box &box) {
  if (box.rank() != block.box.rank())
    throw Error("crop: box " + box.str() + " has rank " +
                std::to_string(box.rank()) + ", the block " + block.box.str() +
                " has rank " + std::to_string(block.box.rank()));
  if (box.empty())
    return Tensor::uninitialized(block.data.dtype(), box.extents());
  if (!block.box.contains(box))
    throw Error("crop: box " + box.str() + " is not inside the block " +
                block.box.str());
  // The whole block: its tensor, shared, not copied.
  if (box == block.box)
    return block.data;
  if (std::optional<Tensor> v = contiguousView(block, box))
    return *v;
  Tensor out = Tensor::uninitialized(block.data.dtype(), box.extents());
  size_t rank = box.rank(), elem = dtypeSize(block.data.dtype());
  if (rank == 0) {
    std::memcpy(out.mutableRaw(), block.data.raw(), elem);
    return out;
  }
  // Copies one contiguous run per index of the outer dimensions: the run
  // spans the last dimension and every dimension before it that the box
  // and the block cover alike (so a block of whole rows is one memcpy).
  std::vector<int64_t> strides = stridesOf(block.data.shape());
  Shape outer = box.extents();
  size_t inner = rank - 1;
  while (inner > 0 && box.lo[inner] == block.box.lo[inner] &&
         box.hi[inner] == block.box.hi[inner])
    --inner;
  int64_t run = 1;
  for (size_t d = inner; d < rank; ++d) {
    run *= outer[d];
    outer[d] = 1;
  }
  std::vector<int64_t> index(rank, 0);
  const char *src = static_cast<const char *>(block.data.raw());
  char *dst = static_cast<char *>(out.mutableRaw());
  for (int64_t r = 0, e = numElementsOf(outer); r < e; ++r) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += (index[d] + box.lo[d] - block.box.lo[d]) * strides[d];
    std::memcpy(dst + r * run * elem, src + offset * elem, run * elem);
    for (size_t d = inner + 1; d-- > 0;) {
      if (++index[d] < outer[d])
        break;
      index[d] = 0;
    }
  }
  return out;
}

namespace {

/// The values of `box` (in `t`'s own coordinates) of a local tensor.
Tensor sub(const Tensor &t, const Box &box) {
  return crop(Block{Box::whole(t.shape()), t}, box);
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

const AttrValue &attrOf(const std::string &op, const AttrMap &attrs,
                        const char *key) {
  auto it = attrs.find(key);
  if (it == attrs.end())
    throw Error(op + ": missing attribute '" + key + "'");
  return it->second;
}

const std::vector<int64_t> &intsAttr(const std::string &op,
                                     const AttrMap &attrs, const char *key) {
  return attrOf(op, attrs, key).ints;
}

int64_t intAttr(const std::string &op, const AttrMap &attrs, const char *key) {
  const AttrValue &a = attrOf(op, attrs, key);
  if (a.ints.empty())
    throw Error(op + ": attribute '" + key + "' has no integer value");
  return a.ints[0];
}

AttrValue intsValue(std::vector<int64_t> v) {
  AttrValue a;
  a.kind = AttrValue::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

/// `v` if it has `n` entries, `n` copies of `dflt` if it is empty (as the
/// kernels read strides, dilations and pads).
std::vector<int64_t> perAxis(const std::string &op, const char *what,
                             const std::vector<int64_t> &v, size_t n,
                             int64_t dflt) {
  if (v.empty())
    return std::vector<int64_t>(n, dflt);
  if (v.size() != n)
    throw Error(op + ": " + what + " has " + std::to_string(v.size()) +
                " entries, expected " + std::to_string(n));
  return v;
}

/// A non-negative axis below `rank`, or an Error naming the op.
int64_t checkedAxis(const std::string &op, int64_t axis, size_t rank) {
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    throw Error(op + ": axis " + std::to_string(axis) +
                " out of range for rank " + std::to_string(rank));
  return axis;
}

//===----------------------------------------------------------------------===//
// Rule plumbing
//===----------------------------------------------------------------------===//

/// The op as the rules see it: attributes and the whole shapes.
struct OpView {
  const std::string &op;
  const AttrMap &attrs;
  const std::vector<Shape> &operandShapes;
  const std::vector<Shape> &resultShapes;

  const Shape &operand(size_t k) const {
    if (k >= operandShapes.size())
      throw Error(op + ": missing operand " + std::to_string(k));
    return operandShapes[k];
  }
  size_t numOperands() const { return operandShapes.size(); }
};

/// One op to compute on local blocks.
struct LocalCall {
  const OpView &view;
  /// The boxes to compute, one per result (not all empty).
  const std::vector<Box> &resultBoxes;
  /// The local operands: each is its operand's box from `regions`.
  const std::vector<Tensor> &operands;
  const std::vector<DType> &resultDTypes;
  ExecMode mode;
  const FastOptions &fast;

  /// executeOp of the op with `attrs` on `args`, results of `shapes`.
  std::vector<Tensor> run(const AttrMap &attrs, const std::vector<Tensor> &args,
                          const std::vector<Shape> &shapes) const {
    std::vector<ResultType> types;
    for (size_t k = 0; k < shapes.size(); ++k)
      types.push_back({shapes[k], resultDTypes.at(k)});
    return executeOp(view.op, attrs, args, types, mode, fast);
  }
  /// The op as it is, on the local operands, producing the result boxes.
  std::vector<Tensor> runAsIs() const {
    std::vector<Shape> shapes;
    for (const Box &b : resultBoxes)
      shapes.push_back(b.extents());
    return run(view.attrs, operands, shapes);
  }
};

using RegionsFn = std::vector<Box> (*)(const OpView &,
                                       const std::vector<Box> &);
using ExecuteFn = std::vector<Tensor> (*)(const LocalCall &);

struct BlockRule {
  RegionsFn regions;
  ExecuteFn execute;
};

std::vector<Tensor> executeAsIs(const LocalCall &c) { return c.runAsIs(); }

/// `box` with dimensions `from` onwards made whole: what an op that reads
/// those dimensions whole computes before cropping to `box`.
Box wholeFrom(const Box &box, const Shape &shape, size_t from) {
  Box b = box;
  for (size_t d = from; d < b.rank(); ++d) {
    b.lo[d] = 0;
    b.hi[d] = shape[d];
  }
  return b;
}

/// Runs the op as it is on an input that covers `computed` (a superset of
/// the result box along dimensions the op reads whole) and cuts the result
/// box out of it.
std::vector<Tensor> runAndCrop(const LocalCall &c, const Box &computed) {
  std::vector<Tensor> out =
      c.run(c.view.attrs, c.operands, {computed.extents()});
  return {crop(Block{computed, out[0]}, c.resultBoxes[0])};
}

//===----------------------------------------------------------------------===//
// Fallback: every operand whole
//===----------------------------------------------------------------------===//

std::vector<Box> wholeRegions(const OpView &v, const std::vector<Box> &) {
  std::vector<Box> boxes;
  for (const Shape &s : v.operandShapes)
    boxes.push_back(Box::whole(s));
  return boxes;
}

std::vector<Tensor> executeWhole(const LocalCall &c) {
  std::vector<Tensor> whole =
      c.run(c.view.attrs, c.operands, c.view.resultShapes);
  std::vector<Tensor> out;
  for (size_t k = 0; k < whole.size(); ++k)
    out.push_back(crop(Block{Box::whole(c.view.resultShapes[k]), whole[k]},
                       c.resultBoxes[k]));
  return out;
}

//===----------------------------------------------------------------------===//
// Elementwise (numpy broadcasting) and broadcast_to
//===----------------------------------------------------------------------===//

/// The part of `result` (a box of a tensor of rank >= shape's) an operand of
/// `shape` supplies: right-aligned, a size-1 dimension broadcast from [0, 1).
Box projectBroadcast(const Box &result, const Shape &shape) {
  Box b = Box::whole(shape);
  size_t lead = result.rank() - shape.size();
  for (size_t j = 0; j < shape.size(); ++j) {
    if (shape[j] == 1)
      continue;
    b.lo[j] = result.lo[lead + j];
    b.hi[j] = result.hi[lead + j];
  }
  return b;
}

std::vector<Box> elementwiseRegions(const OpView &v,
                                    const std::vector<Box> &r) {
  std::vector<Box> boxes;
  for (const Shape &s : v.operandShapes) {
    if (s.size() > r[0].rank())
      throw Error(v.op + ": operand " + shapeToString(s) +
                  " has a higher rank than the result");
    boxes.push_back(projectBroadcast(r[0], s));
  }
  return boxes;
}

//===----------------------------------------------------------------------===//
// Matmul (numpy: 1-D promotion, broadcast batch dimensions)
//===----------------------------------------------------------------------===//

std::vector<Box> matmulRegions(const OpView &v, const std::vector<Box> &r) {
  const Shape &a = v.operand(0), &b = v.operand(1);
  const Box &res = r[0];
  if (a.empty() || b.empty())
    throw Error("matmul: operands must have rank >= 1");
  // The result is batch + [M if A is a matrix] + [N if B is a matrix].
  size_t tail = (a.size() > 1) + (b.size() > 1);
  if (res.rank() < tail)
    throw Error("matmul: result box " + res.str() + " has too low a rank");
  size_t batchRank = res.rank() - tail;
  Box batch{std::vector<int64_t>(res.lo.begin(), res.lo.begin() + batchRank),
            std::vector<int64_t>(res.hi.begin(), res.hi.begin() + batchRank)};
  auto matrixBox = [&](const Shape &s, bool isA) {
    Box box = Box::whole(s);
    if (s.size() == 1)
      return box; // a vector operand is all K
    Shape batchShape(s.begin(), s.end() - 2);
    if (batchShape.size() > batchRank)
      throw Error("matmul: operand " + shapeToString(s) +
                  " has more batch dimensions than the result");
    Box pb = projectBroadcast(batch, batchShape);
    std::copy(pb.lo.begin(), pb.lo.end(), box.lo.begin());
    std::copy(pb.hi.begin(), pb.hi.end(), box.hi.begin());
    // A's rows (result dim batchRank), B's columns (the result's last dim).
    size_t resultDim = isA ? batchRank : res.rank() - 1;
    size_t dim = isA ? s.size() - 2 : s.size() - 1;
    box.lo[dim] = res.lo[resultDim];
    box.hi[dim] = res.hi[resultDim];
    return box;
  };
  return {matrixBox(a, true), matrixBox(b, false)};
}

//===----------------------------------------------------------------------===//
// Sliding windows (conv, pooling)
//===----------------------------------------------------------------------===//

/// What window positions [outLo, outHi) along one axis read: the input range
/// [lo, hi), and the pads a local run on just that range needs so that its
/// taps line up with the whole op's: padding only where the window leaves
/// the real input, and (for avg_pool's count_include_pad) never beyond the
/// whole op's padded extent.
struct WindowAxis {
  int64_t lo = 0, hi = 0, padBegin = 0, padEnd = 0;
};

WindowAxis windowAxis(int64_t outLo, int64_t outHi, int64_t in, int64_t kernel,
                      int64_t stride, int64_t dilation, int64_t padBegin,
                      int64_t padEnd) {
  // A program's attributes are not trusted: the window's extent is
  // computed wide and refused past 64 bits.
  const __int128 startWide = __int128(outLo) * stride - padBegin;
  const __int128 endWide = __int128(outHi - 1) * stride - padBegin +
                           __int128(kernel - 1) * dilation + 1;
  auto fits = [](__int128 v) {
    return v >= std::numeric_limits<int64_t>::min() &&
           v <= std::numeric_limits<int64_t>::max() - 1;
  };
  if (!fits(startWide) || !fits(endWide) ||
      !fits(__int128(in) + padEnd))
    throw Error("window of kernel " + std::to_string(kernel) + ", stride " +
                std::to_string(stride) + ", dilation " +
                std::to_string(dilation) + " over outputs [" +
                std::to_string(outLo) + ", " + std::to_string(outHi) +
                ") reaches past 64-bit positions");
  const int64_t start = int64_t(startWide);
  const int64_t end = int64_t(endWide);
  int64_t first = std::max<int64_t>(start, 0);
  int64_t last = std::max(first, std::min(end, in));
  WindowAxis w;
  // A window wholly in the end padding reads nothing: an empty range.
  w.lo = std::min(first, in);
  w.hi = w.lo + (last - first);
  // start >= -padBegin, so the local begin pad never exceeds the whole one.
  w.padBegin = first - start;
  w.padEnd = std::max<int64_t>(0, std::min(end, in + padEnd) - last);
  return w;
}

/// A conv's or pool's result box has its input's rank: a program's shapes
/// are not trusted, and the window geometry indexes both by axis.
void requireWindowRanks(const Box &res, const Shape &in) {
  if (res.lo.size() != in.size() || res.hi.size() != in.size())
    throw Error("window: a result of rank " + std::to_string(res.lo.size()) +
                " for an input of rank " + std::to_string(in.size()));
}

/// The window geometry of a conv or pool over spatial dims 2...
struct WindowGeometry {
  std::vector<int64_t> kernel, strides, dilations, pads;
  size_t rank = 0;

  WindowAxis axis(const Box &res, const Shape &in, size_t d) const {
    return windowAxis(res.lo[d + 2], res.hi[d + 2], in[d + 2], kernel[d],
                      strides[d], dilations[d], pads[d], pads[d + rank]);
  }
  /// The input box of `res` with channels [cLo, cHi).
  Box inputBox(const Box &res, const Shape &in, int64_t cLo,
               int64_t cHi) const {
    requireWindowRanks(res, in);
    Box b = Box::whole(in);
    b.lo[0] = res.lo[0];
    b.hi[0] = res.hi[0];
    b.lo[1] = cLo;
    b.hi[1] = cHi;
    for (size_t d = 0; d < rank; ++d) {
      WindowAxis w = axis(res, in, d);
      b.lo[d + 2] = w.lo;
      b.hi[d + 2] = w.hi;
    }
    return b;
  }
  /// The pads of a local run producing `res` ([begins..., ends...]).
  std::vector<int64_t> localPads(const Box &res, const Shape &in) const {
    requireWindowRanks(res, in);
    std::vector<int64_t> p(2 * rank);
    for (size_t d = 0; d < rank; ++d) {
      WindowAxis w = axis(res, in, d);
      p[d] = w.padBegin;
      p[d + rank] = w.padEnd;
    }
    return p;
  }
};

/// `kernel` is the weight's spatial shape (conv) or kernel_shape (pooling).
WindowGeometry windowGeometry(const OpView &v, const Shape &in,
                              std::vector<int64_t> kernel) {
  if (in.size() < 3)
    throw Error(v.op + ": input must have rank >= 3, got " + shapeToString(in));
  WindowGeometry g;
  g.rank = in.size() - 2;
  g.kernel = perAxis(v.op, "kernel", kernel, g.rank, 1);
  g.strides =
      perAxis(v.op, "strides", intsAttr(v.op, v.attrs, "strides"), g.rank, 1);
  g.dilations = perAxis(v.op, "dilations", intsAttr(v.op, v.attrs, "dilations"),
                        g.rank, 1);
  g.pads =
      perAxis(v.op, "pads", intsAttr(v.op, v.attrs, "pads"), 2 * g.rank, 0);
  auto atLeast = [&](const char *what, const std::vector<int64_t> &values,
                     int64_t least) {
    for (int64_t x : values)
      if (x < least)
        throw Error(v.op + ": " + what + " " + std::to_string(x) +
                    " is below " + std::to_string(least));
  };
  atLeast("kernel", g.kernel, 1);
  atLeast("stride", g.strides, 1);
  atLeast("dilation", g.dilations, 1);
  atLeast("pad", g.pads, 0);
  return g;
}

//===--- Conv -------------------------------------------------------------===//

/// Channel bookkeeping of a grouped conv.
struct ConvGroups {
  int64_t groups = 1, inPerGroup = 1, outPerGroup = 1;
  /// The groups output channels [coLo, coHi) lie in.
  int64_t firstGroup(int64_t coLo) const { return coLo / outPerGroup; }
  int64_t endGroup(int64_t coHi) const {
    return (coHi + outPerGroup - 1) / outPerGroup;
  }
};

ConvGroups convGroups(const OpView &v) {
  const Shape &x = v.operand(0), &w = v.operand(1);
  ConvGroups g;
  g.groups = intAttr(v.op, v.attrs, "group");
  if (x.size() < 3 || w.size() != x.size() || g.groups < 1 || x[1] % g.groups ||
      w[0] % g.groups || w[1] * g.groups != x[1])
    throw Error("conv: input " + shapeToString(x) + " and weight " +
                shapeToString(w) + " do not match group " +
                std::to_string(g.groups));
  g.inPerGroup = x[1] / g.groups;
  g.outPerGroup = w[0] / g.groups;
  return g;
}

WindowGeometry convGeometry(const OpView &v) {
  const Shape &w = v.operand(1);
  return windowGeometry(v, v.operand(0),
                        std::vector<int64_t>(w.begin() + 2, w.end()));
}

std::vector<Box> convRegions(const OpView &v, const std::vector<Box> &r) {
  const Box &res = r[0];
  ConvGroups g = convGroups(v);
  requireWindowRanks(res, v.operand(0));
  WindowGeometry geo = convGeometry(v);
  int64_t coLo = res.lo[1], coHi = res.hi[1];
  std::vector<Box> boxes = {geo.inputBox(res, v.operand(0),
                                         g.firstGroup(coLo) * g.inPerGroup,
                                         g.endGroup(coHi) * g.inPerGroup)};
  Box w = Box::whole(v.operand(1));
  w.lo[0] = coLo;
  w.hi[0] = coHi;
  boxes.push_back(w);
  if (v.numOperands() > 2)
    boxes.push_back(Box{{coLo}, {coHi}});
  return boxes;
}

/// Output-channel ranges of [coLo, coHi) that one grouped conv each can
/// compute: a part of a single group, or whole groups. At most three.
std::vector<std::pair<int64_t, int64_t>>
convSegments(const ConvGroups &g, int64_t coLo, int64_t coHi) {
  std::vector<std::pair<int64_t, int64_t>> segs;
  int64_t mg = g.outPerGroup, cur = coLo;
  if (cur % mg) {
    int64_t end = std::min(coHi, (cur / mg + 1) * mg);
    segs.push_back({cur, end});
    cur = end;
  }
  int64_t alignedEnd = coHi - coHi % mg;
  if (alignedEnd > cur) {
    segs.push_back({cur, alignedEnd});
    cur = alignedEnd;
  }
  if (cur < coHi)
    segs.push_back({cur, coHi});
  return segs;
}

std::vector<Tensor> executeConv(const LocalCall &c) {
  const OpView &v = c.view;
  const Box &res = c.resultBoxes[0];
  ConvGroups g = convGroups(v);
  WindowGeometry geo = convGeometry(v);
  const Tensor &x = c.operands[0], &w = c.operands[1];
  bool hasBias = c.operands.size() > 2 && c.operands[2].numElements() > 0;
  AttrMap attrs = v.attrs;
  attrs["pads"] = intsValue(geo.localPads(res, v.operand(0)));

  int64_t coLo = res.lo[1], coHi = res.hi[1];
  int64_t cBase = g.firstGroup(coLo) * g.inPerGroup;
  std::vector<Tensor> parts;
  for (auto [sLo, sHi] : convSegments(g, coLo, coHi)) {
    int64_t ga = g.firstGroup(sLo), gb = g.endGroup(sHi);
    attrs["group"].ints = {gb - ga};
    Box xs = Box::whole(x.shape());
    xs.lo[1] = ga * g.inPerGroup - cBase;
    xs.hi[1] = gb * g.inPerGroup - cBase;
    Box ws = Box::whole(w.shape());
    ws.lo[0] = sLo - coLo;
    ws.hi[0] = sHi - coLo;
    std::vector<Tensor> args = {sub(x, xs), sub(w, ws)};
    if (hasBias)
      args.push_back(sub(c.operands[2], Box{{sLo - coLo}, {sHi - coLo}}));
    Shape shape = res.extents();
    shape[1] = sHi - sLo;
    parts.push_back(c.run(attrs, args, {shape})[0]);
  }
  if (parts.size() == 1)
    return parts;
  return {ref::concat(parts, 1)};
}

//===--- Pooling ----------------------------------------------------------===//

/// The box both results of a pool compute (max_pool's indices share the
/// values' geometry).
Box poolBox(const std::vector<Box> &r) {
  Box b = r[0];
  for (const Box &o : r)
    b = b.unite(o);
  return b;
}

WindowGeometry poolGeometry(const OpView &v) {
  return windowGeometry(v, v.operand(0),
                        intsAttr(v.op, v.attrs, "kernel_shape"));
}

std::vector<Box> poolRegions(const OpView &v, const std::vector<Box> &r) {
  Box res = poolBox(r);
  requireWindowRanks(res, v.operand(0));
  return {poolGeometry(v).inputBox(res, v.operand(0), res.lo[1], res.hi[1])};
}

/// Local flat indices into `localBox`'s values (max_pool's second result)
/// turned into flat indices into the whole tensor of `shape`.
Tensor globalIndices(const Tensor &local, const Box &localBox,
                     const Shape &shape) {
  Tensor out(DType::I64, local.shape());
  Shape ext = localBox.extents();
  std::vector<int64_t> strides = stridesOf(shape);
  const int64_t *src = local.data<int64_t>();
  int64_t *dst = out.mutableData<int64_t>();
  for (int64_t i = 0; i < local.numElements(); ++i) {
    int64_t rest = src[i], global = 0;
    if (rest < 0) {
      dst[i] = rest;
      continue;
    }
    for (size_t d = ext.size(); d-- > 0;) {
      global += (rest % ext[d] + localBox.lo[d]) * strides[d];
      rest /= ext[d];
    }
    dst[i] = global;
  }
  return out;
}

std::vector<Tensor> executePool(const LocalCall &c) {
  const OpView &v = c.view;
  Box res = poolBox(c.resultBoxes);
  WindowGeometry geo = poolGeometry(v);
  AttrMap attrs = v.attrs;
  attrs["pads"] = intsValue(geo.localPads(res, v.operand(0)));
  std::vector<Shape> shapes(c.resultBoxes.size(), res.extents());
  std::vector<Tensor> out = c.run(attrs, c.operands, shapes);
  if (out.size() > 1) {
    Box in = geo.inputBox(res, v.operand(0), res.lo[1], res.hi[1]);
    out[1] = globalIndices(out[1], in, v.operand(0));
  }
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = crop(Block{res, out[k]}, c.resultBoxes[k]);
  return out;
}

//===----------------------------------------------------------------------===//
// Reductions and ops along an axis
//===----------------------------------------------------------------------===//

/// Which input dims a reduce_* or arg_max/arg_min reduces, and keepdims.
std::pair<std::vector<bool>, bool> reducedDims(const OpView &v) {
  size_t rank = v.operand(0).size();
  bool keep = intAttr(v.op, v.attrs, "keepdims") != 0;
  if (v.op == "arg_max" || v.op == "arg_min") {
    std::vector<bool> reduced(rank, false);
    reduced[checkedAxis(v.op, intAttr(v.op, v.attrs, "axis"), rank)] = true;
    return {reduced, keep};
  }
  const std::vector<int64_t> &axes = intsAttr(v.op, v.attrs, "axes");
  // An empty axes list reduces every axis.
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes)
    reduced[checkedAxis(v.op, a, rank)] = true;
  return {reduced, keep};
}

std::vector<Box> reduceRegions(const OpView &v, const std::vector<Box> &r) {
  auto [reduced, keep] = reducedDims(v);
  Box in = Box::whole(v.operand(0));
  size_t k = 0;
  for (size_t d = 0; d < in.rank(); ++d) {
    if (reduced[d]) {
      k += keep;
      continue;
    }
    if (k >= r[0].rank())
      throw Error(v.op + ": result box " + r[0].str() + " has too low a rank");
    in.lo[d] = r[0].lo[k];
    in.hi[d] = r[0].hi[k];
    ++k;
  }
  return {in};
}

/// softmax, log_softmax, hardmax, cumsum: the axis whole.
std::vector<Box> axisRegions(const OpView &v, const std::vector<Box> &r) {
  int64_t axis =
      checkedAxis(v.op, intAttr(v.op, v.attrs, "axis"), v.operand(0).size());
  Box in = r[0];
  in.lo[axis] = 0;
  in.hi[axis] = v.operand(0)[axis];
  return {in};
}

std::vector<Tensor> executeAxis(const LocalCall &c) {
  return runAndCrop(c, axisRegions(c.view, c.resultBoxes)[0]);
}

//===----------------------------------------------------------------------===//
// Normalisations
//===----------------------------------------------------------------------===//

/// The box's channel range (dim 1) as a box of a per-channel operand.
Box channelsOf(const Box &res) { return Box{{res.lo[1]}, {res.hi[1]}}; }

std::vector<Box> batchNormRegions(const OpView &v, const std::vector<Box> &r) {
  if (r[0].rank() < 2)
    throw Error("batch_norm: input must have rank >= 2");
  std::vector<Box> boxes = {r[0]};
  for (size_t k = 1; k < v.numOperands(); ++k)
    boxes.push_back(channelsOf(r[0]));
  return boxes;
}

/// The box layer_norm computes for `res`: the normalised axes whole.
Box layerNormBox(const OpView &v, const Box &res) {
  size_t axis =
      checkedAxis(v.op, intAttr(v.op, v.attrs, "axis"), v.operand(0).size());
  return wholeFrom(res, v.operand(0), axis);
}

std::vector<Box> layerNormRegions(const OpView &v, const std::vector<Box> &r) {
  // Scale and bias broadcast over the normalised axes only: needed whole.
  std::vector<Box> boxes = {layerNormBox(v, r[0])};
  for (size_t k = 1; k < v.numOperands(); ++k)
    boxes.push_back(Box::whole(v.operand(k)));
  return boxes;
}

std::vector<Tensor> executeLayerNorm(const LocalCall &c) {
  return runAndCrop(c, layerNormBox(c.view, c.resultBoxes[0]));
}

std::vector<Box> instanceNormRegions(const OpView &v,
                                     const std::vector<Box> &r) {
  if (r[0].rank() < 2)
    throw Error("instance_norm: input must have rank >= 2");
  std::vector<Box> boxes = {wholeFrom(r[0], v.operand(0), 2)};
  for (size_t k = 1; k < v.numOperands(); ++k)
    boxes.push_back(channelsOf(r[0]));
  return boxes;
}

std::vector<Tensor> executeInstanceNorm(const LocalCall &c) {
  return runAndCrop(c, wholeFrom(c.resultBoxes[0], c.view.operand(0), 2));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

std::vector<Box> transposeRegions(const OpView &v, const std::vector<Box> &r) {
  const std::vector<int64_t> &perm = intsAttr(v.op, v.attrs, "perm");
  Box in = Box::whole(v.operand(0));
  if (perm.size() != in.rank() || r[0].rank() != in.rank())
    throw Error("transpose: perm does not match rank " +
                std::to_string(in.rank()));
  // Output axis i is input axis perm[i].
  for (size_t i = 0; i < perm.size(); ++i) {
    size_t d = checkedAxis(v.op, perm[i], in.rank());
    in.lo[d] = r[0].lo[i];
    in.hi[d] = r[0].hi[i];
  }
  return {in};
}

/// Gather along `axis`: the result is data[:axis] + indices + data[axis+1:].
/// Data needs the box's dimensions outside the indices' and its whole axis
/// (an index may point anywhere along it); the indices their part of the
/// box.
std::vector<Box> gatherRegions(const OpView &v, const std::vector<Box> &r) {
  const Shape &data = v.operand(0);
  const Shape &indices = v.operand(1);
  const size_t axis = checkedAxis(v.op, intAttr(v.op, v.attrs, "axis"),
                                  data.size());
  const size_t k = indices.size();
  if (r[0].rank() != data.size() + k - 1)
    throw Error("gather: result rank " + std::to_string(r[0].rank()) +
                " does not match its operands");
  Box d = Box::whole(data), i = Box::whole(indices);
  for (size_t a = 0; a < axis; ++a) {
    d.lo[a] = r[0].lo[a];
    d.hi[a] = r[0].hi[a];
  }
  for (size_t a = 0; a < k; ++a) {
    i.lo[a] = r[0].lo[axis + a];
    i.hi[a] = r[0].hi[axis + a];
  }
  for (size_t a = axis + 1; a < data.size(); ++a) {
    d.lo[a] = r[0].lo[a + k - 1];
    d.hi[a] = r[0].hi[a + k - 1];
  }
  return {d, i};
}

/// Concat along `axis`: operand i holds result rows [off_i, off_i + len_i)
/// of the axis; a result box needs of each operand its rows in the box
/// (none for an operand outside it) and the box's other dimensions.
std::vector<Box> concatRegions(const OpView &v, const std::vector<Box> &r) {
  const size_t axis = checkedAxis(v.op, intAttr(v.op, v.attrs, "axis"),
                                  r[0].rank());
  // Every operand has the result's rank and its sizes off the axis, and
  // their sizes along it sum to the result's.
  const Shape &out = v.resultShapes.at(0);
  int64_t total = 0;
  for (size_t k = 0; k < v.operandShapes.size(); ++k) {
    const Shape &s = v.operandShapes[k];
    bool fits = s.size() == out.size();
    for (size_t d = 0; fits && d < s.size(); ++d)
      fits = d == axis ? s[d] >= 0 : s[d] == out[d];
    if (!fits)
      throw Error("concat: operand " + std::to_string(k) + " " +
                  shapeToString(s) + " does not fit the result " +
                  shapeToString(out) + " along axis " + std::to_string(axis));
    total += s[axis];
  }
  if (total != out[axis])
    throw Error("concat: the operands' " + std::to_string(total) +
                " along axis " + std::to_string(axis) +
                " are not the result's " + std::to_string(out[axis]));
  std::vector<Box> boxes;
  int64_t offset = 0;
  for (const Shape &s : v.operandShapes) {
    Box b = r[0];
    const int64_t len = s[axis];
    b.lo[axis] = std::clamp<int64_t>(r[0].lo[axis] - offset, 0, len);
    b.hi[axis] = std::clamp<int64_t>(r[0].hi[axis] - offset, b.lo[axis], len);
    boxes.push_back(b);
    offset += len;
  }
  return boxes;
}

/// The concat of the operands' local parts that hold some of the box's
/// rows, in order: exactly the box.
std::vector<Tensor> executeConcat(const LocalCall &c) {
  const size_t axis = checkedAxis(c.view.op, intAttr(c.view.op, c.view.attrs,
                                                     "axis"),
                                  c.resultBoxes[0].rank());
  std::vector<Tensor> pieces;
  for (const Tensor &t : c.operands)
    if (t.dim(static_cast<int64_t>(axis)) > 0)
      pieces.push_back(t);
  if (pieces.size() == 1)
    return pieces;
  if (pieces.empty())
    return {Tensor(c.resultDTypes.at(0), c.resultBoxes[0].extents())};
  return c.run(c.view.attrs, pieces, {c.resultBoxes[0].extents()});
}

/// The input box a reshape's result box `r` needs when it is one block
/// of the input's rows: `r` is whole past some dimension d, the shapes
/// agree before d, and input dimension d is k times result dimension d
/// with the inner elements matching (heads cut out of a hidden dimension,
/// [1, T, 768] -> [1, T, 12, 64]: k = 64; k = 1 where d itself is kept).
/// std::nullopt for any other box.
std::optional<Box> reshapeBlock(const OpView &v, const Box &r) {
  const Shape &in = v.operand(0), &out = v.resultShapes.at(0);
  // d: the last dimension the box cuts (everything after it whole).
  int64_t d = -1;
  for (size_t k = 0; k < r.rank(); ++k)
    if (r.lo[k] != 0 || r.hi[k] != out[k])
      d = static_cast<int64_t>(k);
  if (d < 0)
    return Box::whole(in);
  if (d >= static_cast<int64_t>(in.size()) || out[d] <= 0 ||
      in[d] % out[d] != 0)
    return std::nullopt;
  for (int64_t k = 0; k < d; ++k)
    if (in[k] != out[k])
      return std::nullopt;
  const int64_t factor = in[d] / out[d];
  int64_t inner = 1, outInner = 1;
  for (size_t k = d + 1; k < in.size(); ++k)
    inner *= in[k];
  for (size_t k = d + 1; k < out.size(); ++k)
    outInner *= out[k];
  if (inner * factor != outInner)
    return std::nullopt;
  Box b = Box::whole(in);
  for (int64_t k = 0; k < d; ++k) {
    b.lo[k] = r.lo[k];
    b.hi[k] = r.hi[k];
  }
  b.lo[d] = r.lo[d] * factor;
  b.hi[d] = r.hi[d] * factor;
  return b;
}

std::vector<Box> reshapeRegions(const OpView &v, const std::vector<Box> &r) {
  if (std::optional<Box> b = reshapeBlock(v, r[0]))
    return {*b};
  return wholeRegions(v, r);
}

std::vector<Tensor> executeReshape(const LocalCall &c) {
  if (!reshapeBlock(c.view, c.resultBoxes[0]))
    return executeWhole(c);
  return c.runAsIs();
}

/// One sliced axis: result index o reads input start + o * step.
struct SliceAxis {
  int64_t axis, start, step;
};

std::vector<SliceAxis> sliceAxes(const OpView &v) {
  const std::vector<int64_t> &axes = intsAttr(v.op, v.attrs, "axes");
  const std::vector<int64_t> &starts = intsAttr(v.op, v.attrs, "starts");
  std::vector<int64_t> steps =
      perAxis(v.op, "steps", intsAttr(v.op, v.attrs, "steps"), axes.size(), 1);
  if (starts.size() != axes.size())
    throw Error("slice: starts and axes differ in length");
  if (v.resultShapes.empty())
    throw Error("slice: missing result");
  const Shape &in = v.operand(0), &res = v.resultShapes[0];
  if (in.size() != res.size())
    throw Error("slice: operand and result ranks differ");
  std::vector<SliceAxis> out;
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] == 0)
      throw Error("slice: step must be nonzero");
    int64_t axis = checkedAxis(v.op, axes[i], in.size());
    // Every element the result takes lies inside the input (in 128 bits: a
    // file's start and step are any int64).
    int64_t n = res[axis];
    __int128 last = __int128(starts[i]) + __int128(n - 1) * steps[i];
    if (n > 0 && (starts[i] < 0 || starts[i] >= in[axis] || last < 0 ||
                  last >= in[axis]))
      throw Error("slice: axis " + std::to_string(axis) + ": start " +
                  std::to_string(starts[i]) + " and step " +
                  std::to_string(steps[i]) + " over " + std::to_string(n) +
                  " elements read outside the input's " +
                  std::to_string(in[axis]));
    out.push_back({axis, starts[i], steps[i]});
  }
  return out;
}

std::vector<Box> sliceRegions(const OpView &v, const std::vector<Box> &r) {
  Box in = r[0];
  for (const SliceAxis &s : sliceAxes(v)) {
    int64_t first = s.start + r[0].lo[s.axis] * s.step;
    int64_t last = s.start + (r[0].hi[s.axis] - 1) * s.step;
    in.lo[s.axis] = std::min(first, last);
    in.hi[s.axis] = std::max(first, last) + 1;
  }
  return {in};
}

std::vector<Tensor> executeSlice(const LocalCall &c) {
  Box in = sliceRegions(c.view, c.resultBoxes)[0];
  AttrMap attrs = c.view.attrs;
  std::vector<int64_t> starts, ends;
  // The local input begins at the first element read (ends at the last).
  for (const SliceAxis &s : sliceAxes(c.view)) {
    int64_t n = in.extent(s.axis);
    starts.push_back(s.step > 0 ? 0 : n - 1);
    ends.push_back(s.step > 0 ? n : -1);
  }
  attrs["starts"] = intsValue(starts);
  attrs["ends"] = intsValue(ends);
  return c.run(attrs, c.operands, {c.resultBoxes[0].extents()});
}

/// One axis of a constant pad: result [lo, hi) reads input [inLo, inHi)
/// and pads padBegin before and padEnd after it locally.
struct PadAxis {
  int64_t inLo = 0, inHi = 0, padBegin = 0, padEnd = 0;
};

PadAxis padAxis(int64_t lo, int64_t hi, int64_t dim, int64_t begin) {
  // Result index o reads input o - begin (negative pads crop).
  int64_t first = std::max<int64_t>(lo - begin, 0);
  int64_t last = std::min(hi - begin, dim);
  if (last <= first)
    return {0, 0, hi - lo, 0};
  return {first, last, first - (lo - begin), (hi - begin) - last};
}

std::vector<PadAxis> padAxes(const OpView &v, const Box &res) {
  const Shape &x = v.operand(0);
  const std::vector<int64_t> &pads = intsAttr(v.op, v.attrs, "pads");
  if (pads.size() != 2 * x.size() || res.rank() != x.size())
    throw Error("pad: expected " + std::to_string(2 * x.size()) + " pads");
  std::vector<PadAxis> axes;
  for (size_t d = 0; d < x.size(); ++d)
    axes.push_back(padAxis(res.lo[d], res.hi[d], x[d], pads[d]));
  return axes;
}

std::vector<Box> padRegions(const OpView &v, const std::vector<Box> &r) {
  Box in = Box::whole(v.operand(0));
  std::vector<PadAxis> axes = padAxes(v, r[0]);
  for (size_t d = 0; d < axes.size(); ++d) {
    in.lo[d] = axes[d].inLo;
    in.hi[d] = axes[d].inHi;
  }
  return {in};
}

std::vector<Tensor> executePad(const LocalCall &c) {
  std::vector<PadAxis> axes = padAxes(c.view, c.resultBoxes[0]);
  std::vector<int64_t> pads(2 * axes.size());
  for (size_t d = 0; d < axes.size(); ++d) {
    pads[d] = axes[d].padBegin;
    pads[d + axes.size()] = axes[d].padEnd;
  }
  AttrMap attrs = c.view.attrs;
  attrs["pads"] = intsValue(pads);
  return c.run(attrs, c.operands, {c.resultBoxes[0].extents()});
}

//===----------------------------------------------------------------------===//
// The rule table
//===----------------------------------------------------------------------===//

const BlockRule kFallback = {wholeRegions, executeWhole};

const std::unordered_map<std::string, BlockRule> &ruleTable() {
  static const std::unordered_map<std::string, BlockRule> table = [] {
    std::unordered_map<std::string, BlockRule> t;
    const BlockRule elementwise = {elementwiseRegions, executeAsIs};
    for (const char *name :
         {// Unary.
          "neg", "abs", "sqrt", "reciprocal", "exp", "log", "erf", "tanh",
          "sigmoid", "relu", "sin", "cos", "tan", "asin", "acos", "atan",
          "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "round",
          "sign", "softsign", "softplus", "not", "hard_swish", "is_nan",
          "is_inf", "leaky_relu", "elu", "celu", "selu", "hard_sigmoid",
          "thresholded_relu", "shrink", "cast",
          // Binary and ternary, with broadcasting.
          "add", "sub", "mul", "div", "pow", "min", "max", "and", "or", "xor",
          "equal", "less", "greater", "less_equal", "greater_equal", "prelu",
          "mod", "bit_shift", "select",
          // The same projection: each result element reads one element.
          "broadcast_to"})
      t[name] = elementwise;
    t["matmul"] = {matmulRegions, executeAsIs};
    t["conv"] = {convRegions, executeConv};
    t["max_pool"] = {poolRegions, executePool};
    t["avg_pool"] = {poolRegions, executePool};
    for (const char *name :
         {"reduce_sum", "reduce_mean", "reduce_max", "reduce_min",
          "reduce_prod", "reduce_l1", "reduce_l2", "reduce_sum_square",
          "reduce_log_sum", "reduce_log_sum_exp", "arg_max", "arg_min"})
      t[name] = {reduceRegions, executeAsIs};
    for (const char *name : {"softmax", "log_softmax", "hardmax", "cumsum"})
      t[name] = {axisRegions, executeAxis};
    t["batch_norm"] = {batchNormRegions, executeAsIs};
    t["layer_norm"] = {layerNormRegions, executeLayerNorm};
    t["instance_norm"] = {instanceNormRegions, executeInstanceNorm};
    t["transpose"] = {transposeRegions, executeAsIs};
    t["gather"] = {gatherRegions, executeAsIs};
    t["concat"] = {concatRegions, executeConcat};
    t["reshape"] = {reshapeRegions, executeReshape};
    t["slice"] = {sliceRegions, executeSlice};
    t["pad"] = {padRegions, executePad};
    return t;
  }();
  return table;
}

const BlockRule &ruleOf(const std::string &op, const AttrMap &attrs) {
  auto it = ruleTable().find(op);
  if (it == ruleTable().end())
    return kFallback;
  // Reflect, edge and wrap padding read values far from the result box.
  if (op == "pad" && attrOf(op, attrs, "mode").str != "constant")
    return kFallback;
  return it->second;
}

bool allEmpty(const std::vector<Box> &boxes) {
  return std::all_of(boxes.begin(), boxes.end(),
                     [](const Box &b) { return b.empty(); });
}

/// Checks the result boxes against the result shapes.
void checkResultBoxes(const std::string &op,
                      const std::vector<Shape> &resultShapes,
                      const std::vector<Box> &resultBoxes) {
  if (resultBoxes.size() != resultShapes.size())
    throw Error(op + ": " + std::to_string(resultBoxes.size()) +
                " result boxes for " + std::to_string(resultShapes.size()) +
                " results");
  for (size_t k = 0; k < resultBoxes.size(); ++k)
    if (!Box::whole(resultShapes[k]).contains(resultBoxes[k]))
      throw Error(op + ": result box " + resultBoxes[k].str() +
                  " is not inside result " + std::to_string(k) + " of shape " +
                  shapeToString(resultShapes[k]));
}

} // namespace

bool hasBlockRule(const std::string &op, const AttrMap &attrs) {
  return &ruleOf(op, attrs) != &kFallback;
}

std::vector<Box> operandRegions(const std::string &op, const AttrMap &attrs,
                                const std::vector<Shape> &operandShapes,
                                const std::vector<Shape> &resultShapes,
                                const std::vector<Box> &resultBoxes) {
  checkResultBoxes(op, resultShapes, resultBoxes);
  std::vector<Box> boxes;
  if (allEmpty(resultBoxes)) {
    for (const Shape &s : operandShapes)
      boxes.push_back(Box::none(s.size()));
    return boxes;
  }
  OpView view{op, attrs, operandShapes, resultShapes};
  boxes = ruleOf(op, attrs).regions(view, resultBoxes);
  if (boxes.size() != operandShapes.size())
    throw Error(op + ": block rule gave " + std::to_string(boxes.size()) +
                " operand boxes for " + std::to_string(operandShapes.size()) +
                " operands");
  return boxes;
}

//===----------------------------------------------------------------------===//
// executeOnTile
//===----------------------------------------------------------------------===//

namespace {

using detail::describeOp;
using detail::describeTensor;
using detail::Step;

/// Checks that every block the tile holds has the data its box says.
void checkInputBlocks(
    const std::function<const ProgramTensor &(int32_t)> &tensorOf,
    const std::map<int32_t, Block> &inputs) {
  for (const auto &[id, block] : inputs) {
    const ProgramTensor &t = tensorOf(id);
    if (!Box::whole(t.shape).contains(block.box) ||
        block.data.shape() != block.box.extents())
      throw Error("the tile's block " + block.box.str() + " of " +
                  describeTensor(t) + " " + shapeToString(t.shape) +
                  " holds data of shape " + shapeToString(block.data.shape()));
    if (block.data.dtype() != t.dtype)
      throw Error("the tile's block of " + describeTensor(t) + " is " +
                  dtypeName(block.data.dtype()) + ", the tensor " +
                  dtypeName(t.dtype));
  }
}

/// Step 3 for one op: its result blocks from the values computed so far.
std::vector<Block> runStep(const ProgramOp &op, const Step &s,
                           const std::map<int32_t, Block> &values,
                           ExecMode mode, const FastOptions &fast) {
  std::vector<Block> out;
  if (!s.run)
    return out;
  std::vector<Tensor> args;
  for (size_t k = 0; k < s.operands.size(); ++k) {
    const Box &box = s.operandBoxes[k];
    if (s.operands[k] < 0)
      args.emplace_back();
    else if (box.empty()) // the tile need not hold a block it reads nothing of
      args.emplace_back(s.operandDTypes[k], box.extents());
    else
      args.push_back(crop(values.at(s.operands[k]), box));
  }
  OpView view{op.name, op.attrs, s.operandShapes, s.resultShapes};
  LocalCall call{view, s.resultBoxes, args, s.resultDTypes, mode, fast};
  std::vector<Tensor> results = ruleOf(op.name, op.attrs).execute(call);
  for (size_t k = 0; k < results.size(); ++k)
    out.push_back({s.resultBoxes[k], std::move(results[k])});
  return out;
}

} // namespace

std::map<int32_t, Block>
executeOnTile(const std::vector<ProgramOp> &ops,
              const std::function<const ProgramTensor &(int32_t)> &tensorOf,
              const std::map<int32_t, Block> &inputs,
              const std::map<int32_t, Box> &outputBoxes, ExecMode mode,
              const FastOptions &fast) {
  std::map<int32_t, size_t> producer = detail::producers(ops);
  checkInputBlocks(tensorOf, inputs);
  std::vector<Step> steps = detail::planBackward(ops, tensorOf, outputBoxes);
  detail::checkCoverage(
      ops, steps, producer, tensorOf,
      [&](int32_t id) -> const Box * {
        auto it = inputs.find(id);
        return it == inputs.end() ? nullptr : &it->second.box;
      },
      outputBoxes);

  std::map<int32_t, Block> values;
  for (const auto &[id, block] : inputs)
    if (!producer.count(id))
      values.emplace(id, block);
  for (size_t i = 0; i < ops.size(); ++i) {
    std::vector<Block> results;
    try {
      results = runStep(ops[i], steps[i], values, mode, fast);
    } catch (const Error &e) {
      throw Error(describeOp(ops, i) + ": " + e.what());
    }
    for (size_t k = 0; k < results.size(); ++k) {
      int32_t id = ops[i].outputs[k];
      // A tensor stored narrow is rounded as it is written (elementwise, so
      // a block rounds as the whole tensor would).
      if (NumericFormat f = tensorOf(id).storage; f != NumericFormat::F32)
        results[k].data = roundToStorage(results[k].data, f);
      values[id] = std::move(results[k]);
    }
  }

  std::map<int32_t, Block> out;
  for (const auto &[id, box] : outputBoxes) {
    auto it = values.find(id);
    if (box.empty()) {
      out.emplace(id, Block{box, Tensor(tensorOf(id).dtype, box.extents())});
      continue;
    }
    if (it == values.end())
      throw Error("output " + describeTensor(tensorOf(id)) +
                  " is neither a kernel input nor computed by an op");
    out.emplace(id, Block{box, crop(it->second, box)});
  }
  return out;
}

} // namespace loom::rt
