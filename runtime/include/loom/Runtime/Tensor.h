//===- Tensor.h - Dense host tensors for the Loom runtime -------*- C++ -*-===//
//
// A dense, row-major host tensor with a runtime element type. The runtime
// (reference kernels, simulator, .npy/.pb I/O) never links MLIR; this is its
// only tensor type. Tensors are treated as immutable values once built:
// kernels produce new tensors rather than writing into their inputs.
//
//===----------------------------------------------------------------------===//
#ifndef LOOM_RUNTIME_TENSOR_H
#define LOOM_RUNTIME_TENSOR_H

#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::rt {

/// A user-facing runtime error (bad input, unsupported case). Tools print its
/// message on one line and exit with code 1.
class Error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// Element types the runtime understands. Bool is stored as one byte.
enum class DType : uint8_t {
  F32, F64, F16, BF16, I8, I16, I32, I64, U8, U16, U32, U64, Bool
};

size_t dtypeSize(DType dt);
const char *dtypeName(DType dt);
bool isFloat(DType dt);
bool isSignedInt(DType dt);
bool isUnsignedInt(DType dt);

/// IEEE binary16, stored as bits; arithmetic goes through float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f);
  operator float() const;
};
/// bfloat16, stored as bits; arithmetic goes through float.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f);
  operator float() const;
};

/// `f` rounded to the nearest FP8 E4M3 value and returned as a float. E4M3
/// is the OCP / NVIDIA "e4m3fn" format: 1 sign, 4 exponent bits (bias 7), 3
/// mantissa bits, subnormals, no infinities, NaN = S.1111.111, largest
/// finite value 448. Rounding is to nearest, ties to even; finite values
/// beyond +-448 and infinities saturate to +-448 (the usual inference
/// convention, e.g. CUDA's __NV_SATFINITE); NaN stays NaN; the sign of zero
/// is kept.
float roundToFp8E4M3(float f);

template <typename T> struct TypeTag { using type = T; };

/// Calls `f(TypeTag<T>{})` with the C++ storage type of `dt`.
template <typename F> decltype(auto) visitDType(DType dt, F &&f) {
  switch (dt) {
  case DType::F32: return f(TypeTag<float>{});
  case DType::F64: return f(TypeTag<double>{});
  case DType::F16: return f(TypeTag<Half>{});
  case DType::BF16: return f(TypeTag<BFloat16>{});
  case DType::I8: return f(TypeTag<int8_t>{});
  case DType::I16: return f(TypeTag<int16_t>{});
  case DType::I32: return f(TypeTag<int32_t>{});
  case DType::I64: return f(TypeTag<int64_t>{});
  case DType::U8: return f(TypeTag<uint8_t>{});
  case DType::U16: return f(TypeTag<uint16_t>{});
  case DType::U32: return f(TypeTag<uint32_t>{});
  case DType::U64: return f(TypeTag<uint64_t>{});
  case DType::Bool: return f(TypeTag<bool>{});
  }
  throw Error("internal: unknown dtype");
}

/// The type arithmetic on T is carried out in: double for every float type
/// (so fp16/bf16/fp32 accumulate in fp64), T itself for integers.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, float> || std::is_same_v<T, double> ||
                           std::is_same_v<T, Half> ||
                           std::is_same_v<T, BFloat16>,
                       double, T>;

template <typename T> constexpr bool isFloatType() {
  return std::is_same_v<ComputeType<T>, double>;
}

using Shape = std::vector<int64_t>;

/// Number of elements of `shape`; throws if a dimension is negative or the
/// count overflows 63 bits.
int64_t numElementsOf(const Shape &shape);
std::string shapeToString(const Shape &shape);
/// Row-major strides, in elements.
std::vector<int64_t> stridesOf(const Shape &shape);

class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(DType dtype, Shape shape);
  /// A tensor whose contents are left undefined, for kernels that write
  /// every element (saves clearing memory that is overwritten at once).
  static Tensor uninitialized(DType dtype, Shape shape);
  /// A tensor that copies `bytes` (must be numElements * elementSize bytes).
  static Tensor fromBytes(DType dtype, Shape shape, const void *bytes);
  /// A tensor that views memory owned elsewhere; `keepAlive` holds it.
  static Tensor view(DType dtype, Shape shape, const void *bytes,
                     std::shared_ptr<const void> keepAlive);
  template <typename T>
  static Tensor fromVector(DType dtype, Shape shape, const std::vector<T> &v) {
    Tensor t(dtype, std::move(shape));
    for (size_t i = 0; i < v.size(); ++i)
      t.setDouble(static_cast<int64_t>(i), static_cast<double>(v[i]));
    return t;
  }

  DType dtype() const { return dtype_; }
  const Shape &shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[i]; }
  int64_t numElements() const { return numElements_; }
  size_t byteSize() const { return numElements_ * dtypeSize(dtype_); }
  bool isValid() const { return data_ != nullptr || numElements_ == 0; }

  const void *raw() const { return data_; }
  void *mutableRaw() { return const_cast<void *>(data_); }
  template <typename T> const T *data() const {
    return static_cast<const T *>(data_);
  }
  template <typename T> T *mutableData() { return static_cast<T *>(mutableRaw()); }

  /// Element `i` (flat, row-major) converted to double / int64.
  double getDouble(int64_t i) const;
  int64_t getInt(int64_t i) const;
  void setDouble(int64_t i, double v);
  void setInt(int64_t i, int64_t v);
  /// All elements as int64 (for shape-like tensors).
  std::vector<int64_t> toInts() const;

  /// A copy with the same data and a new shape of the same element count.
  Tensor reshaped(Shape shape) const;
  /// The same bytes seen as another element type of the same size.
  Tensor bitcast(DType dtype) const;
  /// Element-wise conversion with ONNX Cast semantics.
  Tensor castTo(DType dtype) const;

private:
  /// Allocates storage for dtype_/shape_; zero-filled if `zero`.
  void allocate(bool zero);

  DType dtype_ = DType::F32;
  Shape shape_;
  int64_t numElements_ = 0;
  std::shared_ptr<const void> owner_;
  const void *data_ = nullptr;
};

} // namespace loom::rt

#endif // LOOM_RUNTIME_TENSOR_H
