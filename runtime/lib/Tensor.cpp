//===- Tensor.cpp - Dense host tensors ------------------------------------===//
#include "loom/Runtime/Tensor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

#include <unistd.h>

namespace loom::rt {

size_t dtypeSize(DType dt) {
  switch (dt) {
  case DType::F64: case DType::I64: case DType::U64: return 8;
  case DType::F32: case DType::I32: case DType::U32: return 4;
  case DType::F16: case DType::BF16: case DType::I16: case DType::U16: return 2;
  case DType::I8: case DType::U8: case DType::Bool: return 1;
  }
  return 1;
}

const char *dtypeName(DType dt) {
  switch (dt) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::F16: return "f16";
  case DType::BF16: return "bf16";
  case DType::I8: return "i8";
  case DType::I16: return "i16";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  case DType::U8: return "u8";
  case DType::U16: return "u16";
  case DType::U32: return "u32";
  case DType::U64: return "u64";
  case DType::Bool: return "bool";
  }
  return "?";
}

bool isFloat(DType dt) {
  return dt == DType::F32 || dt == DType::F64 || dt == DType::F16 ||
         dt == DType::BF16;
}
bool isSignedInt(DType dt) {
  return dt == DType::I8 || dt == DType::I16 || dt == DType::I32 ||
         dt == DType::I64;
}
bool isUnsignedInt(DType dt) {
  return dt == DType::U8 || dt == DType::U16 || dt == DType::U32 ||
         dt == DType::U64;
}

//===----------------------------------------------------------------------===//
// Half / BFloat16 conversions (round to nearest even).
//===----------------------------------------------------------------------===//

static uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
static float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

Half::Half(float f) {
  uint32_t x = floatBits(f);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) { // Inf or NaN.
    bits = static_cast<uint16_t>(sign | 0x7c00 | (mant ? 0x200 : 0));
    return;
  }
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) { // Overflow to infinity.
    bits = static_cast<uint16_t>(sign | 0x7c00);
    return;
  }
  if (e <= 0) { // Subnormal or zero.
    if (e < -10) {
      bits = static_cast<uint16_t>(sign);
      return;
    }
    mant |= 0x800000;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t mid = 1u << (shift - 1);
    if (rem > mid || (rem == mid && (half & 1)))
      ++half;
    bits = static_cast<uint16_t>(sign | half);
    return;
  }
  uint32_t half = sign | (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem == 0x1000 && (half & 1)))
    ++half; // May carry into the exponent, which is the correct rounding.
  bits = static_cast<uint16_t>(half);
}

Half::operator float() const {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exp = (bits >> 10) & 0x1f;
  uint32_t mant = bits & 0x3ff;
  if (exp == 0) {
    if (mant == 0)
      return bitsFloat(sign);
    // Subnormal: normalise.
    float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  if (exp == 31)
    return bitsFloat(sign | 0x7f800000 | (mant << 13));
  return bitsFloat(sign | ((exp - 15 + 127) << 23) | (mant << 13));
}

BFloat16::BFloat16(float f) {
  uint32_t x = floatBits(f);
  if (std::isnan(f)) {
    bits = static_cast<uint16_t>((x >> 16) | 0x40);
    return;
  }
  uint32_t rounding = 0x7fff + ((x >> 16) & 1);
  bits = static_cast<uint16_t>((x + rounding) >> 16);
}

BFloat16::operator float() const {
  return bitsFloat(static_cast<uint32_t>(bits) << 16);
}

float roundToFp8E4M3(float f) {
  if (std::isnan(f))
    return f;
  constexpr float kMax = 448.0f; // S.1111.110 = 1.75 x 2^8
  float a = std::fabs(f);
  if (a >= kMax)
    return std::copysign(kMax, f);
  if (a == 0.0f)
    return f;
  // The spacing of E4M3 values around `a`: 2^(e - 3) in the binade
  // [2^e, 2^(e+1)), and 2^-9 (the subnormal step) below 2^-6.
  int e = 0;
  std::frexp(a, &e); // a = m x 2^e, m in [0.5, 1)
  int binade = std::max(e - 1, -6);
  float step = std::ldexp(1.0f, binade - 3);
  // a / step is exact (a power-of-two scale, well inside float's range);
  // nearbyint in the default rounding mode rounds half to even, and the
  // even multiple of `step` is the code with an even mantissa. A carry
  // into the next binade (e.g. 1.9375 x 2^e -> 2^(e+1)) is exact too.
  float r = std::nearbyint(a / step) * step;
  return std::copysign(std::min(r, kMax), f);
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

int64_t numElementsOf(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      throw Error("negative dimension in shape " + shapeToString(shape));
    if (d != 0 && n > std::numeric_limits<int64_t>::max() / d)
      throw Error("element count of shape " + shapeToString(shape) +
                  " overflows 64 bits");
    n *= d;
  }
  return n;
}

std::string shapeToString(const Shape &shape) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    os << (i ? "x" : "") << shape[i];
  os << "]";
  return os.str();
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

//===----------------------------------------------------------------------===//
// Tensor
//===----------------------------------------------------------------------===//

Tensor::Tensor(DType dtype, Shape shape)
    : dtype_(dtype), shape_(std::move(shape)),
      numElements_(numElementsOf(shape_)) {
  allocate(/*zero=*/true);
}

Tensor Tensor::uninitialized(DType dtype, Shape shape) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numElements_ = numElementsOf(t.shape_);
  t.allocate(/*zero=*/false);
  return t;
}

