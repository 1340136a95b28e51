//===- Elementwise.cpp - Reference elementwise kernels --------------------===//
//
// Unary and binary elementwise ops, Where, Expand and Cast, with ONNX
// semantics. Floats are computed in double; integers in their own type, with
// wrap-around (two's complement) on overflow.
//
//===----------------------------------------------------------------------===//
#include "Common.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace loom::rt::ref {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// For every element of `outShape` (row-major), the flat offset of the
/// element of a tensor of shape `in` that numpy broadcasting maps to it.
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

/// Rounds half to even.
double roundHalfEven(double x) {
  double r = std::floor(x);
  double diff = x - r;
  if (diff > 0.5 || (diff == 0.5 && std::fmod(r, 2.0) != 0.0))
    r += 1.0;
  return r;
}

/// Float unary ops (everything except Not and the IsNaN/IsInf tests).
double unaryFloat(UnaryKind kind, double x, const UnaryParams &p) {
  switch (kind) {
  case UnaryKind::Neg:
    return -x;
  case UnaryKind::Abs:
    return std::fabs(x);
  case UnaryKind::Sqrt:
    return std::sqrt(x);
  case UnaryKind::Reciprocal:
    return 1.0 / x;
  case UnaryKind::Exp:
    return std::exp(x);
  case UnaryKind::Log:
    return std::log(x);
  case UnaryKind::Erf:
    return std::erf(x);
  case UnaryKind::Tanh:
    return std::tanh(x);
  case UnaryKind::Sigmoid:
    return 1.0 / (1.0 + std::exp(-x));
  case UnaryKind::Relu:
    return std::isnan(x) ? x : (x > 0 ? x : 0.0);
  case UnaryKind::Sin:
    return std::sin(x);
  case UnaryKind::Cos:
    return std::cos(x);
  case UnaryKind::Tan:
    return std::tan(x);
  case UnaryKind::Asin:
    return std::asin(x);
  case UnaryKind::Acos:
    return std::acos(x);
  case UnaryKind::Atan:
    return std::atan(x);
  case UnaryKind::Sinh:
    return std::sinh(x);
  case UnaryKind::Cosh:
    return std::cosh(x);
  case UnaryKind::Asinh:
    return std::asinh(x);
  case UnaryKind::Acosh:
    return std::acosh(x);
  case UnaryKind::Atanh:
    return std::atanh(x);
  case UnaryKind::Floor:
    return std::floor(x);
  case UnaryKind::Ceil:
    return std::ceil(x);
  case UnaryKind::Round:
    return roundHalfEven(x);
  case UnaryKind::Sign:
    return std::isnan(x) ? x : (x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0));
  case UnaryKind::Softsign:
    return x / (1.0 + std::fabs(x));
  case UnaryKind::Softplus:
    // log(1 + exp(x)), written so that large |x| neither overflows nor
    // loses the small term.
    return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  case UnaryKind::LeakyRelu:
    return x < 0 ? p.alpha * x : x;
  case UnaryKind::Elu:
    return x < 0 ? p.alpha * (std::exp(x) - 1.0) : x;
  case UnaryKind::Selu:
    return x > 0 ? p.gamma * x : p.gamma * (p.alpha * std::exp(x) - p.alpha);
  case UnaryKind::Celu:
    return std::fmax(0.0, x) +
           std::fmin(0.0, p.alpha * (std::exp(x / p.alpha) - 1.0));
  case UnaryKind::HardSigmoid:
    return std::fmax(0.0, std::fmin(1.0, p.alpha * x + p.beta));
  case UnaryKind::HardSwish:
    return x * std::fmax(0.0, std::fmin(1.0, x / 6.0 + 0.5));
  case UnaryKind::ThresholdedRelu:
    return x > p.alpha ? x : 0.0;
  case UnaryKind::Shrink:
    // alpha = lambd, beta = bias.
    if (x < -p.alpha)
      return x + p.beta;
    if (x > p.alpha)
      return x - p.beta;
    return 0.0;
  default:
    break;
  }
  fail("unary", "op is not defined on floating-point tensors");
}

/// Integer unary ops: Neg, Abs, Sign, Relu (exact, in T) and Shrink (through
/// double, as ONNX allows integer Shrink). Anything else throws.
template <typename T> T unaryInt(UnaryKind kind, T x, const UnaryParams &p) {
  switch (kind) {
  case UnaryKind::Neg:
    return wrapNeg(x);
  case UnaryKind::Abs:
    if constexpr (std::is_signed_v<T>)
      return x < 0 ? wrapNeg(x) : x;
    else
      return x;
  case UnaryKind::Sign:
    return static_cast<T>(x > 0 ? 1 : (x < 0 ? -1 : 0));
  case UnaryKind::Relu:
    return x > 0 ? x : T(0);
  case UnaryKind::Shrink:
    return saturate<T>(unaryFloat(kind, static_cast<double>(x), p));
  default:
    break;
  }
  fail("unary", "op is not defined on integer tensors");
}

