//===- ValueDependentConverters.cpp - Ops whose shapes follow values ------===//
//
// Converters of ONNX operators whose output shape depends on the values of
// an input (NonZero, Compress, Unique). Loom compiles static shapes, so that
// input must be a compile-time constant: the result (or the indices it
// selects) is computed here when the model is imported. With `loom eval`
// the inputs given are such constants (ImportOptions::knownInputs); a
// model that computes the input at run time is refused, naming the node.
//
//===----------------------------------------------------------------------===//
#include "ConvertHelpers.h"

#include "loom/Dialect/Graph/IR/Graph.h"

#include <algorithm>
#include <array>
#include <map>
#include <numeric>

using namespace mlir;
using namespace loom::graph;

namespace loom::onnx_import {
namespace {

rt::Tensor int64Tensor(const rt::Shape &shape,
                       const std::vector<int64_t> &values) {
  return rt::Tensor::fromVector(rt::DType::I64, shape, values);
}

// NonZero: the indices of the nonzero elements, one row per axis, in
// row-major order.
Values convertNonZero(NodeContext &nc) {
  rt::Tensor x = nc.requireConstant(0, "the input",
                                    "its nonzero count gives the output shape");
  int64_t rank = static_cast<int64_t>(x.shape().size());
  std::vector<int64_t> flat;
  for (int64_t i = 0; i < x.numElements(); ++i)
    if (x.getDouble(i) != 0)
      flat.push_back(i);
  int64_t count = static_cast<int64_t>(flat.size());
  int64_t rows = std::max<int64_t>(rank, 1);
  std::vector<int64_t> out(rows * count, 0);
  for (int64_t k = 0; k < count; ++k) {
    int64_t rest = flat[k];
    for (int64_t d = rank - 1; d >= 0; --d) {
      out[d * count + k] = rest % x.shape()[d];
      rest /= x.shape()[d];
    }
  }
  return {nc.constant(int64Tensor({rows, count}, out))};
}

// Compress: the slices along `axis` (of the flattened input without one)
// whose condition is true; a condition shorter than the axis drops the
// rest. A gather with the chosen positions as constant indices.
Values convertCompress(NodeContext &nc) {
  Value x = nc.input(0);
  rt::Tensor cond =
      nc.requireConstant(1, "condition", "it gives the output shape");
  if (cond.shape().size() != 1)
    nc.fail("condition must be 1-D");
  auto type = typeOf(x);
  int64_t axis = 0;
  if (nc.hasAttr("axis")) {
    axis = nc.axis(nc.intAttr("axis", 0), type.getRank());
  } else {
    x = nc.reshape(x, {type.getNumElements()});
    type = typeOf(x);
  }
  int64_t dim = type.getDimSize(axis);
  if (cond.numElements() > dim)
    nc.fail("condition has " + std::to_string(cond.numElements()) +
            " values for an axis of " + std::to_string(dim));
  std::vector<int64_t> picked;
  for (int64_t i = 0; i < cond.numElements(); ++i)
    if (cond.getDouble(i) != 0)
      picked.push_back(i);
  int64_t count = static_cast<int64_t>(picked.size());
  SmallVector<int64_t> shape(type.getShape());
  shape[axis] = count;
  return {nc.create<GatherOp>(nc.tensorType(shape, type.getElementType()), x,
                              nc.constant(int64Tensor({count}, picked)),
                              nc.b.getI64IntegerAttr(axis))};
}

// Unique: the distinct elements (or slices along `axis`), sorted or in the
// order they first occur, with the index of each one's first occurrence,
// the index in Y of every element (slice) of X, and the counts. Y is a
// gather of X at the first occurrences.
Values convertUnique(NodeContext &nc) {
  Value xv = nc.input(0);
  rt::Tensor x = nc.requireConstant(
      0, "the input", "its distinct values give the output shape");
  auto type = typeOf(xv);
  bool hasAxis = nc.hasAttr("axis");
  int64_t axis = hasAxis ? nc.axis(nc.intAttr("axis", 0), type.getRank()) : 0;
  bool sorted = nc.intAttr("sorted", 1) != 0;
  if (!hasAxis) {
    xv = nc.reshape(xv, {type.getNumElements()});
    type = typeOf(xv);
  }
  auto shape = type.getShape();
  int64_t dim = shape.empty() ? 1 : shape[axis], outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d)
    outer *= shape[d];
  for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
    inner *= shape[d];
  bool isFloat = rt::isFloat(x.dtype());
  // Slice k, element j: X[o, k, i] with j = o * inner + i.
  auto at = [&](int64_t k, int64_t j) {
    return (j / inner * dim + k) * inner + j % inner;
  };
  // -1, 0 or 1 as slice a sorts before, with or after slice b.
  auto order = [&](int64_t a, int64_t b) {
    for (int64_t j = 0; j < outer * inner; ++j) {
      int64_t p = at(a, j), q = at(b, j);
      if (isFloat ? x.getDouble(p) != x.getDouble(q)
                  : x.getInt(p) != x.getInt(q))
        return (isFloat ? x.getDouble(p) < x.getDouble(q)
                        : x.getInt(p) < x.getInt(q))
                   ? -1
                   : 1;
    }
    return 0;
  };
  // Slices sorted (stably, so each group starts at its first occurrence),
  // then grouped: O(n log n) comparisons, for large constants too.
  std::vector<int64_t> byValue(dim);
  std::iota(byValue.begin(), byValue.end(), 0);
  std::stable_sort(byValue.begin(), byValue.end(),
                   [&](int64_t a, int64_t b) { return order(a, b) < 0; });
  std::vector<int64_t> firstOut, countsOut, group(dim);
  for (int64_t k = 0; k < dim; ++k) {
    if (k == 0 || order(byValue[k - 1], byValue[k]) != 0) {
      firstOut.push_back(byValue[k]);
      countsOut.push_back(0);
    }
    ++countsOut.back();
    group[byValue[k]] = static_cast<int64_t>(firstOut.size()) - 1;
  }
  int64_t n = static_cast<int64_t>(firstOut.size());
  std::vector<int64_t> position(n);
  std::iota(position.begin(), position.end(), 0);
  if (!sorted) {
    // Groups in the order of their first occurrences.
    std::vector<int64_t> byFirst(n);
    std::iota(byFirst.begin(), byFirst.end(), 0);
    std::sort(byFirst.begin(), byFirst.end(),
              [&](int64_t a, int64_t b) { return firstOut[a] < firstOut[b]; });
    std::vector<int64_t> f(n), c(n);
    for (int64_t r = 0; r < n; ++r) {
      position[byFirst[r]] = r;
      f[r] = firstOut[byFirst[r]];
      c[r] = countsOut[byFirst[r]];
    }
    firstOut = f;
    countsOut = c;
  }
  std::vector<int64_t> inverse(dim);
  for (int64_t k = 0; k < dim; ++k)
    inverse[k] = position[group[k]];
  SmallVector<int64_t> yShape(shape);
  yShape[axis] = n;
  Value y = nc.create<GatherOp>(nc.tensorType(yShape, type.getElementType()),
                                xv, nc.constant(int64Tensor({n}, firstOut)),
                                nc.b.getI64IntegerAttr(axis));
  return {y, nc.constant(int64Tensor({n}, firstOut)),
          nc.constant(int64Tensor({dim}, inverse)),
          nc.constant(int64Tensor({n}, countsOut))};
}

// NonMaxSuppression: per batch and class, the boxes scoring above
// score_threshold in descending score order (lower index first on ties),
// each kept unless its IoU with a box already kept exceeds iou_threshold,
// at most max_output_boxes_per_class; rows (batch, class, box).
Values convertNonMaxSuppression(NodeContext &nc) {
  const char *why = "the selected boxes give the output shape";
  rt::Tensor boxes = nc.requireConstant(0, "boxes", why);
  rt::Tensor scores = nc.requireConstant(1, "scores", why);
  auto scalar = [&](size_t i, const char *what) {
    rt::Tensor t = nc.requireConstant(i, what, why);
    if (t.numElements() != 1)
      nc.fail(std::string(what) + " must hold one value");
    return t;
  };
  int64_t maxOut = 0;
  double iouThreshold = 0, scoreThreshold = 0;
  bool hasScoreThreshold = nc.hasInput(4);
  if (nc.hasInput(2))
    maxOut = scalar(2, "max_output_boxes_per_class").getInt(0);
  if (nc.hasInput(3))
    iouThreshold = scalar(3, "iou_threshold").getDouble(0);
  if (hasScoreThreshold)
    scoreThreshold = scalar(4, "score_threshold").getDouble(0);
  bool center = nc.intAttr("center_point_box", 0) != 0;
  const rt::Shape &bs = boxes.shape(), &ss = scores.shape();
  if (bs.size() != 3 || bs[2] != 4 || ss.size() != 3 || ss[0] != bs[0] ||
      ss[2] != bs[1])
    nc.fail("boxes must be [batches, boxes, 4] and scores [batches, "
            "classes, boxes]");
  int64_t batches = bs[0], count = bs[1], classes = ss[1];
  // Corners (ymin, xmin, ymax, xmax) of box i of batch b.
  auto corners = [&](int64_t b, int64_t i) {
    std::array<double, 4> v;
    for (int k = 0; k < 4; ++k)
      v[k] = boxes.getDouble((b * count + i) * 4 + k);
    if (center) // x_center, y_center, width, height
      return std::array<double, 4>{v[1] - v[3] / 2, v[0] - v[2] / 2,
                                   v[1] + v[3] / 2, v[0] + v[2] / 2};
    return std::array<double, 4>{std::min(v[0], v[2]), std::min(v[1], v[3]),
                                 std::max(v[0], v[2]), std::max(v[1], v[3])};
  };
  auto suppresses = [&](int64_t b, int64_t i, int64_t j) {
    auto p = corners(b, i), q = corners(b, j);
    double areaP = (p[2] - p[0]) * (p[3] - p[1]);
    double areaQ = (q[2] - q[0]) * (q[3] - q[1]);
    if (areaP <= 0 || areaQ <= 0)
      return false;
    double h = std::max(0.0, std::min(p[2], q[2]) - std::max(p[0], q[0]));
    double w = std::max(0.0, std::min(p[3], q[3]) - std::max(p[1], q[1]));
    double inter = h * w;
    return inter / (areaP + areaQ - inter) > iouThreshold;
  };
  std::vector<int64_t> rows;
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t c = 0; c < classes; ++c) {
      auto score = [&](int64_t i) {
        return scores.getDouble((b * classes + c) * count + i);
      };
      std::vector<int64_t> candidates;
      for (int64_t i = 0; i < count; ++i)
        if (!hasScoreThreshold || score(i) > scoreThreshold)
          candidates.push_back(i);
      std::stable_sort(
          candidates.begin(), candidates.end(),
          [&](int64_t i, int64_t j) { return score(i) > score(j); });
      std::vector<int64_t> kept;
      for (int64_t i : candidates) {
        if (static_cast<int64_t>(kept.size()) >= maxOut)
          break;
        if (llvm::none_of(kept, [&](int64_t k) { return suppresses(b, k, i); }))
          kept.push_back(i);
      }
      for (int64_t i : kept)
        rows.insert(rows.end(), {b, c, i});
    }
  int64_t n = static_cast<int64_t>(rows.size()) / 3;
  return {nc.constant(int64Tensor({n, 3}, rows))};
}

} // namespace

void addValueDependentConverters(llvm::StringMap<Converter> &t) {
  t["Unique"] = convertUnique;
  t["NonMaxSuppression"] = convertNonMaxSuppression;
  t["NonZero"] = convertNonZero;
  t["Compress"] = convertCompress;
}

} // namespace loom::onnx_import
