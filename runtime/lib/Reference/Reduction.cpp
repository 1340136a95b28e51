//===- Reduction.cpp - Reference reductions and normalisations ------------===//
//
// Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, the normalisations and
// CumSum, with ONNX semantics. Floats accumulate in double; integers are
// computed in their own type, wrapping on overflow.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>

namespace loom::rt::ref {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// acc + v: in double for floats, wrapping for integers.
template <typename C> C accumulate(C acc, C v) {
  if constexpr (std::is_floating_point_v<C>)
    return acc + v;
  else
    return wrapAdd(acc, v);
}

template <typename C> bool isNaNValue(C v) {
  if constexpr (std::is_floating_point_v<C>)
    return std::isnan(v);
  else
    return false;
}

void checkAxis(const char *op, int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    fail(op, "axis " + std::to_string(axis) + " out of range for rank " +
                 std::to_string(rank));
}

void checkFloat(const char *op, const Tensor &x) {
  if (!isFloat(x.dtype()))
    fail(op, std::string("needs a floating-point tensor, got ") +
                 dtypeName(x.dtype()));
}

/// A tensor viewed as [outer, n, inner] around one axis.
struct AxisSplit {
  int64_t outer = 1, n = 1, inner = 1;
  int64_t at(int64_t o, int64_t k, int64_t i) const {
    return (o * n + k) * inner + i;
  }
};

AxisSplit splitAt(const Shape &shape, int64_t axis) {
  AxisSplit s;
  s.n = shape[axis];
  for (int64_t d = 0; d < axis; ++d)
    s.outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d)
    s.inner *= shape[d];
  return s;
}

/// `shape` with `axis` kept as 1 or dropped.
Shape reducedShape(const Shape &shape, int64_t axis, bool keepDims) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (static_cast<int64_t>(d) != axis)
      out.push_back(shape[d]);
    else if (keepDims)
      out.push_back(1);
  }
  return out;
}

/// True if a tensor passed as an optional input means "absent".
bool isAbsent(const Tensor &t) { return !t.isValid() || t.raw() == nullptr; }

/// For every element of `outShape` (row-major), the flat offset of the
/// element of a tensor of shape `in` that numpy broadcasting maps to it.
/// `in` must broadcast to `outShape`.
std::vector<int64_t> broadcastOffsets(const Shape &in, const Shape &outShape) {
  size_t rank = outShape.size();
  std::vector<int64_t> inStrides = stridesOf(in);
  std::vector<int64_t> strides(rank, 0);
  size_t lead = rank - in.size();
  for (size_t d = 0; d < in.size(); ++d)
    strides[lead + d] = in[d] == 1 ? 0 : inStrides[d];
  int64_t n = numElementsOf(outShape);
  std::vector<int64_t> offsets(n);
  if (n == 0)
    return offsets;
  std::vector<int64_t> index(rank, 0);
  int64_t i = 0;
  do {
    offsets[i++] = offsetOf(index, strides);
  } while (nextIndex(index, outShape));
  return offsets;
}

//===--- Reduce -----------------------------------------------------------===//

double maxNaN(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : (a > b ? a : b);
}
double minNaN(double a, double b) {
  return std::isnan(a) || std::isnan(b) ? kNaN : (a < b ? a : b);
}

/// Applies a float reduction to one group of values.
double reduceFloat(ReduceKind kind, const std::vector<double> &v) {
  double acc = 0;
  switch (kind) {
  case ReduceKind::Sum:
  case ReduceKind::Mean:
  case ReduceKind::LogSum:
    for (double x : v)
      acc += x;
    if (kind == ReduceKind::Mean)
      return acc / static_cast<double>(v.size()); // 0/0 = NaN when empty.
    return kind == ReduceKind::LogSum ? std::log(acc) : acc;
  case ReduceKind::Max:
    acc = -kInf;
    for (double x : v)
      acc = maxNaN(acc, x);
    return acc;
  case ReduceKind::Min:
    acc = kInf;
    for (double x : v)
      acc = minNaN(acc, x);
    return acc;
  case ReduceKind::Prod:
    acc = 1;
    for (double x : v)
      acc *= x;
    return acc;
  case ReduceKind::L1:
    for (double x : v)
      acc += std::fabs(x);
    return acc;
  case ReduceKind::L2:
  case ReduceKind::SumSquare:
    for (double x : v)
      acc += x * x;
    return kind == ReduceKind::L2 ? std::sqrt(acc) : acc;
  case ReduceKind::LogSumExp: {
    // Shift by the max for stability; an infinite or NaN max is the answer
    // (and -inf for an empty group).
    double m = reduceFloat(ReduceKind::Max, v);
    if (std::isnan(m) || std::isinf(m))
      return m;
    for (double x : v)
      acc += std::exp(x - m);
    return m + std::log(acc);
  }
  }
  fail("reduce", "internal: unknown reduction");
}