/// IsNaN / IsInf* on floats.
bool unaryTest(UnaryKind kind, double x) {
  switch (kind) {
  case UnaryKind::IsNaN:
    return std::isnan(x);
  case UnaryKind::IsInf:
    return std::isinf(x);
  case UnaryKind::IsInfPos:
    return std::isinf(x) && x > 0;
  case UnaryKind::IsInfNeg:
    return std::isinf(x) && x < 0;
  default:
    break;
  }
  fail("unary", "internal: not a test op");
}

bool isTestKind(UnaryKind kind) {
  return kind == UnaryKind::IsNaN || kind == UnaryKind::IsInf ||
         kind == UnaryKind::IsInfPos || kind == UnaryKind::IsInfNeg;
}

bool isComparison(BinaryKind kind) {
  return kind == BinaryKind::Equal || kind == BinaryKind::Less ||
         kind == BinaryKind::Greater || kind == BinaryKind::LessEqual ||
         kind == BinaryKind::GreaterEqual;
}

template <typename C> bool compare(BinaryKind kind, C a, C b) {
  switch (kind) {
  case BinaryKind::Equal:
    return a == b;
  case BinaryKind::Less:
    return a < b;
  case BinaryKind::Greater:
    return a > b;
  case BinaryKind::LessEqual:
    return a <= b;
  case BinaryKind::GreaterEqual:
    return a >= b;
  default:
    break;
  }
  fail("binary", "internal: not a comparison");
}

/// Python-style remainder (result has the divisor's sign) for floats.
double floatMod(double a, double b) {
  double r = std::fmod(a, b);
  if (r != 0 && ((r < 0) != (b < 0)))
    r += b;
  return r;
}

/// Float binary arithmetic (not comparisons, not Pow).
double binaryFloat(BinaryKind kind, double a, double b) {
  switch (kind) {
  case BinaryKind::Add:
    return a + b;
  case BinaryKind::Sub:
    return a - b;
  case BinaryKind::Mul:
    return a * b;
  case BinaryKind::Div:
    return a / b;
  case BinaryKind::Min:
    return std::isnan(a) || std::isnan(b) ? kNaN : std::fmin(a, b);
  case BinaryKind::Max:
    return std::isnan(a) || std::isnan(b) ? kNaN : std::fmax(a, b);
  case BinaryKind::Mod:
    return floatMod(a, b);
  case BinaryKind::FMod:
    return std::fmod(a, b);
  case BinaryKind::PRelu:
    return a < 0 ? a * b : a;
  default:
    break;
  }
  fail("binary", "op is not defined on floating-point tensors");
}

/// Integer remainder; `python` selects the sign of the divisor (Mod),
/// otherwise the sign of the dividend (FMod, C's %).
template <typename T> T intMod(T a, T b, bool python) {
  if (b == 0)
    fail("binary", "integer modulo by zero");
  if constexpr (std::is_signed_v<T>) {
    if (b == -1)
      return 0; // Also avoids the INT_MIN % -1 overflow.
  }
  T r = static_cast<T>(a % b);
  if constexpr (std::is_signed_v<T>) {
    if (python && r != 0 && ((r < 0) != (b < 0)))
      r = static_cast<T>(r + b);
  }
  return r;
}

/// Integer division truncating toward zero; throws on division by zero.
template <typename T> T intDiv(T a, T b) {
  if (b == 0)
    fail("binary", "integer division by zero");
  if constexpr (std::is_signed_v<T>) {
    if (b == -1)
      return wrapNeg(a); // INT_MIN / -1 wraps to INT_MIN.
  }
  return static_cast<T>(a / b);
}

template <typename T> T shift(T a, T b, bool left) {
  if (b >= static_cast<T>(sizeof(T) * 8))
    return 0;
  return left ? static_cast<T>(a << b) : static_cast<T>(a >> b);
}

