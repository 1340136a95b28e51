//===- DataMovement.cpp - Reference data-movement kernels -----------------===//
//
// Transpose, Concat, Slice, the Gather/Scatter family, Tile, Pad, TopK, Trilu,
// Resize, DepthToSpace, SpaceToDepth and OneHot, with ONNX (opset 17/18)
// semantics. Pure data movement copies element bytes (dtypeSize wide), so it
// is exact for every dtype; ops that compute (scatter reductions, TopK
// ordering) go through visitDType, and Resize computes in double.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace loom::rt::ref {
namespace {

using Ints = std::vector<int64_t>;

/// Copies one element of `size` bytes (1, 2, 4 or 8).
inline void copyElem(char *dst, const char *src, size_t size) {
  switch (size) {
  case 1:
    *dst = *src;
    return;
  case 2:
    std::memcpy(dst, src, 2);
    return;
  case 4:
    std::memcpy(dst, src, 4);
    return;
  default:
    std::memcpy(dst, src, 8);
    return;
  }
}

const char *bytesOf(const Tensor &t) {
  return static_cast<const char *>(t.raw());
}
char *bytesOf(Tensor &t) { return static_cast<char *>(t.mutableRaw()); }

/// Product of shape[begin, end).
int64_t product(const Shape &shape, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < shape.size(); ++i)
    n *= shape[i];
  return n;
}

/// Throws unless 0 <= axis < rank.
void checkAxis(const char *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    fail(op, "axis " + std::to_string(axis) + " out of range for rank " +
                 std::to_string(rank));
}

/// The elements of an integer index tensor as int64; throws for other dtypes.
Ints indexValues(const char *op, const Tensor &t) {
  if (isFloat(t.dtype()) || t.dtype() == DType::Bool)
    fail(op, std::string("indices must have an integer type, got ") +
                 dtypeName(t.dtype()));
  return t.toInts();
}

/// Wraps a negative index into [0, dim); throws when out of range.
int64_t wrapIndex(const char *op, int64_t i, int64_t dim) {
  int64_t w = i < 0 ? i + dim : i;
  if (w < 0 || w >= dim)
    fail(op, "index " + std::to_string(i) + " out of range for dimension " +
                 std::to_string(dim));
  return w;
}

/// Builds a tensor of `outShape` whose element (i0, i1, ...) is
/// x[srcIdx[0][i0], srcIdx[1][i1], ...], or the element whose bytes are
/// `fill` when any of those source indices is -1.
Tensor remap(const Tensor &x, const Shape &outShape,
             const std::vector<Ints> &srcIdx, const char *fill) {
  Tensor out(x.dtype(), outShape);
  size_t esz = dtypeSize(x.dtype());
  Ints strides = stridesOf(x.shape());
  const char *src = bytesOf(x);
  char *dst = bytesOf(out);
  Ints idx(outShape.size(), 0);
  for (int64_t e = 0, n = out.numElements(); e < n; ++e, dst += esz) {
    int64_t off = 0;
    bool isFill = false;
    for (size_t d = 0; d < idx.size() && !isFill; ++d) {
      int64_t s = srcIdx[d][idx[d]];
      isFill = s < 0;
      off += s * strides[d];
    }
    copyElem(dst, isFill ? fill : src + off * esz, esz);
    nextIndex(idx, outShape);
  }
  return out;
}

/// The bytes of `v` converted to one element of `dt`.
std::vector<char> scalarBytes(DType dt, double v) {
  Tensor t(dt, Shape{});
  t.setDouble(0, v);
  return std::vector<char>(bytesOf(t), bytesOf(t) + dtypeSize(dt));
}

//===--- Scatter reductions ----------------------------------------------===//

/// Returns `a` combined with the update `b` under reduction `r`. Integers
/// wrap on overflow; NaN propagates through Max/Min.
template <typename T> T combine(T a, T b, ScatterReduction r) {
  using R = ScatterReduction;
  if (r == R::None)
    return b;
  if constexpr (std::is_same_v<T, bool>) {
    return (r == R::Add || r == R::Max) ? (a || b) : (a && b);
  } else if constexpr (std::is_integral_v<T>) {
    uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
    if (r == R::Add)
      return static_cast<T>(ua + ub);
    if (r == R::Mul)
      return static_cast<T>(ua * ub);
    return r == R::Max ? std::max(a, b) : std::min(a, b);
  } else {
    double x, y;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      x = static_cast<float>(a);
      y = static_cast<float>(b);
    } else {
      x = static_cast<double>(a);
      y = static_cast<double>(b);
    }
    double res = x;
    if (r == R::Add)
      res = x + y;
    else if (r == R::Mul)
      res = x * y;
    else if (r == R::Max)
      res = (y > x || std::isnan(y)) ? y : x;
    else
      res = (y < x || std::isnan(y)) ? y : x;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      return T(static_cast<float>(res));
    else
      return static_cast<T>(res);
  }
}