/// Applies an integer reduction to one group of values, in T where exact.
template <typename T> T reduceInt(ReduceKind kind, const std::vector<T> &v) {
  T acc = 0;
  switch (kind) {
  case ReduceKind::Sum:
    for (T x : v)
      acc = wrapAdd(acc, x);
    return acc;
  case ReduceKind::Mean: {
    if (v.empty())
      fail("reduce", "integer mean over zero elements");
    for (T x : v)
      acc = wrapAdd(acc, x);
    // Divide in 64 bits (the count may not fit T); truncates toward zero.
    if constexpr (std::is_signed_v<T>)
      return static_cast<T>(static_cast<int64_t>(acc) /
                            static_cast<int64_t>(v.size()));
    else
      return static_cast<T>(static_cast<uint64_t>(acc) / v.size());
  }
  case ReduceKind::Max:
    acc = std::numeric_limits<T>::lowest();
    for (T x : v)
      acc = x > acc ? x : acc;
    return acc;
  case ReduceKind::Min:
    acc = std::numeric_limits<T>::max();
    for (T x : v)
      acc = x < acc ? x : acc;
    return acc;
  case ReduceKind::Prod:
    acc = 1;
    for (T x : v)
      acc = wrapMul(acc, x);
    return acc;
  case ReduceKind::L1:
    for (T x : v)
      acc = wrapAdd(acc, wrapAbs(x));
    return acc;
  case ReduceKind::SumSquare:
  case ReduceKind::L2:
    for (T x : v)
      acc = wrapAdd(acc, wrapMul(x, x));
    if (kind == ReduceKind::L2)
      return saturate<T>(std::sqrt(static_cast<double>(acc)));
    return acc;
  case ReduceKind::LogSum:
  case ReduceKind::LogSumExp: {
    std::vector<double> d(v.begin(), v.end());
    return saturate<T>(reduceFloat(kind, d));
  }
  }
  fail("reduce", "internal: unknown reduction");
}

/// Bool supports Max (any) and Min (all).
bool reduceBool(ReduceKind kind, const std::vector<bool> &v) {
  if (kind != ReduceKind::Max && kind != ReduceKind::Min)
    fail("reduce", "only max/min are defined on bool tensors");
  bool acc = kind == ReduceKind::Min;
  for (bool x : v)
    acc = kind == ReduceKind::Max ? (acc || x) : (acc && x);
  return acc;
}

//===--- Arg max / min ----------------------------------------------------===//

/// Whether `cand` replaces `best`. NaN counts as the extreme (numpy): the
/// first NaN wins, or the last one with `selectLast`.
template <typename C>
bool isBetter(C cand, C best, bool isMax, bool selectLast) {
  if (isNaNValue(best))
    return selectLast && isNaNValue(cand);
  if (isNaNValue(cand))
    return true;
  if (cand == best)
    return selectLast;
  return isMax ? cand > best : cand < best;
}

/// Index along the axis of the max/min in row (o, i) of `x` viewed as `s`.
template <typename T>
int64_t extremeIndex(const T *p, const AxisSplit &s, int64_t o, int64_t i,
                     bool isMax, bool selectLast) {
  int64_t best = 0;
  for (int64_t k = 1; k < s.n; ++k)
    if (isBetter(load(p, s.at(o, k, i)), load(p, s.at(o, best, i)), isMax,
                 selectLast))
      best = k;
  return best;
}

Tensor argExtreme(const char *op, const Tensor &x, int64_t axis, bool keepDims,
                  bool selectLast, bool isMax) {
  checkAxis(op, axis, x.rank());
  AxisSplit s = splitAt(x.shape(), axis);
  Tensor out(DType::I64, reducedShape(x.shape(), axis, keepDims));
  if (s.n == 0 && out.numElements() > 0)
    fail(op, "cannot take the arg over an empty axis");
  int64_t *po = out.mutableData<int64_t>();
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i)
        po[o * s.inner + i] =
            extremeIndex(x.data<T>(), s, o, i, isMax, selectLast);
  });
  return out;
}

//===--- Softmax ----------------------------------------------------------===//

