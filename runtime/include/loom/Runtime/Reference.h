//===- Reference.h - Reference kernels (the golden oracle) ------*- C++ -*-===//
//
// Plain, obviously correct implementations of every graph-dialect op, on host
// tensors. Floats accumulate in fp64. They are the oracle every compiled
// result is checked against, so clarity beats speed here: straightforward
// loops, no clever tricks. Errors (an index out of range, say) throw
// loom::rt::Error with a message that names the problem.
//
// Attribute conventions follow the graph dialect, which is ONNX normalised:
// axes are non-negative, pads are explicit, shapes are static.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_REFERENCE_H
#define LOOM_RUNTIME_REFERENCE_H

#include "loom/Runtime/Tensor.h"

#include <string>
#include <vector>

namespace loom::rt::ref {

//===--- Elementwise ------------------------------------------------------===//

enum class UnaryKind {
  Neg, Abs, Sqrt, Reciprocal, Exp, Log, Erf, Tanh, Sigmoid, Relu, Sin, Cos,
  Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh, Floor, Ceil, Round,
  Sign, Softsign, Softplus, Not, IsNaN, IsInfPos, IsInfNeg, IsInf,
  // Parameterised by alpha/beta/gamma (see UnaryParams).
  LeakyRelu, Elu, Selu, Celu, HardSigmoid, HardSwish, ThresholdedRelu, Shrink,
};
struct UnaryParams {
  double alpha = 0, beta = 0, gamma = 0;
};
/// y = f(x). The result dtype is x's, except IsNaN/IsInf* (Bool).
Tensor unary(UnaryKind kind, const Tensor &x, UnaryParams p = {});

enum class BinaryKind {
  Add, Sub, Mul, Div, Pow, Min, Max, Mod, FMod, And, Or, Xor, Equal, Less,
  Greater, LessEqual, GreaterEqual, PRelu, BitShiftLeft, BitShiftRight,
};
/// Numpy-broadcasting binary op. Comparisons give Bool; Pow's result has the
/// dtype of `a`; other ops need equal dtypes.
Tensor binary(BinaryKind kind, const Tensor &a, const Tensor &b);
/// where(cond, x, y) with broadcasting.
Tensor select(const Tensor &cond, const Tensor &x, const Tensor &y);
/// Broadcast shape of two shapes; throws if incompatible.
Shape broadcastShapes(const Shape &a, const Shape &b);
/// Broadcasts x to `shape` (ONNX Expand after shape resolution).
Tensor broadcastTo(const Tensor &x, const Shape &shape);
/// Element-type conversion (ONNX Cast).
Tensor cast(const Tensor &x, DType to);

//===--- Reductions and normalisations ------------------------------------===//

enum class ReduceKind {
  Sum, Mean, Max, Min, Prod, L1, L2, SumSquare, LogSum, LogSumExp,
};
/// Reduces over `axes` (sorted, non-negative; empty means all axes).
Tensor reduce(ReduceKind kind, const Tensor &x, const std::vector<int64_t> &axes,
              bool keepDims);
/// Index of the max/min along `axis` (Int64 result).
Tensor argMax(const Tensor &x, int64_t axis, bool keepDims, bool selectLast);
Tensor argMin(const Tensor &x, int64_t axis, bool keepDims, bool selectLast);
Tensor softmax(const Tensor &x, int64_t axis);
Tensor logSoftmax(const Tensor &x, int64_t axis);
Tensor hardmax(const Tensor &x, int64_t axis);
/// Inference batch norm over channel axis 1.
Tensor batchNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                 const Tensor &mean, const Tensor &var, double epsilon);
/// Normalises over axes [axis, rank); scale/bias broadcast to those axes.
/// `bias` may be invalid (absent).
Tensor layerNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                 int64_t axis, double epsilon);
/// Normalises each (n, c) over the spatial axes, then scale[c], bias[c].
Tensor instanceNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                    double epsilon);
/// Cumulative sum along `axis`.
Tensor cumSum(const Tensor &x, int64_t axis, bool exclusive, bool reverse);

//===--- Linear algebra, convolution, pooling -----------------------------===//

/// Numpy matmul (batched, broadcasting batch dims, 1-D promotion).
Tensor matmul(const Tensor &a, const Tensor &b);
struct ConvParams {
  std::vector<int64_t> strides, dilations;
  /// [begin_0, ..., begin_n, end_0, ..., end_n] as in ONNX.
  std::vector<int64_t> pads;
  int64_t group = 1;
  /// ConvTranspose only.
  std::vector<int64_t> outputPadding;
};
/// N-d convolution, x: [N, C, D...], w: [M, C/group, K...]; `bias` optional.
Tensor conv(const Tensor &x, const Tensor &w, const Tensor &bias,
            const ConvParams &p);