/// Applies `update` (flat element j of `upd`) to element `i` of `out`.
struct ScatterApplier {
  Tensor &out;
  const Tensor &upd;
  ScatterReduction r;
  void operator()(int64_t i, int64_t j) const {
    visitDType(out.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T *o = out.mutableData<T>();
      o[i] = combine<T>(o[i], upd.data<T>()[j], r);
    });
  }
};

//===--- TopK ------------------------------------------------------------===//

template <typename K> bool isNaNKey(K v) {
  if constexpr (std::is_floating_point_v<K>)
    return std::isnan(v);
  else
    return false;
}

/// Strict order "a ranks above b", with NaN above every number.
template <typename K> bool greaterKey(K a, K b) {
  bool na = isNaNKey(a), nb = isNaNKey(b);
  if (na || nb)
    return na && !nb;
  return a > b;
}

/// TopK over every line of `x` along `axis`, for storage type T.
template <typename T>
void topKTyped(const Tensor &x, int64_t k, int64_t axis, bool largest,
               Tensor &values, Tensor &indices) {
  using K = std::conditional_t<isFloatType<T>(), double, T>;
  int64_t dim = x.dim(axis), outer = product(x.shape(), 0, axis),
          inner = product(x.shape(), axis + 1, x.shape().size());
  const T *src = x.data<T>();
  T *vals = values.mutableData<T>();
  int64_t *idxs = indices.mutableData<int64_t>();
  std::vector<std::pair<K, int64_t>> line(dim);
  auto before = [&](const std::pair<K, int64_t> &a,
                    const std::pair<K, int64_t> &b) {
    bool ab =
        largest ? greaterKey(a.first, b.first) : greaterKey(b.first, a.first);
    bool ba =
        largest ? greaterKey(b.first, a.first) : greaterKey(a.first, b.first);
    return ab || (!ba && a.second < b.second);
  };
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      const T *base = src + o * dim * inner + in;
      for (int64_t j = 0; j < dim; ++j) {
        if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
          line[j] = {static_cast<float>(base[j * inner]), j};
        else
          line[j] = {static_cast<K>(base[j * inner]), j};
      }
      std::partial_sort(line.begin(), line.begin() + k, line.end(), before);
      for (int64_t j = 0; j < k; ++j) {
        int64_t dst = o * k * inner + j * inner + in;
        vals[dst] = base[line[j].second * inner];
        idxs[dst] = line[j].second;
      }
    }
  }
}

//===--- Resize ----------------------------------------------------------===//

/// Per-output-position taps along one axis: `n` (input index, weight) pairs
/// per position, and whether the position takes the extrapolation value.
struct AxisTaps {
  int64_t n = 0;
  Ints index;
  std::vector<double> weight;
  std::vector<bool> extrapolated;
};