/// Softmax or log-softmax along `axis`, max-shifted for stability.
Tensor softmaxImpl(const char *op, const Tensor &x, int64_t axis, bool log) {
  checkFloat(op, x);
  checkAxis(op, axis, x.rank());
  AxisSplit s = splitAt(x.shape(), axis);
  Tensor out(x.dtype(), x.shape());
  std::vector<double> row(s.n);
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t i = 0; i < s.inner; ++i) {
      double m = -kInf;
      for (int64_t k = 0; k < s.n; ++k) {
        row[k] = x.getDouble(s.at(o, k, i));
        m = row[k] > m ? row[k] : m;
      }
      double sum = 0;
      for (int64_t k = 0; k < s.n; ++k)
        sum += std::exp(row[k] - m);
      for (int64_t k = 0; k < s.n; ++k) {
        double y =
            log ? row[k] - m - std::log(sum) : std::exp(row[k] - m) / sum;
        out.setDouble(s.at(o, k, i), y);
      }
    }
  }
  return out;
}

/// Mean and (population) variance of `n` values of `x` starting at `base`
/// with step `stride`, in double.
std::pair<double, double> meanVar(const Tensor &x, int64_t base, int64_t n,
                                  int64_t stride) {
  double sum = 0;
  for (int64_t k = 0; k < n; ++k)
    sum += x.getDouble(base + k * stride);
  double mean = sum / static_cast<double>(n);
  double sq = 0;
  for (int64_t k = 0; k < n; ++k) {
    double d = x.getDouble(base + k * stride) - mean;
    sq += d * d;
  }
  return {mean, sq / static_cast<double>(n)};
}

void checkChannelParam(const char *op, const char *what, const Tensor &t,
                       int64_t channels) {
  if (t.numElements() != channels)
    fail(op, std::string(what) + " has " + std::to_string(t.numElements()) +
                 " elements, expected " + std::to_string(channels));
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

Tensor reduce(ReduceKind kind, const Tensor &x,
              const std::vector<int64_t> &axes, bool keepDims) {
  int64_t rank = x.rank();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) {
    checkAxis("reduce", a, rank);
    if (reduced[a])
      fail("reduce", "axis " + std::to_string(a) + " repeated");
    reduced[a] = true;
  }
  // groupShape keeps reduced axes as 1; input elements map to a group by
  // strides that are 0 on reduced axes.
  Shape groupShape, outShape;
  for (int64_t d = 0; d < rank; ++d) {
    groupShape.push_back(reduced[d] ? 1 : x.dim(d));
    if (!reduced[d] || keepDims)
      outShape.push_back(reduced[d] ? 1 : x.dim(d));
  }
  std::vector<int64_t> groupStrides = stridesOf(groupShape);
  for (int64_t d = 0; d < rank; ++d)
    if (reduced[d])
      groupStrides[d] = 0;
  Tensor out(x.dtype(), outShape);
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    std::vector<std::vector<C>> groups(out.numElements());
    if (x.numElements() > 0) {
      std::vector<int64_t> index(rank, 0);
      int64_t i = 0;
      do {
        groups[offsetOf(index, groupStrides)].push_back(load(x.data<T>(), i++));
      } while (nextIndex(index, x.shape()));
    }
    T *po = out.mutableData<T>();
    for (size_t g = 0; g < groups.size(); ++g) {
      if constexpr (std::is_same_v<T, bool>)
        po[g] = reduceBool(
            kind, std::vector<bool>(groups[g].begin(), groups[g].end()));
      else if constexpr (isFloatType<T>())
        po[g] = store<T>(reduceFloat(kind, groups[g]));
      else
        po[g] = reduceInt<T>(kind, groups[g]);
    }
  });
  return out;
}

Tensor argMax(const Tensor &x, int64_t axis, bool keepDims, bool selectLast) {
  return argExtreme("argmax", x, axis, keepDims, selectLast, /*isMax=*/true);
}

Tensor argMin(const Tensor &x, int64_t axis, bool keepDims, bool selectLast) {
  return argExtreme("argmin", x, axis, keepDims, selectLast, /*isMax=*/false);
}

Tensor softmax(const Tensor &x, int64_t axis) {
  return softmaxImpl("softmax", x, axis, /*log=*/false);
}

Tensor logSoftmax(const Tensor &x, int64_t axis) {
  return softmaxImpl("logsoftmax", x, axis, /*log=*/true);
}

Tensor hardmax(const Tensor &x, int64_t axis) {
  checkAxis("hardmax", axis, x.rank());
  if (x.dtype() == DType::Bool)
    fail("hardmax", "needs a numeric tensor, got bool");
  AxisSplit s = splitAt(x.shape(), axis);
  Tensor out(x.dtype(), x.shape());
  if (s.n == 0)
    return out;
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (int64_t o = 0; o < s.outer; ++o)
      for (int64_t i = 0; i < s.inner; ++i)
        out.setDouble(
            s.at(o, extremeIndex(x.data<T>(), s, o, i, true, false), i), 1.0);
  });
  return out;
}

