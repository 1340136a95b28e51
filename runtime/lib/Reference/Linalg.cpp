//===- Linalg.cpp - Reference matmul, convolution, pooling, einsum --------===//
//
// Golden-reference kernels for MatMul, Conv, ConvTranspose, MaxPool,
// AveragePool and Einsum (ONNX opset 17 semantics). Inputs are first widened
// to an accumulator type (double for every float dtype, wrapping uint64_t for
// integers), computed with plain loops, and narrowed back to the input dtype.
//
// Convolution lowers each (batch, group) slice to im2col + one matrix product
// so that the innermost loop always runs over contiguous memory; transposed
// convolution is the mirror image (matrix product + col2im scatter).
//
// Optional tensors (Conv/ConvTranspose bias) are absent when
// `t.raw() == nullptr` (a default-constructed Tensor) or when they hold no
// elements.
//
// It is long (over 1,000 lines) because these kernels share the accumulator
// widening, the dtype dispatch and the convolution window at the top; split
// by kernel, each file would repeat them.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::rt::ref {
namespace {

//===----------------------------------------------------------------------===//
// Element access helpers
//===----------------------------------------------------------------------===//

/// The accumulator for T: double for floats; uint64_t for integers, so that
/// sums and products wrap modulo 2^64 (and then modulo T's width) instead of
/// overflowing.
template <typename T>
using Acc = std::conditional_t<isFloatType<T>(), double, uint64_t>;

template <typename T> constexpr bool isHalfLike() {
  return std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
}

/// Widens one element to its accumulator type.
template <typename T> Acc<T> toAcc(T v) {
  if constexpr (isHalfLike<T>())
    return static_cast<double>(static_cast<float>(v));
  else
    return static_cast<Acc<T>>(v);
}

/// Narrows an accumulator back to T (rounding floats, wrapping integers).
template <typename T> T fromAcc(Acc<T> v) {
  if constexpr (isHalfLike<T>())
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

/// All elements of `t` widened to the accumulator type.
template <typename T> std::vector<Acc<T>> loadAcc(const Tensor &t) {
  std::vector<Acc<T>> v(static_cast<size_t>(t.numElements()));
  const T *src = t.data<T>();
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = toAcc<T>(src[i]);
  return v;
}

/// A tensor of `shape` holding `v` narrowed to T.
template <typename T>
Tensor storeAcc(DType dtype, const Shape &shape, const std::vector<Acc<T>> &v) {
  Tensor out(dtype, shape);
  T *dst = out.mutableData<T>();
  for (size_t i = 0; i < v.size(); ++i)
    dst[i] = fromAcc<T>(v[i]);
  return out;
}

/// Calls `f(TypeTag<T>{})` for float dtypes; fails for any other.
template <typename F> Tensor visitFloat(const char *op, DType dt, F &&f) {
  return visitDType(dt, [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (isFloatType<T>())
      return f(tag);
    else
      fail(op, std::string("unsupported element type ") + dtypeName(dt));
  });
}

/// Calls `f(TypeTag<T>{})` for float and integer dtypes; fails for Bool.
template <typename F> Tensor visitNumeric(const char *op, DType dt, F &&f) {
  return visitDType(dt, [&](auto tag) -> Tensor {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, bool>)
      return f(tag);
    else
      fail(op, std::string("unsupported element type ") + dtypeName(dt));
  });
}

/// Fails unless `t` is a present tensor with backing data.
void checkInput(const char *op, const Tensor &t, const char *name) {
  if (t.raw() == nullptr && t.rank() == 0)
    fail(op, std::string("missing input '") + name + "'");
  if (!t.isValid())
    fail(op, std::string("input '") + name + "' has no data");
}

/// True if an optional input is absent: a default-constructed Tensor (null
/// data) or a tensor with no elements.
bool isAbsent(const Tensor &t) {
  return t.raw() == nullptr || t.numElements() == 0;
}

/// Fails unless `a` and `b` have the same dtype.
void checkSameDType(const char *op, const Tensor &a, const Tensor &b) {
  if (a.dtype() != b.dtype())
    fail(op, std::string("element types differ: ") + dtypeName(a.dtype()) +
                 " vs " + dtypeName(b.dtype()));
}

/// Product of `s`, or 1 when empty.
int64_t product(const Shape &s) { return numElementsOf(s); }

/// c[m x n] += a[m x k] * b[k x n]; all row-major and contiguous.
template <typename A>
void gemm(const A *__restrict a, const A *__restrict b, A *__restrict c,
          int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    A *cRow = c + i * n;
    for (int64_t p = 0; p < k; ++p) {
      A aip = a[i * k + p];
      const A *bRow = b + p * n;
      for (int64_t j = 0; j < n; ++j)
        cRow[j] += aip * bRow[j];
    }
  }
}

/// c[m x n] += transpose(a[k x m]) * b[k x n]; all row-major and contiguous.
template <typename A>
void gemmTransA(const A *__restrict a, const A *__restrict b, A *__restrict c,
                int64_t m, int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i) {
    A *cRow = c + i * n;
    for (int64_t p = 0; p < k; ++p) {
      A api = a[p * m + i];
      const A *bRow = b + p * n;
      for (int64_t j = 0; j < n; ++j)
        cRow[j] += api * bRow[j];
    }
  }
}

//===----------------------------------------------------------------------===//
// MatMul
//===----------------------------------------------------------------------===//