void Tensor::allocate(bool zero) {
  size_t bytes = static_cast<size_t>(numElements_) * dtypeSize(dtype_);
  if (numElements_ > 0 &&
      bytes / dtypeSize(dtype_) != static_cast<size_t>(numElements_))
    throw Error("byte size of shape " + shapeToString(shape_) +
                " overflows 64 bits");
  // Refuse sizes beyond the machine's memory before asking for them.
  static const size_t physical = [] {
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && size > 0 ? static_cast<size_t>(pages) * size
                                 : std::numeric_limits<size_t>::max();
  }();
  if (bytes > physical)
    throw Error("a tensor of shape " + shapeToString(shape_) + " (" +
                dtypeName(dtype_) + ", " + std::to_string(bytes) +
                " bytes) exceeds this machine's memory");
  // malloc/calloc give memory aligned for every element type.
  void *p = zero ? std::calloc(bytes ? bytes : 1, 1)
                 : std::malloc(bytes ? bytes : 1);
  if (!p)
    throw Error("cannot allocate " + std::to_string(bytes) +
                " bytes for a tensor of shape " + shapeToString(shape_));
  owner_ = std::shared_ptr<const void>(p, [](const void *q) {
    std::free(const_cast<void *>(q));
  });
  data_ = p;
}

Tensor Tensor::fromBytes(DType dtype, Shape shape, const void *bytes) {
  Tensor t(dtype, std::move(shape));
  if (t.byteSize())
    std::memcpy(t.mutableRaw(), bytes, t.byteSize());
  return t;
}

Tensor Tensor::view(DType dtype, Shape shape, const void *bytes,
                    std::shared_ptr<const void> keepAlive) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.numElements_ = numElementsOf(t.shape_);
  t.owner_ = std::move(keepAlive);
  t.data_ = bytes;
  return t;
}

double Tensor::getDouble(int64_t i) const {
  return visitDType(dtype_, [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      return static_cast<float>(data<T>()[i]);
    else
      return static_cast<double>(data<T>()[i]);
  });
}

int64_t Tensor::getInt(int64_t i) const {
  return visitDType(dtype_, [&](auto tag) -> int64_t {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      return static_cast<int64_t>(static_cast<float>(data<T>()[i]));
    else
      return static_cast<int64_t>(data<T>()[i]);
  });
}

/// Converts `v` to T the way ONNX Cast does: floats round, integers from
/// floats truncate toward zero (saturating at the type's range), anything
/// nonzero is true.
template <typename T> static T convertDouble(double v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0.0;
  } else if constexpr (std::is_same_v<T, Half> ||
                       std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    if (std::isnan(v))
      return T(0);
    double lo = static_cast<double>(std::numeric_limits<T>::min());
    double hi = static_cast<double>(std::numeric_limits<T>::max());
    if (v <= lo)
      return std::numeric_limits<T>::min();
    if (v >= hi)
      return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  }
}

void Tensor::setDouble(int64_t i, double v) {
  visitDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    mutableData<T>()[i] = convertDouble<T>(v);
  });
}

void Tensor::setInt(int64_t i, int64_t v) {
  visitDType(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_same_v<T, bool>)
      mutableData<T>()[i] = v != 0;
    else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
      mutableData<T>()[i] = T(static_cast<float>(v));
    else
      mutableData<T>()[i] = static_cast<T>(v);
  });
}

std::vector<int64_t> Tensor::toInts() const {
  std::vector<int64_t> out(numElements_);
  for (int64_t i = 0; i < numElements_; ++i)
    out[i] = getInt(i);
  return out;
}

Tensor Tensor::reshaped(Shape shape) const {
  if (numElementsOf(shape) != numElements_)
    throw Error("cannot reshape " + shapeToString(shape_) + " to " +
                shapeToString(shape));
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::bitcast(DType dtype) const {
  if (dtypeSize(dtype) != dtypeSize(dtype_))
    throw Error(std::string("cannot bitcast ") + dtypeName(dtype_) + " to " +
                dtypeName(dtype));
  Tensor t = *this;
  t.dtype_ = dtype;
  return t;
}

Tensor Tensor::castTo(DType to) const {
  if (to == dtype_)
    return *this;
  Tensor out(to, shape_);
  bool intToInt = !isFloat(dtype_) && !isFloat(to);
  visitDType(to, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T *dst = out.mutableData<T>();
    if (intToInt && !std::is_same_v<T, bool>) {
      // Integer to integer wraps (two's complement), as C and ONNX Runtime do.
      for (int64_t i = 0; i < numElements_; ++i)
        dst[i] = static_cast<T>(static_cast<uint64_t>(getInt(i)));
      return;
    }
    if (dtype_ == DType::U64) {
      for (int64_t i = 0; i < numElements_; ++i)
        dst[i] = convertDouble<T>(static_cast<double>(data<uint64_t>()[i]));
      return;
    }
    for (int64_t i = 0; i < numElements_; ++i)
      dst[i] = convertDouble<T>(getDouble(i));
  });
  return out;
}

} // namespace loom::rt