Tensor batchNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                 const Tensor &mean, const Tensor &var, double epsilon) {
  checkFloat("batchnorm", x);
  if (x.rank() < 2)
    fail("batchnorm",
         "input must have rank >= 2, got " + shapeToString(x.shape()));
  int64_t channels = x.dim(1);
  checkChannelParam("batchnorm", "scale", scale, channels);
  checkChannelParam("batchnorm", "bias", bias, channels);
  checkChannelParam("batchnorm", "mean", mean, channels);
  checkChannelParam("batchnorm", "var", var, channels);
  AxisSplit s = splitAt(x.shape(), 1);
  Tensor out(x.dtype(), x.shape());
  for (int64_t n = 0; n < s.outer; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      double inv = 1.0 / std::sqrt(var.getDouble(c) + epsilon);
      for (int64_t i = 0; i < s.inner; ++i) {
        int64_t at = s.at(n, c, i);
        double y =
            (x.getDouble(at) - mean.getDouble(c)) * inv * scale.getDouble(c) +
            bias.getDouble(c);
        out.setDouble(at, y);
      }
    }
  }
  return out;
}

Tensor layerNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                 int64_t axis, double epsilon) {
  checkFloat("layernorm", x);
  checkAxis("layernorm", axis, x.rank());
  Shape normShape(x.shape().begin() + axis, x.shape().end());
  bool hasBias = !isAbsent(bias);
  if (broadcastShapes(scale.shape(), normShape) != normShape)
    fail("layernorm", "scale " + shapeToString(scale.shape()) +
                          " does not broadcast to " + shapeToString(normShape));
  if (hasBias && broadcastShapes(bias.shape(), normShape) != normShape)
    fail("layernorm", "bias " + shapeToString(bias.shape()) +
                          " does not broadcast to " + shapeToString(normShape));
  std::vector<int64_t> offScale = broadcastOffsets(scale.shape(), normShape);
  std::vector<int64_t> offBias;
  if (hasBias)
    offBias = broadcastOffsets(bias.shape(), normShape);
  int64_t size = numElementsOf(normShape);
  Tensor out(x.dtype(), x.shape());
  if (size == 0)
    return out;
  for (int64_t base = 0; base < x.numElements(); base += size) {
    auto [mean, var] = meanVar(x, base, size, 1);
    double inv = 1.0 / std::sqrt(var + epsilon);
    for (int64_t j = 0; j < size; ++j) {
      double y =
          (x.getDouble(base + j) - mean) * inv * scale.getDouble(offScale[j]);
      if (hasBias)
        y += bias.getDouble(offBias[j]);
      out.setDouble(base + j, y);
    }
  }
  return out;
}

Tensor instanceNorm(const Tensor &x, const Tensor &scale, const Tensor &bias,
                    double epsilon) {
  checkFloat("instancenorm", x);
  if (x.rank() < 2)
    fail("instancenorm",
         "input must have rank >= 2, got " + shapeToString(x.shape()));
  int64_t channels = x.dim(1);
  checkChannelParam("instancenorm", "scale", scale, channels);
  checkChannelParam("instancenorm", "bias", bias, channels);
  AxisSplit s = splitAt(x.shape(), 1);
  Tensor out(x.dtype(), x.shape());
  if (s.inner == 0)
    return out;
  for (int64_t n = 0; n < s.outer; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      int64_t base = s.at(n, c, 0);
      auto [mean, var] = meanVar(x, base, s.inner, 1);
      double inv = 1.0 / std::sqrt(var + epsilon);
      for (int64_t i = 0; i < s.inner; ++i) {
        double y = (x.getDouble(base + i) - mean) * inv * scale.getDouble(c) +
                   bias.getDouble(c);
        out.setDouble(base + i, y);
      }
    }
  }
  return out;
}

Tensor cumSum(const Tensor &x, int64_t axis, bool exclusive, bool reverse) {
  checkAxis("cumsum", axis, x.rank());
  if (x.dtype() == DType::Bool)
    fail("cumsum", "needs a numeric tensor, got bool");
  AxisSplit s = splitAt(x.shape(), axis);
  Tensor out(x.dtype(), x.shape());
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = ComputeType<T>;
    const T *px = x.data<T>();
    T *po = out.mutableData<T>();
    for (int64_t o = 0; o < s.outer; ++o) {
      for (int64_t i = 0; i < s.inner; ++i) {
        C acc = 0;
        for (int64_t step = 0; step < s.n; ++step) {
          int64_t at = s.at(o, reverse ? s.n - 1 - step : step, i);
          C v = load(px, at);
          if (!exclusive)
            acc = accumulate(acc, v);
          po[at] = store<T>(acc);
          if (exclusive)
            acc = accumulate(acc, v);
        }
      }
    }
  });
  return out;
}

} // namespace loom::rt::ref