/// Numpy-broadcasts batch shapes `a` and `b` into `out`, and gives the stride
/// (in matrices) of each `out` dimension within `a` and `b` (0 if broadcast).
void broadcastBatch(const Shape &a, const Shape &b, Shape &out,
                    std::vector<int64_t> &strideA,
                    std::vector<int64_t> &strideB) {
  size_t r = std::max(a.size(), b.size());
  out.assign(r, 1);
  strideA.assign(r, 0);
  strideB.assign(r, 0);
  std::vector<int64_t> sa = stridesOf(a), sb = stridesOf(b);
  for (size_t i = 0; i < r; ++i) {
    int64_t ia = static_cast<int64_t>(i + a.size()) - static_cast<int64_t>(r);
    int64_t ib = static_cast<int64_t>(i + b.size()) - static_cast<int64_t>(r);
    int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      fail("matmul", "batch dimensions " + shapeToString(a) + " and " +
                         shapeToString(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
    if (da != 1)
      strideA[i] = sa[ia];
    if (db != 1)
      strideB[i] = sb[ib];
  }
}

template <typename T> Tensor matmulImpl(const Tensor &a, const Tensor &b) {
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    fail("matmul",
         "contraction dimensions differ: " + shapeToString(a.shape()) + " x " +
             shapeToString(b.shape()));
  Shape batch;
  std::vector<int64_t> strideA, strideB;
  broadcastBatch(Shape(as.begin(), as.end() - 2),
                 Shape(bs.begin(), bs.end() - 2), batch, strideA, strideB);
  Shape outShape = batch;
  if (a.rank() > 1)
    outShape.push_back(m);
  if (b.rank() > 1)
    outShape.push_back(n);

  std::vector<Acc<T>> av = loadAcc<T>(a), bv = loadAcc<T>(b);
  std::vector<Acc<T>> cv(static_cast<size_t>(product(outShape)), Acc<T>(0));
  int64_t numBatch = product(batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    int64_t offA = offsetOf(idx, strideA) * m * k;
    int64_t offB = offsetOf(idx, strideB) * k * n;
    gemm(av.data() + offA, bv.data() + offB, cv.data() + bi * m * n, m, k, n);
    nextIndex(idx, batch);
  }
  return storeAcc<T>(a.dtype(), outShape, cv);
}

//===----------------------------------------------------------------------===//
// Sliding-window geometry (conv, convTranspose, pooling)
//===----------------------------------------------------------------------===//

/// The spatial part of a sliding-window op: `in` is the data side, `out` the
/// window-position side. A window at output position o covers the input
/// positions o*stride - padBegin + k*dilation for k in [0, kernel).
struct Window {
  size_t rank = 0;
  Shape in, out, kernel;
  std::vector<int64_t> strides, dilations, padBegin, padEnd;
};

/// `v` if it has `n` entries, `n` copies of `dflt` if empty; fails otherwise.
std::vector<int64_t> perAxis(const char *op, const char *what,
                             const std::vector<int64_t> &v, size_t n,
                             int64_t dflt) {
  if (v.empty())
    return std::vector<int64_t>(n, dflt);
  if (v.size() != n)
    fail(op, std::string(what) + " has " + std::to_string(v.size()) +
                 " entries, expected " + std::to_string(n));
  return v;
}

/// Builds a Window with defaults for empty strides/dilations/pads, checking
/// their lengths and signs. `out` is left empty.
Window makeWindow(const char *op, const Shape &in, const Shape &kernel,
                  const std::vector<int64_t> &strides,
                  const std::vector<int64_t> &dilations,
                  const std::vector<int64_t> &pads) {
  Window w;
  w.rank = in.size();
  w.in = in;
  w.kernel = perAxis(op, "kernel", kernel, w.rank, 1);
  w.strides = perAxis(op, "strides", strides, w.rank, 1);
  w.dilations = perAxis(op, "dilations", dilations, w.rank, 1);
  std::vector<int64_t> p = perAxis(op, "pads", pads, 2 * w.rank, 0);
  w.padBegin.assign(p.begin(), p.begin() + w.rank);
  w.padEnd.assign(p.begin() + w.rank, p.end());
  for (size_t d = 0; d < w.rank; ++d) {
    if (w.strides[d] < 1 || w.dilations[d] < 1 || w.kernel[d] < 1)
      fail(op, "kernel, strides and dilations must be positive");
    if (w.padBegin[d] < 0 || w.padEnd[d] < 0)
      fail(op, "pads must be non-negative");
  }
  return w;
}

/// The output spatial shape of a convolution over `w`.
Shape convOutShape(const char *op, const Window &w) {
  Shape out(w.rank);
  for (size_t d = 0; d < w.rank; ++d) {
    int64_t span = w.dilations[d] * (w.kernel[d] - 1) + 1;
    int64_t padded = w.in[d] + w.padBegin[d] + w.padEnd[d];
    if (padded < span)
      fail(op, "kernel is larger than the padded input");
    out[d] = (padded - span) / w.strides[d] + 1;
  }
  return out;
}

/// The spatial part of a caller-resolved output shape, which may be either
/// the full [N, C, D...] shape (checked against n and c) or just [D...].
Shape spatialOutShape(const char *op, const Shape &outShape, size_t rank,
                      int64_t n, int64_t c) {
  if (outShape.size() == rank)
    return outShape;
  if (outShape.size() != rank + 2)
    fail(op, "output shape " + shapeToString(outShape) + " has wrong rank");
  if (outShape[0] != n || outShape[1] != c)
    fail(op, "output shape " + shapeToString(outShape) +
                 " disagrees with batch/channel sizes");
  for (int64_t d : outShape)
    if (d < 0)
      fail(op, "negative output dimension");
  return Shape(outShape.begin() + 2, outShape.end());
}

/// Input coordinate along axis `d` of output position `o`, kernel tap `k`.
inline int64_t tapCoord(const Window &w, size_t d, int64_t o, int64_t k) {
  return o * w.strides[d] - w.padBegin[d] + k * w.dilations[d];
}

/// Calls `fn(kk, o, i)` for every kernel tap and window position of one
/// plane: `kk` is the flat tap index, `o` the flat position in `w.out`, and
/// `i` the flat offset in `w.in` (-1 when the tap falls outside it). The last
/// axis runs innermost so that `o` (and mostly `i`) walk memory contiguously.
template <typename Fn> void forEachTap(const Window &w, Fn &&fn) {
  size_t r = w.rank;
  int64_t last = w.out[r - 1];
  if (product(w.out) == 0)
    return;
  Shape outer(w.out.begin(), w.out.end() - 1);
  std::vector<int64_t> inStrides = stridesOf(w.in);
  std::vector<int64_t> kIdx(r, 0), oIdx(r - 1, 0);
  int64_t numTaps = product(w.kernel), numOuter = product(outer);
  for (int64_t kk = 0; kk < numTaps; ++kk, nextIndex(kIdx, w.kernel)) {
    std::fill(oIdx.begin(), oIdx.end(), 0);
    for (int64_t row = 0; row < numOuter; ++row, nextIndex(oIdx, outer)) {
      int64_t base = 0;
      bool valid = true;
      for (size_t d = 0; d + 1 < r; ++d) {
        int64_t i = tapCoord(w, d, oIdx[d], kIdx[d]);
        valid = valid && i >= 0 && i < w.in[d];
        base += i * inStrides[d];
      }
      for (int64_t j = 0; j < last; ++j) {
        int64_t i = tapCoord(w, r - 1, j, kIdx[r - 1]);
        bool ok = valid && i >= 0 && i < w.in[r - 1];
        fn(kk, row * last + j, ok ? base + i : int64_t(-1));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Conv / ConvTranspose
//===----------------------------------------------------------------------===//

/// Shape checks shared by conv and convTranspose.
void checkConvOperands(const char *op, const Tensor &x, const Tensor &w,
                       const ConvParams &p) {
  checkInput(op, x, "X");
  checkInput(op, w, "W");
  checkSameDType(op, x, w);
  if (x.rank() < 3)
    fail(op, "input must have rank >= 3, got " + shapeToString(x.shape()));
  if (w.rank() != x.rank())
    fail(op, "weight rank differs from input rank: " +
                 shapeToString(w.shape()) + " vs " + shapeToString(x.shape()));
  if (p.group < 1)
    fail(op, "group must be positive");
}

/// Adds bias[c] to every element of channel c of `out` ([N, C, P...]); a
/// no-op if the bias is absent.
template <typename T>
void addBias(const char *op, const Tensor &bias, DType dtype, int64_t n,
             int64_t c, int64_t plane, std::vector<Acc<T>> &out) {
  if (isAbsent(bias))
    return;
  if (bias.dtype() != dtype)
    fail(op, "bias element type differs from input");
  if (bias.rank() != 1 || bias.dim(0) != c)
    fail(op, "bias shape " + shapeToString(bias.shape()) + " should be [" +
                 std::to_string(c) + "]");
  const T *bv = bias.data<T>();
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch) {
      Acc<T> v = toAcc<T>(bv[ch]);
      Acc<T> *dst = out.data() + (b * c + ch) * plane;
      for (int64_t i = 0; i < plane; ++i)
        dst[i] += v;
    }
}

/// Unrolls `cg` input planes of `x` into col[(c * taps + kk) * P + p].
template <typename A>
void im2col(const Window &w, const A *x, int64_t cg, A *col) {
  int64_t inPlane = product(w.in), taps = product(w.kernel);
  int64_t outPlane = product(w.out);
  for (int64_t c = 0; c < cg; ++c) {
    const A *plane = x + c * inPlane;
    A *dst = col + c * taps * outPlane;
    forEachTap(w, [&](int64_t kk, int64_t o, int64_t i) {
      dst[kk * outPlane + o] = i >= 0 ? plane[i] : A(0);
    });
  }
}

/// Scatters col[(m * taps + kk) * P + p] into `mg` planes of `y`; `w` maps
/// positions p (w.out) to output coordinates (w.in).
template <typename A>
void col2im(const Window &w, const A *col, int64_t mg, A *y) {
  int64_t yPlane = product(w.in), taps = product(w.kernel);
  int64_t colPlane = product(w.out);
  for (int64_t m = 0; m < mg; ++m) {
    A *plane = y + m * yPlane;
    const A *src = col + m * taps * colPlane;
    forEachTap(w, [&](int64_t kk, int64_t p, int64_t o) {
      if (o >= 0)
        plane[o] += src[kk * colPlane + p];
    });
  }
}

template <typename T>
Tensor convImpl(const Tensor &x, const Tensor &w, const Tensor &bias,
                const ConvParams &p) {
  const char *op = "conv";
  int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), g = p.group;
  auto [cg, mg] = convGroupChannels(op, x, w, g);
  Window win = makeWindow(op, Shape(x.shape().begin() + 2, x.shape().end()),
                          Shape(w.shape().begin() + 2, w.shape().end()),
                          p.strides, p.dilations, p.pads);
  win.out = convOutShape(op, win);
  Shape outShape = {n, m};
  outShape.insert(outShape.end(), win.out.begin(), win.out.end());

  int64_t inPlane = product(win.in), outPlane = product(win.out);
  int64_t taps = product(win.kernel);
  std::vector<Acc<T>> xv = loadAcc<T>(x), wv = loadAcc<T>(w);
  std::vector<Acc<T>> yv(static_cast<size_t>(n * m * outPlane), 0.0);
  std::vector<Acc<T>> col(static_cast<size_t>(cg * taps * outPlane));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < g; ++gi) {
      im2col(win, xv.data() + (b * c + gi * cg) * inPlane, cg, col.data());
      gemm(wv.data() + gi * mg * cg * taps, col.data(),
           yv.data() + (b * m + gi * mg) * outPlane, mg, cg * taps, outPlane);
    }
  addBias<T>(op, bias, x.dtype(), n, m, outPlane, yv);
  return storeAcc<T>(x.dtype(), outShape, yv);
}

template <typename T>
Tensor convTransposeImpl(const Tensor &x, const Tensor &w, const Tensor &bias,
                         const ConvParams &p, const Shape &outShape) {
  const char *op = "convTranspose";
  int64_t n = x.dim(0), c = x.dim(1), g = p.group;
  if (w.dim(0) != c || c % g)
    fail(op, "weight shape " + shapeToString(w.shape()) +
                 " does not match input channels " + std::to_string(c) +
                 " with group " + std::to_string(g));
  int64_t cg = c / g, mg = w.dim(1), m = mg * g;
  // The window runs from input positions (win.out) to output coordinates
  // (win.in): out = in * stride - padBegin + k * dilation.
  size_t rank = static_cast<size_t>(x.rank() - 2);
  Shape ySpatial = spatialOutShape(op, outShape, rank, n, m);
  Window win =
      makeWindow(op, ySpatial, Shape(w.shape().begin() + 2, w.shape().end()),
                 p.strides, p.dilations, p.pads);
  win.out = Shape(x.shape().begin() + 2, x.shape().end());
  perAxis(op, "output_padding", p.outputPadding, rank, 0);
  Shape fullOut = {n, m};
  fullOut.insert(fullOut.end(), ySpatial.begin(), ySpatial.end());

  int64_t xPlane = product(win.out), yPlane = product(ySpatial);
  int64_t taps = product(win.kernel);
  std::vector<Acc<T>> xv = loadAcc<T>(x), wv = loadAcc<T>(w);
  std::vector<Acc<T>> yv(static_cast<size_t>(n * m * yPlane), 0.0);
  std::vector<Acc<T>> col(static_cast<size_t>(mg * taps * xPlane));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < g; ++gi) {
      std::fill(col.begin(), col.end(), 0.0);
      gemmTransA(wv.data() + gi * cg * mg * taps,
                 xv.data() + (b * c + gi * cg) * xPlane, col.data(), mg * taps,
                 cg, xPlane);
      col2im(win, col.data(), mg, yv.data() + (b * m + gi * mg) * yPlane);
    }
  addBias<T>(op, bias, x.dtype(), n, m, yPlane, yv);
  return storeAcc<T>(x.dtype(), fullOut, yv);
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

/// The pooling window of `x` ([N, C, D...]) with the caller's output shape;
/// `fullOut` receives [N, C, out...].
Window poolWindow(const char *op, const Tensor &x, const PoolParams &p,
                  const Shape &outShape, Shape &fullOut) {
  checkInput(op, x, "X");
  if (x.rank() < 3)
    fail(op, "input must have rank >= 3, got " + shapeToString(x.shape()));
  size_t rank = static_cast<size_t>(x.rank() - 2);
  if (p.kernel.size() != rank)
    fail(op, "kernel_shape has " + std::to_string(p.kernel.size()) +
                 " entries, expected " + std::to_string(rank));
  Window w = makeWindow(op, Shape(x.shape().begin() + 2, x.shape().end()),
                        p.kernel, p.strides, p.dilations, p.pads);
  w.out = spatialOutShape(op, outShape, rank, x.dim(0), x.dim(1));
  fullOut = {x.dim(0), x.dim(1)};
  fullOut.insert(fullOut.end(), w.out.begin(), w.out.end());
  return w;
}

/// The value a max-pool window with no in-bounds element produces.
template <typename T> T lowestValue() {
  if constexpr (isFloatType<T>())
    return fromAcc<T>(-std::numeric_limits<double>::infinity());
  else
    return std::numeric_limits<T>::lowest();
}

/// True if `v` replaces `best` as a window maximum: larger, or NaN (NaN
/// propagates).
template <typename T> bool beats(T v, T best) {
  if constexpr (isFloatType<T>()) {
    double dv = toAcc<T>(v), db = toAcc<T>(best);
    return dv > db || (std::isnan(dv) && !std::isnan(db));
  } else {
    return v > best;
  }
}

template <typename T>
Tensor maxPoolImpl(const Tensor &x, const PoolParams &p, const Shape &outShape,
                   Tensor *indices) {
  Shape fullOut;
  Window w = poolWindow("maxPool", x, p, outShape, fullOut);
  int64_t planes = x.dim(0) * x.dim(1);
  int64_t inPlane = product(w.in), outPlane = product(w.out);
  // Flat input offset (within a plane) of each output's best tap; -1 if none.
  std::vector<int64_t> best(static_cast<size_t>(outPlane));
  Tensor y(x.dtype(), fullOut);
  Tensor idx(DType::I64, indices ? fullOut : Shape{0});
  for (int64_t pl = 0; pl < planes; ++pl) {
    const T *src = x.data<T>() + pl * inPlane;
    std::fill(best.begin(), best.end(), -1);
    forEachTap(w, [&](int64_t, int64_t o, int64_t i) {
      if (i >= 0 && (best[o] < 0 || beats(src[i], src[best[o]])))
        best[o] = i;
    });
    T *dst = y.mutableData<T>() + pl * outPlane;
    for (int64_t o = 0; o < outPlane; ++o) {
      dst[o] = best[o] >= 0 ? src[best[o]] : lowestValue<T>();
      if (indices)
        idx.mutableData<int64_t>()[pl * outPlane + o] =
            best[o] >= 0 ? pl * inPlane + best[o] : -1;
    }
  }
  if (indices)
    *indices = idx;
  return y;
}

/// Number of taps of window position `o` along axis `d` whose coordinate
/// lies in [lo, hi).
int64_t tapsInRange(const Window &w, size_t d, int64_t o, int64_t lo,
                    int64_t hi) {
  int64_t count = 0;
  for (int64_t k = 0; k < w.kernel[d]; ++k) {
    int64_t i = tapCoord(w, d, o, k);
    count += i >= lo && i < hi;
  }
  return count;
}

/// The average-pool divisor of every output position: the number of window
/// taps inside the padded extent [-padBegin, in + padEnd) when counting pads,
/// else the number inside the input [0, in).
std::vector<double> avgPoolDivisors(const Window &w, bool countPad) {
  std::vector<double> div(static_cast<size_t>(product(w.out)), 1.0);
  std::vector<int64_t> oIdx(w.rank, 0);
  for (size_t o = 0; o < div.size(); ++o, nextIndex(oIdx, w.out))
    for (size_t d = 0; d < w.rank; ++d) {
      int64_t lo = countPad ? -w.padBegin[d] : 0;
      int64_t hi = w.in[d] + (countPad ? w.padEnd[d] : 0);
      div[o] *= static_cast<double>(tapsInRange(w, d, oIdx[d], lo, hi));
    }
  return div;
}

template <typename T>
Tensor avgPoolImpl(const Tensor &x, const PoolParams &p,
                   const Shape &outShape) {
  Shape fullOut;
  Window w = poolWindow("avgPool", x, p, outShape, fullOut);
  int64_t planes = x.dim(0) * x.dim(1);
  int64_t inPlane = product(w.in), outPlane = product(w.out);
  std::vector<double> div = avgPoolDivisors(w, p.countIncludePad);
  std::vector<Acc<T>> xv = loadAcc<T>(x);
  std::vector<Acc<T>> yv(static_cast<size_t>(planes * outPlane), 0.0);
  for (int64_t pl = 0; pl < planes; ++pl) {
    const double *src = xv.data() + pl * inPlane;
    double *dst = yv.data() + pl * outPlane;
    forEachTap(w, [&](int64_t, int64_t o, int64_t i) {
      if (i >= 0)
        dst[o] += src[i];
    });
    // A window with no counted element yields 0 (as ONNX Runtime does).
    for (int64_t o = 0; o < outPlane; ++o)
      dst[o] = div[o] > 0 ? dst[o] / div[o] : 0.0;
  }
  return storeAcc<T>(x.dtype(), fullOut, yv);
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// Label ids: 'a'-'z' are 0-25, 'A'-'Z' 26-51, ellipsis axes 52 onwards
/// (right-aligned across operands, as in numpy broadcasting).
constexpr int kEllipsisBase = 52;
constexpr int kEllipsisMark = -1;

/// Parses one einsum term into label ids, with kEllipsisMark for "...".
std::vector<int> parseTerm(const std::string &term) {
  std::vector<int> labels;
  bool sawEllipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    char ch = term[i];
    if (ch >= 'a' && ch <= 'z') {
      labels.push_back(ch - 'a');
    } else if (ch >= 'A' && ch <= 'Z') {
      labels.push_back(26 + (ch - 'A'));
    } else if (term.compare(i, 3, "...") == 0 && !sawEllipsis) {
      sawEllipsis = true;
      labels.push_back(kEllipsisMark);
      i += 2;
    } else {
      fail("einsum", "bad term '" + term + "'");
    }
  }
  return labels;
}

/// Replaces the ellipsis of `labels` by ids for its `count` trailing
/// broadcast axes out of `maxEll`.
std::vector<int> expandEllipsis(const std::vector<int> &labels, int64_t count,
                                int64_t maxEll) {
  std::vector<int> out;
  for (int l : labels) {
    if (l != kEllipsisMark) {
      out.push_back(l);
      continue;
    }
    for (int64_t j = maxEll - count; j < maxEll; ++j)
      out.push_back(kEllipsisBase + static_cast<int>(j));
  }
  return out;
}

/// A parsed einsum: per-operand axis labels, output labels, and the loop
/// labels (output labels first, then summed ones) with their sizes.
struct EinsumPlan {
  std::vector<std::vector<int>> operandLabels;
  std::vector<int> outLabels, loopLabels;
  std::vector<int64_t> labelSize; // By label id; -1 if unused.
};

/// Splits `s` at every `sep`.
std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> parts(1);
  for (char ch : s) {
    if (ch == sep)
      parts.emplace_back();
    else
      parts.back() += ch;
  }
  return parts;
}

/// Records `size` for `label`, allowing size-1 broadcasting.
void bindLabel(EinsumPlan &plan, int label, int64_t size) {
  int64_t &cur = plan.labelSize[label];
  if (cur < 0 || cur == 1)
    cur = size;
  else if (size != cur && size != 1)
    fail("einsum", "inconsistent sizes " + std::to_string(cur) + " and " +
                       std::to_string(size) + " for one label");
}

EinsumPlan planEinsum(const std::string &equation,
                      const std::vector<Tensor> &inputs) {
  size_t arrow = equation.find("->");
  if (arrow == std::string::npos)
    fail("einsum", "equation '" + equation + "' has no '->'");
  std::vector<std::string> terms = split(equation.substr(0, arrow), ',');
  if (terms.size() != inputs.size())
    fail("einsum", "equation has " + std::to_string(terms.size()) +
                       " operands but " + std::to_string(inputs.size()) +
                       " inputs were given");
  std::vector<std::vector<int>> parsed;
  std::vector<int64_t> ellCount;
  int64_t maxEll = 0;
  for (size_t t = 0; t < terms.size(); ++t) {
    parsed.push_back(parseTerm(terms[t]));
    int64_t letters = std::count_if(parsed[t].begin(), parsed[t].end(),
                                    [](int l) { return l != kEllipsisMark; });
    bool hasEll = letters != static_cast<int64_t>(parsed[t].size());
    int64_t ell = inputs[t].rank() - letters;
    if (ell < 0 || (!hasEll && ell != 0))
      fail("einsum", "term '" + terms[t] + "' does not match operand shape " +
                         shapeToString(inputs[t].shape()));
    ellCount.push_back(ell);
    maxEll = std::max(maxEll, ell);
  }
  EinsumPlan plan;
  plan.labelSize.assign(kEllipsisBase + maxEll, -1);
  for (size_t t = 0; t < terms.size(); ++t) {
    plan.operandLabels.push_back(
        expandEllipsis(parsed[t], ellCount[t], maxEll));
    for (size_t d = 0; d < plan.operandLabels[t].size(); ++d)
      bindLabel(plan, plan.operandLabels[t][d], inputs[t].dim(d));
  }
  std::vector<int> out = parseTerm(equation.substr(arrow + 2));
  plan.outLabels = expandEllipsis(out, maxEll, maxEll);
  std::vector<bool> inOutput(plan.labelSize.size(), false);
  for (int l : plan.outLabels) {
    if (plan.labelSize[l] < 0 || inOutput[l])
      fail("einsum", "output label repeated or absent from the inputs in '" +
                         equation + "'");
    inOutput[l] = true;
  }
  plan.loopLabels = plan.outLabels;
  for (size_t l = 0; l < plan.labelSize.size(); ++l)
    if (plan.labelSize[l] >= 0 && !inOutput[l])
      plan.loopLabels.push_back(static_cast<int>(l));
  return plan;
}

/// Stride of every loop label within operand `t` (summing the strides of
/// repeated labels, which walks a diagonal; 0 for broadcast size-1 axes).
std::vector<int64_t> loopStrides(const EinsumPlan &plan, const Tensor &x,
                                 size_t t) {
  std::vector<int64_t> strides = stridesOf(x.shape());
  std::vector<int64_t> result(plan.loopLabels.size(), 0);
  const std::vector<int> &labels = plan.operandLabels[t];
  for (size_t l = 0; l < plan.loopLabels.size(); ++l)
    for (size_t d = 0; d < labels.size(); ++d)
      if (labels[d] == plan.loopLabels[l] && x.dim(d) != 1)
        result[l] += strides[d];
  return result;
}

/// Adds to `sum` the products over operands t of ptr[t][off[t] + j*step[t]]
/// for j in [0, n): the innermost (summed) einsum loop.
template <typename A>
void addInnerProducts(const std::vector<const A *> &ptr,
                      const std::vector<int64_t> &off,
                      const std::vector<int64_t> &step, int64_t n, A &sum) {
  if (ptr.size() == 2) { // The common binary case, kept tight.
    const A *p0 = ptr[0] + off[0], *p1 = ptr[1] + off[1];
    for (int64_t j = 0; j < n; ++j)
      sum += p0[j * step[0]] * p1[j * step[1]];
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    A prod = 1;
    for (size_t t = 0; t < ptr.size(); ++t)
      prod *= ptr[t][off[t] + j * step[t]];
    sum += prod;
  }
}

/// Advances the odometer `idx` over the first `dims` axes of `shape`,
/// keeping each operand offset off[t] = sum_d idx[d] * strides[t][d].
void advanceOdometer(std::vector<int64_t> &idx, const Shape &shape, size_t dims,
                     const std::vector<int64_t> &strides,
                     std::vector<int64_t> &off) {
  size_t numLoop = shape.size();
  for (size_t d = dims; d-- > 0;) {
    for (size_t t = 0; t < off.size(); ++t)
      off[t] += strides[t * numLoop + d];
    if (++idx[d] < shape[d])
      return;
    for (size_t t = 0; t < off.size(); ++t)
      off[t] -= strides[t * numLoop + d] * shape[d];
    idx[d] = 0;
  }
}

/// Runs the loops of `plan`: output labels outermost, summed labels inside,
/// the last summed label (if any) as a tight inner loop.
template <typename T>
Tensor einsumImpl(const EinsumPlan &plan, const std::vector<Tensor> &inputs) {
  size_t numIn = inputs.size(), numLoop = plan.loopLabels.size();
  size_t numOut = plan.outLabels.size();
  Shape loopShape;
  for (int l : plan.loopLabels)
    loopShape.push_back(plan.labelSize[l]);
  Shape outShape(loopShape.begin(), loopShape.begin() + numOut);
  Shape sumShape(loopShape.begin() + numOut, loopShape.end());
  std::vector<std::vector<Acc<T>>> data;
  std::vector<const Acc<T> *> ptr;
  std::vector<int64_t> strides; // strides[t * numLoop + l]
  for (size_t t = 0; t < numIn; ++t) {
    data.push_back(loadAcc<T>(inputs[t]));
    std::vector<int64_t> s = loopStrides(plan, inputs[t], t);
    strides.insert(strides.end(), s.begin(), s.end());
  }
  for (const auto &d : data)
    ptr.push_back(d.data());
  bool hoist = numLoop > numOut;
  int64_t inner = hoist ? loopShape.back() : 1;
  size_t odoDims = hoist ? numLoop - 1 : numLoop;
  std::vector<int64_t> step(numIn, 0);
  for (size_t t = 0; hoist && t < numIn; ++t)
    step[t] = strides[t * numLoop + numLoop - 1];
  int64_t outCount = product(outShape), sumCount = product(sumShape);
  int64_t outerSums = inner ? sumCount / inner : 0;
  std::vector<Acc<T>> out(static_cast<size_t>(outCount), Acc<T>(0));
  std::vector<int64_t> idx(numLoop, 0), off(numIn, 0);
  for (int64_t o = 0; o < outCount; ++o) {
    Acc<T> sum = 0;
    for (int64_t s = 0; s < outerSums; ++s) {
      addInnerProducts(ptr, off, step, inner, sum);
      advanceOdometer(idx, loopShape, odoDims, strides, off);
    }
    out[o] = sum;
  }
  return storeAcc<T>(inputs[0].dtype(), outShape, out);
}


//===----------------------------------------------------------------------===//
// int8 matrix kernels (the quantized anchors of graph-fold-quantized)
//===----------------------------------------------------------------------===//

/// The values of an 8-bit integer tensor minus `zero`, as int32 (exact:
/// an 8-bit value minus an 8-bit zero point fits 9 bits).
std::vector<int32_t> centered8(const char *op, const Tensor &t, int64_t zero,
                               const char *what) {
  if (t.dtype() != DType::I8 && t.dtype() != DType::U8)
    fail(op, std::string(what) + " must be int8 or uint8, got " +
                 dtypeName(t.dtype()));
  int64_t lo = t.dtype() == DType::I8 ? -128 : 0;
  if (zero < lo || zero > lo + 255)
    fail(op, std::string(what) + "'s zero point " + std::to_string(zero) +
                 " is outside its type's range");
  std::vector<int32_t> v(static_cast<size_t>(t.numElements()));
  int32_t z = static_cast<int32_t>(zero);
  if (t.dtype() == DType::I8) {
    const int8_t *p = t.data<int8_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = int32_t(p[i]) - z;
  } else {
    const uint8_t *p = t.data<uint8_t>();
    for (size_t i = 0; i < v.size(); ++i)
      v[i] = int32_t(p[i]) - z;
  }
  return v;
}

/// c[m x n] += a[m x k] * b[k x n] in int64 (exact for any K this side of
/// 2^46), stored back wrapped to int32 by the caller.
void gemmI64(const int32_t *a, const int32_t *b, int64_t *c, int64_t m,
             int64_t k, int64_t n) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p) {
      int64_t av = a[i * k + p];
      if (av == 0)
        continue;
      const int32_t *brow = b + p * n;
      int64_t *crow = c + i * n;
      for (int64_t j = 0; j < n; ++j)
        crow[j] += av * brow[j];
    }
}