/// Interpolation coefficients for a fractional position `ratio` in (0, 1]
/// (ONNX reference _nearest_coeffs / _linear_coeffs / _cubic_coeffs).
std::vector<double> resizeCoeffs(const ResizeParams &p, double ratio,
                                 bool isInteger) {
  if (p.mode == "nearest") {
    if (isInteger)
      return {0.0, 1.0};
    const std::string &m = p.nearestMode;
    if (m == "round_prefer_floor")
      return {ratio <= 0.5 ? 1.0 : 0.0, ratio > 0.5 ? 1.0 : 0.0};
    if (m == "round_prefer_ceil")
      return {ratio < 0.5 ? 1.0 : 0.0, ratio >= 0.5 ? 1.0 : 0.0};
    if (m == "floor")
      return {1.0, 0.0};
    return {0.0, 1.0}; // ceil
  }
  if (p.mode == "linear")
    return {1 - ratio, ratio};
  double a = p.cubicCoeffA, r = ratio, s = 1 - ratio;
  return {((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a,
          ((a + 2) * r - (a + 3)) * r * r + 1,
          ((a + 2) * s - (a + 3)) * s * s + 1,
          ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a};
}

/// Maps output coordinate `y` to the input coordinate (ONNX _compute_x_ori).
/// Sets `extrapolated` for tf_crop_and_resize positions outside the input.
double sourceCoord(const ResizeParams &p, double y, double scale, int64_t inW,
                   int64_t outW, double roiStart, double roiEnd,
                   bool &extrapolated) {
  const std::string &m = p.coordinateTransform;
  double outWidth = scale * static_cast<double>(inW);
  double in = static_cast<double>(inW);
  extrapolated = false;
  if (m == "align_corners")
    return outWidth == 1 ? 0.0 : y * (in - 1) / (outWidth - 1);
  if (m == "asymmetric")
    return y / scale;
  if (m == "tf_crop_and_resize") {
    double x = outWidth == 1
                   ? (roiEnd - roiStart) * (in - 1) / 2
                   : y * (roiEnd - roiStart) * (in - 1) / (outWidth - 1);
    x = x + roiStart * (in - 1);
    extrapolated = x < 0 || x > in - 1;
    return x;
  }
  if (m == "pytorch_half_pixel")
    return outWidth == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
  if (m == "half_pixel")
    return (y + 0.5) / scale - 0.5;
  // Opset 11 only: used with nearest mode by TensorFlow's converter.
  if (m == "tf_half_pixel_for_nn")
    return (y + 0.5) / scale;
  // half_pixel_symmetric
  double adjustment = static_cast<double>(outW) / outWidth;
  double offset = in / 2 * (1 - adjustment);
  return offset + (y + 0.5) / scale - 0.5;
}

/// Computes the taps of one axis (ONNX _interpolate_1d_along_axis).
AxisTaps axisTaps(const ResizeParams &p, int64_t inW, int64_t outW,
                  double scale, double roiStart, double roiEnd) {
  AxisTaps t;
  t.n = p.mode == "cubic" ? 4 : 2;
  int64_t pad = (t.n + 1) / 2;
  for (int64_t o = 0; o < outW; ++o) {
    bool extrap;
    double x = sourceCoord(p, static_cast<double>(o), scale, inW, outW,
                           roiStart, roiEnd, extrap);
    double xInt = std::floor(x);
    bool isInteger = x == xInt;
    std::vector<double> c =
        resizeCoeffs(p, isInteger ? 1.0 : x - xInt, isInteger);
    double xPadded = x + static_cast<double>(pad);
    double pPadded = std::floor(xPadded);
    int64_t start = static_cast<int64_t>(pPadded) - t.n / 2 +
                    (xPadded - pPadded == 0 ? 0 : 1) - pad;
    if (p.excludeOutside) {
      double sum = 0;
      for (int64_t j = 0; j < t.n; ++j) {
        if (start + j < 0 || start + j >= inW)
          c[j] = 0;
        sum += c[j];
      }
      for (double &w : c)
        w /= sum == 0 ? 1.0 : sum;
    }
    for (int64_t j = 0; j < t.n; ++j) {
      t.index.push_back(std::clamp<int64_t>(start + j, 0, inW - 1));
      t.weight.push_back(c[j]);
    }
    t.extrapolated.push_back(extrap);
  }
  return t;
}

/// Resizes `data` (shape `shape`, updated) along `axis` with taps `t`.
std::vector<double> resizeAxis(const std::vector<double> &data, Shape &shape,
                               int64_t axis, int64_t outW, const AxisTaps &t,
                               double extrapolationValue) {
  int64_t inW = shape[axis], outer = product(shape, 0, axis),
          inner = product(shape, axis + 1, shape.size());
  std::vector<double> out(static_cast<size_t>(outer * outW * inner), 0.0);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t y = 0; y < outW; ++y) {
      double *dst = out.data() + (o * outW + y) * inner;
      if (t.extrapolated[y]) {
        std::fill(dst, dst + inner, extrapolationValue);
        continue;
      }
      for (int64_t j = 0; j < t.n; ++j) {
        double w = t.weight[y * t.n + j];
        const double *src =
            data.data() + (o * inW + t.index[y * t.n + j]) * inner;
        for (int64_t i = 0; i < inner; ++i)
          dst[i] += w * src[i];
      }
    }
  }
  shape[axis] = outW;
  return out;
}

