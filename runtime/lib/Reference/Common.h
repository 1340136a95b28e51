//===- Common.h - Helpers shared by the reference kernels -------*- C++ -*-===//
#ifndef LOOM_RUNTIME_REFERENCE_COMMON_H
#define LOOM_RUNTIME_REFERENCE_COMMON_H

#include "loom/Runtime/Reference.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

namespace loom::rt::ref {

/// Throws Error("<op>: <message>").
[[noreturn]] inline void fail(const std::string &op, const std::string &msg) {
  throw Error(op + ": " + msg);
}

/// Row-major flat offset of a multi-index with the given strides.
inline int64_t offsetOf(const std::vector<int64_t> &index,
                        const std::vector<int64_t> &strides) {
  int64_t off = 0;
  for (size_t i = 0; i < index.size(); ++i)
    off += index[i] * strides[i];
  return off;
}

/// Advances a row-major multi-index over `shape`; false after the last one.
inline bool nextIndex(std::vector<int64_t> &index, const Shape &shape) {
  for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
    if (++index[d] < shape[d])
      return true;
    index[d] = 0;
  }
  return false;
}

/// Channels per group {in, out} of a grouped convolution of x [N, C, ...]
/// with weight w [M, C/group, ...]; throws naming `op` if they do not fit.
inline std::pair<int64_t, int64_t>
convGroupChannels(const std::string &op, const Tensor &x, const Tensor &w,
                  int64_t group) {
  int64_t c = x.dim(1), m = w.dim(0);
  if (group < 1 || c % group || m % group)
    fail(op, "channels (" + std::to_string(c) + " in, " + std::to_string(m) +
                 " out) not divisible by group " + std::to_string(group));
  if (w.dim(1) != c / group)
    fail(op, "weight shape " + shapeToString(w.shape()) +
                 " does not match input channels per group " +
                 std::to_string(c / group));
  return {c / group, m / group};
}

/// Loads element `i` of `p` in its compute type.
template <typename T> ComputeType<T> load(const T *p, int64_t i) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return static_cast<float>(p[i]);
  else
    return static_cast<ComputeType<T>>(p[i]);
}

/// Converts a compute-type value back to the storage type T.
template <typename T> T store(ComputeType<T> v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
    return T(static_cast<float>(v));
  else
    return static_cast<T>(v);
}

/// Converts a double to the integer type T, saturating (NaN gives 0), the way
/// Tensor::setDouble does.
template <typename T> T saturate(double v) {
  if (std::isnan(v))
    return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::min()))
    return std::numeric_limits<T>::min();
  if (v >= static_cast<double>(std::numeric_limits<T>::max()))
    return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

// Wrapping integer arithmetic: going through uint64_t avoids signed overflow
// (undefined behaviour) and int promotion surprises for narrow types.
template <typename T> T wrapAdd(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
template <typename T> T wrapSub(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
template <typename T> T wrapMul(T a, T b) {
  return static_cast<T>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}
template <typename T> T wrapNeg(T a) {
  return static_cast<T>(uint64_t(0) - static_cast<uint64_t>(a));
}
template <typename T> T wrapAbs(T a) {
  if constexpr (std::is_signed_v<T>)
    return a < 0 ? wrapNeg(a) : a;
  else
    return a;
}

} // namespace loom::rt::ref

#endif // LOOM_RUNTIME_REFERENCE_COMMON_H