/// The int8 matrix unit's product: sum (a - aZero) * (b - bZero) with
/// numpy batching, a and b int8 or uint8 (either), the zero points in
/// their types' ranges; accumulated exactly and returned as int32
/// (wrapping as ONNX's int32 accumulator does, which no 8-bit product of
/// a contraction under 2^17 reaches).
Tensor qmatmul(const Tensor &a, const Tensor &b, int64_t aZero,
               int64_t bZero);
/// The int8 convolution: sum (x - xZero) * (w - wZero) over each window
/// (a padded tap reads xZero, so adds 0), plus the int32 `bias` [M] when
/// given; int32 result.
Tensor qconv(const Tensor &x, const Tensor &w, const Tensor &bias,
             int64_t xZero, int64_t wZero, const ConvParams &p);
/// N-d transposed convolution, w: [C, M/group, K...]; the output spatial
/// shape is given (already resolved from output_shape/pads).
Tensor convTranspose(const Tensor &x, const Tensor &w, const Tensor &bias,
                     const ConvParams &p, const Shape &outShape);
struct PoolParams {
  std::vector<int64_t> kernel, strides, dilations, pads;
  bool countIncludePad = false;
};
/// Max/average pooling; the output shape is given (ceil_mode resolved).
/// maxPool also returns the flat argmax indices if `indices` is non-null.
Tensor maxPool(const Tensor &x, const PoolParams &p, const Shape &outShape,
               Tensor *indices = nullptr);
Tensor avgPool(const Tensor &x, const PoolParams &p, const Shape &outShape);
/// Einstein summation over an explicit equation ("ij,jk->ik"); the equation
/// is normalised at import (always has "->", no spaces, ellipsis allowed).
Tensor einsum(const std::string &equation, const std::vector<Tensor> &inputs);

//===--- Data movement ----------------------------------------------------===//

Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm);
Tensor concat(const std::vector<Tensor> &inputs, int64_t axis);
/// starts/ends/steps per axis in `axes`, already clamped as ONNX Slice does.
Tensor slice(const Tensor &x, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
             const std::vector<int64_t> &steps);
Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis);
Tensor gatherElements(const Tensor &x, const Tensor &indices, int64_t axis);
Tensor gatherND(const Tensor &x, const Tensor &indices, int64_t batchDims);
enum class ScatterReduction { None, Add, Mul, Max, Min };
Tensor scatterND(const Tensor &x, const Tensor &indices, const Tensor &updates,
                 ScatterReduction r);
Tensor scatterElements(const Tensor &x, const Tensor &indices,
                       const Tensor &updates, int64_t axis, ScatterReduction r);
Tensor tile(const Tensor &x, const std::vector<int64_t> &repeats);
enum class PadMode { Constant, Reflect, Edge, Wrap };
/// pads as in ONNX: [begin_0..begin_n, end_0..end_n]; may be negative.
Tensor pad(const Tensor &x, const std::vector<int64_t> &pads, PadMode mode,
           double value);
/// Values and Int64 indices of the k largest (or smallest) along `axis`.
void topK(const Tensor &x, int64_t k, int64_t axis, bool largest, bool sorted,
          Tensor &values, Tensor &indices);
Tensor trilu(const Tensor &x, int64_t k, bool upper);
struct ResizeParams {
  std::string mode = "nearest"; // nearest | linear | cubic
  std::string coordinateTransform = "half_pixel";
  std::string nearestMode = "round_prefer_floor";
  double cubicCoeffA = -0.75;
  bool excludeOutside = false;
  double extrapolationValue = 0.0;
  /// Per-axis scale used in the coordinate transform (out/in unless the model
  /// gave scales explicitly).
  std::vector<double> scales;
  /// tf_crop_and_resize only: [start_0..start_n, end_0..end_n].
  std::vector<double> roi;
};
Tensor resize(const Tensor &x, const Shape &outShape, const ResizeParams &p);
/// mode "DCR" or "CRD".
Tensor depthToSpace(const Tensor &x, int64_t blockSize, const std::string &mode);
Tensor spaceToDepth(const Tensor &x, int64_t blockSize);
/// One-hot along `axis` of the output: indices, depth, [off, on] values.
Tensor oneHot(const Tensor &indices, int64_t depth, const Tensor &values,
              int64_t axis);

} // namespace loom::rt::ref

#endif // LOOM_RUNTIME_REFERENCE_H