/// Whether |a - b| <= 1e-9 * max(|a|, |b|) (Python's math.isclose).
bool isClose(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

/// Throws unless the resize parameters are well formed for `x`/`outShape`.
void checkResizeParams(const Tensor &x, const Shape &outShape,
                       const ResizeParams &p) {
  static const char *op = "resize";
  size_t r = x.shape().size();
  if (p.mode != "nearest" && p.mode != "linear" && p.mode != "cubic")
    fail(op, "unknown mode '" + p.mode + "'");
  const std::string &c = p.coordinateTransform;
  if (c != "half_pixel" && c != "pytorch_half_pixel" && c != "align_corners" &&
      c != "asymmetric" && c != "tf_crop_and_resize" &&
      c != "half_pixel_symmetric" && c != "tf_half_pixel_for_nn")
    fail(op, "unknown coordinate_transformation_mode '" + c + "'");
  const std::string &n = p.nearestMode;
  if (n != "round_prefer_floor" && n != "round_prefer_ceil" && n != "floor" &&
      n != "ceil")
    fail(op, "unknown nearest_mode '" + n + "'");
  if (outShape.size() != r)
    fail(op, "output rank " + std::to_string(outShape.size()) +
                 " differs from input rank " + std::to_string(r));
  if (!p.scales.empty() && p.scales.size() != r)
    fail(op, "expected " + std::to_string(r) + " scales, got " +
                 std::to_string(p.scales.size()));
  for (double s : p.scales)
    if (!(s > 0) || !std::isfinite(s))
      fail(op, "scales must be positive and finite");
  if (!p.roi.empty() && p.roi.size() != 2 * r)
    fail(op, "expected " + std::to_string(2 * r) + " roi values, got " +
                 std::to_string(p.roi.size()));
  if (c == "tf_crop_and_resize" && p.roi.empty())
    fail(op, "tf_crop_and_resize needs a roi");
  for (size_t a = 0; a < r; ++a) {
    if (outShape[a] < 0)
      fail(op, "negative output dimension");
    if (x.dim(a) == 0 && outShape[a] > 0)
      fail(op, "cannot resize an empty axis to a non-empty one");
  }
}

/// Converts a double to storage type T the way the ONNX reference's
/// saturate_cast does: integers round half to even and saturate.
template <typename T> T fromDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v))
      return T(0);
    v = std::nearbyint(v);
    if (v <= static_cast<double>(std::numeric_limits<T>::min()))
      return std::numeric_limits<T>::min();
    if (v >= static_cast<double>(std::numeric_limits<T>::max()))
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Transpose, Concat, Slice
//===----------------------------------------------------------------------===//

Tensor transpose(const Tensor &x, const std::vector<int64_t> &perm) {
  int64_t r = x.rank();
  if (static_cast<int64_t>(perm.size()) != r)
    fail("transpose", "perm has " + std::to_string(perm.size()) +
                          " entries for rank " + std::to_string(r));
  std::vector<bool> seen(r, false);
  for (int64_t p : perm) {
    if (p < 0 || p >= r || seen[p])
      fail("transpose", "perm is not a permutation of [0, rank)");
    seen[p] = true;
  }
  Shape outShape(r);
  Ints inStrides = stridesOf(x.shape()), srcStrides(r);
  for (int64_t i = 0; i < r; ++i) {
    outShape[i] = x.dim(perm[i]);
    srcStrides[i] = inStrides[perm[i]];
  }
  Tensor out(x.dtype(), outShape);
  size_t esz = dtypeSize(x.dtype());
  const char *src = bytesOf(x);
  char *dst = bytesOf(out);
  Ints idx(r, 0);
  int64_t off = 0;
  for (int64_t e = 0, n = out.numElements(); e < n; ++e, dst += esz) {
    copyElem(dst, src + off * esz, esz);
    // Advance the output index and the matching source offset together.
    for (int64_t d = r - 1; d >= 0; --d) {
      off += srcStrides[d];
      if (++idx[d] < outShape[d])
        break;
      off -= srcStrides[d] * outShape[d];
      idx[d] = 0;
    }
  }
  return out;
}

Tensor concat(const std::vector<Tensor> &inputs, int64_t axis) {
  if (inputs.empty())
    fail("concat", "needs at least one input");
  const Tensor &first = inputs.front();
  checkAxis("concat", axis, first.rank());
  Shape outShape = first.shape();
  outShape[axis] = 0;
  for (const Tensor &t : inputs) {
    if (t.dtype() != first.dtype())
      fail("concat", "inputs have different dtypes");
    bool compatible = t.rank() == first.rank();
    for (int64_t d = 0; compatible && d < t.rank(); ++d)
      compatible = d == axis || t.dim(d) == first.dim(d);
    if (!compatible)
      fail("concat", "cannot concatenate " + shapeToString(t.shape()) +
                         " with " + shapeToString(first.shape()) +
                         " along axis " + std::to_string(axis));
    outShape[axis] += t.dim(axis);
  }
  Tensor out(first.dtype(), outShape);
  size_t esz = dtypeSize(first.dtype());
  int64_t outer = product(outShape, 0, axis);
  char *dst = bytesOf(out);
  for (int64_t o = 0; o < outer; ++o) {
    for (const Tensor &t : inputs) {
      size_t chunk = product(t.shape(), axis, t.shape().size()) * esz;
      if (chunk)
        std::memcpy(dst, bytesOf(t) + o * chunk, chunk);
      dst += chunk;
    }
  }
  return out;
}

