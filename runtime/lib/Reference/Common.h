//===- Common.h - Helpers shared by the reference kernels -------*- C++ -*-===//
#ifndef LOOM_RUNTIME_REFERENCE_COMMON_H
#define LOOM_RUNTIME_REFERENCE_COMMON_H

#include "loom/Runtime/Reference.h"

#include <string>

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

} // namespace loom::rt::ref

#endif // LOOM_RUNTIME_REFERENCE_COMMON_H