/// Integer binary arithmetic (not comparisons, not Pow).
template <typename T> T binaryInt(BinaryKind kind, T a, T b) {
  switch (kind) {
  case BinaryKind::Add:
    return wrapAdd(a, b);
  case BinaryKind::Sub:
    return wrapSub(a, b);
  case BinaryKind::Mul:
    return wrapMul(a, b);
  case BinaryKind::Div:
    return intDiv(a, b);
  case BinaryKind::Min:
    return a < b ? a : b;
  case BinaryKind::Max:
    return a > b ? a : b;
  case BinaryKind::Mod:
    return intMod(a, b, /*python=*/true);
  case BinaryKind::FMod:
    return intMod(a, b, /*python=*/false);
  case BinaryKind::PRelu:
    return a < 0 ? wrapMul(a, b) : a;
  case BinaryKind::BitShiftLeft:
  case BinaryKind::BitShiftRight:
    if constexpr (std::is_unsigned_v<T>)
      return shift(a, b, kind == BinaryKind::BitShiftLeft);
    else
      fail("binary", "bit shift needs an unsigned integer tensor");
  // On integers the logical ops are bitwise (ONNX's BitwiseAnd/Or/Xor).
  case BinaryKind::And:
    return static_cast<T>(a & b);
  case BinaryKind::Or:
    return static_cast<T>(a | b);
  case BinaryKind::Xor:
    return static_cast<T>(a ^ b);
  default:
    break;
  }
  fail("binary", "op is not defined on integer tensors");
}

bool binaryBool(BinaryKind kind, bool a, bool b) {
  switch (kind) {
  case BinaryKind::And:
    return a && b;
  case BinaryKind::Or:
    return a || b;
  case BinaryKind::Xor:
    return a != b;
  default:
    break;
  }
  fail("binary", "op is not defined on bool tensors");
}

/// Integer power. Non-negative integral exponents are computed exactly (mod
/// 2^bits) by repeated squaring; others go through std::pow and saturate.
template <typename T> T intPow(T base, double e) {
  if (!(e >= 0 && std::floor(e) == e))
    return saturate<T>(std::pow(static_cast<double>(base), e));
  // Exponents past 2^64 behave like huge even/odd ones; clamp the count,
  // keeping the parity so that (-1)^e and 0^e stay right.
  uint64_t n = 0;
  if (e >= 1.8e19)
    n = std::fmod(e, 2.0) == 0 ? ~uint64_t(1) : ~uint64_t(0);
  else
    n = static_cast<uint64_t>(e);
  T result = 1;
  T b = base;
  while (n) {
    if (n & 1)
      result = wrapMul(result, b);
    b = wrapMul(b, b);
    n >>= 1;
  }
  return result;
}

/// Pow: the result has a's dtype; b (any dtype) is read as double.
Tensor powOp(const Tensor &a, const Tensor &b) {
  Shape outShape = broadcastShapes(a.shape(), b.shape());
  std::vector<int64_t> offA = broadcastOffsets(a.shape(), outShape);
  std::vector<int64_t> offB = broadcastOffsets(b.shape(), outShape);
  Tensor out(a.dtype(), outShape);
  visitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>) {
      fail("pow", "base must be numeric, not bool");
    } else {
      const T *pa = a.data<T>();
      T *po = out.mutableData<T>();
      for (size_t i = 0; i < offA.size(); ++i) {
        double e = b.getDouble(offB[i]);
        if constexpr (isFloatType<T>())
          po[i] = store<T>(std::pow(load(pa, offA[i]), e));
        else
          po[i] = intPow<T>(pa[offA[i]], e);
      }
    }
  });
  return out;
}

} // namespace

//===----------------------------------------------------------------------===//
// Public entry points
//===----------------------------------------------------------------------===//

Tensor unary(UnaryKind kind, const Tensor &x, UnaryParams p) {
  if (isTestKind(kind)) {
    if (!isFloat(x.dtype()))
      fail("unary", std::string("IsNaN/IsInf need a float tensor, got ") +
                        dtypeName(x.dtype()));
    Tensor out(DType::Bool, x.shape());
    bool *po = out.mutableData<bool>();
    for (int64_t i = 0; i < x.numElements(); ++i)
      po[i] = unaryTest(kind, x.getDouble(i));
    return out;
  }
  Tensor out(x.dtype(), x.shape());
  visitDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *px = x.data<T>();
    T *po = out.mutableData<T>();
    if constexpr (std::is_same_v<T, bool>) {
      if (kind != UnaryKind::Not)
        fail("unary", "only Not is defined on bool tensors");
      for (int64_t i = 0; i < x.numElements(); ++i)
        po[i] = !px[i];
    } else if constexpr (std::is_integral_v<T>) {
      // On integers Not is bitwise (ONNX's BitwiseNot).
      for (int64_t i = 0; i < x.numElements(); ++i)
        po[i] = kind == UnaryKind::Not ? static_cast<T>(~px[i])
                                       : unaryInt<T>(kind, px[i], p);
    } else {
      if (kind == UnaryKind::Not)
        fail("unary", std::string("Not needs a bool or integer tensor, got ") +
                          dtypeName(x.dtype()));
      for (int64_t i = 0; i < x.numElements(); ++i) {
        if constexpr (isFloatType<T>())
          po[i] = store<T>(unaryFloat(kind, load(px, i), p));
        else
          po[i] = unaryInt<T>(kind, px[i], p);
      }
    }
  });
  return out;
}