Tensor slice(const Tensor &x, const std::vector<int64_t> &starts,
             const std::vector<int64_t> &ends, const std::vector<int64_t> &axes,
             const std::vector<int64_t> &steps) {
  size_t n = axes.size();
  if (starts.size() != n || ends.size() != n ||
      (!steps.empty() && steps.size() != n))
    fail("slice", "starts, ends, axes and steps must have the same length");
  Shape outShape = x.shape();
  std::vector<Ints> srcIdx(x.rank());
  std::vector<bool> sliced(x.rank(), false);
  for (size_t i = 0; i < n; ++i) {
    int64_t axis = axes[i];
    checkAxis("slice", axis, x.rank());
    if (sliced[axis])
      fail("slice", "axis " + std::to_string(axis) + " repeated");
    sliced[axis] = true;
    int64_t dim = x.dim(axis), step = steps.empty() ? 1 : steps[i];
    int64_t s = starts[i], e = ends[i], count = 0;
    if (step == 0)
      fail("slice", "step must be nonzero");
    bool ok = step > 0 ? (s >= 0 && s <= dim && e >= 0 && e <= dim)
                       : (s >= -1 && s <= dim - 1 && e >= -1 && e <= dim - 1);
    if (!ok)
      fail("slice", "start/end not clamped for axis " + std::to_string(axis));
    // ceil(span / |step|) without overflow, even for a step of INT64_MIN.
    uint64_t mag = step > 0 ? uint64_t(step) : 0 - uint64_t(step);
    if (step > 0 && e > s)
      count = int64_t((uint64_t(e - s) - 1) / mag + 1);
    if (step < 0 && s > e)
      count = int64_t((uint64_t(s - e) - 1) / mag + 1);
    outShape[axis] = count;
    for (int64_t j = 0; j < count; ++j)
      srcIdx[axis].push_back(s + j * step);
  }
  for (int64_t d = 0; d < x.rank(); ++d)
    if (!sliced[d]) {
      srcIdx[d].resize(x.dim(d));
      std::iota(srcIdx[d].begin(), srcIdx[d].end(), 0);
    }
  return remap(x, outShape, srcIdx, nullptr);
}

//===----------------------------------------------------------------------===//
// Gather family
//===----------------------------------------------------------------------===//

Tensor gather(const Tensor &x, const Tensor &indices, int64_t axis) {
  checkAxis("gather", axis, x.rank());
  Ints idx = indexValues("gather", indices);
  Shape outShape(x.shape().begin(), x.shape().begin() + axis);
  outShape.insert(outShape.end(), indices.shape().begin(),
                  indices.shape().end());
  outShape.insert(outShape.end(), x.shape().begin() + axis + 1,
                  x.shape().end());
  int64_t dim = x.dim(axis), outer = product(x.shape(), 0, axis);
  size_t chunk =
      product(x.shape(), axis + 1, x.shape().size()) * dtypeSize(x.dtype());
  for (int64_t &i : idx)
    i = wrapIndex("gather", i, dim);
  Tensor out(x.dtype(), outShape);
  char *dst = bytesOf(out);
  const char *src = bytesOf(x);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : idx) {
      if (chunk)
        std::memcpy(dst, src + (o * dim + i) * chunk, chunk);
      dst += chunk;
    }
  return out;
}

Tensor gatherElements(const Tensor &x, const Tensor &indices, int64_t axis) {
  checkAxis("gatherElements", axis, x.rank());
  if (indices.rank() != x.rank())
    fail("gatherElements", "indices rank differs from data rank");
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != axis && indices.dim(d) > x.dim(d))
      fail("gatherElements", "indices shape " + shapeToString(indices.shape()) +
                                 " exceeds data shape " +
                                 shapeToString(x.shape()));
  Ints idx = indexValues("gatherElements", indices);
  Ints strides = stridesOf(x.shape());
  Tensor out(x.dtype(), indices.shape());
  size_t esz = dtypeSize(x.dtype());
  const char *src = bytesOf(x);
  char *dst = bytesOf(out);
  Ints pos(x.rank(), 0);
  for (int64_t e = 0; e < out.numElements(); ++e, dst += esz) {
    int64_t i = wrapIndex("gatherElements", idx[e], x.dim(axis));
    int64_t off = offsetOf(pos, strides) + (i - pos[axis]) * strides[axis];
    copyElem(dst, src + off * esz, esz);
    nextIndex(pos, indices.shape());
  }
  return out;
}