/// int64 sums as int32, two's-complement wrapped as ONNX's int32
/// accumulator does.
Tensor storeI32(const Shape &shape, const std::vector<int64_t> &acc) {
  Tensor out(DType::I32, shape);
  int32_t *dst = out.mutableData<int32_t>();
  for (size_t i = 0; i < acc.size(); ++i)
    dst[i] = static_cast<int32_t>(static_cast<uint32_t>(acc[i]));
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

Tensor matmul(const Tensor &a, const Tensor &b) {
  checkInput("matmul", a, "A");
  checkInput("matmul", b, "B");
  checkSameDType("matmul", a, b);
  if (a.rank() < 1 || b.rank() < 1)
    fail("matmul", "operands must have rank >= 1");
  return visitNumeric("matmul", a.dtype(), [&](auto tag) {
    return matmulImpl<typename decltype(tag)::type>(a, b);
  });
}

Tensor conv(const Tensor &x, const Tensor &w, const Tensor &bias,
            const ConvParams &p) {
  checkConvOperands("conv", x, w, p);
  return visitFloat("conv", x.dtype(), [&](auto tag) {
    return convImpl<typename decltype(tag)::type>(x, w, bias, p);
  });
}

Tensor convTranspose(const Tensor &x, const Tensor &w, const Tensor &bias,
                     const ConvParams &p, const Shape &outShape) {
  checkConvOperands("convTranspose", x, w, p);
  return visitFloat("convTranspose", x.dtype(), [&](auto tag) {
    return convTransposeImpl<typename decltype(tag)::type>(x, w, bias, p,
                                                           outShape);
  });
}

Tensor maxPool(const Tensor &x, const PoolParams &p, const Shape &outShape,
               Tensor *indices) {
  return visitNumeric("maxPool", x.dtype(), [&](auto tag) {
    return maxPoolImpl<typename decltype(tag)::type>(x, p, outShape, indices);
  });
}

Tensor avgPool(const Tensor &x, const PoolParams &p, const Shape &outShape) {
  return visitFloat("avgPool", x.dtype(), [&](auto tag) {
    return avgPoolImpl<typename decltype(tag)::type>(x, p, outShape);
  });
}

Tensor einsum(const std::string &equation, const std::vector<Tensor> &inputs) {
  if (inputs.empty())
    fail("einsum", "needs at least one input");
  for (const Tensor &t : inputs) {
    checkInput("einsum", t, "Inputs");
    checkSameDType("einsum", inputs[0], t);
  }
  EinsumPlan plan = planEinsum(equation, inputs);
  return visitNumeric("einsum", inputs[0].dtype(), [&](auto tag) {
    return einsumImpl<typename decltype(tag)::type>(plan, inputs);
  });
}


Tensor qmatmul(const Tensor &a, const Tensor &b, int64_t aZero,
               int64_t bZero) {
  const char *op = "matmul";
  if (a.rank() < 1 || b.rank() < 1)
    fail(op, "operands must have rank >= 1");
  Shape as = a.shape(), bs = b.shape();
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  if (bs[bs.size() - 2] != k)
    fail(op, "contraction dimensions differ: " + shapeToString(a.shape()) +
                 " x " + shapeToString(b.shape()));
  Shape batch;
  std::vector<int64_t> strideA, strideB;
  broadcastBatch(Shape(as.begin(), as.end() - 2),
                 Shape(bs.begin(), bs.end() - 2), batch, strideA, strideB);
  Shape outShape = batch;
  if (a.rank() > 1)
    outShape.push_back(m);
  if (b.rank() > 1)
    outShape.push_back(n);
  std::vector<int32_t> av = centered8(op, a, aZero, "A"),
                       bv = centered8(op, b, bZero, "B");
  std::vector<int64_t> cv(static_cast<size_t>(product(outShape)), 0);
  int64_t numBatch = product(batch);
  std::vector<int64_t> idx(batch.size(), 0);
  for (int64_t bi = 0; bi < numBatch; ++bi) {
    int64_t offA = offsetOf(idx, strideA) * m * k;
    int64_t offB = offsetOf(idx, strideB) * k * n;
    gemmI64(av.data() + offA, bv.data() + offB, cv.data() + bi * m * n, m, k,
            n);
    nextIndex(idx, batch);
  }
  return storeI32(outShape, cv);
}

Tensor qconv(const Tensor &x, const Tensor &w, const Tensor &bias,
             int64_t xZero, int64_t wZero, const ConvParams &p) {
  const char *op = "conv";
  checkInput(op, x, "X");
  checkInput(op, w, "W");
  if (x.rank() < 3 || w.rank() != x.rank())
    fail(op, "input and weight must have the same rank >= 3, got " +
                 shapeToString(x.shape()) + " and " + shapeToString(w.shape()));
  if (p.group < 1)
    fail(op, "group must be positive");
  int64_t n = x.dim(0), c = x.dim(1), m = w.dim(0), g = p.group;
  auto [cg, mg] = convGroupChannels(op, x, w, g);
  Window win = makeWindow(op, Shape(x.shape().begin() + 2, x.shape().end()),
                          Shape(w.shape().begin() + 2, w.shape().end()),
                          p.strides, p.dilations, p.pads);
  win.out = convOutShape(op, win);
  Shape outShape = {n, m};
  outShape.insert(outShape.end(), win.out.begin(), win.out.end());
  int64_t inPlane = product(win.in), outPlane = product(win.out);
  int64_t taps = product(win.kernel);
  // A tap in the padding reads x's zero point: 0 once centered.
  std::vector<int32_t> xv = centered8(op, x, xZero, "X"),
                       wv = centered8(op, w, wZero, "W");
  std::vector<int64_t> yv(static_cast<size_t>(n * m * outPlane), 0);
  std::vector<int32_t> col(static_cast<size_t>(cg * taps * outPlane));
  for (int64_t b = 0; b < n; ++b)
    for (int64_t gi = 0; gi < g; ++gi) {
      im2col(win, xv.data() + (b * c + gi * cg) * inPlane, cg, col.data());
      gemmI64(wv.data() + gi * mg * cg * taps, col.data(),
              yv.data() + (b * m + gi * mg) * outPlane, mg, cg * taps,
              outPlane);
    }
  if (!isAbsent(bias)) {
    if (bias.dtype() != DType::I32 || bias.rank() != 1 || bias.dim(0) != m)
      fail(op, "an int8 conv's bias must be int32 of shape [" +
                   std::to_string(m) + "], got " + dtypeName(bias.dtype()) +
                   " " + shapeToString(bias.shape()));
    const int32_t *bv = bias.data<int32_t>();
    for (int64_t b = 0; b < n; ++b)
      for (int64_t ch = 0; ch < m; ++ch) {
        int64_t *dst = yv.data() + (b * m + ch) * outPlane;
        for (int64_t i = 0; i < outPlane; ++i)
          dst[i] += bv[ch];
      }
  }
  return storeI32(outShape, yv);
}

} // namespace loom::rt::ref