Tensor binary(BinaryKind kind, const Tensor &a, const Tensor &b) {
  if (kind == BinaryKind::Pow)
    return powOp(a, b);
  if (a.dtype() != b.dtype())
    fail("binary", std::string("operand dtypes differ: ") +
                       dtypeName(a.dtype()) + " vs " + dtypeName(b.dtype()));
  Shape outShape = broadcastShapes(a.shape(), b.shape());
  if (kind == BinaryKind::PRelu && outShape != a.shape())
    fail("prelu", "slope " + shapeToString(b.shape()) +
                      " does not broadcast to x " + shapeToString(a.shape()));
  std::vector<int64_t> offA = broadcastOffsets(a.shape(), outShape);
  std::vector<int64_t> offB = broadcastOffsets(b.shape(), outShape);
  bool cmp = isComparison(kind);
  Tensor out(cmp ? DType::Bool : a.dtype(), outShape);
  visitDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *pa = a.data<T>();
    const T *pb = b.data<T>();
    for (size_t i = 0; i < offA.size(); ++i) {
      auto va = load(pa, offA[i]);
      auto vb = load(pb, offB[i]);
      if (cmp) {
        out.mutableData<bool>()[i] = compare(kind, va, vb);
      } else if constexpr (std::is_same_v<T, bool>) {
        out.mutableData<bool>()[i] = binaryBool(kind, va, vb);
      } else if constexpr (isFloatType<T>()) {
        out.mutableData<T>()[i] = store<T>(binaryFloat(kind, va, vb));
      } else {
        out.mutableData<T>()[i] = binaryInt<T>(kind, va, vb);
      }
    }
  });
  return out;
}

Tensor select(const Tensor &cond, const Tensor &x, const Tensor &y) {
  if (cond.dtype() != DType::Bool)
    fail("select",
         std::string("condition must be bool, got ") + dtypeName(cond.dtype()));
  if (x.dtype() != y.dtype())
    fail("select", std::string("operand dtypes differ: ") +
                       dtypeName(x.dtype()) + " vs " + dtypeName(y.dtype()));
  Shape outShape =
      broadcastShapes(cond.shape(), broadcastShapes(x.shape(), y.shape()));
  std::vector<int64_t> offC = broadcastOffsets(cond.shape(), outShape);
  std::vector<int64_t> offX = broadcastOffsets(x.shape(), outShape);
  std::vector<int64_t> offY = broadcastOffsets(y.shape(), outShape);
  Tensor out(x.dtype(), outShape);
  size_t size = dtypeSize(x.dtype());
  const char *px = static_cast<const char *>(x.raw());
  const char *py = static_cast<const char *>(y.raw());
  char *po = static_cast<char *>(out.mutableRaw());
  const bool *pc = cond.data<bool>();
  for (size_t i = 0; i < offC.size(); ++i) {
    const char *src = pc[offC[i]] ? px + offX[i] * size : py + offY[i] * size;
    std::memcpy(po + i * size, src, size);
  }
  return out;
}

Shape broadcastShapes(const Shape &a, const Shape &b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    // Right-aligned: missing leading dimensions act as 1.
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("broadcast", "incompatible shapes " + shapeToString(a) + " and " +
                            shapeToString(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

/// ONNX Expand is bidirectional: the result shape is the broadcast of x's
/// shape and `shape`, so a 1 in `shape` keeps x's dimension.
Tensor broadcastTo(const Tensor &x, const Shape &shape) {
  Shape outShape = broadcastShapes(x.shape(), shape);
  std::vector<int64_t> offX = broadcastOffsets(x.shape(), outShape);
  Tensor out(x.dtype(), outShape);
  size_t size = dtypeSize(x.dtype());
  const char *px = static_cast<const char *>(x.raw());
  char *po = static_cast<char *>(out.mutableRaw());
  for (size_t i = 0; i < offX.size(); ++i)
    std::memcpy(po + i * size, px + offX[i] * size, size);
  return out;
}

Tensor cast(const Tensor &x, DType to) { return x.castTo(to); }

} // namespace loom::rt::ref