Tensor gatherND(const Tensor &x, const Tensor &indices, int64_t batchDims) {
  int64_t r = x.rank(), q = indices.rank();
  if (q < 1 || r < 1)
    fail("gatherND", "data and indices must have rank >= 1");
  if (batchDims < 0 || batchDims >= std::min(q, r))
    fail("gatherND", "batch_dims out of range");
  for (int64_t d = 0; d < batchDims; ++d)
    if (x.dim(d) != indices.dim(d))
      fail("gatherND", "batch dimensions of data and indices differ");
  int64_t last = indices.dim(q - 1);
  if (last < 1 || last > r - batchDims)
    fail("gatherND", "indices.shape[-1] must be in [1, rank - batch_dims]");
  Ints idx = indexValues("gatherND", indices);
  Shape outShape(indices.shape().begin(), indices.shape().end() - 1);
  outShape.insert(outShape.end(), x.shape().begin() + batchDims + last,
                  x.shape().end());
  Tensor out(x.dtype(), outShape);
  size_t esz = dtypeSize(x.dtype());
  Ints strides = stridesOf(x.shape());
  int64_t batches = product(x.shape(), 0, batchDims);
  int64_t tuples = product(indices.shape(), batchDims, q - 1);
  int64_t batchStride = product(x.shape(), batchDims, r);
  size_t chunk = product(x.shape(), batchDims + last, r) * esz;
  const char *src = bytesOf(x);
  char *dst = bytesOf(out);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t t = 0; t < tuples; ++t) {
      const int64_t *tuple = idx.data() + (b * tuples + t) * last;
      int64_t off = b * batchStride;
      for (int64_t j = 0; j < last; ++j)
        off += wrapIndex("gatherND", tuple[j], x.dim(batchDims + j)) *
               strides[batchDims + j];
      if (chunk)
        std::memcpy(dst, src + off * esz, chunk);
      dst += chunk;
    }
  return out;
}

//===----------------------------------------------------------------------===//
// Scatter family
//===----------------------------------------------------------------------===//

Tensor scatterND(const Tensor &x, const Tensor &indices, const Tensor &updates,
                 ScatterReduction r) {
  int64_t rank = x.rank(), q = indices.rank();
  if (q < 1)
    fail("scatterND", "indices must have rank >= 1");
  if (updates.dtype() != x.dtype())
    fail("scatterND", "updates dtype differs from data dtype");
  int64_t k = indices.dim(q - 1);
  if (k < 1 || k > rank)
    fail("scatterND", "indices.shape[-1] must be in [1, rank]");
  Shape updShape(indices.shape().begin(), indices.shape().end() - 1);
  updShape.insert(updShape.end(), x.shape().begin() + k, x.shape().end());
  if (updates.shape() != updShape)
    fail("scatterND", "updates shape " + shapeToString(updates.shape()) +
                          " should be " + shapeToString(updShape));
  Ints idx = indexValues("scatterND", indices);
  Ints strides = stridesOf(x.shape());
  Tensor out = Tensor::fromBytes(x.dtype(), x.shape(), x.raw());
  ScatterApplier apply{out, updates, r};
  int64_t tuples = product(indices.shape(), 0, q - 1);
  int64_t slice = product(x.shape(), k, rank);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < k; ++j)
      off += wrapIndex("scatterND", idx[t * k + j], x.dim(j)) * strides[j];
    for (int64_t s = 0; s < slice; ++s)
      apply(off + s, t * slice + s);
  }
  return out;
}

Tensor scatterElements(const Tensor &x, const Tensor &indices,
                       const Tensor &updates, int64_t axis,
                       ScatterReduction r) {
  checkAxis("scatterElements", axis, x.rank());
  if (updates.dtype() != x.dtype())
    fail("scatterElements", "updates dtype differs from data dtype");
  if (indices.shape() != updates.shape() || indices.rank() != x.rank())
    fail("scatterElements", "indices and updates must have the same shape "
                            "and the rank of data");
  for (int64_t d = 0; d < x.rank(); ++d)
    if (d != axis && indices.dim(d) > x.dim(d))
      fail("scatterElements",
           "indices shape " + shapeToString(indices.shape()) +
               " exceeds data shape " + shapeToString(x.shape()));
  Ints idx = indexValues("scatterElements", indices);
  Ints strides = stridesOf(x.shape());
  Tensor out = Tensor::fromBytes(x.dtype(), x.shape(), x.raw());
  ScatterApplier apply{out, updates, r};
  Ints pos(x.rank(), 0);
  for (int64_t e = 0; e < indices.numElements(); ++e) {
    int64_t i = wrapIndex("scatterElements", idx[e], x.dim(axis));
    apply(offsetOf(pos, strides) + (i - pos[axis]) * strides[axis], e);
    nextIndex(pos, indices.shape());
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Tile, Pad
//===----------------------------------------------------------------------===//

Tensor tile(const Tensor &x, const std::vector<int64_t> &repeats) {
  if (static_cast<int64_t>(repeats.size()) != x.rank())
    fail("tile", "expected " + std::to_string(x.rank()) + " repeats, got " +
                     std::to_string(repeats.size()));
  Shape outShape(x.rank());
  std::vector<Ints> srcIdx(x.rank());
  for (int64_t d = 0; d < x.rank(); ++d) {
    if (repeats[d] < 0)
      fail("tile", "repeats must be non-negative");
    outShape[d] = x.dim(d) * repeats[d];
    for (int64_t o = 0; o < outShape[d]; ++o)
      srcIdx[d].push_back(o % x.dim(d));
  }
  return remap(x, outShape, srcIdx, nullptr);
}

Tensor pad(const Tensor &x, const std::vector<int64_t> &pads, PadMode mode,
           double value) {
  int64_t r = x.rank();
  if (static_cast<int64_t>(pads.size()) != 2 * r)
    fail("pad", "expected " + std::to_string(2 * r) + " pads, got " +
                    std::to_string(pads.size()));
  Shape outShape(r);
  std::vector<Ints> srcIdx(r);
  // Negative pads crop first; the positive ones then pad the cropped range.
  for (int64_t d = 0; d < r; ++d) {
    int64_t begin = pads[d], end = pads[d + r];
    int64_t first = std::max<int64_t>(0, -begin);
    int64_t kept = x.dim(d) - first - std::max<int64_t>(0, -end);
    if (kept < 0)
      fail("pad", "negative pads crop more than dimension " +
                      std::to_string(d) + " holds");
    int64_t pb = std::max<int64_t>(0, begin), pe = std::max<int64_t>(0, end);
    outShape[d] = kept + pb + pe;
    if (kept == 0 && outShape[d] > 0 && mode != PadMode::Constant)
      fail("pad", "cannot pad an empty dimension in non-constant mode");
    for (int64_t o = 0; o < outShape[d]; ++o) {
      int64_t j = o - pb;
      if (j < 0 || j >= kept) {
        switch (mode) {
        case PadMode::Constant:
          j = -1 - first;
          break;
        case PadMode::Edge:
          j = std::clamp<int64_t>(j, 0, kept - 1);
          break;
        case PadMode::Wrap:
          j = ((j % kept) + kept) % kept;
          break;
        case PadMode::Reflect:
          while (kept > 1 && (j < 0 || j >= kept))
            j = j < 0 ? -j : 2 * (kept - 1) - j;
          if (kept == 1)
            j = 0;
          break;
        }
      }
      srcIdx[d].push_back(j + first);
    }
  }
  std::vector<char> fill = scalarBytes(x.dtype(), value);
  return remap(x, outShape, srcIdx, fill.data());
}

//===----------------------------------------------------------------------===//
// TopK, Trilu
//===----------------------------------------------------------------------===//

void topK(const Tensor &x, int64_t k, int64_t axis, bool largest, bool sorted,
          Tensor &values, Tensor &indices) {
  (void)sorted; // Results are always sorted, which satisfies sorted=0 too.
  checkAxis("topK", axis, x.rank());
  if (k < 0 || k > x.dim(axis))
    fail("topK", "k = " + std::to_string(k) + " out of range for dimension " +
                     std::to_string(x.dim(axis)));
  Shape outShape = x.shape();
  outShape[axis] = k;
  values = Tensor(x.dtype(), outShape);
  indices = Tensor(DType::I64, outShape);
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    topKTyped<T>(x, k, axis, largest, values, indices);
  });
}

Tensor trilu(const Tensor &x, int64_t k, bool upper) {
  if (x.rank() < 2)
    fail("trilu", "input must have rank >= 2");
  int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  int64_t mats = product(x.shape(), 0, x.rank() - 2);
  size_t esz = dtypeSize(x.dtype());
  Tensor out(x.dtype(), x.shape()); // Zero-filled.
  const char *src = bytesOf(x);
  char *dst = bytesOf(out);
  for (int64_t m = 0; m < mats; ++m)
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < cols; ++j) {
        bool keep = upper ? j - i >= k : j - i <= k;
        int64_t off = ((m * rows + i) * cols + j) * esz;
        if (keep)
          copyElem(dst + off, src + off, esz);
      }
  return out;
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

Tensor resize(const Tensor &x, const Shape &outShape, const ResizeParams &p) {
  checkResizeParams(x, outShape, p);
  size_t r = x.shape().size();
  Shape shape = x.shape();
  std::vector<double> data(x.numElements());
  for (int64_t i = 0; i < x.numElements(); ++i)
    data[i] = x.getDouble(i);
  for (size_t a = 0; a < r; ++a) {
    int64_t inW = x.dim(a), outW = outShape[a];
    double scale = p.scales.empty()
                       ? (inW ? static_cast<double>(outW) / inW : 1.0)
                       : p.scales[a];
    double roiStart = p.roi.empty() ? 0.0 : p.roi[a];
    double roiEnd = p.roi.empty() ? 1.0 : p.roi[a + r];
    // The ONNX reference skips identity axes (no 0 * NaN from dead taps).
    if (isClose(scale, 1.0) && outW == inW &&
        (p.roi.empty() || (roiStart == 0.0 && isClose(roiEnd, 1.0))))
      continue;
    if (outW == 0 || inW == 0) {
      data.clear();
      shape[a] = outW;
      continue;
    }
    AxisTaps taps = axisTaps(p, inW, outW, scale, roiStart, roiEnd);
    data = resizeAxis(data, shape, a, outW, taps, p.extrapolationValue);
  }
  Tensor out(x.dtype(), outShape);
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *dst = out.mutableData<T>();
    for (int64_t i = 0; i < out.numElements(); ++i)
      dst[i] = fromDouble<T>(data[i]);
  });
  return out;
}

//===----------------------------------------------------------------------===//
// DepthToSpace, SpaceToDepth, OneHot
//===----------------------------------------------------------------------===//

Tensor depthToSpace(const Tensor &x, int64_t blockSize,
                    const std::string &mode) {
  if (x.rank() != 4)
    fail("depthToSpace", "input must have rank 4");
  if (blockSize < 1 || x.dim(1) % (blockSize * blockSize) != 0)
    fail("depthToSpace", "channels " + std::to_string(x.dim(1)) +
                             " not divisible by blocksize^2");
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = blockSize,
          cOut = c / (b * b);
  Tensor t;
  if (mode == "DCR")
    t = transpose(x.reshaped({n, b, b, cOut, h, w}), {0, 3, 4, 1, 5, 2});
  else if (mode == "CRD")
    t = transpose(x.reshaped({n, cOut, b, b, h, w}), {0, 1, 4, 2, 5, 3});
  else
    fail("depthToSpace", "unknown mode '" + mode + "'");
  return t.reshaped({n, cOut, h * b, w * b});
}

Tensor spaceToDepth(const Tensor &x, int64_t blockSize) {
  if (x.rank() != 4)
    fail("spaceToDepth", "input must have rank 4");
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3), b = blockSize;
  if (b < 1 || h % b != 0 || w % b != 0)
    fail("spaceToDepth", "spatial dims " + shapeToString(x.shape()) +
                             " not divisible by blocksize");
  Tensor t =
      transpose(x.reshaped({n, c, h / b, b, w / b, b}), {0, 3, 5, 1, 2, 4});
  return t.reshaped({n, c * b * b, h / b, w / b});
}

Tensor oneHot(const Tensor &indices, int64_t depth, const Tensor &values,
              int64_t axis) {
  if (values.numElements() != 2)
    fail("oneHot", "values must hold exactly [off, on]");
  if (depth < 0)
    fail("oneHot", "depth must be non-negative");
  if (axis < 0 || axis > indices.rank())
    fail("oneHot", "axis " + std::to_string(axis) + " out of range");
  if (indices.dtype() == DType::Bool)
    fail("oneHot", "indices must be numeric");
  Ints idx = indices.toInts();
  Shape outShape = indices.shape();
  outShape.insert(outShape.begin() + axis, depth);
  Tensor out(values.dtype(), outShape);
  size_t esz = dtypeSize(values.dtype());
  const char *off = bytesOf(values), *on = off + esz;
  int64_t outer = product(indices.shape(), 0, axis);
  int64_t inner = product(indices.shape(), axis, indices.shape().size());
  char *dst = bytesOf(out);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = 0; d < depth; ++d)
      for (int64_t i = 0; i < inner; ++i, dst += esz) {
        int64_t v = idx[o * inner + i];
        if (v < 0)
          v += depth;
        copyElem(dst, v == d ? on : off, esz);
      }
  return out;
}

} // namespace loom::rt::ref
